"""Background work for the window: QRunnable tasks whose results come back as queued signals.

A task runs a plain function ``fn(control)`` on a worker thread.  ``control`` gives it the
core's callback shapes (``control.progress(done, total, message)``, ``control.cancel()``
and ``control.token(text)``), so core code never learns about Qt.  A worker never touches a
widget: every result, error and progress report crosses back to the GUI thread as a queued
signal of :class:`TaskSignals`, an object that lives on the GUI thread.

Each kind of work has its own pool with exactly one thread, so one PDF document or one
store is never used by two threads at once:

* ``"library"``: catalogue, questions, history and the audit log (the Library facade);
* ``"ingest"``: indexing, which can take minutes and must not hold up questions;
* ``"document"``: opening, rendering and searching the book on screen (PyMuPDF).

Indexing a book and asking about that same book never overlap: the window only offers
whole-book questions once a book is ready.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from bookreader.errors import BookReaderError, Cancelled

log = logging.getLogger(__name__)

POOLS = ("library", "ingest", "document")


class RemoteTask:
    """A task that runs outside this process; its owner emits the signals."""

    def __init__(self, name: str, cancel: Callable[[], object]) -> None:
        self.name = name
        self.signals = TaskSignals()
        self.cancel_event = threading.Event()
        self.done = False
        self._cancel = cancel

    def cancel(self) -> None:
        if not self.cancel_event.is_set():
            self.cancel_event.set()
            self._cancel()


class TaskControl:
    """What a task function gets: progress, cancel check and token callbacks."""

    def __init__(self, task: "Task") -> None:
        self._task = task

    def progress(self, done: int, total: int, message: str = "") -> None:
        """Report progress (thread-safe; delivered to the GUI as a queued signal)."""
        self._task.signals.progressed.emit(int(done), int(total), str(message))

    def cancel(self) -> bool:
        """True once the user asked to stop; pass as the core's ``cancel`` callback."""
        return self._task.cancel_event.is_set()

    def token(self, text: str) -> None:
        """Forward one streamed token to the GUI."""
        self._task.signals.token_received.emit(text)

    def emit(self, value: Any) -> None:
        """Send an intermediate result (e.g. find hits for one page) to the GUI."""
        self._task.signals.partial_result_ready.emit(value)


class TaskSignals(QObject):
    """The signals of one task.  Created on the GUI thread, so connected slots run there.

    Exactly one of ``succeeded``, ``failed`` or ``cancelled`` is emitted, then ``ended``.
    """

    progressed = Signal(int, int, str)
    token_received = Signal(str)
    partial_result_ready = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)  # the exception
    cancelled = Signal()
    ended = Signal()


class Task(QRunnable):
    """One piece of background work.

    Args:
        fn: ``fn(control) -> result``; raise :class:`Cancelled` to stop quietly.
        name: For the log and for tests.
    """

    def __init__(self, fn: Callable[[TaskControl], Any], name: str) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the runner keeps the Python object alive until ended
        self.fn = fn
        self.name = name
        self.signals = TaskSignals()
        self.cancel_event = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None
        self.done = False

    def cancel(self) -> None:
        """Ask the task to stop at its next cancel check."""
        self.cancel_event.set()

    def run(self) -> None:  # worker thread
        control = TaskControl(self)
        start = time.perf_counter()
        try:
            if self.cancel_event.is_set():
                raise Cancelled()
            self.result = self.fn(control)
        except Cancelled:
            log.info("Task %s cancelled after %.0f ms", self.name, _ms(start))
            self.signals.cancelled.emit()
        except BookReaderError as exc:
            log.warning("Task %s failed: %s", self.name, exc.user_message)
            self.error = exc
            self.signals.failed.emit(exc)
        except Exception as exc:  # unexpected: logged with its traceback, shown as a crash
            log.exception("Task %s raised an unexpected error", self.name)
            self.error = exc
            self.signals.failed.emit(exc)
        else:
            log.debug("Task %s finished in %.0f ms", self.name, _ms(start))
            self.signals.succeeded.emit(self.result)
        finally:
            self.done = True
            self.signals.ended.emit()


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


class TaskRunner(QObject):
    """Owns the single-thread pools and keeps running tasks alive until they end.

    ``submit`` connects optional callbacks to the task's signals; they run on the GUI
    thread.  Unexpected exceptions (anything that is not a :class:`BookReaderError`) go to
    ``on_unexpected`` (the crash dialog) unless the caller handles failures itself.
    """

    task_started = Signal(str)
    task_ended = Signal(str)

    def __init__(self, parent: Optional[QObject] = None,
                 on_unexpected: Optional[Callable[[BaseException], None]] = None) -> None:
        super().__init__(parent)
        self._pools: dict[str, QThreadPool] = {}
        for name in POOLS:
            pool = QThreadPool(self)
            pool.setMaxThreadCount(1)
            pool.setExpiryTimeout(-1)  # keep the thread: PyMuPDF and stores stay on it
            self._pools[name] = pool
        self._live: set[Task] = set()
        self.on_unexpected = on_unexpected
        self.closed = False  # after shutdown, results are dropped (their widgets are gone)

    def submit(
        self,
        pool: str,
        fn: Callable[[TaskControl], Any],
        *,
        name: str,
        on_success: Optional[Callable[[Any], None]] = None,
        on_failure: Optional[Callable[[BaseException], None]] = None,
        on_progress: Optional[Callable[[int, int, str], None]] = None,
        on_token: Optional[Callable[[str], None]] = None,
        on_partial: Optional[Callable[[Any], None]] = None,
        on_cancel: Optional[Callable[[], None]] = None,
        on_end: Optional[Callable[[], None]] = None,
    ) -> Task:
        """Queue ``fn`` on ``pool`` and return its :class:`Task` (for cancel and signals)."""
        task = Task(fn, name)
        self.attach(task, pool, on_success=on_success, on_failure=on_failure,
                    on_progress=on_progress, on_token=on_token, on_partial=on_partial,
                    on_cancel=on_cancel, on_end=on_end)
        self._pools[pool].start(task)
        return task

    def attach(self, task, pool: str, *, on_success=None, on_failure=None, on_progress=None,
               on_token=None, on_partial=None, on_cancel=None, on_end=None) -> None:
        """Track a task (also one run elsewhere, e.g. in the library process) and deliver
        its signals to the callbacks on the GUI thread."""
        sig = task.signals
        relay = _Relay(task, self, on_success, on_failure, on_progress, on_token,
                       on_partial, on_cancel, on_end)
        sig.succeeded.connect(relay.on_succeeded)
        sig.failed.connect(relay.on_failed)
        sig.progressed.connect(relay.on_progressed)
        sig.token_received.connect(relay.on_token_received)
        sig.partial_result_ready.connect(relay.on_partial_result_ready)
        sig.cancelled.connect(relay.on_cancelled)
        sig.ended.connect(relay.on_ended)
        task.relay = relay
        task.pool = pool
        self._live.add(task)
        self.task_started.emit(task.name)

    def busy(self, pool: Optional[str] = None) -> bool:
        """True while any task (of ``pool``) is queued or running."""
        if pool is None:
            return bool(self._live)
        return any(getattr(t, "pool", None) == pool for t in self._live)


    def _forget(self, task: Task) -> None:
        self._live.discard(task)
        self.task_ended.emit(task.name)

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """Cancel everything and wait for the threads; True when all stopped in time.

        Results still queued for the GUI are dropped: the window is closing.
        """
        self.closed = True
        for task in list(self._live):
            task.cancel()
        ok = True
        for name, pool in self._pools.items():
            pool.clear()
            if not pool.waitForDone(timeout_ms):
                log.warning("Worker pool %s did not stop within %d ms", name, timeout_ms)
                ok = False
        return ok

    def reopen(self) -> None:
        """Accept and deliver work again after :meth:`shutdown` (switching data folders)."""
        self.closed = False


class _Relay(QObject):
    """Lives on the GUI thread and forwards a task's signals to plain callbacks."""

    def __init__(self, task: Task, runner: TaskRunner, on_success, on_failure, on_progress,
                 on_token, on_partial, on_cancel, on_end) -> None:
        super().__init__(runner)
        self._task = task
        self._runner = runner
        self._on_success = on_success
        self._on_failure = on_failure
        self._on_progress = on_progress
        self._on_token = on_token
        self._on_partial = on_partial
        self._on_cancel = on_cancel
        self._on_end = on_end

    @property
    def _live(self) -> bool:
        return not self._runner.closed

    @Slot(object)
    def on_succeeded(self, result: Any) -> None:
        if self._live and self._on_success is not None:
            self._on_success(result)

    @Slot(object)
    def on_failed(self, exc: BaseException) -> None:
        if not self._live:
            return
        if self._on_failure is not None:
            self._on_failure(exc)
        elif not isinstance(exc, BookReaderError) and self._runner.on_unexpected:
            self._runner.on_unexpected(exc)
        elif isinstance(exc, BookReaderError):
            log.warning("Unhandled error from task %s: %s", self._task.name, exc.user_message)

    @Slot(int, int, str)
    def on_progressed(self, done: int, total: int, message: str) -> None:
        if self._live and self._on_progress is not None:
            self._on_progress(done, total, message)

    @Slot(str)
    def on_token_received(self, text: str) -> None:
        if self._live and self._on_token is not None:
            self._on_token(text)

    @Slot(object)
    def on_partial_result_ready(self, value: Any) -> None:
        if self._live and self._on_partial is not None:
            self._on_partial(value)

    @Slot()
    def on_cancelled(self) -> None:
        if self._live and self._on_cancel is not None:
            self._on_cancel()

    @Slot()
    def on_ended(self) -> None:
        self._runner._forget(self._task)  # first, so on_end sees the runner without it
        try:
            if self._live and self._on_end is not None:
                self._on_end()
        finally:
            self.deleteLater()
