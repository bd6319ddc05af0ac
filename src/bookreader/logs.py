"""The one logging set-up: file names, the format, and the rotating handler.

The window, the command line and the library process all log into the data folder's
``logs`` with the same format; the process name tells their lines apart.  No Qt here.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

LOG_FILE = "bookreader.log"
#: The library's child process (see ``ui/library_host.py``) writes its own file.
HOST_LOG_FILE = "library.log"
FORMAT = "%(asctime)s %(process)d [%(processName)s] %(levelname)-7s %(threadName)s %(name)s: " \
         "%(message)s"
MAX_BYTES = 2_000_000
BACKUPS = 3


class QuietRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A log file that, when it cannot be written (a full disk), says so once on stderr
    and then drops records instead of printing a traceback for every one."""

    _failed = False
    #: Set on the handlers BookReader adds (so that a later setup replaces them).
    _bookreader = False

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        if not self._failed:
            self._failed = True
            exc = sys.exc_info()[1]
            try:
                if sys.stderr is not None:
                    sys.stderr.write(f"bookreader: cannot write the log file {self.baseFilename} "
                                     f"({exc}); logging to it stops.\n")
            except (OSError, ValueError):
                pass

    def flush(self) -> None:
        try:
            super().flush()
        except (OSError, ValueError):
            self._failed = True

    def close(self) -> None:
        try:
            super().close()
        except (OSError, ValueError):  # the buffered tail cannot reach a full disk
            self._failed = True


def add_file_handler(path: Path, *, process: str = "", level: int = logging.INFO,
                     replace: bool = True) -> logging.Handler | None:
    """Log the root logger's records to a rotating file at ``path``.

    An earlier handler added here (an earlier data folder's, or the command line's on the
    same file when ``bookreader gui`` starts the window) is removed first when ``replace``:
    one file, one handler, or every line is written twice.

    Returns:
        The handler, or None when the file cannot be written (said once on stderr).
    """
    root = logging.getLogger()
    if replace:
        for h in list(root.handlers):
            same_file = isinstance(h, logging.FileHandler) and (
                Path(h.baseFilename).resolve() == Path(path).resolve())
            if getattr(h, "_bookreader", False) or same_file:
                root.removeHandler(h)
                h.close()
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handler = QuietRotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    except OSError as exc:
        if sys.stderr is not None:
            sys.stderr.write(f"bookreader: cannot write the log file {path}: {exc}\n")
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    handler._bookreader = True
    root.addHandler(handler)
    if process:
        import multiprocessing

        multiprocessing.current_process().name = process
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    quiet_sdk_loggers()
    logging.captureWarnings(True)
    return handler


#: Third-party loggers that would write request bodies (questions, pasted text) at DEBUG.
SDK_LOGGERS = ("anthropic", "httpx", "httpcore", "urllib3")


def quiet_sdk_loggers() -> None:
    """Keep the HTTP/SDK loggers at INFO even with ``-v``: their DEBUG lines carry whole
    requests, so a question (and anything pasted into it) would reach the log file."""
    for name in SDK_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
