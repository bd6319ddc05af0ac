"""The window's handle on the :class:`~bookreader.library.Library`.

Every call is one of the library's commands (:class:`bookreader.api.Command`, the methods
of :class:`bookreader.api.LibraryApi`), made through an explicit method here
(:meth:`LibraryService.ask`, :meth:`LibraryService.export_audit`...), and runs in the
background on one of two single-thread lanes: ``ingest`` for indexing (minutes), ``library`` for all the
rest.  Two ways to run them:

* ``process`` (the app's default): the Library lives in a child process
  (:mod:`bookreader.ui.library_host`), so its pure-Python work never competes with the
  window for the GIL;
* ``thread``: the Library lives in this process on the runner's worker threads (tests
  and benchmarks that pass a ready-made Library or a factory).

Results, errors, progress and tokens come back as queued signals either way.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import threading
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from bookreader.api import Command, LibraryApi, run_command
from bookreader.config import Settings
from bookreader.core.types import BookInfo, Mode
from bookreader.errors import BookReaderError
from bookreader.logs import HOST_LOG_FILE
from bookreader.ui.library_host import (decode_error, host_main, make_injected, preload_core,
                                        use_api_key)
from bookreader.ui.workers import RemoteTask, TaskControl, TaskRunner

log = logging.getLogger(__name__)

LibraryFactory = Callable[[Settings], LibraryApi]
#: How long the window waits for the library process to stop at quit before ending it.
#: A process busy in native code (loading torch or a model) cannot read "stop" sooner; its
#: work is safe to abandon (ingests resume, answers are audited atomically), so it is ended.
STOP_TIMEOUT_S = 2.0


def default_library_factory(settings: Settings) -> LibraryApi:
    """Build the real Library (imported here so the window opens before torch loads)."""
    from bookreader.library import Library

    return Library(settings)


class _ThreadLanes:
    """Runs Library calls on this process's worker threads."""

    def __init__(self, runner: TaskRunner, settings: Settings, factory: LibraryFactory) -> None:
        self.runner = runner
        self.settings = settings
        self.factory = factory
        self.library_obj: Optional[LibraryApi] = None
        self.lock = threading.Lock()
        self.pending: Optional[Settings] = None
        self.session_id = str(uuid.uuid4())

    def library(self) -> LibraryApi:
        with self.lock:
            if self.library_obj is None:
                log.info("Opening the library in %s", self.settings.data_dir)
                preload_core()
                self.library_obj = self.factory(self.settings)
                # One session per window, however often Settings rebuild the library.
                self.library_obj.session_id = self.session_id
            return self.library_obj

    def submit(self, lane: str, command: Command, args: tuple, kwargs: dict, inject: tuple,
               name: str, callbacks: dict):
        def work(ctl: TaskControl):
            extra = make_injected(inject, ctl.progress, ctl.cancel, ctl.token)
            return run_command(self.library(), command, args, {**kwargs, **extra})

        callbacks["on_end"] = self._then_apply(callbacks.get("on_end"))
        return self.runner.submit(lane, work, name=name, **callbacks)

    def apply_settings(self, settings: Settings) -> None:
        self.pending = settings
        self._maybe_apply()

    def use_api_key(self, key: str) -> None:
        use_api_key(key)  # the library lives in this process

    def _then_apply(self, on_end):
        def ended() -> None:
            try:
                if on_end is not None:
                    on_end()
            finally:
                self._maybe_apply()

        return ended

    def _maybe_apply(self) -> None:
        if self.pending is None or self.runner.busy("library") or self.runner.busy("ingest"):
            return
        settings, self.pending = self.pending, None
        with self.lock:
            old, self.library_obj = self.library_obj, None
            self.settings = settings
        if old is not None:
            log.info("Settings changed: reopening the library")
            _close_quietly(old)

    def close(self) -> None:
        with self.lock:
            old, self.library_obj = self.library_obj, None
        if old is not None:
            _close_quietly(old)


class _ProcessLanes:
    """Runs Library calls in a child process (started on the first call)."""

    def __init__(self, runner: TaskRunner, settings: Settings) -> None:
        self.runner = runner
        self.settings = settings
        self.proc = None
        self.conn = None
        self.reader: Optional[threading.Thread] = None
        self.tasks: dict[int, RemoteTask] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.api_key: Optional[str] = None  # a key typed in Settings without a keyring

    def _ensure_started(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            return
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=host_main, args=(child, self.settings, HOST_LOG_FILE),
                                name="bookreader-library", daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        self.reader = threading.Thread(target=self._read, args=(parent,), daemon=True,
                                       name="library-host-reader")
        self.reader.start()
        log.info("Started the library process (pid %s)", self.proc.pid)
        if self.api_key is not None:
            self._send(("api_key", self.api_key))

    def submit(self, lane: str, command: Command, args: tuple, kwargs: dict, inject: tuple,
               name: str, callbacks: dict):
        self._ensure_started()
        call_id = next(self.ids)
        task = RemoteTask(name, lambda: self._send(("cancel", call_id)))
        self.runner.attach(task, lane, **callbacks)
        with self.lock:
            self.tasks[call_id] = task
        if not self._send(("call", call_id, lane, Command(command).value, tuple(args),
                           dict(kwargs), tuple(inject))):
            self._fail(call_id, _host_gone())
        return task

    def _send(self, msg) -> bool:
        conn = self.conn
        if conn is None:  # not started, or already stopped
            log.warning("Cannot reach the library process: it is not running")
            return False
        try:
            conn.send(msg)
            return True
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("Cannot reach the library process: %r", exc)
            return False

    def _read(self, conn) -> None:  # reader thread: turns messages into queued signals
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            kind, call_id = msg[0], msg[1]
            with self.lock:
                task = self.tasks.get(call_id)
            if task is None:
                continue
            sig = task.signals
            if kind == "progress":
                sig.progressed.emit(msg[2], msg[3], msg[4])
            elif kind == "token":
                sig.token_received.emit(msg[2])
            elif kind in ("result", "error", "cancelled"):
                with self.lock:
                    self.tasks.pop(call_id, None)
                task.done = True
                if kind == "result":
                    sig.succeeded.emit(msg[2])
                elif kind == "error":
                    exc = decode_error(msg[2])
                    if not isinstance(exc, BookReaderError):
                        log.error("Library process error:\n%s", msg[2]["traceback"])
                    sig.failed.emit(exc)
                else:
                    sig.cancelled.emit()
                sig.ended.emit()
        with self.lock:
            orphans = list(self.tasks)
        for call_id in orphans:  # the child died: nobody will answer these
            self._fail(call_id, _host_gone())

    def _fail(self, call_id: int, exc: BaseException) -> None:
        with self.lock:
            task = self.tasks.pop(call_id, None)
        if task is not None:
            task.done = True
            task.signals.failed.emit(exc)
            task.signals.ended.emit()

    def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        if self.proc is not None and self.proc.is_alive():
            self._send(("settings", settings))

    def use_api_key(self, key: str) -> None:
        """Hand a key typed in Settings to the library process (over the pipe, never in a
        file or a log line); a process started later gets it too."""
        self.api_key = key
        if self.proc is not None and self.proc.is_alive():
            self._send(("api_key", key))

    def close(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        if self.proc is None:
            return
        with self.lock:
            pending = list(self.tasks)
        for call_id in pending:
            self._send(("cancel", call_id))
        self._send(("stop",))
        self.proc.join(timeout_s)
        if self.proc.is_alive():
            log.info("The library process is busy in native code (loading or indexing); "
                     "ending it now rather than waiting (an ingest resumes next time)")
            self.proc.terminate()
            self.proc.join(5)
            if self.proc.is_alive():
                log.warning("The library process ignored SIGTERM; killing it")
                self.proc.kill()
                self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        if self.reader is not None:
            self.reader.join(5)
        self.proc = self.conn = self.reader = None


def _host_gone() -> BookReaderError:
    return BookReaderError(
        "The background library process stopped unexpectedly. Try again; if it keeps "
        "happening, the log file in the data folder says why.")


class LibraryService(QObject):
    """Runs Library calls in the background and reports back with queued signals.

    Args:
        runner: The task runner that owns the worker pools.
        settings: Current settings.
        factory: ``factory(settings) -> Library`` for ``thread`` mode.
        mode: ``"process"`` or ``"thread"`` (see the module docstring).
    """

    books_changed = Signal(list)  # list[BookInfo], sorted by title
    ingest_queued = Signal(str)  # path
    ingest_progressed = Signal(str, int, int, str)  # path, done, total, message
    ingest_finished = Signal(str, object)  # path, BookInfo
    ingest_failed = Signal(str, object)  # path, exception
    ingest_cancelled = Signal(str)  # path

    def __init__(self, runner: TaskRunner, settings: Settings,
                 factory: LibraryFactory = default_library_factory, mode: str = "thread",
                 parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.settings = settings
        self.mode = mode
        self._factory = factory
        self._lanes = self._make_lanes(settings)
        self._ingests: dict[str, Any] = {}
        self._books: list[BookInfo] = []
        #: The catalogue was read at least once (until then no book is known to be indexed).
        self.catalogue_read = False
        self._api_key: Optional[str] = None

    def _make_lanes(self, settings: Settings):
        if self.mode == "process":
            return _ProcessLanes(self.runner, settings)
        return _ThreadLanes(self.runner, settings, self._factory)

    # --- the one way a command is sent --------------------------------------------------------
    def _call(self, command: Command, args: tuple = (), kwargs: Optional[dict] = None, *,
              lane: str = "library", inject: tuple = (), name: str = "",
              **callbacks) -> Any:
        """Run one library command in the background.

        ``inject`` names the callbacks supplied by the worker (``progress``, ``cancel``,
        ``on_token``); ``callbacks`` are as for :meth:`TaskRunner.submit`.  Returns the task
        (``.cancel()``, ``.signals``).
        """
        return self._lanes.submit(lane, command, tuple(args), dict(kwargs or {}), inject,
                                  name or command.value, callbacks)

    # --- catalogue -------------------------------------------------------------------------
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

    def refresh_books(self):
        """Re-read the catalogue; emits ``books_changed``."""
        return self._call(Command.BOOKS, on_success=self._on_books_read)

    def _on_books_read(self, books: list[BookInfo]) -> None:
        self._books = list(books)
        self.catalogue_read = True
        self.books_changed.emit(self.books)

    def remove(self, ref: str, on_success=None, on_failure=None):
        def done(info):
            self.refresh_books()
            if on_success:
                on_success(info)

        return self._call(Command.REMOVE, (ref,), on_success=done, on_failure=on_failure)

    # --- indexing ----------------------------------------------------------------------------
    def is_ingesting(self, path: str | Path) -> bool:
        return _norm(path) in self._ingests

    def ingest(self, path: str | Path, password: Optional[str] = None):
        """Index a PDF in the background (no-op when it is already queued or running)."""
        key = _norm(path)
        if key in self._ingests:
            return self._ingests[key]
        task = self._call(
            Command.INGEST, (key,), {"password": password}, lane="ingest",
            inject=("progress", "cancel"), name=f"ingest {Path(key).name}",
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

    # --- questions -------------------------------------------------------------------------
    def ask(self, question: str, *, mode: Mode, book: Optional[str], selection: Optional[str],
            pages: Optional[tuple[int, int]], backend: Optional[str] = None, **callbacks):
        """Ask in the background; tokens arrive through ``on_token``, each stage of the
        answer (an :class:`~bookreader.core.types.AnswerStage` value) through
        ``on_progress``, the Answer via ``on_success``.  ``task.cancel()`` is the Stop
        button."""
        kwargs = dict(mode=mode, book=book, selection=selection, pages=pages,
                      backend=backend or None)
        inject = ("on_token", "cancel", "progress") if "on_progress" in callbacks else (
            "on_token", "cancel")
        return self._call(Command.ASK, (question,), kwargs, inject=inject,
                          name=f"ask {Mode(mode).value}", **callbacks)

    def warm_up(self, book: Optional[str], backend: Optional[str] = None, **callbacks):
        """Load the book's index and the model ahead of the first question, on the lane
        questions run on (a question asked meanwhile waits for it).  ``on_success`` gets
        the backend name warmed ("" when no model was loaded)."""
        return self._call(Command.WARM_UP, (), dict(book=book, backend=backend or None),
                          name="warm up", **callbacks)

    def history(self, book_id: str, on_success, limit: int = 200):
        return self._call(Command.HISTORY, (book_id, limit), on_success=on_success)

    def check_selection(self, text: str, **callbacks):
        """The core's verdict on a selection: ``(text, truncation warning)``."""
        return self._call(Command.CHECK_SELECTION, (text,), name="check selection",
                          **callbacks)

    # --- the audit log and exports -------------------------------------------------------------
    def export_audit(self, fmt: str, out: Path, filters: dict, **callbacks):
        return self._call(Command.EXPORT_AUDIT, (fmt, out), filters, name="Export", **callbacks)

    def verify_audit(self, path: Optional[Path], **callbacks):
        return self._call(Command.VERIFY_AUDIT, (path,), name="Verify", **callbacks)

    def audit_report(self, out: Path, filters: dict, **callbacks):
        return self._call(Command.AUDIT_REPORT, (out,), filters, name="Report", **callbacks)

    def export_conversation(self, book: str, out: Path, **callbacks):
        return self._call(Command.EXPORT_CONVERSATION, (book, out), name="Export conversation",
                          **callbacks)

    # --- settings and shutdown --------------------------------------------------------------
    def apply_settings(self, settings: Settings) -> None:
        """Use new settings: the Library is rebuilt as soon as no call is using it."""
        self.settings = settings
        self._lanes.apply_settings(settings)

    def use_api_key(self, key: str) -> None:
        """A Claude key typed in Settings on a system without a keyring: the library (in
        this process or its own) uses it until the window closes."""
        self._api_key = key
        use_api_key(key)  # this process (and a library process started later inherits it)
        self._lanes.use_api_key(key)

    def switch_data_dir(self, settings: Settings) -> None:
        """Close the Library of the old data folder; the next call opens the new one."""
        self._lanes.close()
        self.settings = settings
        self._books = []
        self.catalogue_read = False
        self._lanes = self._make_lanes(settings)
        if self._api_key is not None:
            self._lanes.use_api_key(self._api_key)

    def close(self) -> None:
        """Close the Library (the caller shuts the runner down first)."""
        self._lanes.close()


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
