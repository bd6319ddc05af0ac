"""A store in a Qdrant server (a department-wide library), through qdrant-client.

One collection per book, named ``book_<book_id>``.  For tests and experiments the same
class runs on qdrant-client's local mode: ``location=":memory:"`` keeps everything in the
process, ``location="/some/folder"`` persists to that folder.  Local mode is much slower
than Qdrant Edge (see ``bench/store.py``) and ignores payload indexes, so the embedded
default is :class:`~bookreader.core.store.edge.EdgeStore`.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Iterator, Optional, Sequence

import numpy as np
from qdrant_client import QdrantClient, models

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
from bookreader.errors import BookLocked, StoreError

log = logging.getLogger(__name__)

_UPSERT_BATCH = 256
_PAGE = 1000
_TIMEOUT_S = 10


def collection_name(book_id: str) -> str:
    """The server collection that holds ``book_id``."""
    return f"book_{book_id}"


def server_filter(flt: Optional[SearchFilter]) -> Optional[models.Filter]:
    """A qdrant-client filter for ``flt``: whole chunk inside the pages, chapter in the list."""
    if flt is None:
        return None
    must: list[models.Condition] = []
    if flt.page_start is not None:
        must.append(models.FieldCondition(key="page_start", range=models.Range(gte=flt.page_start)))
    if flt.page_end is not None:
        must.append(models.FieldCondition(key="page_end", range=models.Range(lte=flt.page_end)))
    if flt.chapters:
        must.append(
            models.FieldCondition(key="chapter", match=models.MatchAny(any=list(flt.chapters)))
        )
    return models.Filter(must=must) if must else None


class ServerStore:
    """A book's chunks in a collection of a Qdrant server, or of qdrant-client's local mode.

    Args:
        book_id: The book's id (hash of the PDF).
        dimension: Length of the embedding vectors.
        url: Address of a Qdrant server, e.g. ``http://qdrant.example.edu:6333``.
        location: Instead of ``url``: ``":memory:"`` or a folder for qdrant-client's local
            mode (tests).

    Raises:
        StoreError: no address given, server unreachable, or a collection with another
            vector size.
        BookLocked: a local-mode folder is in use by another process.
    """

    def __init__(
        self, book_id: str, dimension: int = 384, url: str = "", location: str | None = None
    ) -> None:
        self.book_id = book_id
        self.dimension = dimension
        self.collection = collection_name(book_id)
        self._where = url or location or ""
        self._local = not url
        if not url and not location:
            raise StoreError(
                "No Qdrant server address is set. Enter the server's URL in the settings "
                "(qdrant_url), or switch the store back to the embedded one ('edge')."
            )
        self._client: Optional[QdrantClient] = self._connect(url, location)
        try:
            self._ensure_collection()
        except BaseException:
            self._close_client()
            raise

    # --- connection ------------------------------------------------------------------------
    def _connect(self, url: str, location: str | None) -> QdrantClient:
        try:
            if url:
                return QdrantClient(url=url, timeout=_TIMEOUT_S, check_compatibility=False)
            if location == ":memory:":
                return QdrantClient(location=":memory:")
            return QdrantClient(path=str(location))
        except RuntimeError as exc:  # local mode: "already accessed by another instance"
            if "already accessed" in str(exc):
                raise BookLocked(
                    "This book is in use by another BookReader process (a window or a "
                    "command). Wait for it to finish or close it, then try again.",
                    details=f"book {self.book_id}, qdrant local folder {location}: {exc}",
                ) from exc
            raise self._store_error("connect to", exc) from exc
        except Exception as exc:  # noqa: BLE001 - bad URL, unreadable folder...
            raise self._store_error("connect to", exc) from exc

    def _ensure_collection(self) -> None:
        client = self._live()
        with self._errors("reach"):
            if client.collection_exists(self.collection):
                params = client.get_collection(self.collection).config.params.vectors
                size = getattr(params, "size", None)
                if size is not None and size != self.dimension:
                    raise StoreError(
                        f"The collection {self.collection} on {self._where} holds vectors "
                        f"of size {size}, not {self.dimension}. Re-index the book: remove it "
                        "from the library and add the PDF again."
                    )
                return
            client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(
                    size=self.dimension, distance=models.Distance.COSINE
                ),
            )
            if not self._local:  # local mode ignores payload indexes (and warns)
                for name in INTEGER_FIELDS:
                    client.create_payload_index(
                        self.collection, name, models.PayloadSchemaType.INTEGER
                    )
                for name in KEYWORD_FIELDS:
                    client.create_payload_index(
                        self.collection, name, models.PayloadSchemaType.KEYWORD
                    )
            log.info("Created collection %s on %s", self.collection, self._where)

    # --- the VectorStore protocol ------------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Insert or replace ``chunks``; waits until the server has applied them."""
        if len(chunks) == 0:
            return
        rows = check_batch(chunks, vectors, self.dimension).tolist()
        client = self._live()
        with self._errors("write to"):
            for start in range(0, len(chunks), _UPSERT_BATCH):
                batch = chunks[start : start + _UPSERT_BATCH]
                client.upsert(
                    self.collection,
                    points=[
                        models.PointStruct(
                            id=point_id(c.chunk_id),
                            vector=rows[start + i],
                            payload=chunk_to_payload(c),
                        )
                        for i, c in enumerate(batch)
                    ],
                    wait=True,
                )

    def search(
        self, vector: np.ndarray, top_k: int, flt: Optional[SearchFilter] = None
    ) -> list[tuple[Chunk, float]]:
        """The ``top_k`` nearest chunks by cosine similarity inside ``flt``, best first."""
        query = check_query(vector, self.dimension)
        if top_k <= 0:
            return []
        client = self._live()
        with self._errors("search"):
            hits = client.query_points(
                self.collection,
                query=query,
                query_filter=server_filter(flt),
                limit=top_k,
                with_payload=True,
                with_vectors=False,
            ).points
            return [(payload_to_chunk(h.payload or {}), float(h.score)) for h in hits]

    def chunks(self, flt: Optional[SearchFilter] = None) -> list[Chunk]:
        """Every chunk inside ``flt``, in ``position`` order."""
        client = self._live()
        out: list[Chunk] = []
        offset = None
        with self._errors("read from"):
            while True:
                records, offset = client.scroll(
                    self.collection,
                    scroll_filter=server_filter(flt),
                    limit=_PAGE,
                    offset=offset,
                    with_payload=True,
                    with_vectors=False,
                )
                out.extend(payload_to_chunk(r.payload or {}) for r in records)
                if offset is None:
                    break
        return sorted(out, key=lambda c: c.position)

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of ``ids`` (chunk ids) already stored."""
        by_point = {point_id(i): i for i in ids}
        if not by_point:
            return set()
        client = self._live()
        keys = list(by_point)
        found: set[str] = set()
        with self._errors("read from"):
            for start in range(0, len(keys), _PAGE):
                records = client.retrieve(
                    self.collection, keys[start : start + _PAGE], with_payload=False,
                    with_vectors=False,
                )
                found.update(by_point[str(r.id)] for r in records)
        return found

    def count(self) -> int:
        """Number of stored chunks."""
        client = self._live()
        with self._errors("read from"):
            return int(client.count(self.collection, exact=True).count)

    def drop(self) -> None:
        """Delete the book's collection and close the connection."""
        client = self._live()
        with self._errors("delete"):
            client.delete_collection(self.collection)
        log.info("Dropped collection %s on %s", self.collection, self._where)
        self._close_client()

    def close(self) -> None:
        """Close the connection.  Safe to call twice."""
        self._close_client()

    def __enter__(self) -> "ServerStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ServerStore(book_id={self.book_id!r}, where={self._where!r})"

    # --- helpers ---------------------------------------------------------------------------
    def _live(self) -> QdrantClient:
        if self._client is None:
            raise StoreError(
                f"The index of book {self.book_id} was already closed. Open the book again."
            )
        return self._client

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with self._errors("close the connection to"):
                client.close()

    def _store_error(self, action: str, exc: BaseException) -> StoreError:
        detail = str(exc) or type(exc).__name__
        log.error("Qdrant %s: cannot %s collection %s: %s", self._where, action,
                  self.collection, detail)
        if self._local:
            advice = (
                f"Cannot {action} the local Qdrant index at {self._where} ({detail}). "
                "Check that the folder is writable and the disk is not full."
            )
        else:
            advice = (
                f"Cannot {action} the Qdrant server at {self._where} ({detail}). Check the "
                "server address in the settings (qdrant_url) and your network, or switch "
                "the store to the embedded one ('edge')."
            )
        return StoreError(advice, details=repr(exc))

    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn qdrant-client and network failures into :class:`StoreError`.

        Programming errors (TypeError, AttributeError...) pass through unchanged.
        """
        try:
            yield
        except (StoreError, TypeError, AttributeError, NameError):
            raise
        except Exception as exc:  # noqa: BLE001 - qdrant-client raises many types
            raise self._store_error(action, exc) from exc
