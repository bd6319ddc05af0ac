"""The library's public surface: what the window, the command line and the library process
may ask of a :class:`~bookreader.library.Library`.

:class:`LibraryApi` is the typed protocol that ``Library`` implements.  The window never
holds a Library directly: it talks to one through a client (``ui/library_service.py``) that
runs each call on a background lane, in this process or in the library's child process
(``ui/library_host.py``).  What can cross that boundary is the closed set :class:`Command`;
:func:`run_command` is the one place that turns a command into a method call, with each
method named explicitly (no attribute paths, no "module:function" strings).
"""

from __future__ import annotations

import enum
from datetime import datetime
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Optional,
    Protocol,
    Sequence,
    runtime_checkable,
)

from bookreader.core.conversation import conversation_file_name
from bookreader.core.types import Answer, BookInfo, CancelFn, Mode, ProgressFn

__all__ = ["Command", "LibraryApi", "backend_kind", "conversation_file_name", "run_command"]

if TYPE_CHECKING:
    from bookreader.core.audit.export import ExportSummary
    from bookreader.core.study.model import StudyCard, StudySet
    from bookreader.core.types import Retrieval, SearchFilter, TocEntry


@runtime_checkable
class LibraryApi(Protocol):
    """Books, search, answers and the audit log of one data folder."""

    #: Recorded with every answer in the audit log: one run of the program.
    session_id: str

    def books(self) -> list[BookInfo]: ...

    def book(self, ref: str | Path) -> BookInfo: ...

    def ingest(self, path: str | Path, *, password: Optional[str] = None,
               progress: ProgressFn = ..., cancel: CancelFn = ...) -> BookInfo: ...

    def remove(self, ref: str | Path) -> BookInfo: ...

    def search(self, ref: str | Path, query: str, *, top_k: int = 5,
               flt: Optional["SearchFilter"] = None) -> "Retrieval": ...

    def ask(self, question: str, *, mode: Mode = Mode.BOOK,
            book: Optional[str | Path] = None, selection: Optional[str] = None,
            pages: Optional[tuple[int, int]] = None, backend: Optional[str] = None,
            on_token: Optional[Callable[[str], None]] = None,
            cancel: CancelFn = ..., progress: Optional[ProgressFn] = None) -> Answer: ...

    def warm_up(self, book: Optional[str | Path] = None, *,
                backend: Optional[str] = None) -> str: ...

    def history(self, book_id: str, limit: int = 200) -> list[Answer]: ...

    def check_selection(self, text: str) -> tuple[str, str]: ...

    def export_audit(self, fmt: str, out: Optional[Path] = None,
                     **filters: Any) -> ExportSummary: ...

    def verify_audit(self, path: Optional[Path] = None) -> Any: ...

    def audit_report(self, out: Path, **filters: Any) -> Path: ...

    def export_conversation(self, ref: str | Path, out: Path) -> Path: ...

    def study_outline(self, ref: str | Path) -> list["TocEntry"]: ...

    def study(self, ref: str | Path, kind: str = ..., *,
              pages: Optional[tuple[int, int]] = None, chapter: Optional[str | int] = None,
              selection: Optional[str] = None, limit: Optional[int] = None,
              phrase_with: Optional[str] = None, code: bool = False,
              progress: ProgressFn = ..., cancel: CancelFn = ...,
              client_id: Optional[str] = None) -> "StudySet": ...

    def study_keep(self, ref: str | Path, cards: Sequence["StudyCard"]) -> int: ...

    def study_cards(self, ref: str | Path) -> list["StudyCard"]: ...

    def study_due(self, ref: str | Path, now: Optional[datetime] = None) -> list["StudyCard"]: ...

    def study_rate(self, ref: str | Path, card_id: str, rating: int,
                   now: Optional[datetime] = None) -> datetime: ...

    def study_export(self, ref: str | Path, fmt: str, out: Path, *,
                     cards: Optional[Sequence["StudyCard"]] = None) -> Path: ...

    def close(self) -> None: ...


class Command(enum.StrEnum):
    """Every call a client may send to the library (the pipe's closed vocabulary)."""

    BOOKS = "books"
    INGEST = "ingest"
    REMOVE = "remove"
    ASK = "ask"
    WARM_UP = "warm_up"
    HISTORY = "history"
    CHECK_SELECTION = "check_selection"
    EXPORT_AUDIT = "export_audit"
    VERIFY_AUDIT = "verify_audit"
    AUDIT_REPORT = "audit_report"
    EXPORT_CONVERSATION = "export_conversation"
    STUDY_OUTLINE = "study_outline"
    STUDY = "study"
    STUDY_KEEP = "study_keep"
    STUDY_DUE = "study_due"
    STUDY_RATE = "study_rate"
    STUDY_EXPORT = "study_export"


def backend_kind(settings: Any) -> str:
    """What answers under ``settings``: ``llama`` (a local model; ``auto`` is one of the
    tiers), ``extractive`` or ``claude`` (the window warms up no Claude backend).

    Raises:
        ModelError: an unknown backend name.
    """
    from bookreader.core.llm.registry import resolve_name
    from bookreader.core.llm.specs import spec_for

    return spec_for(resolve_name(settings.llm_backend, settings)).kind


#: Callbacks a worker supplies to a command (never sent over the pipe as values).
Inject = tuple[str, ...]


def run_command(library: LibraryApi, command: Command, args: tuple, kwargs: dict) -> Any:
    """Run one command on ``library`` (in whichever process holds it).

    Raises:
        ValueError: ``command`` is not a :class:`Command` (a stale or forged message).
    """
    command = Command(command)
    if command is Command.BOOKS:
        return library.books(*args, **kwargs)
    if command is Command.INGEST:
        return library.ingest(*args, **kwargs)
    if command is Command.REMOVE:
        return library.remove(*args, **kwargs)
    if command is Command.ASK:
        return library.ask(*args, **kwargs)
    if command is Command.WARM_UP:
        return library.warm_up(*args, **kwargs)
    if command is Command.HISTORY:
        return library.history(*args, **kwargs)
    if command is Command.CHECK_SELECTION:
        return library.check_selection(*args, **kwargs)
    if command is Command.EXPORT_AUDIT:
        return library.export_audit(*args, **kwargs)
    if command is Command.VERIFY_AUDIT:
        return library.verify_audit(*args, **kwargs)
    if command is Command.AUDIT_REPORT:
        return library.audit_report(*args, **kwargs)
    if command is Command.EXPORT_CONVERSATION:
        return library.export_conversation(*args, **kwargs)
    if command is Command.STUDY_OUTLINE:
        return library.study_outline(*args, **kwargs)
    if command is Command.STUDY:
        return library.study(*args, **kwargs)
    if command is Command.STUDY_KEEP:
        return library.study_keep(*args, **kwargs)
    if command is Command.STUDY_DUE:
        return library.study_due(*args, **kwargs)
    if command is Command.STUDY_RATE:
        return library.study_rate(*args, **kwargs)
    if command is Command.STUDY_EXPORT:
        return library.study_export(*args, **kwargs)
    raise ValueError(f"Unknown library command {command!r}")  # pragma: no cover
