"""The Library in a child process, so indexing and answering never hold the window's GIL.

Measured on a 370-page book (bench/ui_latency.py): indexing on a thread of the window's process
stalled its event loop for up to ~0.9 s (PDF layout analysis, NLTK and the torch import are
pure Python and hold the GIL); the same work in another process stalled it for ~0.2 s at
most on the same loaded machine.  So the window keeps only Qt and page rendering, and the
:class:`~bookreader.library.Library` lives here, with the same two single-thread lanes the
window would otherwise use ("library" and "ingest").

No Qt in this module: the child process never loads it.  Messages are tuples over a
``multiprocessing`` pipe:

* parent -> child: ``("call", id, lane, command, args, kwargs, inject)``,
  ``("cancel", id)``, ``("settings", Settings)``, ``("api_key", key)``, ``("stop",)``
* child -> parent: ``("progress", id, done, total, message)``, ``("token", id, text)``,
  ``("result", id, value)``, ``("error", id, payload)``, ``("cancelled", id)``

``command`` is a :class:`bookreader.api.Command` (a closed set: anything else is refused);
``inject`` names the callbacks the child supplies (``progress``, ``cancel``, ``on_token``).
``api_key`` carries a Claude key typed in Settings on a system without a keyring (it lives
in the window's memory only, so the child must be told; it is never logged).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bookreader.api import Command, LibraryApi, run_command
from bookreader.config import Settings
from bookreader.errors import BookReaderError, Cancelled
from bookreader.logs import HOST_LOG_FILE, add_file_handler

log = logging.getLogger(__name__)

LANES = ("library", "ingest")
#: The library process runs at normal priority: with ``nice 10`` every answer of a local
#: model timed out on a busy machine, since answering is the work the student
#: waits for.  The window stays responsive because it does no heavy work itself.
#: At quit, how long running calls get to notice their cancel before the process exits.
STOP_GRACE_S = 1.0


def use_api_key(key: str) -> None:
    """Make a Claude key typed in Settings visible to the backends of this process."""
    from bookreader.core.llm.claude import API_KEY_ENV

    if key:
        os.environ[API_KEY_ENV] = key
    else:
        os.environ.pop(API_KEY_ENV, None)


def make_injected(inject: tuple, progress, cancel, on_token) -> dict[str, Any]:
    """The worker-supplied callbacks a command asked for."""
    extra: dict[str, Any] = {}
    if "progress" in inject:
        extra["progress"] = progress
    if "cancel" in inject:
        extra["cancel"] = cancel
    if "on_token" in inject:
        extra["on_token"] = on_token
    return extra


#: Imported once, by one thread, before the lanes run: importing NLTK from two threads at
#: once fails with "partially initialized module 'nltk'" (seen when a question and an
#: ingest started together).
PRELOAD = ("bookreader.core.pdf", "bookreader.core.chunking", "bookreader.core.lexical",
           "bookreader.core.retrieval", "bookreader.core.answering", "bookreader.core.audit")


def preload_core() -> None:
    for name in PRELOAD:
        importlib.import_module(name)


def encode_error(exc: BaseException) -> dict:
    """An exception as plain data (custom constructors do not always unpickle)."""
    return {
        "module": type(exc).__module__,
        "name": type(exc).__qualname__,
        "message": getattr(exc, "user_message", None) or str(exc),
        "attrs": {k: v for k, v in vars(exc).items()
                  if isinstance(v, (str, int, float, bool, type(None)))},
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        "user_error": isinstance(exc, BookReaderError),
    }


def decode_error(payload: dict) -> BaseException:
    """Rebuild an exception sent by :func:`encode_error` (a RuntimeError when unknown)."""
    cls: Any = None
    try:
        cls = getattr(importlib.import_module(payload["module"]), payload["name"])
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return RuntimeError(f"{payload['name']}: {payload['message']}\n{payload['traceback']}")
    exc = cls.__new__(cls)
    BaseException.__init__(exc, payload["message"])
    exc.__dict__.update(payload["attrs"])
    if payload["user_error"] and not hasattr(exc, "user_message"):
        exc.user_message = payload["message"]
    exc.remote_traceback = payload["traceback"]
    return exc


class _Host:
    """Runs in the child: receives calls, runs them on the lanes, reports back."""

    def __init__(self, conn, settings: Settings) -> None:
        self.conn = conn
        self.settings = settings
        self.pending_settings: Settings | None = None
        self.library: LibraryApi | None = None
        self.session_id = str(uuid.uuid4())  # the window's session, across Settings changes
        self.lock = threading.Lock()  # guards the library and the pipe's send side
        self.send_lock = threading.Lock()
        self.lanes = {lane: ThreadPoolExecutor(1, thread_name_prefix=f"host-{lane}")
                      for lane in LANES}
        self.cancels: dict[int, threading.Event] = {}
        self.running = 0

    def send(self, *msg: Any) -> None:
        with self.send_lock:
            self.conn.send(msg)

    def get_library(self) -> LibraryApi:
        with self.lock:
            if self.library is None:
                from bookreader.library import Library

                log.info("Opening the library in %s", self.settings.data_dir)
                preload_core()
                self.library = Library(self.settings, session_id=self.session_id)
            return self.library

    def maybe_apply_settings(self) -> None:
        with self.lock:
            if self.pending_settings is None or self.running:
                return
            settings, self.pending_settings = self.pending_settings, None
            old, self.library = self.library, None
            self.settings = settings
        if old is not None:
            embedder = getattr(old, "_embedder", None)
            old.close()
            if embedder is not None:
                from bookreader.library import Library

                with self.lock:
                    self.library = Library(settings, embedder=embedder,
                                           session_id=self.session_id)
        log.info("Library host: settings applied")

    def run_call(self, call_id: int, command: Command, args: tuple, kwargs: dict,
                 inject: tuple) -> None:
        cancel = self.cancels[call_id]
        try:
            if cancel.is_set():
                raise Cancelled()
            extra = make_injected(
                inject,
                progress=lambda d, t, m="": self.send("progress", call_id, int(d), int(t),
                                                      str(m)),
                cancel=cancel.is_set,
                on_token=lambda text: self.send("token", call_id, text),
            )
            value = run_command(self.get_library(), command, args, {**kwargs, **extra})
        except Cancelled:
            self.send("cancelled", call_id)
        except BaseException as exc:  # every failure goes back to the window
            if not isinstance(exc, BookReaderError):
                log.exception("Library call %s failed", command)
            self.send("error", call_id, encode_error(exc))
        else:
            try:
                self.send("result", call_id, value)
            except Exception as exc:  # an unpicklable result is a bug worth reporting
                self.send("error", call_id, encode_error(exc))
        finally:
            with self.lock:
                self.cancels.pop(call_id, None)
                self.running -= 1
            self.maybe_apply_settings()

    def serve(self) -> None:
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                break  # the window is gone
            kind = msg[0]
            if kind == "call":
                _, call_id, lane, command, args, kwargs, inject = msg
                try:
                    command = Command(command)
                except ValueError:
                    log.error("Refusing an unknown library command %r", command)
                    self.send("error", call_id, encode_error(
                        ValueError(f"Unknown library command {command!r}")))
                    continue
                with self.lock:
                    self.cancels[call_id] = threading.Event()
                    self.running += 1
                self.lanes[lane].submit(self.run_call, call_id, command, args, kwargs, inject)
            elif kind == "cancel":
                event = self.cancels.get(msg[1])
                if event is not None:
                    event.set()
            elif kind == "settings":
                with self.lock:
                    self.pending_settings = msg[1]
                self.maybe_apply_settings()
            elif kind == "api_key":
                use_api_key(msg[1])
            elif kind == "stop":
                break
        # Stop promptly: cancel what runs, drop what waits, and do not wait for a model
        # that is still loading (the process exits; the OS frees what it held).
        for event in list(self.cancels.values()):
            event.set()
        for pool in self.lanes.values():
            pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + STOP_GRACE_S
        while self.running and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.running:  # a model load or a native call that cannot be interrupted
            log.warning("Library host: %d call(s) still running at quit; exiting without "
                        "waiting for them", self.running)
            logging.shutdown()
            os._exit(0)
        if self.library is not None:
            self.library.close()


def host_main(conn, settings: Settings, log_file: str | None = None) -> None:
    """Entry point of the child process."""
    add_file_handler(settings.log_dir / (log_file or HOST_LOG_FILE), process="library")
    from bookreader.crash import enable_crash_log

    enable_crash_log(settings.log_dir, "library")
    log.info("Library host started for %s", settings.data_dir)
    try:
        _Host(conn, settings).serve()
    finally:
        log.info("Library host stopped")
        conn.close()
