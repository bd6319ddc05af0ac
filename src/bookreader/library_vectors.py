"""The library's second phase after ingest: the vectors of a book's sentences.

A book is askable as soon as its chunk index is built.  The vectors of the units the
focus step ranks (:mod:`bookreader.core.unit_vectors`) are computed afterwards, on a
background thread the library owns, started when a ready book is warmed up (the window
opens it, or finishes indexing it) or served.  The thread stops between two small steps
while any question is being answered (:meth:`Library.ask` marks its start and end), so
it never takes the cores a question needs; a question asked before the table exists
embeds its sentences on the fly, as it always did.  The table is loaded (memory-mapped)
when the book's retriever is built, and looked up by the focus step's embedder (the
validator's int8 copy: the same weights, so the same vectors and the same scores).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from bookreader.core.types import CancelFn, ProgressFn, never_cancel, no_progress
from bookreader.errors import BookReaderError, Cancelled

log = logging.getLogger(__name__)


class UnitVectorsMixin:
    """Unit vectors for :class:`bookreader.library.Library` (built, loaded, dropped)."""

    settings: Any
    answerer: Any
    _lock: Any
    _book_dir: Callable[[str], Path]
    _chunk_params: Callable[[], dict]
    book: Callable[..., Any]
    retriever: Callable[..., Any]

    #: Build a ready book's unit vectors in the background when it is warmed up.
    background_unit_vectors = True

    def _init_unit_vectors(self) -> None:
        self._quiet = threading.Condition()
        self._answering = 0
        self._vector_threads: dict[str, threading.Thread] = {}
        self._vectors_stop = threading.Event()
        # One build at a time (a server warms every book it serves at once).
        self._one_build = threading.Lock()
        # book id -> (size, mtime) of a table file that did not load: not read again
        # (nor logged again) for every question until it changes.
        self._bad_tables: dict[str, tuple[int, int]] = {}

    # --- questions pause the build -----------------------------------------------------------
    def _question_started(self) -> None:
        with self._quiet:
            self._answering += 1

    def _question_finished(self) -> None:
        with self._quiet:
            self._answering -= 1
            self._quiet.notify_all()

    def _wait_for_quiet(self) -> None:
        """Return once no question is being answered (or the library is closing)."""
        with self._quiet:
            while self._answering > 0 and not self._vectors_stop.is_set():
                self._quiet.wait(0.5)

    # --- the table ----------------------------------------------------------------------------
    def _unit_embedder(self) -> Any:
        """The embedder the focus step uses (the validator's), if it can take a table."""
        embedder = self.answerer.validator.embedder
        return embedder if hasattr(embedder, "attach_vectors") else None

    @staticmethod
    def _unit_budgets() -> list[int]:
        from bookreader.core.llm.specs import SPECS

        return sorted({s.context_chars for s in SPECS if s.focus_context})

    def _unit_fingerprint(self, embedder: Any) -> dict:
        from bookreader.core import unit_vectors

        return {"embedder": embedder.fingerprint, "units": unit_vectors.UNIT_RULES_VERSION,
                "budgets": self._unit_budgets(), "chunks": self._chunk_params()}

    def _unit_vectors_path(self, book_id: str) -> Path:
        from bookreader.core.unit_vectors import UNIT_VECTORS_FILE

        return self._book_dir(book_id) / UNIT_VECTORS_FILE

    def _load_unit_vectors(self, book_id: str) -> bool:
        """Attach the book's saved table to the focus embedder; False when there is none
        valid (never raises: a question then embeds on the fly)."""
        from bookreader.core import unit_vectors

        try:
            embedder = self._unit_embedder()
            if embedder is None:
                return False
            if embedder.has_vectors(book_id):
                return True
            path = self._unit_vectors_path(book_id)
            try:
                st = path.stat()
            except OSError:  # not built yet
                return False
            if self._bad_tables.get(book_id) == (st.st_size, st.st_mtime_ns):
                return False
            table = unit_vectors.load(path, self._unit_fingerprint(embedder))
        except Exception:  # a faster question is optional; the question itself is not
            log.exception("Cannot load the unit vectors of book %s", book_id)
            return False
        if table is None:
            self._bad_tables[book_id] = (st.st_size, st.st_mtime_ns)
            return False
        embedder.attach_vectors(book_id, table)
        log.info("Book %s: %d unit vectors attached (%.1f MB mapped)", book_id, len(table),
                 table.nbytes / 1e6)
        return True

    def _forget_unit_vectors(self, book_id: str) -> None:
        """Detach and delete the book's table (its index is being dropped)."""
        embedder = self._answerer_embedder_if_built()
        if embedder is not None and hasattr(embedder, "detach_vectors"):
            embedder.detach_vectors(book_id)
        self._unit_vectors_path(book_id).unlink(missing_ok=True)

    def _answerer_embedder_if_built(self) -> Any:
        answerer = getattr(self, "_answerer", None)
        return answerer.validator.embedder if answerer is not None else None

    def build_unit_vectors(self, ref: str | Path, *, progress: ProgressFn = no_progress,
                           cancel: CancelFn = never_cancel,
                           pause: Optional[Callable[[], None]] = None) -> bool:
        """Compute, save and attach the vectors of a ready book's units now (synchronous).

        Returns False when the focus embedder cannot take a table.  ``pause`` (default:
        wait while a question is being answered) is called between small steps.

        Raises:
            BookReaderError: the book is not ready.
            Cancelled: ``cancel()`` turned true (nothing is saved).
        """
        from bookreader.core import unit_vectors

        info = self.book(ref)
        chunks = self.retriever(info.book_id).lexical.chunks
        embedder = self._unit_embedder()
        if embedder is None:
            return False
        if self._load_unit_vectors(info.book_id):
            return True
        table = unit_vectors.build(
            [c.text for c in chunks], embedder, self._unit_budgets(),
            self._unit_vectors_path(info.book_id), self._unit_fingerprint(embedder),
            pause=pause or self._wait_for_quiet, progress=progress,
            cancel=lambda: cancel() or self._vectors_stop.is_set())
        embedder.attach_vectors(info.book_id, table)
        return True

    def prepare_unit_vectors(self, ref: str | Path) -> None:
        """Load the book's unit vectors, or build them on a background thread (at most
        one per book; never while a question is being answered).  Never raises."""
        try:
            book_id = self.book(ref).book_id
        except BookReaderError as exc:
            log.warning("Unit vectors: no book %s: %s", ref, exc.user_message)
            return
        if self._load_unit_vectors(book_id) or not self.background_unit_vectors:
            return
        with self._lock:
            running = self._vector_threads.get(book_id)
            if (running is not None and running.is_alive()) or self._vectors_stop.is_set():
                return
            thread = threading.Thread(target=self._build_in_background, args=(book_id,),
                                      name=f"unit-vectors-{book_id}", daemon=True)
            self._vector_threads[book_id] = thread
        thread.start()

    def _build_in_background(self, book_id: str) -> None:
        try:
            with self._one_build:
                self._wait_for_quiet()
                self.build_unit_vectors(book_id)
        except Cancelled:
            log.info("Unit vectors of book %s: stopped (built again next time)", book_id)
        except BookReaderError as exc:
            log.warning("Unit vectors of book %s not built: %s", book_id, exc.user_message)
        except Exception:  # questions still work, embedding on the fly
            log.exception("Unit vectors of book %s not built", book_id)

    def _stop_unit_vectors(self, timeout: float = 30.0) -> None:
        """Stop the background builds (at their next step) and wait for them."""
        self._vectors_stop.set()
        with self._quiet:
            self._quiet.notify_all()
        with self._lock:
            threads = list(self._vector_threads.values())
            self._vector_threads.clear()
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)
