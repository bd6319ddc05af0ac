"""The window's handle on the :class:`~bookreader.library.Library`, run on worker threads.

The Library is built lazily on the first worker that needs it (importing the core pulls in
torch and friends, which must not delay the first painted page).  Indexing runs on the
``ingest`` pool, everything else (catalogue, questions, history, audit) on the ``library``
pool; see :mod:`bookreader.ui.workers` for why each pool has one thread.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from bookreader.config import Settings
from bookreader.core.types import Answer, BookInfo, Mode
from bookreader.ui.workers import Task, TaskControl, TaskRunner

log = logging.getLogger(__name__)

LibraryFactory = Callable[[Settings], Any]


def default_library_factory(settings: Settings):
    """Build the real Library (imported here so the window opens before torch loads)."""
    from bookreader.library import Library

    return Library(settings)


class LibraryService(QObject):
    """Runs Library calls in the background and reports back with queued signals.

    Args:
        runner: The task runner that owns the worker pools.
        settings: Current settings.
        factory: ``factory(settings) -> Library``; tests and the benchmark pass their own.
    """

    books_changed = Signal(list)  # list[BookInfo], sorted by title
    ingest_queued = Signal(str)  # path
    ingest_progressed = Signal(str, int, int, str)  # path, done, total, message
    ingest_finished = Signal(str, object)  # path, BookInfo
    ingest_failed = Signal(str, object)  # path, exception
    ingest_cancelled = Signal(str)  # path

    def __init__(self, runner: TaskRunner, settings: Settings,
                 factory: LibraryFactory = default_library_factory,
                 parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.settings = settings
        self._factory = factory
        self._library = None
        self._lock = threading.Lock()
        self._ingests: dict[str, Task] = {}
        self._pending_settings: Optional[Settings] = None
        self._books: list[BookInfo] = []

    # --- the Library itself (worker threads only) ---------------------------------------
    def library(self):
        """The Library, built on first use.  Call from worker threads only."""
        with self._lock:
            if self._library is None:
                log.info("Opening the library in %s", self.settings.data_dir)
                self._library = self._factory(self.settings)
            return self._library

    def set_library(self, library) -> None:
        """Use an already built Library (tests, benchmarks)."""
        with self._lock:
            self._library = library

    @property
    def books(self) -> list[BookInfo]:
        """The last catalogue read from the library (GUI thread)."""
        return list(self._books)

    def book_for_path(self, path: str | Path) -> Optional[BookInfo]:
        key = _norm(path)
        for info in self._books:
            if _norm(info.path) == key:
                return info
        return None

    def run(self, fn: Callable[[Any], Any], *, name: str, pool: str = "library",
            **callbacks) -> Task:
        """Run ``fn(library)`` on a worker; ``callbacks`` as for :meth:`TaskRunner.submit`."""
        return self.runner.submit(pool, lambda ctl: fn(self.library()), name=name,
                                  on_end=self._maybe_apply_settings, **callbacks)

    # --- catalogue ---------------------------------------------------------------------
    def refresh_books(self) -> Task:
        """Re-read the catalogue; emits ``books_changed``."""
        return self.run(lambda lib: lib.books(), name="books", on_success=self._on_books_read)

    def _on_books_read(self, books: list[BookInfo]) -> None:
        self._books = list(books)
        self.books_changed.emit(self.books)

    def remove(self, ref: str, on_success=None, on_failure=None) -> Task:
        def done(info):
            self.refresh_books()
            if on_success:
                on_success(info)

        return self.run(lambda lib: lib.remove(ref), name="remove", on_success=done,
                        on_failure=on_failure)

    # --- indexing ------------------------------------------------------------------------
    def is_ingesting(self, path: str | Path) -> bool:
        return _norm(path) in self._ingests

    def ingesting_paths(self) -> list[str]:
        return list(self._ingests)

    def ingest(self, path: str | Path, password: Optional[str] = None) -> Optional[Task]:
        """Index a PDF in the background (no-op when it is already queued or running)."""
        key = _norm(path)
        if key in self._ingests:
            return self._ingests[key]

        def work(ctl: TaskControl) -> BookInfo:
            return self.library().ingest(key, password=password, progress=ctl.progress,
                                         cancel=ctl.cancel)

        task = self.runner.submit(
            "ingest", work, name=f"ingest {Path(key).name}",
            on_progress=lambda d, t, m: self.ingest_progressed.emit(key, d, t, m),
            on_success=lambda info: self.ingest_finished.emit(key, info),
            on_failure=lambda exc: self.ingest_failed.emit(key, exc),
            on_cancel=lambda: self.ingest_cancelled.emit(key),
            on_end=lambda: self._ingest_ended(key),
        )
        self._ingests[key] = task
        self.ingest_queued.emit(key)
        return task

    def cancel_ingest(self, path: str | Path) -> None:
        task = self._ingests.get(_norm(path))
        if task is not None:
            task.cancel()

    def _ingest_ended(self, key: str) -> None:
        self._ingests.pop(key, None)
        self.refresh_books()
        self._maybe_apply_settings()

    # --- questions -----------------------------------------------------------------------
    def ask(self, question: str, *, mode: Mode, book: Optional[str], selection: Optional[str],
            pages: Optional[tuple[int, int]], backend: Optional[str] = None,
            **callbacks) -> Task:
        """Ask in the background; tokens arrive through ``on_token``, the Answer via
        ``on_success``.  ``task.cancel()`` is the Stop button."""

        def work(ctl: TaskControl) -> Answer:
            return self.library().ask(
                question, mode=mode, book=book, selection=selection, pages=pages,
                backend=backend or None, on_token=ctl.token, cancel=ctl.cancel,
            )

        return self.runner.submit("library", work, name=f"ask {mode.value}",
                                  on_end=self._maybe_apply_settings, **callbacks)

    def history(self, book_id: str, on_success, limit: int = 200) -> Task:
        return self.run(lambda lib: lib.history(book_id, limit), name="history",
                        on_success=on_success)

    # --- settings and shutdown ------------------------------------------------------------
    def apply_settings(self, settings: Settings) -> None:
        """Use new settings: the Library is rebuilt as soon as no worker is using it."""
        self._pending_settings = settings
        self._maybe_apply_settings()

    def _maybe_apply_settings(self) -> None:
        if self._pending_settings is None:
            return
        if self.runner.busy("library") or self.runner.busy("ingest"):
            return  # the last task to end calls us again
        settings, self._pending_settings = self._pending_settings, None
        with self._lock:
            old, self._library = self._library, None
            self.settings = settings
        if old is not None:
            log.info("Settings changed: reopening the library")
            _close_quietly(old)

    def close(self) -> None:
        """Stop the workers (caller shuts the runner down first) and close the Library."""
        with self._lock:
            old, self._library = self._library, None
        if old is not None:
            _close_quietly(old)


def _close_quietly(library) -> None:
    try:
        library.close()
    except Exception:  # closing must not hide the reason we are closing
        log.exception("Closing the library failed")


def _norm(path: str | Path) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except OSError:
        return str(path)
