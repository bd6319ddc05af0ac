"""A ready book's index opened for reading: its vector store, retriever and chapters.

A mixin of :class:`~bookreader.library.Library` (kept apart so that file stays small).
It opens a book's store on first use (or, while another BookReader process holds the
book, a private read-only copy of its shard), builds the hybrid retriever over the store
and the saved BM25 index with the book's confidence baselines, and lists the chapters
the index knows.  Writing an index is :mod:`bookreader.ingest`'s part; this module only
reads one.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from bookreader.core.storage import MIN_FREE_TO_OPEN, require_free
from bookreader.core.types import BookInfo, BookState
from bookreader.errors import BookLocked, BookNotFound, BookReaderError, StoreError
from bookreader.ingest import LEXICAL_FILE

if TYPE_CHECKING:
    from bookreader.core.retrieval import HybridRetriever
    from bookreader.core.store.base import VectorStore

log = logging.getLogger(__name__)


class BookIndexMixin:
    """Stores, retrievers and chapters for :class:`bookreader.library.Library`."""

    # Provided by Library (declared here for the type checker).
    settings: Any
    embedder: Any
    _lock: Any
    _stores: dict
    _retrievers: dict
    _copies: dict
    _book_dir: Callable[[str], Path]
    _not_ready_message: Callable[[BookInfo], str]
    book: Callable[..., BookInfo]

    def _store(self, book_id: str) -> "VectorStore":
        from bookreader.core.store.base import open_store

        with self._lock:
            store = self._stores.get(book_id)
            if store is None:
                if self.settings.store_backend == "edge":
                    # Its segments are memory-mapped: a full disk would be a SIGBUS.
                    require_free(self.settings.books_dir, MIN_FREE_TO_OPEN,
                                 "open the book's index safely")
                store = open_store(self.settings, book_id, dimension=self.embedder.dimension)
                self._stores[book_id] = store
            return store

    def _reading_store(self, book_id: str) -> "VectorStore":
        """The book's store for reading: its own, or, while another BookReader process
        (an open window) holds it, a private copy of the ready shard.

        Reading commands (``ask``, ``search``) then work beside the window; writes
        (ingest, remove) still need the book's lock and say who holds it.
        """
        try:
            return self._store(book_id)
        except BookLocked:
            if self.settings.store_backend != "edge":
                raise
        import tempfile

        from bookreader.core.store.edge import EdgeStore

        with self._lock:
            cached = self._copies.get(book_id)
            if cached is not None:
                return cached[0]
            tmp = Path(tempfile.mkdtemp(prefix="bookreader-read-"))
            try:
                shutil.copytree(self._book_dir(book_id) / "shard", tmp / "shard")
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                raise StoreError(
                    f"Cannot read book {book_id} while another BookReader process uses it: "
                    f"copying its index failed ({exc.strerror or exc}). Try again, or close "
                    "the BookReader window that has it open.", details=repr(exc)) from exc
            store = EdgeStore(tmp / "shard", book_id, dimension=self.embedder.dimension)
            self._copies[book_id] = (store, tmp)
        log.info("Book %s is open in another BookReader process; reading a copy of its index",
                 book_id)
        return store

    def retriever(self, ref: str | Path) -> "HybridRetriever":
        """The hybrid retriever of a ready book (built once, then cached)."""
        from bookreader.core import retrieval_calibration
        from bookreader.core.lexical import LexicalIndex
        from bookreader.core.retrieval import HybridRetriever

        info = self.book(ref)
        if info.state is BookState.DAMAGED:
            raise StoreError(f"'{info.title}' cannot answer questions: its index is damaged. "
                             f"{info.message}")
        if info.state is not BookState.READY:
            raise BookReaderError(self._not_ready_message(info))
        with self._lock:
            cached = self._retrievers.get(info.book_id)
            if cached is not None:
                return cached
            store = self._reading_store(info.book_id)
            chunks = list(store.chunks())
            path = self._book_dir(info.book_id) / LEXICAL_FILE
            lexical = LexicalIndex.load(path, chunks)
            if lexical is None:
                lexical = LexicalIndex.build(chunks)
                lexical.save(path)
            # the book's confidence baselines: stored at ingest, measured once for older books
            folder = self._book_dir(info.book_id)
            stored = retrieval_calibration.load(folder, len(chunks))
            retriever = HybridRetriever(store, lexical, self.embedder, self.settings, stored)
            if stored is None:
                retrieval_calibration.save(folder, retriever.calibration)
            self._retrievers[info.book_id] = retriever
            return retriever

    def chapters(self, ref: str | Path) -> list[str]:
        """The book's chapter titles in reading order (from its indexed chunks)."""
        seen: dict[str, None] = {}
        lexical = self.retriever(ref).lexical
        for chunk in lexical.chunks if lexical is not None else ():
            seen.setdefault(chunk.chapter, None)
        return [c for c in seen if c]

    def match_chapters(self, ref: str | Path, text: str) -> list[str]:
        """Chapters matching ``text``: an exact title, else the one containing it.

        Raises:
            BookNotFound: no chapter, or several, contain ``text``.
        """
        chapters = self.chapters(ref)
        wanted = " ".join(text.split()).casefold()
        exact = [c for c in chapters if c.casefold() == wanted]
        if exact:
            return exact
        partial = [c for c in chapters if wanted and wanted in c.casefold()]
        if len(partial) == 1:
            return partial
        listing = "; ".join(chapters[:30]) or "(the book has no chapters)"
        if partial:
            raise BookNotFound(
                f"'{text}' matches {len(partial)} chapters: {'; '.join(partial[:10])}. "
                "Give more of the title."
            )
        raise BookNotFound(f"No chapter matches '{text}'. The chapters are: {listing}")
