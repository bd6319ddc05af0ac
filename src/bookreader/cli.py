"""The ``bookreader`` command line: a thin argparse layer over :class:`~bookreader.library.Library`.

No Qt here: ``bookreader gui`` imports :mod:`bookreader.app` only when it runs.

Exit codes: 0 success; 1 an unexpected error (one line on stderr, the traceback in the log
file); 2 an error the user can fix (the message says how); 130 cancelled (Ctrl-C).

Ctrl-C during ``ingest`` or ``ask`` first asks the work to stop at its next checkpoint
(an interrupted ingest resumes when run again); a second Ctrl-C stops at once.

Page ranges (``--pages A-B``) are 0-based physical page indexes, inclusive, the same
numbers the JSON output uses (``page_start``, ``page_end``, ``page``).

Other modules can add sub-commands: ``bookreader.cli_audit.register(subparsers)`` is
called when that module exists; its parsers set ``func(args) -> int`` as a default and
may call :func:`load_settings` and :func:`open_library`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import logging.handlers
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TextIO

from bookreader import __version__
from bookreader.config import DATA_DIR_ENV, Settings
from bookreader.core.types import BookState, answer_to_dict
from bookreader.errors import BookReaderError, Cancelled, InvalidInput
from bookreader.logs import LOG_FILE, add_file_handler, quiet_sdk_loggers

log = logging.getLogger(__name__)

DEMO_QUESTION = "How do I ask a question about a selected passage?"


# --- settings, logging, library -------------------------------------------------------
def load_settings(args: argparse.Namespace) -> Settings:
    """Settings from the data folder (``--data-dir``, else ``$BOOKREADER_DATA_DIR``)."""
    data_dir = getattr(args, "data_dir", None)
    settings = Settings.load(Path(data_dir).expanduser().resolve() if data_dir else None)
    model = getattr(args, "model", None)  # ask/serve --model: the model on a model server
    return settings.updated(openai_model=model.strip()) if model and model.strip() else settings


def setup_logging(settings: Settings, verbose: bool = False) -> tuple[Optional[Path], list]:
    """Log to the rotating file in the data folder's ``logs`` (see :mod:`bookreader.logs`).

    Returns:
        The log file's path (None when it cannot be written) and the handlers added to
        the root logger, which :func:`main` removes again when the command ends.
    """
    root = logging.getLogger()
    path: Optional[Path] = settings.log_dir / LOG_FILE
    added: list[logging.Handler] = []
    handler = add_file_handler(path, process="cli", replace=False)
    if handler is None:
        path = None
    else:
        added.append(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    quiet_sdk_loggers()
    if verbose:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(console)
        added.append(console)
    return path, added


def report_crashes(settings: Settings) -> None:
    """Say on stderr when an earlier run crashed in native code, then log this run's."""
    from bookreader.crash import enable_crash_log, take_crash_reports

    for report in take_crash_reports(settings.log_dir):
        log.warning("%s", report.summary())
        sys.stderr.write(f"bookreader: {report.summary()}\n"
                         "  Please attach it when you report the problem.\n")
    enable_crash_log(settings.log_dir, "cli")


def open_library(settings: Settings):
    """The Library for ``settings`` (imported lazily: ``--version`` stays instant)."""
    from bookreader.library import Library

    return Library(settings)


#: ``--pages pdf:6-8``: 1-based page numbers as a PDF viewer counts them.
PDF_PAGES_PREFIX = "pdf:"


def parse_pages(text: Optional[str], find_label: Optional[Callable[[str], Optional[int]]] = None,
                page_count: Optional[int] = None) -> Optional[tuple[int, int]]:
    """``--pages`` -> 0-based physical pages ``(first, last)``, inclusive.

    ``"129-131"``, ``"xii"``: printed page labels, as the window shows them (``find_label``
    maps a label to its page).  ``"pdf:6-8"``: 1-based page numbers as a PDF viewer counts
    them, whatever is printed on the pages.
    """
    if text is None:
        return None
    raw = text.strip().replace("\u2013", "-")
    physical = raw.lower().startswith(PDF_PAGES_PREFIX)
    body = raw[len(PDF_PAGES_PREFIX):].strip() if physical else raw
    parts = [p.strip() for p in body.split("-")]
    if not body or len(parts) > 2 or not all(parts):
        raise InvalidInput(
            f"'{text}' is not a page range. Give printed page numbers as the book shows them "
            "(129-131, xii), or PDF page numbers with pdf: (pdf:6-8)."
        )
    if physical:
        try:
            a, b = (int(p) - 1 for p in (parts[0], parts[-1]))
        except ValueError:
            raise InvalidInput(
                f"'{text}' is not a PDF page range: after pdf: give numbers, e.g. pdf:6-8."
            ) from None
    else:
        if find_label is None:
            raise InvalidInput(
                f"Printed page numbers ('{text}') need the book: add --book BOOK, or give PDF "
                "page numbers with pdf: (pdf:6-8)."
            )
        found = [find_label(p) for p in (parts[0], parts[-1])]
        missing = [p for p, f in zip((parts[0], parts[-1]), found) if f is None]
        if missing:
            raise InvalidInput(
                f"The book has no page printed as '{missing[0]}'. Give printed page numbers as "
                "the window shows them, or PDF page numbers with pdf: (pdf:6-8)."
            )
        a, b = found[0], found[1]
        assert a is not None and b is not None  # checked just above: no page is missing
    if a < 0 or b < a or (page_count is not None and b >= page_count):
        pages = f" (the book has {page_count} pages)" if page_count else ""
        raise InvalidInput(
            f"'{text}' is not a page range of this book{pages}: pages start at 1 and the "
            "first must not be after the last."
        )
    return a, b


def book_pages(lib, book: Optional[str], text: Optional[str]) -> Optional[tuple[int, int]]:
    """``--pages`` of a command, read against the book's printed labels when there is one."""
    if text is None:
        return None
    if not book:
        return parse_pages(text)
    pdf = lib.open_pdf(book)
    return parse_pages(text, pdf.find_label, pdf.page_count)


# --- progress and cancel --------------------------------------------------------------
class ProgressBar:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, stream: TextIO = sys.stderr, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self._message = ""
        self._last = 0.0
        self._last_pct = -1

    def __call__(self, done: int, total: int, message: str) -> None:
        now = time.monotonic()
        if message != self._message:
            if self._message and self.tty:
                self.stream.write("\n")
            self._message = message
            self._last_pct = -1
        elif done < total and now - self._last < 0.1:
            return
        self._last = now
        pct = int(100 * done / total) if total else 100
        if self.tty:
            filled = self.width * pct // 100
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r{message:<16} [{bar}] {done}/{total}")
        elif pct // 10 != self._last_pct // 10 or done == total:
            self.stream.write(f"{message}: {done}/{total}\n")
        else:
            return
        self._last_pct = pct
        self.stream.flush()

    def finish(self) -> None:
        if self._message and self.tty:
            self.stream.write("\n")
            self.stream.flush()
        self._message = ""


class CancelOnInterrupt:
    """First Ctrl-C sets a flag the work polls (it stops cleanly); a second one aborts."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._previous: Any = None

    def __call__(self) -> bool:
        return self.requested.is_set()

    def _handler(self, signum, frame) -> None:
        if self.requested.is_set():
            raise KeyboardInterrupt
        self.requested.set()
        sys.stderr.write("\nStopping... (press Ctrl-C again to stop at once)\n")

    def __enter__(self) -> "CancelOnInterrupt":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


# --- commands ---------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    settings = load_settings(args)
    with open_library(settings) as lib, CancelOnInterrupt() as cancel:
        bar = ProgressBar()
        try:
            info = lib.ingest(args.pdf, password=args.password, progress=bar, cancel=cancel)
        except Cancelled:
            bar.finish()
            sys.stderr.write("Indexing stopped. Run the same command again to resume it.\n")
            raise
        finally:
            bar.finish()
    if args.json:
        _print_json(
            {"book_id": info.book_id, "title": info.title, "pages": info.page_count,
             "chunks": info.chunk_count}
        )
    else:
        print(f"Indexed '{info.title}' ({info.page_count} pages, {info.chunk_count} chunks).")
        print(f"Book id: {info.book_id}")
        if info.message:
            print(info.message)
    return 0


def _book_json(info) -> dict:
    return {
        "book_id": info.book_id, "title": info.title, "path": info.path,
        "pages": info.page_count, "chunks": info.chunk_count, "state": info.state,
        "message": info.message, "pages_without_text": list(info.pages_without_text),
    }


def cmd_books(args: argparse.Namespace) -> int:
    with open_library(load_settings(args)) as lib:
        books = lib.books()
    if args.json:
        _print_json([_book_json(b) for b in books])
        return 0
    if not books:
        print("The library is empty. Add a book with `bookreader ingest FILE.pdf`.")
        return 0
    for b in books:
        state = "" if b.state is BookState.READY else f"  [{b.state.value}]"
        print(f"{b.book_id[:12]}  {b.title}  ({b.page_count} pages, {b.chunk_count} chunks){state}")
        print(f"{'':12}  {b.path}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with open_library(load_settings(args)) as lib:
        info = lib.remove(args.book)
    print(f"Removed '{info.title}' ({info.book_id}) from the library. The PDF was not touched.")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from bookreader.core.types import SearchFilter

    with open_library(load_settings(args)) as lib:
        pages = book_pages(lib, args.book, args.pages)
        chapters: tuple[str, ...] = ()
        if args.chapter:
            chapters = tuple(lib.match_chapters(args.book, args.chapter))
        flt = None
        if pages or chapters:
            flt = SearchFilter(
                page_start=pages[0] if pages else None,
                page_end=pages[1] if pages else None,
                chapters=chapters,
            )
        retrieval = lib.search(args.book, args.query, top_k=args.top_k, flt=flt)
        covered = lib.retriever(args.book).is_covered(retrieval)
    results = [
        {
            "chunk_id": p.chunk.chunk_id,
            "page_start": p.chunk.page_start,
            "page_end": p.chunk.page_end,
            "page_label": p.chunk.page_label,
            "chapter": p.chunk.chapter,
            "section": p.chunk.section,
            "score": round(p.score, 4),
            "dense_score": round(p.dense_score, 4),
            "bm25_score": round(p.bm25_score, 4),
            "text": p.chunk.text,
        }
        for p in retrieval.passages
    ]
    if args.json:
        _print_json({"confidence": retrieval.confidence, "covered": covered, "results": results})
        return 0
    verdict = "covered" if covered else "probably not covered in this book"
    print(f"Confidence {retrieval.confidence:.2f} ({verdict}), {retrieval.latency_ms:.0f} ms")
    for i, r in enumerate(results, 1):
        where = " / ".join(x for x in (r["chapter"], r["section"]) if x)
        print(f"\n{i}. page {r['page_label']} (index {r['page_start']})  score {r['score']:.3f}"
              f"  {where}")
        snippet = r["text"] if len(r["text"]) <= 300 else r["text"][:297] + "..."
        print(f"   {snippet}")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from bookreader.core.types import Mode

    mode = Mode(args.mode)
    selection = args.selection
    if args.selection_file:
        try:
            selection = Path(args.selection_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(
                f"Cannot read the selection file {args.selection_file}: {exc}. "
                "Give a UTF-8 text file."
            ) from exc
    if mode is not Mode.SELECTED and not args.book:
        raise InvalidInput(f"The {mode.value} mode needs a book: add --book BOOK.")
    if mode is not Mode.BOOK and selection is None:
        raise InvalidInput(
            f"The {mode.value} mode needs the selected text: add --selection TEXT or "
            "--selection-file FILE."
        )
    # The model's raw output is not shown: only the checked answer is printed, once (the
    # raw text may still carry its own "Confidence: 0.92" line or claims grounding removed).
    waiting = WaitingDots(enabled=not args.json)

    def on_token(text: str) -> None:
        waiting.tick()

    settings = load_settings(args)
    from bookreader.cli_serve import remote_model_notice

    remote_model_notice(settings, args.backend)
    with open_library(settings) as lib, CancelOnInterrupt() as cancel:
        pages = book_pages(lib, args.book, args.pages)
        answer = lib.ask(
            args.question, mode=mode, book=args.book, selection=selection, pages=pages,
            backend=args.backend, on_token=on_token, cancel=cancel,
        )
    waiting.finish()
    if cancel():
        raise Cancelled()
    if args.json:
        _print_json(answer_to_dict(answer))
        return 2 if answer.error else 0
    print_answer(answer)
    return 2 if answer.error else 0


class WaitingDots:
    """A dot on stderr every few streamed tokens, so a terminal shows work is going on."""

    def __init__(self, enabled: bool = True, every: int = 8) -> None:
        self.enabled = enabled and sys.stderr is not None and sys.stderr.isatty()
        self.every = every
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if self.enabled and self.count % self.every == 1:
            sys.stderr.write("." if self.count > 1 else "Answering.")
            sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled and self.count:
            sys.stderr.write("\n")
            sys.stderr.flush()


def print_answer(answer) -> None:
    """The checked answer, its sources and its confidence, each once."""
    if answer.replaced_by_validator:
        print("(The model's answer was not supported by the text; this is what the text "
              "supports.)")
    print(answer.text)
    if answer.truncation_warning:
        print(f"\nNote: {answer.truncation_warning}")
    if answer.citations:
        print("\nSources:")
        for c in answer.citations:
            mark = "verified" if c.verified else "not verified"
            where = f"page {c.page_label}" if c.page_label else "selection"
            print(f"  - {c.section or ''} ({where}, {mark}): \"{c.excerpt}\"")
    model = f"{answer.backend}" + (f" / {answer.model}" if answer.model else "")
    print(
        f"\nConfidence: {answer.confidence_level} ({answer.confidence:.2f})  "
        f"Model: {model}  Time: {answer.latency_ms / 1000:.1f} s"
    )


def cmd_gui(args: argparse.Namespace) -> int:
    from bookreader.qt_platform import display_problem

    problem = display_problem()
    if problem is not None:
        print(f"{problem}\nShowing the command-line demo instead.\n", file=sys.stderr)
        return _demo(args)
    try:
        app = importlib.import_module("bookreader.app")
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith(("bookreader.app", "PySide6", "shiboken6")):
            raise
        print(f"The reader window is not available ({exc.name} is missing); "
              "showing the command-line demo instead.", file=sys.stderr)
        return _demo(args)
    argv = [str(args.pdf)] if args.pdf else []
    if getattr(args, "data_dir", None):
        argv = ["--data-dir", str(args.data_dir), *argv]
    result = app.main(argv)
    return int(result or 0)


def _demo(args: argparse.Namespace) -> int:
    """Ingest a book (the bundled sample unless one is given) and answer a demo search."""
    settings = load_settings(args)
    pdf = Path(args.pdf) if args.pdf else None
    if pdf is None:
        from bookreader.core.samplebook import build_sample_book

        pdf = settings.data_dir / "sample" / "bookreader-guide.pdf"
        if not pdf.exists():
            pdf.parent.mkdir(parents=True, exist_ok=True)
            build_sample_book(pdf)
    with open_library(settings) as lib, CancelOnInterrupt() as cancel:
        bar = ProgressBar()
        try:
            info = lib.ingest(pdf, progress=bar, cancel=cancel)
        finally:
            bar.finish()
        print(f"Book: {info.title} ({info.page_count} pages, {info.chunk_count} chunks)")
        print(f"Search: {DEMO_QUESTION}")
        retrieval = lib.search(info.book_id, DEMO_QUESTION, top_k=3)
    for i, p in enumerate(retrieval.passages, 1):
        text = p.chunk.text if len(p.chunk.text) <= 240 else p.chunk.text[:237] + "..."
        print(f"\n{i}. page {p.chunk.page_label}, {p.chunk.section or p.chunk.chapter}: {text}")
    print(f"\nTry: bookreader ask --book {info.book_id[:12]} \"{DEMO_QUESTION}\"")
    return 0


# --- the parser -------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bookreader",
        description="Read textbooks offline and ask questions answered from the book, with "
        "checked citations.",
    )
    parser.add_argument("--version", action="version", version=f"bookreader {__version__}")
    parser.add_argument("--data-dir", help=f"data folder (default: ${DATA_DIR_ENV} or the "
                        "platform's user data folder)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also log to stderr")
    parser.add_argument("--self-test", action="store_true",
                        help="index the sample book and ask in all three modes, then exit "
                        "(0 when every step passed)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("ingest", help="index a PDF so it can be searched and asked about")
    p.add_argument("pdf", help="the PDF file")
    p.add_argument("--password", help="password of an encrypted PDF")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("books", help="list the books in the library")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=cmd_books)

    p = sub.add_parser("remove", help="remove a book's index (the PDF is kept)")
    p.add_argument("book", help="book id, unique id prefix, or the PDF's path")
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser("search", help="hybrid search in one book")
    p.add_argument("book", help="book id, unique id prefix, or the PDF's path")
    p.add_argument("query", help="what to look for")
    p.add_argument("--top-k", type=int, default=5, help="passages to show (default 5)")
    p.add_argument("--pages", metavar="A-B", help="only pages A to B: printed page numbers as "
                   "the book shows them (129-131, xii-xv), or PDF page numbers with pdf: "
                   "(pdf:6-8)")
    p.add_argument("--chapter", help="only this chapter (its title, or a unique part of it)")
    p.add_argument("--json", action="store_true",
                   help='print {"confidence", "covered", "results": [...]} as JSON')
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="ask a question about a book or a selected passage")
    p.add_argument("question", help="the question")
    p.add_argument("--book", help="book id, unique id prefix, or the PDF's path")
    p.add_argument("--mode", choices=("book", "selected", "highlight"), default="book",
                   help="book: the whole book; selected: only the selection; highlight: the "
                   "selection plus nearby passages")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--selection", help="the selected text")
    sel.add_argument("--selection-file", metavar="F", help="read the selected text from F")
    p.add_argument("--pages", metavar="A-B",
                   help="pages of the selection: printed page numbers (129-131, xii), or PDF "
                   "page numbers with pdf: (pdf:6-8)")
    p.add_argument("--backend", help="auto, tiny, small, better, extractive, claude, "
                   "openai:URL (a model server, e.g. openai:http://127.0.0.1:11434/v1) or "
                   "gguf:PATH (default: the settings' llm_backend)")
    p.add_argument("--model", help="with --backend openai:URL, the model id on that server "
                   "(default: the settings' openai_model, else the first it lists)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("gui", help="open the reader window")
    p.add_argument("pdf", nargs="?", help="a PDF to open (default: the bundled sample book)")
    p.set_defaults(func=cmd_gui)

    from bookreader import cli_doctor, cli_models

    cli_doctor.register(sub)
    cli_models.register(sub)

    from bookreader import cli_serve

    cli_serve.register(sub)

    from bookreader import cli_audit, cli_history

    cli_audit.register(sub)
    cli_history.register(sub)

    from bookreader import cli_study

    cli_study.register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Optional[Callable[[argparse.Namespace], int]] = getattr(args, "func", None)
    if args.self_test:
        from bookreader.cli_doctor import cmd_self_test

        func, args.command = cmd_self_test, "self-test"
    if func is None:
        parser.print_help()
        return 2
    log_path: Optional[Path] = None
    handlers: list = []
    root = logging.getLogger()
    level = root.level
    try:
        settings = load_settings(args)
        log_path, handlers = setup_logging(settings, args.verbose)
        report_crashes(settings)
        log.info("bookreader %s: %s", __version__, args.command)
        return int(func(args) or 0)
    except BookReaderError as exc:
        log.warning("%s failed: %s (%s)", args.command, exc.user_message, exc.details or "")
        sys.stdout.flush()
        sys.stderr.write(f"bookreader: {exc.user_message}\n")
        return 2
    except (Cancelled, KeyboardInterrupt):
        log.info("%s cancelled", args.command)
        sys.stdout.flush()
        sys.stderr.write("\nbookreader: cancelled.\n")
        return 130
    except Exception as exc:  # the one place unexpected errors end up
        log.exception("Unexpected error in %s", args.command)
        where = f" Details are in {log_path}." if log_path else ""
        sys.stderr.write(f"bookreader: unexpected error: {type(exc).__name__}: {exc}.{where}\n")
        return 1
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
