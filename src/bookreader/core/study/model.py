"""The values study tools make: cards, quiz items, summary lines and the set they form.

Every item carries a :class:`~bookreader.core.types.Citation` whose excerpt was found on
its page (``verified``); an item whose text could not be found there is never made.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from bookreader.core.types import Citation

#: The kinds of flashcard: a term and what the book says it is, a question and the
#: book's sentence that answers it.
CARD_TERM = "term"
CARD_QUESTION = "question"
#: A code listing and the book's sentence that says what it does (asked for only).
CARD_CODE = "code"
#: The kinds of quiz item.
QUIZ_CLOZE = "cloze"
QUIZ_CHOICE = "choice"
QUIZ_TRUE_FALSE = "true_false"
#: The kinds of study set (the audit record's question names them).
SET_CARDS = "cards"
SET_QUIZ = "quiz"
SET_SUMMARY = "summary"


def stable_id(*parts: str) -> str:
    """A short id that stays the same for the same parts (book id, front, back)."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class StudyCard:
    """One flashcard: the front asks, the back is the book's words, cited on its page."""

    card_id: str
    kind: str  # CARD_TERM, CARD_QUESTION or CARD_CODE
    front: str
    back: str
    citation: Citation
    chapter: str = ""
    term: str = ""  # the defined term (term cards), for quizzes' distractors


@dataclass(frozen=True)
class QuizItem:
    """One quiz question, answerable from its cited sentence.

    ``options`` holds the choices of a multiple-choice item (the answer among them) and
    ("True", "False") for a true/false item; a cloze item has none.
    """

    item_id: str
    kind: str  # QUIZ_CLOZE, QUIZ_CHOICE or QUIZ_TRUE_FALSE
    prompt: str
    answer: str
    citation: Citation
    options: tuple[str, ...] = ()
    chapter: str = ""

    def is_correct(self, response: str) -> bool:
        """True when ``response`` is the answer (case, spaces and end marks ignored)."""
        def norm(s: str) -> str:
            return " ".join(s.casefold().strip(" .!?\"'").split())

        return norm(response) == norm(self.answer)


@dataclass(frozen=True)
class SummaryLine:
    """One key sentence of a summary, in the book's words, with its citation."""

    text: str
    citation: Citation


@dataclass(frozen=True)
class StudySet:
    """What one generation made, over which pages, and what it skipped."""

    kind: str  # SET_CARDS, SET_QUIZ or SET_SUMMARY
    book_id: str
    page_start: int  # 0-based physical, inclusive
    page_end: int
    label_start: str = ""
    label_end: str = ""
    title: str = ""  # the chapter or "pages A-B"
    cards: tuple[StudyCard, ...] = ()
    quiz: tuple[QuizItem, ...] = ()
    summary: tuple[SummaryLine, ...] = ()
    backend: str = "rules"
    pages_without_text: tuple[int, ...] = ()
    rejected: int = 0  # candidates dropped because their text was not found on the page
    ms: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def items(self) -> int:
        return len(self.cards) + len(self.quiz) + len(self.summary)

    @property
    def page_label(self) -> str:
        if self.label_start == self.label_end:
            return self.label_start
        return f"{self.label_start}-{self.label_end}"


def citation_dict(c: Citation) -> dict[str, Any]:
    """A citation as plain JSON data (rectangles left out)."""
    return {"section": c.section, "page": c.page, "page_label": c.page_label,
            "excerpt": c.excerpt, "verified": bool(c.verified)}


def study_set_to_dict(s: StudySet) -> dict[str, Any]:
    """A study set as plain JSON data (the command line's ``--json``, the server)."""
    return {
        "kind": s.kind, "book_id": s.book_id, "title": s.title,
        "page_start": s.page_start, "page_end": s.page_end, "page_label": s.page_label,
        "backend": s.backend, "ms": round(s.ms, 1), "rejected": s.rejected,
        "pages_without_text": list(s.pages_without_text), "notes": list(s.notes),
        "cards": [{"card_id": c.card_id, "kind": c.kind, "front": c.front, "back": c.back,
                   "chapter": c.chapter, "citation": citation_dict(c.citation)}
                  for c in s.cards],
        "quiz": [{"item_id": q.item_id, "kind": q.kind, "prompt": q.prompt, "answer": q.answer,
                  "options": list(q.options), "chapter": q.chapter,
                  "citation": citation_dict(q.citation)} for q in s.quiz],
        "summary": [{"text": ln.text, "citation": citation_dict(ln.citation)}
                    for ln in s.summary],
    }
