"""``python tools/screenshots.py`` (``make screenshots``): pictures of the main states for the README.

Writes PNGs (1440 px wide) to ``$SCREENSHOTS_DIR`` (default ``docs/screenshots``), using a
throw-away data folder, the bundled sample book and a generated second book:

1. ``library-indexing.png``: the library with a book being indexed (progress and Cancel);
2. ``selection-menu.png``: a page with a selection and its context menu;
3. ``answer-citations.png``: a streamed answer with its badges and citation chips;
4. ``citation-followed.png``: a citation followed to its page, the excerpt highlighted;
5. ``settings.png`` and 6. ``instructor.png``: the two dialogs over the window.

3b. ``quotes-card.png``: a question no verified answer could be written for, answered with
   quotes of the pages that address it;

Runs offscreen (or under Xvfb).  ``SCREENSHOT_BACKEND`` picks the answering model
(default ``auto``: the tier the app picks for this machine, as a new user gets it;
``extractive`` needs no model); ``SCREENSHOT_FIRST_TOKEN_S`` lengthens the local tiers'
first-token budget on a machine busy with other work.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: A large virtual screen, so dialogs get their natural size offscreen (default 800x800).
OFFSCREEN_CONFIG = ('{"screens": [{"name": "shots", "x": 0, "y": 0, "width": 1920, '
                    '"height": 1200, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}')


def _use_big_offscreen_screen(tmp: Path) -> None:
    platform = os.environ.get("QT_QPA_PLATFORM", "offscreen")
    if platform == "offscreen":
        config = tmp / "offscreen.json"
        config.write_text(OFFSCREEN_CONFIG, encoding="utf-8")
        os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"

log = logging.getLogger(__name__)

WIDTH, HEIGHT = 1440, 900
#: Whole-book questions for ``answer-citations.png``, asked in turn until the model writes
#: a verified answer (the small tier ended the first in quotes at stop 24; the picture is
#: of an answer, and a quotes card has its own).  The others are from
#: ``bench/questions/sample_guide.jsonl``, answered with citations in its bench.
QUESTION = "How do I ask about a passage I selected?"
ANSWER_QUESTIONS = (QUESTION,
                    "What else does highlight mode retrieve besides my selection?",
                    "Where does the Claude backend get its API key from?",
                    "How is a citation checked against the book?")
QUOTES_QUESTIONS = ("Why does the reader keep an audit log of every question?",
                    "How should an instructor compare two exports of the audit log?",
                    "What makes the grounding check reject an answer?",
                    "When should a student use highlight mode rather than selected text?")


def _pump(qapp, predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Run the event loop until ``predicate()``; raise with ``what`` on timeout."""
    from PySide6.QtCore import QEventLoop, QTimer

    end = time.monotonic() + timeout_s
    loop = QEventLoop()
    timer = QTimer(interval=20)
    timer.timeout.connect(loop.quit)
    timer.start()
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError(f"Timed out waiting for {what}")
        loop.exec()
    timer.stop()


def _settle(qapp, seconds: float = 0.4) -> None:
    end = time.monotonic() + seconds
    _pump(qapp, lambda: time.monotonic() > end, seconds + 5, "the window to settle")


def _ask_until(qapp, chat, answers: list, questions, found: Callable[[], list]):
    """Ask ``questions`` in turn until ``found()`` lists a card (which card a question
    ends in depends on the model); the last card found, scrolled into view, or None."""
    for question in questions:
        if found():
            break
        n = len(answers)
        chat.question_edit.setPlainText(question)
        chat.ask()
        _pump(qapp, lambda n=n: len(answers) > n, 300, "an answer")
    cards = found()
    if not cards:
        return None
    chat.scroll_area.ensureWidgetVisible(cards[-1])
    return cards[-1]


def _big_book(path: Path, pages: int = 40) -> Path:
    """A longer generated book, so indexing runs long enough to be photographed."""
    import fitz

    doc = fitz.open()
    toc = []
    for i in range(pages):
        page = doc.new_page(width=595, height=842)
        if i % 5 == 0:
            toc.append([1, f"Chapter {i // 5 + 1}", i + 1])
            page.insert_text((72, 90), f"Chapter {i // 5 + 1}", fontsize=20)
        y = 130
        for k in range(30):
            page.insert_text((72, y), f"Paragraph {k + 1} of page {i + 1}: cells divide, "
                                      f"grow and specialise in step {k * (i + 1)}.", fontsize=10)
            y += 21
    doc.set_toc(toc)
    doc.set_metadata({"title": "Cell Biology Notes"})
    doc.save(str(path))
    doc.close()
    return path


def _composite(window, overlay, name: str, out_dir: Path) -> Path:
    """The window with a dialog or menu drawn where it would appear, as one picture."""
    from PySide6.QtCore import QPoint, QRect, Qt
    from PySide6.QtGui import QColor, QPainter

    canvas = window.grab()
    painter = QPainter(canvas)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if overlay is not None:
        pix = overlay.grab()
        if overlay.isWindow() and overlay.objectName() != "selectionMenu":
            # A dialog: dim the window, draw a title bar (offscreen has no decorations).
            painter.fillRect(canvas.rect(), QColor(0, 0, 0, 70))
            bar = 30
            pos = QPoint((canvas.width() - pix.width()) // 2,
                         max(bar + 10, (canvas.height() - pix.height() + bar) // 2))
            frame = QRect(pos.x(), pos.y() - bar, pix.width(), pix.height() + bar)
            painter.fillRect(frame.translated(4, 6), QColor(0, 0, 0, 60))
            painter.fillRect(QRect(frame.x(), frame.y(), frame.width(), bar), QColor("#e9ecf1"))
            painter.setPen(QColor("#24292f"))
            font = painter.font()
            font.setBold(True)
            painter.setFont(font)
            painter.drawText(QRect(frame.x(), frame.y(), frame.width(), bar),
                             Qt.AlignmentFlag.AlignCenter, overlay.windowTitle())
        else:
            pos = window.mapFromGlobal(overlay.mapToGlobal(QPoint(0, 0)))
            painter.fillRect(QRect(pos + QPoint(3, 4), pix.size()), QColor(0, 0, 0, 50))
        painter.drawPixmap(pos, pix)
    painter.end()
    path = out_dir / name
    canvas.save(str(path))
    log.info("Wrote %s", path)
    return path


def _link_installed_tiers(settings) -> None:
    """The tiers installed in the user's own data folder, linked into the throw-away one:
    the pictures show the tier this machine's set-up gives, not "not installed"."""
    from bookreader.config import default_data_dir

    source = default_data_dir() / "models"
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.gguf")) if source.is_dir() else []:
        target = settings.models_dir / path.name
        if not target.exists():
            target.symlink_to(path.resolve())


def make_screenshots(out_dir: Path, backend: str = "extractive") -> list[Path]:
    from PySide6.QtCore import QPoint

    from bookreader.app import build_app, default_book
    from bookreader.config import Settings
    from bookreader.core.types import Mode
    from bookreader.ui.messages import RecordingSink
    from bookreader.ui.page_layout import WordRef

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="bookreader-shots-") as tmp:
        _use_big_offscreen_screen(Path(tmp))
        data = Path(tmp) / "data"
        settings = Settings(data_dir=data).updated(llm_backend=backend)
        first_token_s = float(os.environ.get("SCREENSHOT_FIRST_TOKEN_S") or 0)
        if first_token_s:  # a machine busy with other work answers slower than a student's
            settings = settings.updated(budgets={name: {"first_token_s": first_token_s}
                                                 for name in ("tiny", "small", "better")})
        settings.save()
        _link_installed_tiers(settings)
        ctx = build_app(["screenshots"], settings=settings, sink=RecordingSink())
        win, qapp, service = ctx.window, ctx.qapp, ctx.service
        win.resize(WIDTH, HEIGHT)
        win.default_dock_sizes()
        sample = default_book(settings)
        if sample is None:
            raise RuntimeError("The bundled sample book is not available")
        finished: set[str] = set()
        service.ingest_finished.connect(lambda p, info: finished.add(p))
        progress: dict[str, tuple] = {}
        service.ingest_progressed.connect(lambda p, d, t, m: progress.__setitem__(p, (d, t, m)))

        # 1. The library while a second, longer book is being indexed.
        win.open_book(sample)
        _pump(qapp, lambda: win.reader.is_page_rendered(0), 60, "the first page")
        _pump(qapp, lambda: len(finished) >= 1, 600, "the sample book's index")
        big = _big_book(Path(tmp) / "cell-biology-notes.pdf")
        service.ingest(big)
        key = str(big.resolve())
        _pump(qapp, lambda: progress.get(key, ("", 0, ""))[2] == "Embedding"
              and progress[key][0] > 0, 600, "indexing progress")
        win.side_tabs.setCurrentWidget(win.library_panel)
        _settle(qapp)
        written.append(_composite(win, None, "library-indexing.png", out_dir))
        service.cancel_ingest(big)
        win.side_tabs.setCurrentWidget(win.toc_panel)

        # 2. A selection and its context menu.
        reader = win.reader
        page = _page_with_text(reader, "Ask about this", qapp) or 0
        reader.go_to_page(page)
        _pump(qapp, lambda: bool(reader.words(page)), 30, "the page's words")
        words = reader.words(page)
        first, last = _sentence_span(words)
        reader.select_words(WordRef(page, first), WordRef(page, last))
        center = reader.word_center(page, last)
        reader.show_context_menu(reader.viewport().mapToGlobal(center + QPoint(8, 8)))
        _settle(qapp)
        written.append(_composite(win, reader.context_menu, "selection-menu.png", out_dir))
        reader.context_menu.close()

        # 3. A streamed answer with citations (a whole-book question).
        answers = []
        win.chat.answer_finished.connect(answers.append)
        win.chat.set_selection(reader.selected_text(), Mode.SELECTED, (page, page))
        win.chat.question_edit.setPlainText("What does the truncation warning say?")
        win.chat.ask()
        _pump(qapp, lambda: len(answers) >= 1, 300, "the first answer")
        win.chat.clear_selection()
        reader.clear_selection()
        from bookreader.core.types import Outcome

        def answer_cards() -> list:
            return [c for c in win.chat.cards()
                    if c.answer is not None and c.answer.mode is Mode.BOOK
                    and c.answer.outcome is Outcome.ANSWER
                    and any(x.verified for x in c.answer.citations)]

        if _ask_until(qapp, win.chat, answers, ANSWER_QUESTIONS, answer_cards) is None:
            log.warning("No whole-book question got a verified answer with backend %s",
                        backend)
        _settle(qapp)
        written.append(_composite(win, None, "answer-citations.png", out_dir))

        # 3b. A quotes card: no verified answer could be written, so the card quotes the
        # passages that address the question, each with its citation.  Which question
        # ends so depends on the model: ask until one does (none with the extractive
        # backend, whose answers are copied sentences).
        def quotes_cards() -> list:
            return [c for c in win.chat.cards()
                    if c.answer is not None and c.answer.outcome is Outcome.QUOTES]

        if _ask_until(qapp, win.chat, answers, QUOTES_QUESTIONS, quotes_cards) is not None:
            _settle(qapp)
            written.append(_composite(win, None, "quotes-card.png", out_dir))
        else:
            log.warning("No question ended in quotes with backend %s; skipped "
                        "quotes-card.png", backend)

        # 4. Follow a citation.
        cards = win.chat.cards()
        chips = [c for card in reversed(cards) for c in card.citation_chips() if c.isEnabled()]
        if chips:
            reader.go_to_page(0)
            chips[0].click()
            _pump(qapp, lambda: reader.citation_highlight() is not None and
                  bool(reader.citation_highlight()[1]), 30, "the highlighted excerpt")
            _pump(qapp, lambda: reader.is_page_rendered(reader.current_page()), 30,
                  "the cited page")
            _settle(qapp)
            written.append(_composite(win, None, "citation-followed.png", out_dir))
        else:
            log.warning("The answer had no citation to follow; skipped citation-followed.png")

        # 5. Settings.
        dialog = win.show_settings()
        _settle(qapp)
        written.append(_composite(win, dialog, "settings.png", out_dir))
        dialog.reject()

        # 6. The instructor's dialog, after an export.
        audit = win.show_audit()
        audit.export_path.setText(str(Path(tmp) / "export" / "audit-export.csv"))
        exported = []
        audit.export_finished.connect(lambda q, n, p: exported.append(q))
        audit.export()
        _pump(qapp, lambda: bool(exported), 60, "the audit export")
        _settle(qapp)
        written.append(_composite(win, audit, "instructor.png", out_dir))
        audit.reject()

        win.close()
        ctx.lock.unlock()
    return written


def _page_with_text(reader, text: str, qapp) -> int | None:
    """The first page (of the first 12) whose words contain ``text``."""
    want = text.split()
    for page in range(min(12, reader.page_count)):
        reader.go_to_page(page)
        _pump(qapp, lambda page=page: bool(reader.words(page)), 30, f"words of page {page + 1}")
        tokens = [w.text.strip("“”\"'.,:") for w in reader.words(page)]
        for i in range(len(tokens) - len(want) + 1):
            if tokens[i:i + len(want)] == want:
                return page
    return None


def _sentence_span(words) -> tuple[int, int]:
    """A two-line stretch of body text to select (indexes in reading order)."""
    body = [w for w in words if len(w.text) > 2]
    start = body[min(len(body) - 1, len(body) // 3)] if body else words[0]
    lines = [w for w in words if w.index >= start.index]
    end = lines[min(len(lines) - 1, 24)]
    return start.index, end.index


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    out = Path(os.environ.get("SCREENSHOTS_DIR") or "docs/screenshots")
    backend = os.environ.get("SCREENSHOT_BACKEND", "auto")
    paths = make_screenshots(out, backend)
    for p in paths:
        print(p)
    return 0 if len(paths) >= 6 else 1


if __name__ == "__main__":
    sys.exit(main())
