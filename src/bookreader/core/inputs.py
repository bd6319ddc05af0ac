"""Checks of what the user typed or selected, before anything runs.

Questions: 1-1,000 characters after trimming, valid UTF-8 (bytes are decoded strictly),
no NUL.  Selections: 1-4,000 characters after trimming; a longer one is cut at the last
sentence end before the limit (between words when there is none) and the caller gets a
warning to show.  Everything here is linear in the input and touches at most the first
4,001 characters when cutting, so a 10 MB selection costs milliseconds.
"""

from __future__ import annotations

import re
from typing import Any

from bookreader.errors import InvalidInput

MAX_QUESTION_CHARS = 1000
MAX_SELECTION_CHARS = 4000

_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s)")


def _as_text(value: Any, what: str) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"The {what} is not valid UTF-8 text (bad byte at position {exc.start}). "
                f"Retype it or copy it again from the book."
            ) from exc
    if not isinstance(value, str):
        raise InvalidInput(f"The {what} must be text. Type it again.")
    return value


def _check_encodable(text: str, what: str) -> None:
    if "\x00" in text:
        raise InvalidInput(f"The {what} contains a NUL character. Remove it and ask again.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"The {what} is not valid UTF-8 text (a broken character at position "
            f"{exc.start}). Retype it or copy it again from the book."
        ) from exc


def clean_question(question: Any) -> str:
    """The question trimmed; 1-1,000 characters of valid UTF-8 without NUL.

    Raises:
        InvalidInput: with a message that says what to fix.
    """
    text = _as_text(question, "question")
    _check_encodable(text, "question")
    text = text.strip()
    if not text:
        raise InvalidInput("The question is empty. Type a question about the book.")
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidInput(
            f"The question is {len(text):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,}. Shorten it, or select the passage and ask about it."
        )
    return text


def clean_selection(selection: Any) -> tuple[str, str]:
    """The selection trimmed and, past 4,000 characters, cut at a sentence boundary.

    Returns:
        ``(text, truncation_warning)``; the warning is "" when nothing was cut.

    Raises:
        InvalidInput: empty, not UTF-8, or containing NUL.
    """
    text = _as_text(selection, "selected text")
    _check_encodable(text, "selected text")
    text = text.strip()
    if not text:
        raise InvalidInput("The selection is empty. Select some text in the book first.")
    if len(text) <= MAX_SELECTION_CHARS:
        return text, ""
    total = len(text)
    head = text[: MAX_SELECTION_CHARS + 1]
    cut = 0
    for m in _SENTENCE_END.finditer(head):
        if m.end() <= MAX_SELECTION_CHARS:
            cut = m.end()
    if cut < MAX_SELECTION_CHARS // 2:  # no sentence end in reach: cut between words
        cut = head.rfind(" ", 0, MAX_SELECTION_CHARS)
        if cut < MAX_SELECTION_CHARS // 2:
            cut = MAX_SELECTION_CHARS
    text = text[:cut].rstrip()
    warning = (
        f"The selection was {total:,} characters long; only its first {len(text):,} "
        f"(up to the end of a sentence) were used. Select less text to ask about the rest."
    )
    return text, warning
