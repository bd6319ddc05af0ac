"""``tools/window_trial.py``: use the app as a student would, and keep what they would see.

Opens a book in the real window (``MainWindow``, the library in its own process as in the
app), waits for its index, then for each line of a questions file types the question into
the chat panel and presses Enter, waits for the answer card to finish, clicks its first
citation chip (the page jumps and the excerpt is highlighted) and saves a picture of the
whole window.  Writes ``qNN.png`` and ``answers.json`` to ``--out`` and prints a table.

Under a virtual display (as the project guide asks)::

    xvfb-run -a -s "-screen 0 1600x1000x24" env QT_QPA_PLATFORM=xcb HF_HUB_OFFLINE=1 \\
        PYTHONPATH=$PWD/src .venv/bin/python tools/window_trial.py \\
        --book /work/shared/eval/books/thinkjava2.pdf --questions questions.txt \\
        --out /tmp/trial [--data-dir /tmp/trial-data] [--backend extractive]

Without ``--book`` the bundled sample book is opened.  Without ``--data-dir`` a fresh
temporary data folder is used (the book is indexed again on every run: pass a data folder
to keep the index between runs); the model tiers installed in the user's own data folder
are linked into it, so ``auto`` picks the tier this machine's set-up gives.  With no display
(and no ``QT_QPA_PLATFORM``) it runs offscreen.  The questions file has one question a
line; blank lines and lines starting with ``#`` are skipped.

Exit status: 0 when every question ended with a finished card (whatever its outcome), 1
when one did not (refused, failed, or no answer within ``--answer-timeout``), 2 when the
trial could not start (the book did not open or was not indexed in time).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from dataclasses import dataclass
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# tools/ is on the path when this file runs as a script and in the tests (pyproject).
from screenshots import (_link_installed_tiers, _pump, _settle,  # noqa: E402
                         _use_big_offscreen_screen)

log = logging.getLogger(__name__)

WIDTH, HEIGHT = 1440, 900
ANSWER_TIMEOUT_S = 180.0
INDEX_TIMEOUT_S = 1800.0
HIGHLIGHT_TIMEOUT_S = 20.0


class TrialError(RuntimeError):
    """The trial could not go on (the book did not open, indexing failed or timed out)."""


#: ``[select pdf:N "first words" ... "last words"] question`` (or ``nearby``).
_SELECT_LINE = re.compile(
    r'^\[(select|nearby)\s+pdf:(\d+)\s+"(.+?)"\s*(?:\.\.\.|\u2026)\s*"(.+?)"\]\s*(.+)$')


@dataclass(frozen=True)
class Selection:
    """A passage to select before asking: its page (0-based), first and last words."""

    nearby: bool
    page: int
    first: str
    last: str


def parse_line(line: str) -> tuple[Optional[Selection], str]:
    """The selection a question line asks about (None for a whole-book question) and the
    question itself."""
    m = _SELECT_LINE.match(line.strip())
    if m is None:
        return None, line.strip()
    return Selection(m.group(1) == "nearby", int(m.group(2)) - 1, m.group(3),
                     m.group(4)), m.group(5).strip()


def _bare(word: str) -> str:
    return re.sub(r"[^\w]", "", word).lower()


def _tokens(text: str) -> list[str]:
    return [t for t in map(_bare, text.split()) if t]


def find_run(words: list[str], first: str, last: str) -> Optional[tuple[int, int]]:
    """Indexes of the first word of ``first`` and the last word of ``last`` in ``words``
    (a page's words as the reader lays them out), compared without punctuation or case."""
    toks = [_bare(w) for w in words]
    a, b = _tokens(first), _tokens(last)
    if not a or not b:
        return None
    for i in range(len(toks) - len(a) + 1):
        if toks[i:i + len(a)] != a:
            continue
        for j in range(i + len(a) - 1, len(toks)):
            if j - len(b) + 1 >= i and toks[j - len(b) + 1:j + 1] == b:
                return i, j
        return None
    return None


def read_questions(path: Path) -> list[str]:
    """One question a line; blank lines and ``#`` comments skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [q.strip() for q in lines if q.strip() and not q.lstrip().startswith("#")]


def _choose_platform(tmp: Path) -> None:
    """Offscreen (with a large virtual screen) when there is no display to draw on."""
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is not None:
        return  # the platform is chosen already (the tests' own application)
    platform = os.environ.get("QT_QPA_PLATFORM")
    has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if platform == "offscreen" or (platform is None and not has_display):
        os.environ.pop("QT_QPA_PLATFORM", None)
        _use_big_offscreen_screen(tmp)


def _settings_for(data_dir: Path, backend: Optional[str], fresh: bool):
    from bookreader.config import Settings

    settings = Settings.load(data_dir)
    if backend:
        settings = settings.updated(llm_backend=backend)
    if fresh:
        settings.save()
    else:
        settings.ensure_dirs()  # a given data folder keeps its own settings.json
    _link_installed_tiers(settings)
    return settings


def _default_app(settings):
    from bookreader.app import build_app
    from bookreader.ui.messages import RecordingSink

    return build_app(["window-trial"], settings=settings, sink=RecordingSink())


def _badges(card) -> list[str]:
    from PySide6.QtWidgets import QLabel

    return [w.text() for w in card.badges_host.findChildren(QLabel)
            if w.objectName() == "badge"]


def _sink_messages(sink) -> dict[str, list]:
    return {kind: [list(m) for m in getattr(sink, kind, [])]
            for kind in ("errors", "infos", "crashes", "crash_reports")
            if getattr(sink, kind, None)}


class Trial:
    """The window, the signals the trial listens to, and the records it keeps."""

    def __init__(self, ctx, out_dir: Path, say: Callable[[str], None]) -> None:
        self.ctx = ctx
        self.win = ctx.window
        self.qapp = ctx.qapp
        self.out_dir = out_dir
        self.say = say
        self.failed: dict[str, str] = {}
        self.cancelled: set[str] = set()
        self.catalogue_read = False
        self._last_progress = 0.0
        self._end: Optional[tuple[str, Any]] = None
        self._first_token: Optional[float] = None
        service, chat = self.win.service, self.win.chat
        service.books_changed.connect(self._on_books)
        service.ingest_progressed.connect(self._on_progress)
        service.ingest_failed.connect(self._on_failed)
        service.ingest_cancelled.connect(self.cancelled.add)
        chat.answer_finished.connect(lambda a: self._ended("answer", a))
        chat.answer_failed.connect(lambda m: self._ended("failed", m))
        chat.answer_stopped.connect(lambda: self._ended("stopped", None))
        chat.tokens_streamed.connect(self._on_tokens)

    # --- signals --------------------------------------------------------------------------
    def _on_books(self, _books) -> None:
        self.catalogue_read = True

    def _on_progress(self, path: str, done: int, total: int, message: str) -> None:
        now = time.monotonic()
        if now - self._last_progress >= 15 or (total and done >= total):
            self._last_progress = now
            self.say(f"  indexing {Path(path).name}: {message or 'working'} {done}/{total}")

    def _on_failed(self, path: str, exc: BaseException) -> None:
        self.failed[path] = getattr(exc, "user_message", "") or repr(exc)

    def _ended(self, how: str, value: Any) -> None:
        if self._end is None:
            self._end = (how, value)

    def _on_tokens(self, _text: str) -> None:
        if self._first_token is None:
            self._first_token = time.monotonic()

    # --- the book ---------------------------------------------------------------------------
    def open_book(self, book: Path, index_timeout_s: float) -> None:
        """Open ``book`` as File > Open does; wait for its first page and its index."""
        win, qapp = self.win, self.qapp
        # The catalogue first, so a book indexed in an earlier run is known as such.
        _pump(qapp, lambda: self.catalogue_read, 180, "the library's catalogue")
        sink = self.ctx.sink
        errors_before = len(getattr(sink, "errors", []))
        win.open_book(book)
        try:
            _pump(qapp, lambda: win.current_path is not None
                  or len(getattr(sink, "errors", [])) > errors_before, 120, "the book to open")
        except TimeoutError as exc:
            raise TrialError(f"{book} did not open within 120 s") from exc
        if win.current_path is None:
            raise TrialError(f"{book} could not be opened: {sink.errors[-1]}")
        path = win.current_path
        _pump(qapp, lambda: win.reader.is_page_rendered(max(0, win.reader.current_page())),
              60, "the first page")
        start = time.monotonic()
        if not win.chat.book_ready:
            self.say(f"Indexing {Path(path).name} (timeout {index_timeout_s:.0f} s)…")
        try:
            _pump(qapp, lambda: win.chat.book_ready or path in self.failed
                  or path in self.cancelled, index_timeout_s, "the index")
        except TimeoutError as exc:
            raise TrialError(f"{Path(path).name} was not indexed within "
                             f"{index_timeout_s:.0f} s (see --index-timeout; the window "
                             f"said: {win.statusBar().currentMessage()!r})") from exc
        if path in self.failed:
            raise TrialError(f"Indexing {Path(path).name} failed: {self.failed[path]}")
        if path in self.cancelled:
            raise TrialError(f"Indexing {Path(path).name} was cancelled")
        self.say(f"{Path(path).name} is ready for questions "
                 f"({time.monotonic() - start:.0f} s waiting for the index)")

    # --- one question -------------------------------------------------------------------------
    def ask(self, number: int, question: str, answer_timeout_s: float) -> dict:
        """Type ``question``, press Enter, wait for the card, follow its first citation,
        photograph the window.  Returns the record for answers.json."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        qapp, chat = self.qapp, self.win.chat
        selection, question = parse_line(question)
        record: dict[str, Any] = {"n": number, "question": question}
        if selection is not None:
            record["selection"] = self._select(selection)
        cards_before = {id(c) for c in chat.cards()}
        self._end, self._first_token = None, None
        edit = chat.question_edit
        edit.setFocus()
        QTest.keyClicks(edit, question)
        start = time.monotonic()
        QTest.keyClick(edit, Qt.Key.Key_Return)
        sent = [c for c in chat.cards() if id(c) not in cards_before]
        if not sent:
            # The panel refused the question (not indexed, still busy...): say what it said.
            record.update(outcome="not sent", status=chat.status_label.text())
            record["screenshot"] = self._shoot(number)
            return record
        try:
            _pump(qapp, lambda: self._end is not None, answer_timeout_s, "the answer")
        except TimeoutError:
            record["ui_timeout"] = True
            chat.stop()  # the Stop button, as a student who gave up would press it
            try:
                _pump(qapp, lambda: self._end is not None, 60, "the answer to stop")
            except TimeoutError:
                pass
        ended = time.monotonic()
        card = sent[-1]  # this question's card (earlier answers may load around it)
        how, value = self._end or ("no end", None)
        answer = card.answer
        record.update(
            outcome=str(answer.outcome.value) if answer is not None and answer.outcome
            else how,
            shown_text=card.answer_label.text(),
            answer_text=answer.text if answer is not None else "",
            failure=value if how == "failed" else "",
            citations=[{"page": c.page_label, "page_index": c.page, "section": c.section,
                        "verified": bool(c.verified), "excerpt": c.excerpt}
                       for c in (answer.citations if answer is not None else ())],
            model=answer.model if answer is not None else "",
            backend=answer.backend if answer is not None else "",
            confidence=round(answer.confidence, 3) if answer is not None else None,
            confidence_level=str(answer.confidence_level) if answer is not None else "",
            badges=_badges(card),
            meta=card.meta_label.text(),
            first_token_ms=(round(answer.first_token_ms)
                            if answer is not None and answer.first_token_ms is not None
                            else None),
            total_ms=round(answer.latency_ms) if answer is not None else None,
            ui_first_token_ms=(round((self._first_token - start) * 1000)
                               if self._first_token is not None else None),
            ui_total_ms=round((ended - start) * 1000),
        )
        record["followed"] = self._follow_first_citation(card)
        self._show_card(card)
        record["screenshot"] = self._shoot(number)
        if selection is not None:
            chat.clear_selection()  # the next plain line asks the whole book again
            self.win.reader.clear_selection()
        return record

    def _select(self, sel: Selection) -> dict:
        """Select the passage on its page, as a drag would, and choose "Ask about this"
        (or "Ask with nearby pages") from its right-click menu."""
        reader, qapp = self.win.reader, self.qapp
        if not 0 <= sel.page < reader.page_count:
            raise TrialError(f"pdf:{sel.page + 1} is not a page of this book "
                             f"({reader.page_count} pages)")
        reader.go_to_page(sel.page)
        _pump(qapp, lambda: bool(reader.words(sel.page)), 60, "the page's words")
        words = reader.words(sel.page)
        run = find_run([w.text for w in words], sel.first, sel.last)
        if run is None:
            raise TrialError(f"\"{sel.first}\" ... \"{sel.last}\" is not on pdf:{sel.page + 1}")
        from bookreader.ui.page_layout import WordRef

        reader.select_words(WordRef(sel.page, words[run[0]].index),
                            WordRef(sel.page, words[run[1]].index))
        point = reader.word_center(sel.page, words[run[0]].index)
        menu = reader.show_context_menu(reader.viewport().mapToGlobal(point))
        from bookreader.ui.answer_card import NEARBY_ACTION

        wanted = NEARBY_ACTION if sel.nearby else "Ask about this"
        action = next((a for a in menu.actions() if a.text() == wanted), None)
        if action is None:
            raise TrialError(f"The selection's menu has no {wanted!r}")
        action.trigger()
        menu.close()
        _settle(qapp, 0.2)
        return {"page_index": sel.page, "mode": "highlight" if sel.nearby else "selected",
                "text": self.win.chat.selection}

    def _follow_first_citation(self, card) -> Optional[dict]:
        """Click the card's first citation chip as a student would; wait for the page."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        chips = [c for c in card.citation_chips() if c.isEnabled()]
        if not chips:
            return None
        chip, reader, qapp = chips[0], self.win.reader, self.qapp
        page = chip.citation.page
        self.win.chat.scroll_area.ensureWidgetVisible(chip)
        _settle(qapp, 0.2)
        QTest.mouseClick(chip, Qt.MouseButton.LeftButton)
        followed: dict[str, Any] = {"page": chip.citation.page_label, "page_index": page}
        try:
            _pump(qapp, lambda: (reader.citation_highlight() or (None, []))[0] == page
                  and bool((reader.citation_highlight() or (None, []))[1]),
                  HIGHLIGHT_TIMEOUT_S, "the highlighted excerpt")
        except TimeoutError:
            log.warning("The excerpt of p. %s was not highlighted within %.0f s",
                        chip.citation.page_label, HIGHLIGHT_TIMEOUT_S)
        try:
            _pump(qapp, lambda: reader.is_page_rendered(page), 30, "the cited page")
        except TimeoutError:
            log.warning("The cited page %d was not painted within 30 s", page + 1)
        highlight = reader.citation_highlight()
        followed.update(highlight_rects=len(highlight[1]) if highlight else 0,
                        reader_page=reader.current_page())
        return followed

    def _show_card(self, card) -> None:
        """Scroll the chat so the card shows (from its question when it is taller)."""
        _settle(self.qapp, 0.3)
        area = self.win.chat.scroll_area
        if card.height() > area.viewport().height():
            area.verticalScrollBar().setValue(max(0, card.y() - 6))
        else:
            area.ensureWidgetVisible(card, 0, 6)

    def _shoot(self, number: int) -> str:
        _settle(self.qapp, 0.5)
        path = self.out_dir / f"q{number:02d}.png"
        if not self.win.grab().save(str(path)):
            log.warning("Could not save %s", path)
        return str(path)


def run_trial(questions: list[str], out_dir: Path, *, book: Optional[Path] = None,
              data_dir: Optional[Path] = None, backend: Optional[str] = None,
              answer_timeout_s: float = ANSWER_TIMEOUT_S,
              index_timeout_s: float = INDEX_TIMEOUT_S,
              app_factory: Optional[Callable[[Any], Any]] = None,
              say: Callable[[str], None] = print) -> dict:
    """Ask ``questions`` in the real window; write ``qNN.png`` and ``answers.json`` to
    ``out_dir`` and return what answers.json holds.

    ``app_factory(settings)`` builds the app (default: ``build_app`` with the library in its
    own process and a recording message sink); a given factory also closes what it built.

    Raises:
        TrialError: the book did not open, or was not indexed within ``index_timeout_s``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"book": str(book) if book else "(the bundled sample book)",
                              "questions": len(questions), "answers": []}
    with tempfile.TemporaryDirectory(prefix="bookreader-trial-") as tmp:
        _choose_platform(Path(tmp))
        fresh = data_dir is None
        data = Path(tmp) / "data" if data_dir is None else Path(data_dir)
        settings = _settings_for(data, backend, fresh)
        report.update(data_dir=str(data) if not fresh else "(a fresh temporary folder)",
                      llm_backend=settings.llm_backend)
        ctx = (app_factory or _default_app)(settings)
        try:
            win = ctx.window
            win.resize(WIDTH, HEIGHT)
            win.default_dock_sizes()
            if book is None:
                from bookreader.app import default_book

                book = default_book(settings)
                if book is None:
                    raise TrialError("The bundled sample book is not available")
            trial = Trial(ctx, out_dir, say)
            trial.open_book(Path(book), index_timeout_s)
            report["book"] = str(book)
            report["window"] = {"title": win.windowTitle(),
                                "platform": ctx.qapp.platformName()}
            for n, question in enumerate(questions, 1):
                say(f"Q{n:02d}: {question}")
                record = trial.ask(n, question, answer_timeout_s)
                report["answers"].append(record)
                _write(out_dir, report)
                say(f"     -> {record.get('outcome')} "
                    f"({(record.get('ui_total_ms') or 0) / 1000:.1f} s)")
        finally:
            report["messages"] = _sink_messages(ctx.sink)
            _write(out_dir, report)
            if app_factory is None:
                ctx.window.close()
                ctx.lock.unlock()
    return report


def _write(out_dir: Path, report: dict) -> None:
    (out_dir / "answers.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def _seconds(ms: Optional[float]) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f}"


def _asked(record: dict) -> str:
    sel = record.get("selection")
    if not sel:
        return record["question"]
    return f"[{sel['mode']} pdf:{sel['page_index'] + 1}] {record['question']}"


def table(report: dict) -> str:
    """A short table of the trial: one row per question, the shown answer below it."""
    rows = [f"{'#':>2}  {'outcome':<16} {'confidence':<12} {'cites':<6} {'chip':<9} "
            f"{'1st s':>6} {'total s':>7}  question"]
    for r in report["answers"]:
        cites = r.get("citations") or []
        verified = sum(1 for c in cites if c["verified"])
        conf = (f"{r['confidence_level']} {r['confidence']:.2f}"
                if r.get("confidence") is not None else "-")
        followed = r.get("followed")
        chip = (f"p.{followed['page']}{'*' if followed['highlight_rects'] else ''}"
                if followed else "-")
        rows.append(f"{r['n']:>2}  {r.get('outcome', ''):<16} {conf:<12} "
                    f"{f'{verified}/{len(cites)}':<6} {chip:<9} "
                    f"{_seconds(r.get('first_token_ms')):>6} "
                    f"{_seconds(r.get('ui_total_ms')):>7}  {_asked(r)[:60]}")
        shown = " ".join((r.get("shown_text") or r.get("status") or "").split())
        rows.append(f"    {shown[:150]}{'…' if len(shown) > 150 else ''}")
    models = sorted({r.get("model") for r in report["answers"] if r.get("model")})
    rows.append("model: " + (" | ".join(models) or "-"))
    rows.append("chip: the page the first citation opened, * when its excerpt was highlighted")
    return "\n".join(rows)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Ask questions in the real window, as a student would; keep screenshots "
                    "and answers.json.")
    parser.add_argument("--book", type=Path, help="the PDF (default: the bundled sample book)")
    parser.add_argument("--questions", type=Path, required=True,
                        help="one question a line (# comments and blank lines skipped)")
    parser.add_argument("--out", type=Path, required=True, help="folder for qNN.png and "
                        "answers.json")
    parser.add_argument("--data-dir", type=Path, help="data folder to use and keep (default: "
                        "a fresh temporary one, the installed model tiers linked in)")
    parser.add_argument("--backend", help="answering backend (auto, extractive, a tier "
                        "name...; default: the data folder's setting)")
    parser.add_argument("--answer-timeout", type=float, default=ANSWER_TIMEOUT_S,
                        help="seconds to wait for one answer before pressing Stop")
    parser.add_argument("--index-timeout", type=float, default=INDEX_TIMEOUT_S,
                        help="seconds to wait for the book's index")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    questions = read_questions(args.questions)
    if not questions:
        print(f"No questions in {args.questions}", file=sys.stderr)
        return 2
    if args.book is not None and not args.book.is_file():
        print(f"No such book: {args.book}", file=sys.stderr)
        return 2
    try:
        report = run_trial(questions, args.out, book=args.book, data_dir=args.data_dir,
                           backend=args.backend, answer_timeout_s=args.answer_timeout,
                           index_timeout_s=args.index_timeout)
    except (TrialError, TimeoutError) as exc:
        print(f"Trial stopped: {exc}", file=sys.stderr)
        return 2
    print()
    print(table(report))
    print(f"\nScreenshots and answers.json in {args.out}")
    ended = all(r.get("outcome") not in ("not sent", "failed", "stopped", "no end")
                and not r.get("ui_timeout") for r in report["answers"])
    return 0 if ended else 1


if __name__ == "__main__":
    sys.exit(main())
