"""Native crash reports: ``faulthandler`` writes them to the log folder, the next start
offers them (a dialog in the window, a message on the command line).

llama.cpp, MuPDF, Qt and torch all run native code; a segmentation fault there ends the
process before any Python handler runs.  ``faulthandler`` still writes every thread's
Python stack to an open file at that moment.  Each process writes its own file
(``crash-<process>.log``); an empty file means no crash.  At start,
:func:`pending_crash_reports` finds files with content, the caller shows them, and
:func:`archive_crash_report` moves each aside (``crash-reports/``) so it is offered once.
"""

from __future__ import annotations

import faulthandler
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

log = logging.getLogger(__name__)

CRASH_PREFIX = "crash-"
ARCHIVE_DIR = "crash-reports"
#: Files kept open for faulthandler, by path (one per process; closing one disables it).
_open_files: dict[str, TextIO] = {}


@dataclass(frozen=True)
class CrashReport:
    """A native crash written by an earlier run."""

    path: Path
    process: str
    text: str
    when: float  # the file's modification time

    def summary(self) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.when))
        return (f"BookReader's {self.process} process stopped unexpectedly on {stamp} "
                f"(a crash in native code). The report is in {self.path}.")


def crash_file(log_dir: Path, process: str) -> Path:
    return Path(log_dir) / f"{CRASH_PREFIX}{process}.log"


def enable_crash_log(log_dir: Path, process: str) -> Path | None:
    """Make ``faulthandler`` write this process's native crashes to the log folder.

    A report left by an earlier run is kept (moved aside) before the file is reused.
    Returns the file, or None when it cannot be opened (then faulthandler stays as it was).
    """
    path = crash_file(log_dir, process)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > 0:
            archive_crash_report(path)
        handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - kept open on purpose
    except OSError as exc:
        log.warning("Cannot open the crash log %s: %s", path, exc)
        return None
    old = _open_files.pop(str(path), None)
    faulthandler.enable(file=handle, all_threads=True)
    _open_files[str(path)] = handle
    if old is not None:
        old.close()
    log.info("Native crashes of the %s process are written to %s", process, path)
    return path


def take_crash_reports(log_dir: Path) -> list[CrashReport]:
    """Crash reports written by earlier runs (non-empty ``crash-*.log`` that no process here
    writes to), moved into ``crash-reports/`` so each is offered once.  Call it at start,
    before :func:`enable_crash_log`."""
    out: list[CrashReport] = []
    folder = Path(log_dir)
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob(f"{CRASH_PREFIX}*.log")):
        if str(path) in _open_files:
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            when = path.stat().st_mtime
        except OSError:
            continue
        if not text.strip():
            continue
        kept = archive_crash_report(path) or path
        out.append(CrashReport(kept, path.stem[len(CRASH_PREFIX):], text, when))
    return out


def archive_crash_report(path: Path) -> Path | None:
    """Move a report into ``crash-reports/``; returns the new path (None if it cannot)."""
    path = Path(path)
    target_dir = path.parent / ARCHIVE_DIR
    try:
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(path.stat().st_mtime))
        target = target_dir / f"{path.stem}-{stamp}.log"
        target_dir.mkdir(parents=True, exist_ok=True)
        path.replace(target)
    except OSError as exc:
        log.warning("Cannot archive the crash report %s: %s", path, exc)
        return None
    return target
