"""The audit records of questions that got no answer: a user error, a failure, a Stop.

:class:`~bookreader.library.Library` records every question, also those that never reach
the answerer (a rejected question or selection) or end before it returns (the student's
Stop while the answer streams).  A rejected input is kept capped (:func:`capped_input`) so
that a pasted book cannot bloat the log, with its length and hash to prove what it was.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Optional

from bookreader.core.prompts import STOPPED_MESSAGE
from bookreader.core.types import Answer, BookInfo, ConfidenceLevel, Mode
from bookreader.errors import BookReaderError


def cancelled_answer(question: str, mode: Mode, info: Optional[BookInfo],
                      selection: Optional[str], backend: Optional[str], shown: str) -> Answer:
    """The completion record of an answer the student stopped while it streamed."""
    from bookreader.errors import BookReaderError as _E

    answer = error_answer(question, mode, _E(STOPPED_MESSAGE), info,
                           selection, backend)
    return dataclasses.replace(answer, text=shown or answer.text)


def error_answer(
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
        confidence_level=ConfidenceLevel.LOW,
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
