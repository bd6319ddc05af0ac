"""Vector stores: the :class:`VectorStore` protocol and its implementations."""

from bookreader.core.store.base import VectorStore, open_store

__all__ = ["VectorStore", "open_store"]
