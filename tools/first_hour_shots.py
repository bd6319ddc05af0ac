"""``python tools/first_hour_shots.py --book PDF``: a student's first hour, photographed in
the real window (run under Xvfb with ``QT_QPA_PLATFORM=xcb``)::

    xvfb-run -a -s "-screen 0 1600x1000x24" env QT_QPA_PLATFORM=xcb \\
        .venv/bin/python tools/first_hour_shots.py --book ../shared/eval/books/thinkjava2.pdf

Two sessions on one data folder (``--data-dir``, kept between runs so the index is reused):
the first starts on the sample guide, opens the book while it is indexed and leaves it at a
page; the second starts again (the book reopens at that page), asks a question, follows a
citation and opens Settings, Help and the audit dialog.  Each picture is the whole screen,
dialogs where they really appear.  Writes ``first-hour-*.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshots import _link_installed_tiers, _pump, _settle  # noqa: E402

log = logging.getLogger("first_hour_shots")


def _shot(qapp, out: Path, name: str, window=None) -> Path:
    """The screen where the window is (dialogs included, where they appear)."""
    from PySide6.QtGui import QGuiApplication

    _settle(qapp, 0.6)
    screen = QGuiApplication.primaryScreen()
    path = out / f"first-hour-{name}.png"
    shot = screen.grabWindow(0)
    if window is not None:
        shot = shot.copy(window.frameGeometry())
    shot.save(str(path))
    print("wrote", path, flush=True)
    return path


def _build(settings):
    from bookreader.app import build_app
    from bookreader.ui.messages import RecordingSink

    ctx = build_app(["first-hour"], settings=settings, sink=RecordingSink())
    ctx.window.setGeometry(0, 30, 1440, 900)  # below the window manager's title bar
    ctx.window.default_dock_sizes()
    return ctx


def session_one(settings, book: Path, out: Path, page: int) -> None:
    """First start (the sample guide), then the book opened while it is indexed."""
    from bookreader.app import start_book

    ctx = _build(settings)
    win, qapp = ctx.window, ctx.qapp
    first = start_book(ctx)
    if first is not None:
        win.open_book(first)
        _pump(qapp, lambda: win.reader.meta is not None and win.reader.is_page_rendered(
            win.reader.current_page()), 120, "the first book")
    _shot(qapp, out, "1-first-start", win)
    finished: list = []
    progress: list = []
    ctx.service.ingest_finished.connect(lambda p, info: finished.append(p))
    ctx.service.ingest_progressed.connect(lambda p, d, t, m: progress.append(d) if d else None)
    win.open_book(book)
    _pump(qapp, lambda: win.reader.meta is not None and win.current_path is not None
          and Path(win.current_path).name == book.name
          and win.reader.is_page_rendered(win.reader.current_page()), 120, "the book")
    indexed = ctx.service.book_for_path(win.current_path)
    if indexed is None or indexed.state != "ready":
        _pump(qapp, lambda: bool(progress) or bool(finished), 300, "indexing to start")
        _settle(qapp, 2)
        _shot(qapp, out, "2-book-opened-indexing", win)
        _pump(qapp, lambda: bool(finished), 1800, "indexing")
    win.reader.go_to_page(page)
    _settle(qapp, 1)
    win.close()
    ctx.lock.unlock()


def session_two(settings, book: Path, out: Path, question: str) -> None:
    from PySide6.QtCore import Qt

    from bookreader.app import start_book

    ctx = _build(settings)
    win, qapp = ctx.window, ctx.qapp
    again = start_book(ctx)
    assert again is not None and again.name == book.name, again
    win.open_book(again)
    _pump(qapp, lambda: win.chat.book_ready and win.reader.is_page_rendered(
        win.reader.current_page()), 300, "the book reopened and ready")
    _shot(qapp, out, "3-start-reopens-the-book", win)

    chat = win.chat
    answers: list = []
    chat.answer_finished.connect(answers.append)
    chat.answer_failed.connect(answers.append)
    stages: list[str] = []
    chat.stage_changed.connect(stages.append)
    chat.question_edit.setPlainText(question)
    chat.ask()
    _pump(qapp, lambda: any(s.startswith(("Reading", "Writing")) for s in stages)
          or bool(answers), 300, "the model reading the passages")
    _shot(qapp, out, "4-answer-being-prepared", win)
    _pump(qapp, lambda: bool(answers), 600, "the answer")
    card = chat.cards()[-1]
    chat.scroll_area.ensureWidgetVisible(card)
    _shot(qapp, out, "5-answer", win)
    chips = card.citation_chips()
    if chips:
        chips[0].click()
        _pump(qapp, lambda: win.reader.is_page_rendered(win.reader.current_page()), 60,
              "the cited page")
        _shot(qapp, out, "6-citation-followed", win)

    dialog = win.show_settings()
    _shot(qapp, out, "7-settings", win)
    dialog.advanced_button.click()
    _shot(qapp, out, "8-settings-advanced", win)
    dialog.reject()

    sheet = win.show_shortcuts()
    _shot(qapp, out, "9-help-shortcuts", win)
    sheet.reject()
    asking = win.show_how_asking_works()
    _shot(qapp, out, "10-help-how-asking-works", win)
    asking.reject()

    audit = win.show_audit()
    audit.export_path.setText(str(settings.data_dir / "exports" / "audit-export.csv"))
    exported: list = []
    audit.export_finished.connect(lambda q, n, p: exported.append(q))
    audit.export()
    _pump(qapp, lambda: bool(exported), 120, "the audit export")
    _shot(qapp, out, "11-audit-dialog", win)
    audit.reject()
    win.activateWindow()
    win.setFocus(Qt.FocusReason.OtherFocusReason)
    win.close()
    ctx.lock.unlock()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", required=True, type=Path)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/bookreader-first-hour"))
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--question", default="What is a small world graph?")
    parser.add_argument("--page", type=int, default=40, help="page to leave the book at")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--only", choices=("one", "two"), help="run one session only")
    parser.add_argument("--first-token-s", type=float, default=0.0,
                        help="a longer first-token budget for the local tiers (a machine "
                             "shared with other work answers slower than a student's)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    from bookreader.config import Settings

    args.out.mkdir(parents=True, exist_ok=True)
    settings = Settings.load(args.data_dir).updated(llm_backend=args.backend)
    if args.first_token_s:
        settings = settings.updated(budgets={name: {"first_token_s": args.first_token_s}
                                             for name in ("tiny", "small", "better")})
    settings.save()
    _link_installed_tiers(settings)
    book = args.book.resolve()
    t0 = time.monotonic()
    if args.only != "two":
        session_one(settings, book, args.out, args.page)
    if args.only != "one":
        session_two(Settings.load(args.data_dir), book, args.out, args.question)
    print(f"done in {time.monotonic() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
