"""The one facade that ``ui/`` and ``cli.py`` call.

It owns the catalogue of books (a small JSON file per book in the data folder), opens
each book's store and lexical index on demand, and wires ingestion, search, answering and
the audit log together.  All slow methods are synchronous and take ``progress`` and
``cancel`` callbacks; the UI runs them in workers.

Catalogue: ``<data>/books/<book_id>/book.json`` next to the book's shard and its saved
BM25 token lists (``bm25.json.gz``).  ``state`` is "indexing" while an ingest runs (and
after one was interrupted: ingesting again resumes it), "ready", or "failed".

Ingestion reads and chunks every page first (fast: about a millisecond a page) so that the
progress bar knows the number of chunks, then embeds and upserts the chunks the store
does not hold yet in batches.  Chunk ids are deterministic, so a run after ``kill -9``
skips what was already stored and completes without duplicates.

Nothing expensive happens in ``__init__``: the embedding model, the audit database, the
answerer and the stores are built on first use.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from bookreader.config import Settings
from bookreader.core import sandbox
from bookreader.core.sandbox import SandboxLimits
from bookreader.core.storage import (
    MIN_FREE_TO_OPEN,
    index_damage,
    require_free,
)
from bookreader.core.types import (
    Answer,
    BookInfo,
    CancelFn,
    Mode,
    Retrieval,
    SearchFilter,
    never_cancel,
)
from bookreader.errors import (
    BookLocked,
    BookNotFound,
    BookReaderError,
    Cancelled,
    PdfError,
    StoreError,
)
from bookreader.ingest import LEXICAL_FILE, IngestMixin

if TYPE_CHECKING:
    from bookreader.core.retrieval import HybridRetriever
    from bookreader.core.store.base import VectorStore

log = logging.getLogger(__name__)

BOOK_FILE = "book.json"
#: Bumped when chunking changes, so books indexed by an older chunker are re-indexed.
CHUNKER_VERSION = 2
#: Shortest id prefix accepted as a book reference.
MIN_PREFIX = 4


class Library(IngestMixin):
    """Books, search and answers for one data folder.

    Args:
        settings: The settings (data folder, store backend, weights, thresholds...).
        embedder: Shared embedder; built lazily from the bundled MiniLM when omitted.
        audit: The audit log; opened from ``settings.audit_db_url`` when omitted.
    """

    #: Chunks embedded and upserted per step of an ingest (also the cancel granularity).
    ingest_batch = 32

    def __init__(self, settings: Settings, *, embedder=None, audit=None) -> None:
        self.settings = settings
        self.session_id = str(uuid.uuid4())
        self._embedder = embedder
        self._audit = audit
        self._answerer: Any = None
        self._stores: dict[str, "VectorStore"] = {}
        self._retrievers: dict[str, "HybridRetriever"] = {}
        self._pdfs: dict[str, Any] = {}
        self._lock = threading.RLock()

    # --- lazily built services -----------------------------------------------------------
    @property
    def embedder(self):
        """The embedder (the bundled MiniLM unless one was given); built on first use."""
        with self._lock:
            if self._embedder is None:
                from bookreader.core.embedding import MiniLMEmbedder

                self._embedder = MiniLMEmbedder()
            return self._embedder

    @property
    def audit(self):
        """The audit log; the database is opened on first use."""
        with self._lock:
            if self._audit is None:
                from bookreader.core.audit import AuditLog

                self._audit = AuditLog.from_settings(self.settings)
            return self._audit

    @property
    def answerer(self):
        with self._lock:
            if self._answerer is None:
                from bookreader.core.answering import Answerer
                from bookreader.core.llm.registry import BackendRegistry, create_backend

                # The library owns its model cache: one load per backend per library,
                # freed with it (no process-wide singleton).
                backends = BackendRegistry()
                embedder = self.embedder
                self._answerer = Answerer(
                    self.settings,
                    embedder=embedder,
                    backend_factory=lambda name: create_backend(
                        name, self.settings, embedder=embedder, registry=backends
                    ),
                )
            return self._answerer

    # --- catalogue ------------------------------------------------------------------------
    def _book_dir(self, book_id: str) -> Path:
        return self.settings.books_dir / book_id

    def _read_record(self, book_id: str) -> Optional[dict]:
        path = self._book_dir(book_id) / BOOK_FILE
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("Ignoring the unreadable catalogue entry %s: %s", path, exc)
            return None

    def _write_record(self, record: dict) -> None:
        folder = self._book_dir(record["book_id"])
        path = folder / BOOK_FILE
        record["updated"] = time.time()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, indent=2), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            path.with_suffix(".tmp").unlink(missing_ok=True)
            raise StoreError(
                f"Cannot write the library catalogue {path}: {exc.strerror or exc}. "
                "Check that the data folder is writable and the disk is not full.",
                details=repr(exc),
            ) from exc

    def _damage(self, record: dict) -> str:
        """Why a ready book's index is unusable (a part missing or unreadable), or ""."""
        if record.get("state") != "ready":
            return ""
        return index_damage(self._book_dir(record["book_id"]), lexical_file=LEXICAL_FILE,
                            edge=self.settings.store_backend == "edge")

    def _info(self, record: dict) -> BookInfo:
        state = record.get("state", "failed")
        message = record.get("message", "")
        damage = self._damage(record)
        if damage:
            state = "damaged"
            message = (f"Damaged: re-index. {damage[0].upper()}{damage[1:]}. Ingest the book "
                       "again (Retry in the library panel, or `bookreader ingest` with its "
                       "PDF) to rebuild it.")
        return BookInfo(
            book_id=record["book_id"],
            title=record.get("title", ""),
            path=record.get("path", ""),
            page_count=int(record.get("page_count", 0)),
            chunk_count=int(record.get("chunk_count", 0)),
            state=state,
            message=message,
            pages_without_text=tuple(record.get("pages_without_text", ())),
        )

    def _chunk_params(self) -> dict:
        return {
            "chunker": CHUNKER_VERSION,
            "max_tokens": self.settings.chunk_max_tokens,
            "overlap": self.settings.chunk_overlap,
        }

    # --- books ----------------------------------------------------------------------------
    def books(self) -> list[BookInfo]:
        """Every book in the library, sorted by title."""
        out: list[BookInfo] = []
        root = self.settings.books_dir
        if not root.is_dir():
            return out
        for folder in root.iterdir():
            record = self._read_record(folder.name) if folder.is_dir() else None
            if record is not None and record.get("book_id") == folder.name:
                out.append(self._info(record))
        out.sort(key=lambda b: (b.title.casefold(), b.book_id))
        return out

    def book(self, ref: str | Path) -> BookInfo:
        """A book by id, unique id prefix, or PDF path.  Raises BookNotFound."""
        text = str(ref).strip()
        if not text:
            raise BookNotFound("No book was named. Give a book id or the PDF's path.")
        record = self._read_record(text) if "/" not in text and "\\" not in text else None
        if record is not None:
            return self._info(record)
        books = self.books()
        candidate = Path(text).expanduser()
        if candidate.is_file():
            resolved = str(candidate.resolve())
            for b in books:
                if b.path == resolved:
                    return b
            from bookreader.core.pdf import file_book_id

            record = self._read_record(file_book_id(candidate))
            if record is not None:
                return self._info(record)
            raise BookNotFound(
                f"{candidate} is not in the library yet. Run `bookreader ingest {candidate}` first."
            )
        if len(text) >= MIN_PREFIX:
            matches = [b for b in books if b.book_id.startswith(text.lower())]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                raise BookNotFound(
                    f"'{text}' matches {len(matches)} books. Give more of the book id "
                    "(`bookreader books` lists them)."
                )
        raise BookNotFound(
            f"No book in the library matches '{text}'. Give a book id from `bookreader books` "
            "or the path of a PDF you have ingested."
        )

    def remove(self, ref: str | Path) -> BookInfo:
        """Delete a book's index (not the PDF)."""
        info = self.book(ref)
        try:
            self._drop_index(info.book_id)
        except BookLocked:
            raise
        except StoreError as exc:  # a damaged shard: deleting the folder removes it anyway
            log.warning("Removing book %s with a damaged index: %s", info.book_id, exc.user_message)
        shutil.rmtree(self._book_dir(info.book_id), ignore_errors=False)
        log.info("Removed book %s (%s)", info.book_id, info.title)
        return info

    def _drop_index(self, book_id: str) -> None:
        """Drop the book's vectors and BM25 and forget everything cached for it."""
        with self._lock:
            self._retrievers.pop(book_id, None)
            pdf = self._pdfs.pop(book_id, None)
            if pdf is not None and hasattr(pdf, "close"):
                pdf.close()
            store = self._stores.pop(book_id, None)
        if store is None:
            from bookreader.core.store.base import open_store

            store = open_store(self.settings, book_id)
        try:
            store.drop()
        finally:
            store.close()
        (self._book_dir(book_id) / LEXICAL_FILE).unlink(missing_ok=True)

    def open_pdf(self, ref: str | Path, password: Optional[str] = None):
        """The book's :class:`bookreader.core.pdf.PdfBook` for reading and rendering.

        The PDF stays open (and cached) until :meth:`close`; an encrypted book needs its
        password the first time only.
        """
        from bookreader.core.pdf import PdfBook

        info = self.book(ref)
        with self._lock:
            pdf = self._pdfs.get(info.book_id)
        if pdf is not None and password is None:
            return pdf
        record = self._read_record(info.book_id) or {}
        limits = SandboxLimits.from_settings(self.settings)
        if record.get("sandbox") != sandbox.SANDBOX_VERSION:
            # Not read by this library's sandbox yet (indexed by an older version).
            scan = sandbox.scan_pdf(info.path, password, limits=limits)
            blocked = scan.flagged
        else:
            blocked = {int(k): v for k, v in (record.get("blocked_pages") or {}).items()}
        pdf = PdfBook.open(info.path, password, blocked=blocked, max_page_chars=limits.max_page_chars)
        with self._lock:
            self._pdfs[info.book_id] = pdf
        return pdf

    # --- stores and retrievers -------------------------------------------------------------
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

    def retriever(self, ref: str | Path) -> "HybridRetriever":
        """The hybrid retriever of a ready book (built once, then cached)."""
        from bookreader.core.lexical import LexicalIndex
        from bookreader.core.retrieval import HybridRetriever

        info = self.book(ref)
        if info.state == "damaged":
            raise StoreError(f"'{info.title}' cannot answer questions: its index is damaged. "
                             f"{info.message}")
        if info.state != "ready":
            raise BookReaderError(
                f"'{info.title}' is not ready for questions ({info.state}). "
                + ("Ingest it again to finish indexing." if info.state == "indexing"
                   else f"{info.message} Ingest it again after fixing the problem.")
            )
        with self._lock:
            cached = self._retrievers.get(info.book_id)
            if cached is not None:
                return cached
            store = self._store(info.book_id)
            chunks = list(store.chunks())
            path = self._book_dir(info.book_id) / LEXICAL_FILE
            lexical = LexicalIndex.load(path, chunks)
            if lexical is None:
                lexical = LexicalIndex.build(chunks)
                lexical.save(path)
            retriever = HybridRetriever(store, lexical, self.embedder, self.settings)
            self._retrievers[info.book_id] = retriever
            return retriever

    def chapters(self, ref: str | Path) -> list[str]:
        """The book's chapter titles in reading order (from its indexed chunks)."""
        seen: dict[str, None] = {}
        for chunk in self.retriever(ref).lexical.chunks:
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

    # --- search and answers -----------------------------------------------------------
    def search(
        self, ref: str | Path, query: str, *, top_k: int = 5, flt: Optional[SearchFilter] = None
    ) -> Retrieval:
        """Hybrid search in one book."""
        return self.retriever(ref).search(query, top_k=top_k, flt=flt)

    def ask(
        self,
        question: str,
        *,
        mode: Mode = Mode.BOOK,
        book: Optional[str | Path] = None,
        selection: Optional[str] = None,
        pages: Optional[tuple[int, int]] = None,
        backend: Optional[str] = None,
        on_token: Optional[Callable[[str], None]] = None,
        cancel: CancelFn = never_cancel,
    ) -> Answer:
        """Answer a question in one of the three modes and record it in the audit log.

        Never raises for a user error after validation starts: a failed or timed-out
        answer comes back as an Answer with ``error`` set and is audited too.
        ``InvalidInput`` is raised (and audited) for a bad question or selection.

        In selected-text mode no store, retriever or index is opened: only the catalogue
        entry (for the book's id and title) is read when a book is named.
        """
        mode = Mode(mode)
        info: Optional[BookInfo] = None
        pending: list = []  # the write-ahead record, once the model is about to start

        def started(provisional: Answer) -> None:
            pending.append(self.audit.begin_answer(provisional, session_id=self.session_id))

        def token(text: str) -> None:
            if pending:
                pending[0].add(text)
            if on_token is not None:
                on_token(text)

        try:
            if book is not None:
                info = self.book(book)
            retriever = None
            pdf = None
            if info is not None:
                if mode is not Mode.SELECTED:
                    retriever = self.retriever(info.book_id)
                pdf = self._pdf_if_possible(info)
            # Loading models is not part of the answer's time budget.
            self.embedder.warm_up()
            answer = self.answerer.ask(
                question,
                mode=mode,
                retriever=retriever,
                pages=pdf,
                selection=selection,
                page_range=pages,
                backend=backend,
                on_token=token,
                cancel=cancel,
                book_id=info.book_id if info else "",
                book_title=info.title if info else "",
                on_start=started,
            )
        except BookReaderError as exc:
            failed = _error_answer(question, mode, exc, info, selection, backend)
            self._record(failed, pending)
            raise
        except Cancelled:
            if pending:
                pending[0].flush()
                self.audit.complete_answer(pending[0], _cancelled_answer(question, mode, info,
                                                                         selection, backend,
                                                                         pending[0].text))
            raise
        self._record(answer, pending)
        return answer

    def _record(self, answer: Answer, pending: list) -> None:
        if pending:
            self.audit.complete_answer(pending[0], answer)
        else:
            self.audit.record(answer, session_id=self.session_id)

    def _pdf_if_possible(self, info: BookInfo) -> Any:
        """The open PdfBook (to verify and locate citations), or None if it cannot open."""
        with self._lock:
            pdf = self._pdfs.get(info.book_id)
        if pdf is not None:
            return pdf
        try:
            return self.open_pdf(info.book_id)
        except PdfError as exc:
            log.warning(
                "Answering about %s without its PDF (citations are checked against the "
                "indexed text only): %s", info.book_id, exc.user_message,
            )
            return None

    def history(self, book_id: str, limit: int = 200) -> list[Answer]:
        """Earlier answers about a book, oldest first (from the audit log)."""
        return self.audit.history(book_id, limit)

    def close(self) -> None:
        """Close stores, open PDFs and the audit database."""
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
            pdfs, self._pdfs = list(self._pdfs.values()), {}
            self._retrievers.clear()
            audit = self._audit
        for store in stores:
            try:
                store.close()
            except Exception:  # close everything else even if one fails
                log.exception("Closing the store of book %s failed", getattr(store, "book_id", "?"))
        for pdf in pdfs:
            if hasattr(pdf, "close"):
                try:
                    pdf.close()
                except Exception:
                    log.exception("Closing a PDF failed")
        if audit is not None and hasattr(audit, "close"):
            audit.close()

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cancelled_answer(question: str, mode: Mode, info: Optional[BookInfo],
                      selection: Optional[str], backend: Optional[str], shown: str) -> Answer:
    """The completion record of an answer the student stopped while it streamed."""
    from bookreader.errors import BookReaderError as _E

    answer = _error_answer(question, mode, _E("The answer was stopped by the user."), info,
                           selection, backend)
    return dataclasses.replace(answer, text=shown or answer.text)


def _error_answer(
    question: str,
    mode: Mode,
    exc: BookReaderError,
    info: Optional[BookInfo],
    selection: Optional[str],
    backend: Optional[str],
) -> Answer:
    """The audit record of a question that ended in an error."""
    fields = {f.name for f in dataclasses.fields(Answer)}
    values: dict[str, Any] = dict(
        query_id=str(uuid.uuid4()),
        answer_id=str(uuid.uuid4()),
        question=capped_input(question if isinstance(question, str) else repr(question)),
        mode=mode,
        text=exc.user_message,
        fallback=True,
        in_selected_text=None,
        confidence=0.0,
        confidence_level="low",
        backend=backend or "",
        error=exc.user_message,
        book_id=info.book_id if info else "",
        book_title=info.title if info else "",
        selection=capped_input(selection if isinstance(selection, str) else repr(selection or "")),
    )
    return Answer(**{k: v for k, v in values.items() if k in fields})


#: A rejected question or selection keeps this many characters in the audit log.
REJECTED_KEEP_CHARS = 2000


def capped_input(text: str) -> str:
    """A rejected input as the audit log keeps it: valid Unicode, and beyond
    :data:`REJECTED_KEEP_CHARS` its start, its length and the SHA-256 of the whole."""
    import hashlib

    from bookreader.core.storage import valid_text

    text = valid_text(text or "")
    if len(text) <= REJECTED_KEEP_CHARS:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return (f"{text[:REJECTED_KEEP_CHARS]} [... cut by BookReader: {len(text):,} characters in "
            f"all, SHA-256 {digest}]")
