"""The one facade that ``ui/`` and ``cli.py`` call.

It owns the catalogue of books (a small JSON file per book in the data folder), opens
each book's store and lexical index on demand, and wires ingestion, search, answering and
the audit log together.  All slow methods are synchronous and take ``progress`` and
``cancel`` callbacks; the UI runs them in workers.

It implements :class:`bookreader.api.LibraryApi`.  The catalogue of books lives in
:mod:`bookreader.catalogue`; a book's saved BM25 token lists sit next to its entry
(``bm25.json.gz``); its index is opened for reading in :mod:`bookreader.library_index`.

Ingestion reads and chunks every page first (fast: about a millisecond a page) so that the
progress bar knows the number of chunks, then embeds and upserts the chunks the store
does not hold yet in batches.  Chunk ids are deterministic, so a run after ``kill -9``
skips what was already stored and completes without duplicates.

Nothing expensive happens in ``__init__``: the embedding model, the audit database, the
answerer and the stores are built on first use.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from bookreader.answer_records import (  # noqa: F401 - part of this module's API
    REJECTED_KEEP_CHARS,
    cancelled_answer,
    capped_input,
    error_answer,
)
from bookreader.catalogue import Catalogue
from bookreader.config import Settings
from bookreader.core import sandbox
from bookreader.core.sandbox import SandboxLimits
from bookreader.core.retrieval_calibration import CALIBRATION_FILE
from bookreader.ingest import LEXICAL_FILE, IngestMixin
from bookreader.library_index import BookIndexMixin
from bookreader.library_study import StudyMixin
from bookreader.library_vectors import UnitVectorsMixin
from bookreader.core.types import (
    Answer,
    AnswerStage,
    BookInfo,
    CancelFn,
    Mode,
    ProgressFn,
    Retrieval,
    SearchFilter,
    never_cancel,
)
from bookreader.errors import (
    BookLocked,
    BookReaderError,
    Cancelled,
    PdfError,
    StoreError,
)

if TYPE_CHECKING:
    from bookreader.core.audit.export import ExportSummary
    from bookreader.core.retrieval import HybridRetriever
    from bookreader.core.store.base import VectorStore

log = logging.getLogger(__name__)

#: Bumped when chunking changes, so books indexed by an older chunker are re-indexed
#: (3: a chunk starts at each outline section; 4: a code listing keeps its line breaks,
#: one unit a line; see ``core/chunking.py``, rule 6; 5: a compound hyphenated at a line
#: end keeps its hyphen, "human-robot" not "humanrobot", see ``core/hyphenation.py``; 6: a
#: draft build's cross-reference keys, "{eq:continuity}", are not text, see
#: ``core/pdf_document.py``; 7: a chunk's vector is made from its heading path and its
#: text, ``core/chunking.py``'s ``embedding_text``; 8: a mathematical letter glued to a
#: plain word is split from it, ``core/pdf_layout.py``'s ``split_word``; 9: a note in the
#: margin, set in another type size, is a paragraph of its own, ``split_side_by_side``; 10:
#: a sentence that runs through a displayed formula is one sentence, ``chunking.py``'s
#: ``_runs_through``).
CHUNKER_VERSION = 10


class Library(IngestMixin, BookIndexMixin, StudyMixin, UnitVectorsMixin):
    """Books, search and answers for one data folder.

    Args:
        settings: The settings (data folder, store backend, weights, thresholds...).
        embedder: Shared embedder; built lazily from the bundled MiniLM when omitted.
        audit: The audit log; opened from ``settings.audit_db_url`` when omitted.
    """

    #: Chunks embedded and upserted per step of an ingest (also the cancel granularity).
    ingest_batch = 32

    def __init__(self, settings: Settings, *, embedder=None, audit=None,
                 session_id: Optional[str] = None) -> None:
        self.settings = settings
        # One session per run of the program: a library rebuilt after a Settings change
        # is handed the same id (the report counts sessions, not Settings saves).
        self.session_id = session_id or str(uuid.uuid4())
        self.catalogue = Catalogue(settings.books_dir, edge=settings.store_backend == "edge",
                                   lexical_file=LEXICAL_FILE)
        self._embedder = embedder
        self._audit = audit
        self._answerer: Any = None
        self._stores: dict[str, "VectorStore"] = {}
        self._retrievers: dict[str, "HybridRetriever"] = {}
        self._pdfs: dict[str, Any] = {}
        # Read-only copies of shards another process holds: book id -> (store, folder).
        self._copies: dict[str, tuple["VectorStore", Path]] = {}
        #: Books an ingest of this library is working on now.
        self._ingesting: set[str] = set()
        self._lock = threading.RLock()
        self._init_unit_vectors()

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

    def answerer_for(self, backend: Optional[str] = None):
        """The answerer, once the default tier is chosen if ``backend`` (or, when None,
        the settings' ``llm_backend``) is ``auto``.  Only a caller that will use the
        local tier pays for measuring the installed tiers: a server or a question with
        the extractive or Claude backend loads no local model."""
        from bookreader.core.llm.specs import AUTO

        if (backend or self.settings.llm_backend or AUTO).strip().lower() == AUTO:
            with self._lock:
                self._choose_default_tier()
        return self.answerer

    def _choose_default_tier(self) -> None:
        """With ``llm_backend`` auto: measure the installed tiers at first start, and again
        when the stored choice was made on another basis (:func:`choose.basis`)."""
        s = self.settings
        from bookreader.core.llm import choose

        # Measured again after an upgrade that estimates differently, or once another
        # tier was installed (or one removed).
        if not choose.needs_choice(s):
            return
        measured = len(choose.installed_tiers(s)) > 1
        name, reason, _ = choose.choose_tier(
            s, overhead_fn=lambda: choose.question_overhead_s(self.embedder))
        log.info("Default tier: %s. %s", name, reason)
        s.auto_tier, s.auto_reason, s.auto_basis = name, reason, choose.basis(s)
        if measured:  # a lone tier is re-checked for free next time
            try:
                s.save()
            except BookReaderError as exc:
                log.warning("Cannot save the chosen tier: %s", exc.user_message)

    # --- catalogue ------------------------------------------------------------------------
    def _book_dir(self, book_id: str) -> Path:
        return self.catalogue.folder(book_id)

    def _chunk_params(self) -> dict:
        return {
            "chunker": CHUNKER_VERSION,
            "max_tokens": self.settings.chunk_max_tokens,
            "overlap": self.settings.chunk_overlap,
        }

    # --- books ----------------------------------------------------------------------------
    def books(self) -> list[BookInfo]:
        """Every book in the library, sorted by title."""
        return self.catalogue.books()

    def book(self, ref: str | Path) -> BookInfo:
        """A book by id, unique id prefix, or PDF path.  Raises BookNotFound."""
        return self.catalogue.find(ref)

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
        (self._book_dir(book_id) / CALIBRATION_FILE).unlink(missing_ok=True)
        self._forget_unit_vectors(book_id)

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
        record = self.catalogue.read(info.book_id) or {}
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
        session_id: Optional[str] = None,
        client_id: Optional[str] = None,
        stop_reason: Optional[Callable[[], Optional[BookReaderError]]] = None,
        progress: Optional[ProgressFn] = None,
    ) -> Answer:
        """Answer a question in one of the three modes and record it in the audit log.

        ``progress(done, total, stage)`` hears each :class:`AnswerStage` as it begins
        (searching the book, reading passages, writing, checking).

        ``session_id`` (default: the library's own) and ``client_id`` (the API key's name
        of a server request) go into the audit record.

        ``stop_reason`` tells why ``cancel()`` turned true when it was not the user's Stop
        (a server's time budget: a QueryTimeout): the question is then recorded once, with
        that outcome, and ``Cancelled`` is raised as for a Stop.

        Never raises for a user error after validation starts: a failed or timed-out
        answer comes back as an Answer with ``error`` set and is audited too.
        ``InvalidInput`` is raised (and audited) for a bad question or selection.

        In selected-text mode no store, retriever or index is opened: only the catalogue
        entry (for the book's id and title) is read when a book is named.
        """
        mode = Mode(mode)
        info: Optional[BookInfo] = None
        session = session_id or self.session_id
        pending: list = []  # the write-ahead record, once the model is about to start
        begun: list[bool] = []  # the model was about to start (with or without that record)

        def started(provisional: Answer) -> None:
            # The write-ahead record is for text shown while it streams (issue 12).  An
            # answer nobody sees before it returns (a server's JSON reply) is recorded
            # once, whole, before it is returned: one durable commit instead of two.
            begun.append(True)
            if on_token is not None:
                pending.append(self.audit.begin_answer(provisional, session_id=session,
                                                       client_id=client_id))

        def token(text: str) -> None:
            if pending:
                pending[0].add(text)
            if on_token is not None:
                on_token(text)

        self._question_started()  # a background build of unit vectors waits meanwhile
        try:
            if book is not None:
                info = self.book(book)
            retriever = None
            pdf = None
            if info is not None:
                if mode is not Mode.SELECTED:
                    retriever = self.retriever(info.book_id)
                    self._load_unit_vectors(info.book_id)
                pdf = self._pdf_if_possible(info)
            # Loading models is not part of the answer's time budget.
            self.embedder.warm_up()
            answer = self.answerer_for(backend).ask(
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
                on_stage=_stage_reporter(progress),
            )
        except BookReaderError as exc:
            failed = error_answer(question, mode, exc, info, selection, backend)
            self._record(failed, pending, session, client_id)
            raise
        except Cancelled:
            reason = stop_reason() if stop_reason is not None else None
            if reason is not None:  # a budget ran out: one record, with that outcome
                if pending:
                    pending[0].flush()
                failed = error_answer(question, mode, reason, info, selection, backend)
                if pending and pending[0].text:
                    failed = dataclasses.replace(failed, text=pending[0].text)
                self._record(failed, pending, session, client_id)
            elif pending:  # the student stopped an answer that was already streaming
                pending[0].flush()
                stopped = cancelled_answer(question, mode, info, selection, backend,
                                            pending[0].text)
                self.audit.complete_answer(pending[0], stopped)
            elif begun:  # stopped before anything was shown: the question is still audited
                self.audit.record(cancelled_answer(question, mode, info, selection, backend, ""),
                                  session_id=session, client_id=client_id)
            raise
        finally:
            self._question_finished()
        self._record(answer, pending, session, client_id)
        return answer

    def warm_up(self, book: Optional[str | Path] = None, *, backend: Optional[str] = None) -> str:
        """Load now what the first whole-book question about ``book`` would load: the
        book's index (with what its first search builds) and PDF, both embedders and the model, with its rules read
        (:meth:`Answerer.warm_up`).  Run it on the lane questions run on, so a question
        asked meanwhile waits for it instead of loading the model a second time.

        Never raises a BookReaderError (logged; the question reports it).  Returns the
        backend name warmed, or "" when no model was loaded (Claude, a failure).
        """
        ready = None
        if book is not None:
            try:
                info = self.book(book)
                self.retriever(info.book_id).warm_up()
                self._pdf_if_possible(info)
                ready = info.book_id
            except BookReaderError as exc:
                log.warning("Warm-up: the book %s is not ready: %s", book, exc.user_message)
        warmed = self.answerer_for(backend).warm_up(backend)
        if ready is not None:  # after the model: the build must not slow the warm-up
            self.prepare_unit_vectors(ready)
        return warmed

    def _record(self, answer: Answer, pending: list, session: str,
                client_id: Optional[str]) -> None:
        """The completion of the write-ahead record, else a record written whole."""
        if pending:
            self.audit.complete_answer(pending[0], answer)
        else:
            self.audit.record(answer, session_id=session, client_id=client_id)

    def record_failure(
        self,
        question: str,
        error: BookReaderError,
        *,
        mode: Mode = Mode.BOOK,
        book: Optional[str] = None,
        selection: Optional[str] = None,
        backend: Optional[str] = None,
        session_id: Optional[str] = None,
        client_id: Optional[str] = None,
    ) -> Answer:
        """Audit a question that a front end stopped (the server's time budget) and
        return the recorded Answer (its ``error`` is ``error.user_message``)."""
        info: Optional[BookInfo] = None
        if book is not None:
            try:
                info = self.book(book)
            except BookReaderError:
                info = None
        failed = error_answer(question, Mode(mode), error, info, selection, backend)
        self.audit.record(failed, session_id=session_id or self.session_id, client_id=client_id)
        return failed

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
        """Earlier answers about a book, oldest first (from the audit log); the records of
        generated study sets are not questions and are left out."""
        return [a for a in self.audit.history(book_id, limit) if isinstance(a.mode, Mode)]

    def check_selection(self, text: str) -> tuple[str, str]:
        """The selection as it would be answered from, and the truncation notice if any."""
        from bookreader.core.inputs import clean_selection

        return clean_selection(text)

    # --- the audit log and exports -----------------------------------------------------
    def export_audit(self, fmt: str, out: Optional[Path] = None,
                     **filters: Any) -> ExportSummary:
        """Write the matching audit records as csv/jsonl/json; says how many records and
        how many questions."""
        return self.audit.export_summary(fmt, out, **filters)

    def verify_audit(self, path: Optional[Path] = None) -> Any:
        """Check the hash chain of the live log, or of an exported file."""
        return self.audit.verify(path)

    def audit_report(self, out: Path, **filters: Any) -> Path:
        """Write the instructor's HTML report; returns its path."""
        return self.audit.report(out, **filters)

    def export_conversation(self, ref: str | Path, out: Path) -> Path:
        """Write a book's questions and answers, with their citations, as Markdown."""
        from bookreader.core.conversation import conversation_markdown

        info = self.book(ref)
        answers = self.history(info.book_id, limit=100_000)
        out = Path(out).expanduser()
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(conversation_markdown(info.title, answers), encoding="utf-8")
        except OSError as exc:
            raise BookReaderError(
                f"Cannot write the conversation to {out}: {exc.strerror or exc}. "
                "Choose another folder.", details=repr(exc)) from exc
        log.info("Exported %d answers about %s to %s", len(answers), info.book_id, out)
        return out

    def close(self) -> None:
        """Stop background work; close stores, open PDFs and the audit database."""
        self._stop_unit_vectors()
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
            pdfs, self._pdfs = list(self._pdfs.values()), {}
            self._retrievers.clear()
            audit = self._audit
            copies, self._copies = list(self._copies.values()), {}
            stores += [store for store, _ in copies]
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
        for _, folder in copies:
            shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stage_reporter(progress: Optional[ProgressFn]):
    """An ``on_stage`` for the answerer that reports each stage through ``progress``."""
    if progress is None:
        return None
    order = list(AnswerStage)

    def stage(value: AnswerStage) -> None:
        progress(order.index(value) + 1, len(order), value.value)

    return stage
