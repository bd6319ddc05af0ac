"""Ingestion, the part of :class:`~bookreader.library.Library` that turns a PDF into an index.

A file this library has not read yet is first opened by the sandbox (a capped child
process, :mod:`bookreader.core.sandbox`): a file that crashes or exhausts it is marked
failed with a clear message.  The free disk space is checked against an estimate before
anything is written, and the text of every page is extracted in capped children, page by
page, so one bad page is skipped with a note.  Then the chunks are embedded and stored
in batches; chunk ids are deterministic, so an interrupted ingest resumes without
duplicates.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from bookreader.core import sandbox
from bookreader.core.pdf_layout import missing_text_message
from bookreader.core.retrieval_calibration import CALIBRATION_FILE
from bookreader.core.sandbox import SandboxLimits
from bookreader.core.storage import DISK_FULL, ingest_estimate, require_free
from bookreader.core.types import (
    BookInfo,
    BookState,
    CancelFn,
    Chunk,
    Page,
    ProgressFn,
    check_cancel,
    never_cancel,
    no_progress,
)
from bookreader.errors import (
    BookReaderError,
    Cancelled,
    PasswordRequired,
    PdfError,
    StoreError,
)

log = logging.getLogger("bookreader.library")

#: The BM25 file of a book (also imported by library.py).
LEXICAL_FILE = "bm25.json.gz"


class IngestMixin:
    """``Library.ingest`` and its helpers (the Library provides the catalogue and stores)."""

    # Provided by Library (declared here for the type checker).
    settings: Any
    catalogue: Any
    embedder: Any
    ingest_batch: int
    _lock: Any
    _ingesting: set
    _pdfs: dict
    _stores: dict
    _retrievers: dict
    _store: Callable[[str], Any]
    _chunk_params: Callable[[], dict]
    _book_dir: Callable[[str], Path]
    _drop_index: Callable[[str], None]

    def ingest(
        self,
        path: str | Path,
        *,
        password: Optional[str] = None,
        progress: ProgressFn = no_progress,
        cancel: CancelFn = never_cancel,
    ) -> BookInfo:
        """Index a PDF.  Idempotent; resumes an interrupted ingest without duplicates.

        Progress goes over the pages ("Reading pages") and then the chunks ("Embedding").

        Raises:
            PdfError: the file cannot be read (PasswordRequired for a missing password).
            BookLocked: the book is being indexed or read by another BookReader process.
            Cancelled: ``cancel()`` turned true; ingesting again resumes.
        """
        from bookreader.core.pdf import file_book_id

        path = Path(path).expanduser()
        if not path.is_file():
            raise PdfError(f"{path} does not exist or is not a file. Check the path and try again.")
        path = path.resolve()
        book_id = file_book_id(path)
        with self._lock:
            self._ingesting.add(book_id)
        try:
            return self._ingest(path, book_id, password, progress, cancel)
        finally:
            with self._lock:
                self._ingesting.discard(book_id)

    def _ingest(self, path: Path, book_id: str, password: Optional[str],
                progress: ProgressFn, cancel: CancelFn) -> BookInfo:
        from bookreader.core.pdf import PdfBook

        record = self.catalogue.read(book_id)
        damaged = record is not None and bool(self.catalogue.damage(record))
        if damaged:
            log.warning("Book %s is damaged (%s); re-indexing it", book_id, self.catalogue.damage(record))
            with self._lock:
                store = self._stores.pop(book_id, None)
                self._retrievers.pop(book_id, None)
            if store is not None:
                store.close()
            shutil.rmtree(self._book_dir(book_id) / "shard", ignore_errors=True)
            (self._book_dir(book_id) / LEXICAL_FILE).unlink(missing_ok=True)
            (self._book_dir(book_id) / CALIBRATION_FILE).unlink(missing_ok=True)
        if (
            record is not None
            and not damaged
            and record.get("state") == "ready"
            and record.get("params") == self._chunk_params()
        ):
            if record.get("path") != str(path):  # the same book, moved or copied
                record["path"] = str(path)
                self.catalogue.write(record)
            log.info("Book %s is already indexed; nothing to do", book_id)
            return self.catalogue.info(record)

        self.settings.ensure_dirs()
        if record is not None and record.get("params") != self._chunk_params():
            log.info("Re-indexing book %s: chunking settings changed", book_id)
            self._drop_index(book_id)
        # A file this library has not read yet is opened first in a capped child process.
        limits = SandboxLimits.from_settings(self.settings)
        try:
            scan = sandbox.scan_pdf(path, password, limits=limits, cancel=cancel)
        except PasswordRequired:
            raise
        except PdfError as exc:
            self._write_failed(book_id, path, record, exc)
            raise
        # Check the room an index of this size needs before anything is written.
        require_free(self.settings.books_dir, ingest_estimate(scan.page_count),
                     f"index '{path.name}' ({scan.page_count} pages)")
        pdf = PdfBook.open(path, password, blocked=scan.flagged, max_page_chars=limits.max_page_chars)
        with self._lock:
            old, self._pdfs[book_id] = self._pdfs.get(book_id), pdf
        if old is not None and old is not pdf:
            old.close()
        # Take the book's store (and its inter-process lock) before touching the catalogue:
        # a book being indexed by another window stays as that window records it.
        self._store(book_id)
        record = {
            "book_id": book_id,
            "title": scan.title or pdf.title or path.stem,
            "path": str(path),
            "page_count": pdf.page_count,
            "chunk_count": 0,
            "state": "indexing",
            "message": "Indexing was interrupted. Ingest the book again to finish it.",
            "pages_without_text": [],
            "params": self._chunk_params(),
            "created": (record or {}).get("created", time.time()),
            "sandbox": sandbox.SANDBOX_VERSION,
            "blocked_pages": {str(k): v for k, v in scan.flagged.items()},
        }
        self.catalogue.write(record)
        extraction = sandbox.Extraction()
        pages = sandbox.extract_pages(
            path, password, scan.flagged, pdf.page_count, limits=limits, into=extraction,
            progress=lambda d, t, m: progress(d, t, "Reading pages"), cancel=cancel,
        )
        without: list[int] = []

        def collected(stream):
            for page in stream:
                if not page.has_text_layer:
                    without.append(page.index)
                yield page

        try:
            chunks = self._index(book_id, pdf, progress, cancel, pages=collected(pages))
        except Cancelled:
            log.info("Ingest of %s cancelled; it resumes when ingested again", path)
            raise
        except BookReaderError as exc:
            if isinstance(exc, StoreError) and exc.user_message.startswith(DISK_FULL):
                # Resumable: what was stored stays, and ingesting again goes on from there.
                record.update(message="Indexing stopped: the disk was full. Free some space, "
                                      "then ingest the book again to finish it.")
            else:
                record.update(state="failed", message=exc.user_message)
            try:
                self.catalogue.write(record)
            except StoreError as write_error:  # a full disk: the catalogue says it on read
                log.warning("Cannot record why %s stopped: %s", book_id, write_error.user_message)
            raise
        pdf.blocked.update(extraction.flagged)
        messages = []
        if without:
            scanned = bool(extraction.image_pages & set(without))
            messages.append(missing_text_message(path.name, without, pdf.page_count, scanned))
        messages += sandbox.describe_flagged(extraction.flagged) + extraction.notes
        record.update(
            state="ready",
            chunk_count=len(chunks),
            pages_without_text=sorted(without),
            message=" ".join(messages),
            blocked_pages={str(k): v for k, v in extraction.flagged.items()},
            notes=extraction.notes,
        )
        self.catalogue.write(record)
        log.info("Indexed %s: %d pages, %d chunks", path, pdf.page_count, len(chunks))
        return self.catalogue.info(record)

    def _not_ready_message(self, info: BookInfo) -> str:
        """Why a book cannot answer yet: being indexed now (by which process), indexing
        interrupted, or failed."""
        if info.state is not BookState.INDEXING:
            return (f"'{info.title}' is not ready for questions ({info.state.value}). "
                    f"{info.message} Ingest it again after fixing the problem.")
        holder = None
        if self.settings.store_backend == "edge":
            from bookreader.core.store.locking import lock_holder

            holder = lock_holder(self._book_dir(info.book_id) / "shard.lock")
        if holder is not None and holder[0] == str(os.getpid()):
            with self._lock:  # our own lock: indexing now only if an ingest is running
                holder = holder if info.book_id in self._ingesting else None
        if holder is not None:
            pid, who = holder
            return (f"'{info.title}' is being indexed now by {who}"
                    + (f" (process {pid})" if pid else "")
                    + ". Ask again when that has finished.")
        return (f"'{info.title}' is not ready for questions: its indexing was interrupted. "
                "Ingest it again to finish indexing.")

    def _write_failed(self, book_id: str, path: Path, record: Optional[dict],
                      exc: BookReaderError) -> None:
        """Mark a book whose file cannot be read safely as failed in the catalogue."""
        failed = dict(record or {})
        failed.update(
            book_id=book_id, title=failed.get("title") or path.stem, path=str(path),
            page_count=int(failed.get("page_count", 0)), chunk_count=0, state="failed",
            message=exc.user_message, params=self._chunk_params(),
            created=failed.get("created", time.time()),
        )
        try:
            self.catalogue.write(failed)
        except StoreError as write_error:
            log.warning("Cannot mark %s as failed: %s", book_id, write_error.user_message)

    def _index(self, book_id: str, pdf: Any, progress: ProgressFn, cancel: CancelFn,
               pages: Optional[Iterable[Page]] = None) -> list[Chunk]:
        """Chunk every page (``pages``, else read from ``pdf`` here), embed and store the
        chunks not stored yet, build BM25."""
        from bookreader.core import retrieval_calibration
        from bookreader.core.chunking import Chunker, embedding_text
        from bookreader.core.lexical import LexicalIndex
        from bookreader.core.retrieval import HybridRetriever

        embedder = self.embedder
        chunker = Chunker(
            embedder.count_tokens,
            max_tokens=self.settings.chunk_max_tokens,
            overlap=self.settings.chunk_overlap,
        )
        total_pages = pdf.page_count

        def page_progress(done: int, total: int, message: str) -> None:
            progress(done, total or total_pages, "Reading pages")

        source: Iterable[Page] = pages if pages is not None else pdf.iter_pages(page_progress, cancel)
        chunks = list(chunker.chunks(source, book_id))
        progress(total_pages, total_pages, "Reading pages")
        check_cancel(cancel)

        store = self._store(book_id)
        with self._lock:
            self._retrievers.pop(book_id, None)  # its BM25 no longer matches
        stored: set[str] = set()
        ids = [c.chunk_id for c in chunks]
        for i in range(0, len(ids), 1000):
            stored |= store.existing_ids(ids[i : i + 1000])
        todo = [c for c in chunks if c.chunk_id not in stored]
        done = len(chunks) - len(todo)
        if stored:
            log.info("Resuming book %s: %d of %d chunks already stored", book_id, done, len(chunks))
        progress(done, len(chunks), "Embedding")
        batch = max(1, int(self.ingest_batch))
        for i in range(0, len(todo), batch):
            check_cancel(cancel)
            part = todo[i : i + batch]
            vectors = embedder.embed([embedding_text(c) for c in part], cache=False)
            store.upsert(part, vectors)
            done += len(part)
            progress(done, len(chunks), "Embedding")
        check_cancel(cancel)
        if store.count() != len(chunks):
            log.warning(
                "Book %s: the store holds %d chunks, the book has %d", book_id, store.count(),
                len(chunks),
            )
        lexical = LexicalIndex.build(chunks)
        lexical.save(self._book_dir(book_id) / LEXICAL_FILE)
        # the book's own confidence baselines (about a second), kept beside its index
        retriever = HybridRetriever(store, lexical, embedder, self.settings)
        retrieval_calibration.save(self._book_dir(book_id), retriever.calibrate())
        return chunks

