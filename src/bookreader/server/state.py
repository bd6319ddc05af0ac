"""What a running server holds: its configuration, library, keys, limits and counters."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Optional

from bookreader.config import Settings
from bookreader.errors import BookNotFound, BookReaderError, InvalidInput, StoreError
from bookreader.server.folder_lock import lock_data_folder
from bookreader.server.keys import KeyStore
from bookreader.server.limits import AnswerPool, FailedAuthLimiter, RateLimiter, parse_rate
from bookreader.server.shared_limits import SharedRateLimiter

log = logging.getLogger(__name__)

#: Backends that answer several questions at once (the others get one worker).
CONCURRENT_BACKENDS = ("extractive", "claude", "openai")
#: Seconds a local model may stream after its first token before a request is answered 504.
LOCAL_STREAM_S = 60.0
DEFAULT_MAX_BODY = 64 * 1024


@dataclass
class ServeConfig:
    """The options of ``bookreader serve``.

    Attributes:
        backend: Answering backend (None: the settings' ``llm_backend``).
        books: Books to serve (ids, prefixes or PDF paths; a PDF not indexed yet is
            indexed at startup).  Empty: every ready book, or the bundled sample book
            when the library is empty.
        rate_limit: Per-key limit, ``COUNT/UNIT``.
        workers: Answering threads (None: 1 for a local model, 4 for Claude/extractive).
        max_queue: Questions that may wait for a worker (None: 16 per worker for Claude
            and extractive, whose answers take a fraction of a second, so a class's burst
            waits its turn instead of being sent away; 4 for a local model).
        timeout_s: Budget of one answer once it runs (None: the backend's generation
            budget plus the retrieval budget); over it, 504.
        queue_wait_s: Longest wait for a worker (None: ``timeout_s``); over it, 503.
        cors_origins: Origins allowed to call from a browser (none by default).
        rate_limit_store: Where the per-key counts live: ``memory`` (this process),
            ``shared`` (a table in the audit database, shared by every server process
            that writes the same audit log, and kept over a restart) or ``auto``
            (shared when ``audit_url`` names a database of its own, memory otherwise).
            A server counting in memory must be alone on its data folder
            (:mod:`.folder_lock`): a second one would double every key's budget.
        max_body: Largest request body in bytes; larger ones get 413.
        body_timeout_s: Longest time a request body may take to arrive; over it, 408.
        auth_failure_limit: Requests with an invalid API key allowed per client address,
            ``COUNT/UNIT``; over it, every request from that address is 429 for a while.
        header_timeout_s: Longest time a connection may take to send its request
            line and headers; over it, 408 and closed (:mod:`.connections`).
        max_connections: Connections held at once (None: 4,096, or fewer when the
            open-file limit is lower).
        max_connections_per_ip: Connections held at once per client address.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    backend: Optional[str] = None
    books: tuple[str, ...] = ()
    rate_limit: str = "100/minute"
    workers: Optional[int] = None
    max_queue: Optional[int] = None
    timeout_s: Optional[float] = None
    queue_wait_s: Optional[float] = None
    cors_origins: tuple[str, ...] = ()
    rate_limit_store: str = "auto"
    max_body: int = DEFAULT_MAX_BODY
    body_timeout_s: float = 30.0
    auth_failure_limit: str = "20/minute"
    header_timeout_s: float = 10.0
    max_connections: Optional[int] = None
    max_connections_per_ip: int = 128


@dataclass
class Counters:
    """Outcomes since startup, shown by ``GET /health`` (and read by tests and the bench)."""

    answered: int = 0
    timed_out: int = 0
    cancelled: int = 0
    busy: int = 0
    rate_limited: int = 0
    auth_limited: int = 0
    failed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + 1)

    def as_dict(self) -> dict[str, int]:
        with self.lock:
            return {k: getattr(self, k) for k in
                    ("answered", "timed_out", "cancelled", "busy", "rate_limited",
                     "auth_limited", "failed")}


class ServerState:
    """Everything the routes share; built once by :func:`bookreader.server.create_app`."""

    def __init__(self, settings: Settings, config: ServeConfig, library: Any = None,
                 keys: Optional[KeyStore] = None) -> None:
        from bookreader.core.llm.registry import budget_for, resolve_name
        from bookreader.core.llm.specs import spec_for

        self.settings = settings
        self.config = config
        if library is None:
            from bookreader.library import Library

            library = Library(settings)
        self.library = library
        self.keys = keys or KeyStore(settings.data_dir)
        self.backend = config.backend or settings.llm_backend
        kind = spec_for(resolve_name(self.backend, settings)).kind
        limit, window = parse_rate(config.rate_limit)
        self.limiter = _limiter(settings, config, limit, window)
        try:
            self.folder_lock = lock_data_folder(
                settings.data_dir, shared=isinstance(self.limiter, SharedRateLimiter))
        except BookReaderError:
            if isinstance(self.limiter, SharedRateLimiter):
                self.limiter.close()
            raise
        self.auth_failures = FailedAuthLimiter(*parse_rate(config.auth_failure_limit))
        workers = config.workers or (4 if kind in CONCURRENT_BACKENDS else 1)
        per_worker = 16 if kind in CONCURRENT_BACKENDS else 4
        self.pool = AnswerPool(workers, config.max_queue if config.max_queue is not None
                               else per_worker * workers)
        first_s, total_s = budget_for(self.backend, settings)
        # A local model has a first-token budget and then streams to its token cap; a
        # server still needs one limit per request, so allow it a minute to stream.
        answer_s = total_s if total_s is not None else (first_s or 0.0) + LOCAL_STREAM_S
        self.timeout_s = float(config.timeout_s or (
            answer_s + float(settings.retrieval_timeout_s)))
        self.queue_wait_s = float(config.queue_wait_s or self.timeout_s)
        self.counters = Counters()
        self.books: dict[str, Any] = {}  # book_id -> BookInfo, the books served
        self.sample_book_id: Optional[str] = None
        self.ready = threading.Event()
        self.load_error: Optional[str] = None  # for the log only (may name paths)
        self.load_error_id = ""
        self.started_at = time.time()

    # --- startup ------------------------------------------------------------------------
    def load(self) -> None:
        """Index or open the books and warm what the chosen backend needs (runs on a
        thread at startup).  Only that backend's model is loaded: an extractive or
        Claude server neither loads nor measures a local tier."""
        try:
            self._load_books()
            lib = self.library
            lib.embedder.warm_up()
            answerer = lib.answerer_for(self.backend)
            warm = getattr(answerer.validator.embedder, "warm_up", None)
            if warm is not None:
                warm()
            backend = answerer._backend_factory(self.backend)
            if hasattr(backend, "warm_up"):
                backend.warm_up()
            for book_id in self.books:
                lib.retriever(book_id)
            for book_id in self.books:  # in the background, paused while questions run
                lib.prepare_unit_vectors(book_id)
            log.info("Server ready: %d books, backend %s, %d workers, budget %.1f s",
                     len(self.books), self.backend, self.pool.workers, self.timeout_s)
        except Exception as exc:  # shown by /health as an error id; the log has it all
            self.load_error = (exc.user_message if isinstance(exc, BookReaderError)
                               else f"{type(exc).__name__}: {exc}")
            self.load_error_id = uuid.uuid4().hex[:12]
            log.error("The server could not load (error id %s): %s", self.load_error_id,
                      self.load_error, exc_info=not isinstance(exc, BookReaderError))
        finally:
            self.ready.set()

    @property
    def load_message(self) -> str:
        """What a client is told about a failed load (the detail is in the log)."""
        if not self.load_error:
            return ""
        return (f"The server could not load its books or models (error id "
                f"{self.load_error_id}). Tell the instructor: the server log has the "
                "details under that id.")

    def _load_books(self) -> None:
        from pathlib import Path

        from bookreader.core.samplebook import sample_book_path

        lib = self.library
        refs = list(self.config.books)
        infos = []
        for ref in refs:
            if Path(ref).expanduser().is_file():
                infos.append(lib.ingest(ref))
            else:
                infos.append(lib.book(ref))
        if not refs:
            infos = [b for b in lib.books() if b.state == "ready"]
        if not infos:
            sample = lib.ingest(sample_book_path(self.settings.data_dir))
            infos = [sample]
        for info in infos:
            if info.state != "ready":
                raise BookReaderError(
                    f"'{info.title}' is not ready to serve ({info.state}): {info.message} "
                    f"Run `bookreader ingest {info.path}` first."
                )
            self.books[info.book_id] = info
        try:
            from bookreader.core.pdf import file_book_id

            sample_id = file_book_id(sample_book_path(self.settings.data_dir))
        except (BookReaderError, OSError):
            sample_id = None
        if sample_id in self.books:
            self.sample_book_id = sample_id

    # --- books --------------------------------------------------------------------------
    def served_book(self, ref: str) -> Any:
        """A served book by id or unique id prefix (never a path)."""
        ref = (ref or "").strip().lower()
        if ref in self.books:
            return self.books[ref]
        matches = [b for i, b in self.books.items() if len(ref) >= 4 and i.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        raise BookNotFound(
            f"No book served here matches '{ref if len(ref) <= 60 else ref[:60] + '...'}'. "
            "GET /v1/books lists the books this "
            "server answers about."
        )

    @property
    def rate_limit_store(self) -> str:
        return "shared" if isinstance(self.limiter, SharedRateLimiter) else "memory"

    def close(self) -> None:
        self.pool.close()
        if isinstance(self.limiter, SharedRateLimiter):
            self.limiter.close()
        self.library.close()
        self.folder_lock.release()


def _limiter(settings: Settings, config: ServeConfig, limit: int,
             window: float) -> RateLimiter | SharedRateLimiter:
    store = (config.rate_limit_store or "auto").lower()
    if store not in ("auto", "memory", "shared"):
        raise InvalidInput(f"--rate-limit-store must be auto, memory or shared, not {store!r}.")
    if store == "auto":
        store = "shared" if settings.audit_url else "memory"
    if store == "memory":
        return RateLimiter(limit, window)
    import sqlalchemy as sa
    import sqlalchemy.exc

    try:
        return SharedRateLimiter(settings.audit_db_url, limit, window)
    except (sqlalchemy.exc.SQLAlchemyError, ImportError, ValueError) as exc:
        where = sa.engine.make_url(settings.audit_db_url).render_as_string(hide_password=True)
        raise StoreError(
            f"The shared rate limit keeps its counts in the audit database {where}, which "
            f"could not be used ({type(exc).__name__}). Start the database, fix audit_url in "
            "settings.json, or run with --rate-limit-store memory.", details=repr(exc),
        ) from exc
