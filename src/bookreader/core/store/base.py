"""The VectorStore protocol: one store holds one book's chunks and their embeddings.

Implementations: :mod:`.edge` (Qdrant Edge, embedded, one shard per book in the data
folder, the default) and :mod:`.server` (qdrant-client against a Qdrant server, or its
local mode in tests).  Both pass ``tests/contracts/test_store_contract.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from bookreader.core.types import Chunk, SearchFilter

if TYPE_CHECKING:
    from bookreader.config import Settings


@runtime_checkable
class VectorStore(Protocol):
    """A per-book collection of chunks with 384-float normalised vectors."""

    book_id: str

    def upsert(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        """Insert or replace chunks (by ``chunk_id``) with their vectors; durable on return."""
        ...

    def search(
        self, vector: np.ndarray, top_k: int, flt: Optional[SearchFilter] = None
    ) -> list[tuple[Chunk, float]]:
        """The ``top_k`` nearest chunks by cosine similarity, best first, inside ``flt``."""
        ...

    def chunks(self, flt: Optional[SearchFilter] = None) -> Iterable[Chunk]:
        """Every stored chunk inside ``flt``, in ``position`` order."""
        ...

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of ``ids`` already stored (used to resume an interrupted ingest)."""
        ...

    def count(self) -> int:
        """Number of stored chunks."""
        ...

    def drop(self) -> None:
        """Delete the whole collection and its files."""
        ...

    def close(self) -> None:
        """Release files and locks.  Safe to call twice."""
        ...


def open_store(settings: "Settings", book_id: str, dimension: int = 384) -> VectorStore:
    """Open (creating if needed) the store for ``book_id`` chosen by the settings.

    Raises:
        BookLocked: another BookReader process has this book open.
        StoreError: the store cannot be opened (disk full, bad server URL...).
    """
    if settings.store_backend == "server":
        from bookreader.core.store.server import ServerStore

        return ServerStore(book_id, dimension=dimension, url=settings.qdrant_url)
    from bookreader.core.store.edge import EdgeStore

    return EdgeStore(settings.books_dir / book_id / "shard", book_id, dimension=dimension)
