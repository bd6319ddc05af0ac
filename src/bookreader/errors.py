"""Errors a user can cause, each with a message that says what happened and what to do.

Every error raised on purpose derives from :class:`BookReaderError`.  ``user_message`` is
shown verbatim in the window, the command line and the audit log, so it names the file or
page concerned and ends with what the user can do about it.
"""

from __future__ import annotations


class BookReaderError(Exception):
    """An error the user can understand and act on.

    Args:
        user_message: One or two plain sentences: what happened and what to do.
        details: Optional technical detail for the log (never shown as the main message).
    """

    def __init__(self, user_message: str, *, details: str | None = None) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.details = details

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.user_message


class PdfError(BookReaderError):
    """The PDF cannot be opened or read (not a PDF, broken, empty, too large...)."""


class PasswordRequired(PdfError):
    """The PDF is encrypted and no password, or a wrong one, was given."""

    def __init__(self, user_message: str, *, path: str = "", wrong_password: bool = False) -> None:
        super().__init__(user_message)
        self.path = path
        self.wrong_password = wrong_password


class BookNotFound(BookReaderError):
    """No book in the library matches the given id or path."""


class BookLocked(BookReaderError):
    """The book's index is open in another BookReader process."""


class InvalidInput(BookReaderError):
    """A question or selection that cannot be processed (empty, too long, NUL bytes...)."""


class ModelError(BookReaderError):
    """A language or embedding model is missing, corrupt or failed to load."""


class BackendError(BookReaderError):
    """A remote backend failed: bad API key, no network, rate limits, broken stream."""


class QueryTimeout(BookReaderError):
    """Retrieval or generation ran over its time budget."""


class StoreError(BookReaderError):
    """The vector store or audit database cannot be opened or written."""


class Cancelled(Exception):
    """The user cancelled a long operation.  Not an error: callers stop quietly."""


class AlreadyRunning(BookReaderError):
    """Another BookReader window uses the same data folder."""
