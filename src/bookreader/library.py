"""The one facade that ``ui/`` and ``cli.py`` call.

It owns the catalogue of books (a small JSON file per book in the data folder), opens
each book's store and lexical index on demand, and wires ingestion, search, answering and
the audit log together.  All slow methods are synchronous and take ``progress`` and
``cancel`` callbacks; the UI runs them in workers.

SKELETON: the signatures below are the contract between ui/, cli.py and the core.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from bookreader.config import Settings
from bookreader.core.types import (
    Answer,
    BookInfo,
    CancelFn,
    Mode,
    ProgressFn,
    Retrieval,
    SearchFilter,
    never_cancel,
    no_progress,
)


class Library:
    """Books, search and answers for one data folder.

    Args:
        settings: The settings (data folder, store backend, weights, thresholds...).
        embedder: Shared embedder; built lazily from the bundled MiniLM when omitted.
        audit: The audit log; opened from ``settings.audit_db_url`` when omitted.
    """

    def __init__(self, settings: Settings, *, embedder=None, audit=None) -> None:
        raise NotImplementedError

    # --- books ---------------------------------------------------------------------
    def ingest(
        self,
        path: str | Path,
        *,
        password: Optional[str] = None,
        progress: ProgressFn = no_progress,
        cancel: CancelFn = never_cancel,
    ) -> BookInfo:
        """Index a PDF.  Idempotent; resumes an interrupted ingest without duplicates."""
        raise NotImplementedError

    def books(self) -> list[BookInfo]:
        """Every book in the library, sorted by title."""
        raise NotImplementedError

    def book(self, ref: str | Path) -> BookInfo:
        """A book by id, unique id prefix, or PDF path.  Raises BookNotFound."""
        raise NotImplementedError

    def remove(self, ref: str | Path) -> BookInfo:
        """Delete a book's index (not the PDF)."""
        raise NotImplementedError

    def open_pdf(self, ref: str | Path, password: Optional[str] = None):
        """The book's :class:`bookreader.core.pdf.PdfBook` for reading and rendering."""
        raise NotImplementedError

    # --- search and answers -----------------------------------------------------------
    def search(
        self, ref: str | Path, query: str, *, top_k: int = 5, flt: Optional[SearchFilter] = None
    ) -> Retrieval:
        """Hybrid search in one book."""
        raise NotImplementedError

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
        """
        raise NotImplementedError

    def history(self, book_id: str, limit: int = 200) -> list[Answer]:
        """Earlier answers about a book, oldest first (from the audit log)."""
        raise NotImplementedError

    def close(self) -> None:
        """Close stores and the audit database."""
        raise NotImplementedError
