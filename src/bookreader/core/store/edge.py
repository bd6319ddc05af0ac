"""The embedded default store: one Qdrant Edge shard per book, in the data folder.

Qdrant Edge (``qdrant-edge-py``, module ``qdrant_edge``) runs the Qdrant engine inside the
process: no server, no background service.  Its Python API is in beta, so pyproject pins
a narrow version range; everything that touches it lives in this module.

Layout of a book folder::

    books/<book_id>/shard/        the Edge shard (segments, write-ahead log, config)
    books/<book_id>/shard.lock    the inter-process lock (see :mod:`.locking`)

The shard itself refuses a second opener with a cryptic WAL error; the lock taken before
opening turns that into :class:`~bookreader.errors.BookLocked` with a readable message.

Durability: every update is in the shard's write-ahead log when ``update`` returns, so a
killed process loses nothing (``tests/contracts`` kills a writer with ``os._exit`` and
finds every point).  ``flush()`` additionally writes the segments out; it costs about
0.3 s per call on a busy 2-core machine, so ``upsert`` flushes at most every
``flush_interval_s`` seconds (and ``close`` always does): a power cut can cost the last few
seconds of an ingest, which resuming re-embeds.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import numpy as np
from qdrant_edge import (
    CountRequest,
    SearchParams,
    Distance,
    EdgeConfig,
    EdgeShard,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    MatchAny,
    PayloadSchemaType,
    Point,
    Query,
    QueryRequest,
    RangeFloat,
    ScrollRequest,
    UpdateOperation,
)

if TYPE_CHECKING:
    from qdrant_edge import PointId  # a type alias of the stubs only

from bookreader.core.storage import (
    WRITE_HEADROOM,
    back_sparse_files,
    disk_full_message,
    free_bytes,
    release_zero_blocks,
)
from bookreader.core.store.locking import BookLock
from bookreader.core.store.points import (
    INTEGER_FIELDS,
    KEYWORD_FIELDS,
    check_batch,
    check_query,
    chunk_to_payload,
    payload_to_chunk,
    point_id,
)
from bookreader.core.types import Chunk, SearchFilter
from bookreader.errors import StoreError

log = logging.getLogger(__name__)

_UPSERT_BATCH = 256
_PAGE = 1000
#: Up to this many points a search scans them all (exactly): a few milliseconds for
#: 20,000 chunks of 384 floats, more than any textbook has.
EXACT_MAX_POINTS = 20_000
_EXACT = SearchParams(exact=True)


def edge_filter(flt: Optional[SearchFilter]) -> Optional[Filter]:
    """A Qdrant Edge filter for ``flt``: the whole chunk inside the pages, chapter in the list."""
    if flt is None:
        return None
    must = []
    if flt.page_start is not None:
        must.append(FieldCondition(key="page_start", range=RangeFloat(gte=flt.page_start)))
    if flt.page_end is not None:
        must.append(FieldCondition(key="page_end", range=RangeFloat(lte=flt.page_end)))
    if flt.chapters:
        must.append(FieldCondition(key="chapter", match=MatchAny(any=list(flt.chapters))))
    return Filter(must=must) if must else None


class EdgeStore:
    """A book's chunks in a Qdrant Edge shard at ``path``.

    Args:
        path: The shard directory (created on first use), e.g. ``books/<id>/shard``.
        book_id: The book's id (hash of the PDF).
        dimension: Length of the embedding vectors (384 for all-MiniLM-L6-v2).
        flush_interval_s: Least time between two segment flushes in :meth:`upsert`;
            0 flushes on every call.

    Raises:
        BookLocked: another BookReader process has this book open.
        StoreError: the shard cannot be created or is damaged.
    """

    def __init__(
        self, path: Path, book_id: str, dimension: int = 384, *, flush_interval_s: float = 5.0
    ) -> None:
        self.path = Path(path)
        self.book_id = book_id
        self.dimension = dimension
        self.flush_interval_s = flush_interval_s
        self._last_flush = time.monotonic()
        self._lock = BookLock(self.path.with_name(self.path.name + ".lock"), book_id)
        #: Chunks read from the shard, by point id (dropped for points written again).
        self._chunk_cache: dict[str, Chunk] = {}
        self._points: Optional[int] = None  # counted at the first search after a write
        self._lock.acquire()
        try:
            self._shard: Optional[EdgeShard] = self._open()
            self._ensure_indexes()
        except BaseException:
            self._close_quietly()
            raise

    # --- opening --------------------------------------------------------------------------
    def _config(self) -> EdgeConfig:
        return EdgeConfig(vectors=EdgeVectorParams(size=self.dimension, distance=Distance.Cosine))

    def _open(self) -> EdgeShard:
        exists = (self.path / "edge_config.json").exists() or any(
            (self.path / "segments").glob("*")
        )
        if exists:
            with self._errors("open", damaged=True):
                shard = EdgeShard.load(str(self.path), self._config())
            log.info("Opened the Edge shard of book %s at %s", self.book_id, self.path)
            return shard
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"Cannot create the index folder {self.path}: {exc.strerror or exc}. "
                "Check that the data folder is writable and the disk is not full.",
                details=repr(exc),
            ) from exc
        with self._errors("create"):
            shard = EdgeShard.create(str(self.path), self._config())
        log.info("Created an Edge shard for book %s at %s", self.book_id, self.path)
        return shard

    def _ensure_indexes(self) -> None:
        """Create the payload indexes the filters use (also repairs a half-created shard)."""
        shard = self._live()
        with self._errors("index", damaged=True):
            present = set(shard.info().payload_schema)
            wanted = [(f, PayloadSchemaType.Integer) for f in INTEGER_FIELDS] + [
                (f, PayloadSchemaType.Keyword) for f in KEYWORD_FIELDS
            ]
            missing = [(f, t) for f, t in wanted if f not in present]
            for field_name, schema in missing:
                shard.update(UpdateOperation.create_field_index(field_name, schema))
            if missing:
                shard.flush()

    # --- the VectorStore protocol ------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Insert or replace ``chunks`` with their ``vectors``.

        On return the points are in the write-ahead log (they survive the process being
        killed); segments are flushed when ``flush_interval_s`` has passed.
        """
        if len(chunks) == 0:
            return
        rows = check_batch(chunks, vectors, self.dimension).tolist()
        shard = self._live()
        for c in chunks:
            self._chunk_cache.pop(point_id(c.chunk_id), None)
        self._points = None
        self._back_files()
        with self._errors("write"):
            for start in range(0, len(chunks), _UPSERT_BATCH):
                batch = chunks[start : start + _UPSERT_BATCH]
                points = [
                    Point(
                        id=point_id(c.chunk_id),
                        vector=rows[start + i],
                        payload=chunk_to_payload(c),
                    )
                    for i, c in enumerate(batch)
                ]
                shard.update(UpdateOperation.upsert_points(points))
            if time.monotonic() - self._last_flush >= self.flush_interval_s:
                shard.flush()
                self._last_flush = time.monotonic()
        self._back_files(headroom=False)  # files the update created, before they fill

    def _back_files(self, *, headroom: bool = True) -> None:
        """Make every memory-mapped file of the shard own its blocks before a write, so a
        disk filled meanwhile is an error here, never a SIGBUS (see core/storage.py); with
        ``headroom``, also refuse to write without room for the files a write may add."""
        back_sparse_files(self.path, "write the index")
        if headroom and free_bytes(self.path) < WRITE_HEADROOM:
            raise StoreError(disk_full_message(self.path, "write the index"))

    def flush(self) -> None:
        """Write all pending changes to the segment files now."""
        shard = self._live()
        self._back_files(headroom=False)
        with self._errors("write"):
            shard.flush()
        self._last_flush = time.monotonic()

    def search(
        self, vector: np.ndarray, top_k: int, flt: Optional[SearchFilter] = None
    ) -> list[tuple[Chunk, float]]:
        """The ``top_k`` nearest chunks by cosine similarity inside ``flt``, best first."""
        query = check_query(vector, self.dimension)
        if top_k <= 0:
            return []
        shard = self._live()
        with self._errors("search", damaged=True):
            # Ids only: turning payloads into Python objects costs most of a query (and
            # holds the interpreter lock); a chunk's payload is read once, then cached.
            # A textbook's shard is small: an exact scan costs less than handing the
            # search to Qdrant's worker threads, and does not hold the interpreter lock
            # while waiting for them (it did, on a busy server).
            if self._points is None:
                self._points = int(shard.count(CountRequest(exact=True)))
            hits = shard.query(
                QueryRequest(
                    limit=top_k,
                    query=Query.Nearest(query),
                    filter=edge_filter(flt),
                    with_payload=False,
                    with_vector=False,
                    params=_EXACT if self._points <= EXACT_MAX_POINTS else None,
                )
            )
            found = [(str(h.id), float(h.score)) for h in hits]
            missing: list[PointId] = [pid for pid, _ in found if pid not in self._chunk_cache]
            if missing:
                for rec in shard.retrieve(missing, with_payload=True, with_vector=False):
                    self._chunk_cache[str(rec.id)] = payload_to_chunk(rec.payload or {})
            return [(self._chunk_cache[pid], score) for pid, score in found
                    if pid in self._chunk_cache]

    def chunks(self, flt: Optional[SearchFilter] = None) -> list[Chunk]:
        """Every chunk inside ``flt``, in ``position`` order."""
        return sorted(self._scroll(edge_filter(flt)), key=lambda c: c.position)

    def _scroll(self, flt: Optional[Filter]) -> Iterator[Chunk]:
        shard = self._live()
        offset = None
        with self._errors("read", damaged=True):
            while True:
                records, offset = shard.scroll(
                    ScrollRequest(
                        offset=offset, limit=_PAGE, filter=flt, with_payload=True,
                        with_vector=False,
                    )
                )
                for rec in records:
                    yield payload_to_chunk(rec.payload or {})
                if offset is None:
                    break

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of ``ids`` (chunk ids) already stored."""
        by_point = {point_id(i): i for i in ids}
        if not by_point:
            return set()
        shard = self._live()
        found: set[str] = set()
        keys: list[PointId] = list(by_point)
        with self._errors("read", damaged=True):
            for start in range(0, len(keys), _PAGE):
                records = shard.retrieve(
                    keys[start : start + _PAGE], with_payload=False, with_vector=False
                )
                found.update(by_point[str(rec.id)] for rec in records)
        return found

    def count(self) -> int:
        """Number of stored chunks."""
        shard = self._live()
        with self._errors("read", damaged=True):
            return int(shard.count(CountRequest(exact=True)))

    def drop(self) -> None:
        """Close the shard and delete its folder and lock file."""
        self._close_quietly(raise_errors=True)
        try:
            if self.path.exists():
                shutil.rmtree(self.path)
        except OSError as exc:
            raise StoreError(
                f"Cannot delete the index folder {self.path}: {exc.strerror or exc}. "
                "Close other programs using it and try again, or delete the folder by hand.",
                details=repr(exc),
            ) from exc
        with contextlib.suppress(FileNotFoundError):
            self._lock.path.unlink()
        log.info("Dropped the Edge shard of book %s", self.book_id)

    def close(self) -> None:
        """Flush and close the shard, then release the lock.  Safe to call twice."""
        self._close_quietly(raise_errors=True)

    def __enter__(self) -> "EdgeStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if getattr(self, "_shard", None) is not None else "closed"
        return f"EdgeStore(book_id={self.book_id!r}, path={str(self.path)!r}, {state})"

    # --- helpers ------------------------------------------------------------------------
    def _live(self) -> EdgeShard:
        if self._shard is None:
            raise StoreError(
                f"The index of book {self.book_id} was already closed. Open the book again."
            )
        return self._shard

    def _close_quietly(self, raise_errors: bool = False) -> None:
        """Close the shard (if open) and always release the lock."""
        shard = getattr(self, "_shard", None)
        self._shard = None
        try:
            if shard is not None:
                with self._errors("close"):
                    shard.flush()
                    shard.close()
                # Blocks given ahead to its files (_back_files) and never written go back
                # to the disk; nothing maps the files now and the lock is still ours.
                release_zero_blocks(self.path)
        except StoreError:
            if raise_errors:
                raise
            log.exception("Closing the Edge shard of book %s failed", self.book_id)
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def _errors(self, action: str, damaged: bool = False) -> Iterator[None]:
        """Turn Qdrant Edge failures into :class:`StoreError` with advice.

        Edge raises plain ``Exception`` (and, on a Rust panic, pyo3's ``PanicException``,
        a ``BaseException``), so the net is wide; interpreter exits still pass through.
        """
        try:
            yield
        except (KeyboardInterrupt, SystemExit, GeneratorExit, StoreError):
            raise
        except BaseException as exc:  # noqa: BLE001 - re-raised as StoreError below
            detail = str(exc) or type(exc).__name__
            log.error("Edge shard %s of book %s failed to %s: %s", self.path, self.book_id,
                      action, detail)
            if "No space left" in detail or "os error 28" in detail:
                raise StoreError(disk_full_message(self.path, f"{action} the index"),
                                 details=repr(exc)) from exc
            if damaged:
                advice = (
                    f"The index of this book at {self.path} is damaged or unreadable "
                    f"({detail}). Re-index the book: remove it from the library and add "
                    "the PDF again."
                )
            else:
                advice = (
                    f"Cannot {action} the index of this book at {self.path} ({detail}). "
                    "Check that the disk is not full and the data folder is writable, then "
                    "try again; if it keeps failing, remove the book and add it again."
                )
            raise StoreError(advice, details=repr(exc)) from exc
