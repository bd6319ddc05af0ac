"""The composition root: settings, logging, error hooks, the instance lock, the window.

Everything is built here once and handed down; no module keeps a global.  ``main()`` opens
the given PDF, else the bundled sample book.  The Library is created lazily on its worker
thread (it pulls in torch), so the first page paints before any model loads.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import platformdirs

from bookreader.config import APP_NAME, DATA_DIR_ENV, Settings, default_data_dir
from bookreader.errors import AlreadyRunning, BookReaderError
from bookreader.logs import LOG_FILE, add_file_handler

log = logging.getLogger(__name__)

LOCK_FILE = "bookreader.lock"
DATA_DIR_POINTER = "data_dir.txt"  # in the user config dir: a data folder chosen in Settings


# --- data folder ----------------------------------------------------------------------------
def _pointer_file() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / DATA_DIR_POINTER


def resolve_data_dir(explicit: Optional[str | Path] = None) -> Path:
    """``--data-dir``, else ``$BOOKREADER_DATA_DIR``, else the folder chosen in Settings,
    else the platform default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    if os.environ.get(DATA_DIR_ENV):
        return default_data_dir()
    try:
        chosen = _pointer_file().read_text(encoding="utf-8").strip()
    except OSError:
        chosen = ""
    return Path(chosen) if chosen else default_data_dir()


def remember_data_dir(path: Path) -> None:
    """Remember a data folder chosen in Settings for the next start (not when the
    environment variable decides it)."""
    if os.environ.get(DATA_DIR_ENV):
        return
    pointer = _pointer_file()
    try:
        pointer.parent.mkdir(parents=True, exist_ok=True)
        pointer.write_text(str(path), encoding="utf-8")
    except OSError as exc:
        log.warning("Cannot remember the data folder in %s: %s", pointer, exc)


# --- logging ---------------------------------------------------------------------------------
_QT_LEVELS = {0: logging.DEBUG, 1: logging.WARNING, 2: logging.ERROR, 3: logging.CRITICAL,
              4: logging.INFO}


def setup_logging(settings: Settings) -> Path:
    """The window's log file in the data folder (replacing an earlier folder's handler)."""
    settings.ensure_dirs()
    path = settings.log_dir / LOG_FILE
    add_file_handler(path, process="window")
    return path


def install_qt_message_handler() -> None:
    """Route Qt's own warnings into ``logging`` (logger ``qt``)."""
    from PySide6.QtCore import qInstallMessageHandler

    qt_log = logging.getLogger("qt")

    def handler(mode, context, message) -> None:
        level = _QT_LEVELS.get(int(getattr(mode, "value", mode)), logging.INFO)
        if message.startswith("This plugin does not support"):
            level = logging.DEBUG  # the offscreen/minimal platforms lack window features
        qt_log.log(level, "%s", message)

    qInstallMessageHandler(handler)


def install_exception_hooks(on_error: Callable[[type, BaseException, object], None]) -> None:
    """One hook for uncaught exceptions on any thread: log, then the crash dialog."""

    previous = sys.excepthook

    def hook(exc_type, exc, tb) -> None:
        if not issubclass(exc_type, KeyboardInterrupt):
            on_error(exc_type, exc, tb)
        if sys.stderr is not None:  # a console (if any) sees it too
            previous(exc_type, exc, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        hook(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thread_hook


# --- one window per data folder ------------------------------------------------------------------
def acquire_instance_lock(data_dir: Path):
    """A held QLockFile in ``data_dir``; raises AlreadyRunning when another window has it."""
    from PySide6.QtCore import QLockFile

    data_dir.mkdir(parents=True, exist_ok=True)
    lock = QLockFile(str(data_dir / LOCK_FILE))
    lock.setStaleLockTime(0)  # only a dead process's lock is stale
    if not lock.tryLock(200):
        info = lock.getLockInfo()  # (pid, host, app) in PySide6; may be empty
        pid = info[-3] if isinstance(info, tuple) and len(info) >= 3 else None
        owner = f" (process {pid})" if isinstance(pid, int) and pid > 0 else ""
        raise AlreadyRunning(
            f"BookReader is already open on the data folder {data_dir}{owner}. Switch to "
            "that window, or start BookReader with another data folder "
            f"(--data-dir or {DATA_DIR_ENV}).")
    return lock


# --- building the application ------------------------------------------------------------------------
@dataclass
class AppContext:
    """Everything ``build_app`` made, so tests and benchmarks can reach it."""

    qapp: Any  # QApplication
    settings: Settings
    sink: Any  # MessageSink
    reporter: Any  # Reporter
    runner: Any  # TaskRunner
    service: Any  # LibraryService
    window: Any  # MainWindow
    lock: Any  # QLockFile
    log_file: Path
    extras: dict = field(default_factory=dict)

    def switch_data_dir(self, settings: Settings) -> bool:
        """Move to another data folder: its own lock, library, settings and layout."""
        try:
            new_lock = acquire_instance_lock(settings.data_dir)
        except AlreadyRunning as exc:
            self.sink.error("Cannot switch the data folder", exc.user_message)
            return False
        self.runner.shutdown()
        self.service.switch_data_dir(settings)
        self.runner.reopen()
        self.lock.unlock()
        self.lock = new_lock
        self.settings = settings
        self.log_file = setup_logging(settings)
        remember_data_dir(settings.data_dir)
        self.service.refresh_books()
        log.info("Switched to the data folder %s", settings.data_dir)
        return True


def build_app(argv: Optional[list[str]] = None, *, settings: Optional[Settings] = None,
              sink=None, library_factory=None, library_mode: Optional[str] = None,
              show: bool = True) -> AppContext:
    """Make the QApplication (or reuse one), services and the window.

    The Library runs in a child process unless ``library_mode="thread"`` (the default
    when a ``library_factory`` is given: tests share one embedding model that way).

    Raises:
        AlreadyRunning: another window uses the data folder (the sink was told).
    """
    from PySide6.QtWidgets import QApplication

    from bookreader.ui.library_service import LibraryService, default_library_factory
    from bookreader.ui.main_window import MainWindow
    from bookreader.ui.messages import MessageSink, Reporter
    from bookreader.ui.style import apply_style
    from bookreader.ui.workers import TaskRunner

    existing = QApplication.instance()
    qapp = existing if isinstance(existing, QApplication) else QApplication(
        list(argv or []) or [APP_NAME])
    qapp.setApplicationName(APP_NAME)
    qapp.setOrganizationName(APP_NAME)
    apply_style(qapp)  # a QApplication: made just above
    if settings is None:
        settings = Settings.load(resolve_data_dir())
    log_file = setup_logging(settings)
    install_qt_message_handler()
    sink = sink or MessageSink(None, log_file)
    from bookreader.crash import enable_crash_log, take_crash_reports

    crashes = take_crash_reports(settings.log_dir)
    try:
        lock = acquire_instance_lock(settings.data_dir)
    except AlreadyRunning as exc:
        log.warning("%s", exc.user_message)
        sink.error("BookReader is already open", exc.user_message)
        raise
    enable_crash_log(settings.log_dir, "window")
    reporter = Reporter(sink)
    install_exception_hooks(reporter.report_crash)
    runner = TaskRunner(on_unexpected=reporter.report_error)
    mode = library_mode or ("thread" if library_factory else "process")
    service = LibraryService(runner, settings, library_factory or default_library_factory,
                             mode=mode)
    ctx = AppContext(qapp=qapp, settings=settings, sink=sink, reporter=reporter, runner=runner,
                     service=service, window=None, lock=lock, log_file=log_file)
    window = MainWindow(settings, runner, service, sink, reporter,
                        on_switch_data_dir=ctx.switch_data_dir)
    ctx.window = window
    if getattr(sink, "parent", "absent") is None and isinstance(sink, MessageSink):
        sink.parent = window
    if show:
        window.show()
    window.start()
    for report in crashes:  # the next start offers the report (qutebrowser's crashsignal)
        log.warning("%s", report.summary())
        sink.crash_report(report.summary(), report.text)
    log.info("BookReader started on %s", settings.data_dir)
    return ctx


def default_book(settings: Settings) -> Optional[Path]:
    """The bundled sample book (written into the data folder on first use), if available."""
    try:
        from bookreader.core.samplebook import sample_book_path
    except ImportError:
        log.warning("The sample book module is missing; starting without a book")
        return None
    try:
        return Path(sample_book_path(settings.data_dir))
    except BookReaderError as exc:
        log.warning("No sample book: %s", exc.user_message)
        return None


def start_book(ctx: AppContext) -> Optional[Path]:
    """The book a start without a PDF opens: the one the student was reading (it reopens
    at its page), else the bundled sample book."""
    last = ctx.window.last_book() if ctx.window is not None else None
    return Path(last) if last else default_book(ctx.settings)


def self_test(ctx: AppContext, timeout_s: float = 60.0) -> int:
    """Hook for ``--self-test`` (packaging): open the sample book and wait for its first
    painted page.  Returns a process exit code."""
    from PySide6.QtCore import QEventLoop, QTimer

    book = default_book(ctx.settings)
    if book is None:
        return 2
    loop = QEventLoop()
    result = {"code": 1}

    def painted() -> None:
        result["code"] = 0
        loop.quit()

    ctx.window.reader.first_page_painted.connect(painted)
    ctx.window.document.open_failed.connect(lambda *_: loop.quit())
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    ctx.window.open_book(book)
    loop.exec()
    ctx.window.close()
    return result["code"]


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bookreader-gui", description="The BookReader window")
    parser.add_argument("pdf", nargs="?", help="a PDF to open (default: the sample book)")
    parser.add_argument("--data-dir", help="data folder (default: $BOOKREADER_DATA_DIR or "
                                           "the platform's user data folder)")
    parser.add_argument("--self-test", action="store_true",
                        help="open the sample book offscreen-capable and exit (packaging)")
    args, _unknown = parser.parse_known_args(argv)
    return args


def main(argv: Optional[list[str]] = None) -> int:
    """Open the window; returns the exit code."""
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    settings = Settings.load(resolve_data_dir(args.data_dir))
    if args.self_test:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        ctx = build_app([sys.argv[0]], settings=settings)
    except AlreadyRunning:
        return 1
    except BookReaderError as exc:
        print(exc.user_message, file=sys.stderr)
        return 1
    if args.self_test:
        code = self_test(ctx)
        ctx.lock.unlock()
        return code
    book = Path(args.pdf) if args.pdf else start_book(ctx)
    if book is not None:
        ctx.window.open_book(book)
    code = ctx.qapp.exec()
    ctx.lock.unlock()
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
