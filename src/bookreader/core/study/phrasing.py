"""A language model phrasing question cards' fronts; the back stays the book's words.

A question card's rule-made front ("What does X provide?") is correct but stiff.  When
the student asks for it, a model rewrites the fronts of a chapter's question cards, a
few cards to one prompt (so a small local model makes a chapter's deck in seconds, not a
prompt per card).  A phrased front is kept only when it is usable
(:func:`usable_question`): one short question, about the card's subject, that does not
give its answer away; otherwise the rule-made front stays.  The back, the citation and
the card's id never change, so a kept deck and its review history stay the same.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any, Optional, Sequence

from bookreader.core.sentences import STOPWORDS, stem, words
from bookreader.core.study.cards import front_key
from bookreader.core.study.model import CARD_QUESTION, StudyCard
from bookreader.core.types import CancelFn, Message, ProgressFn, check_cancel, no_progress
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

#: Cards phrased by one prompt.
BATCH = 6
#: Tokens the model may write for one card's question.
TOKENS_PER_CARD = 32
#: Words a phrased question may have.
MIN_WORDS, MAX_WORDS = 3, 24
#: Share of the answer's own content words (beyond the subject) a question may repeat.
MAX_ANSWER_SHARE = 0.5

SYSTEM = ("You write study questions for flashcards. For each numbered statement from a "
          "textbook, write one short question that the statement answers. Do not put the "
          "answer in the question. Reply with the numbered questions only, one a line.")
#: One worked exchange (invented statements, no book's) that shows the reply's form.
EXAMPLE = (
    "1. A thermostat measures the room's temperature and switches the heater on or off.\n"
    "2. Photosynthesis converts light energy into chemical energy stored in glucose.",
    "1. What does a thermostat measure and control?\n"
    "2. What does photosynthesis convert light energy into?")
_NUMBERED = re.compile(r"^\s*(\d{1,2})\s*[.):]\s*(.+?)\s*$")


def _content(text: str) -> set[str]:
    return {stem(w.lower()) for w in words(text) if w.lower() not in STOPWORDS}


def usable_question(question: str, card: StudyCard) -> bool:
    """True when ``question`` can be ``card``'s front: one question of
    :data:`MIN_WORDS`..:data:`MAX_WORDS` words that names the card's subject and repeats
    at most :data:`MAX_ANSWER_SHARE` of what the back says beyond it."""
    q = " ".join(question.split())
    n = len(words(q))
    if not q.endswith("?") or q.count("?") != 1 or not MIN_WORDS <= n <= MAX_WORDS:
        return False
    subject = _content(card.term or card.front)
    asked = _content(q)
    if not subject or not subject <= asked:
        return False
    told = _content(card.back) - subject
    return not told or len(told & asked) <= MAX_ANSWER_SHARE * len(told)


def _messages(batch: Sequence[StudyCard]) -> list[Message]:
    lines = [f"{i}. {' '.join(c.back.split())}" for i, c in enumerate(batch, 1)]
    return [Message("system", SYSTEM), Message("user", EXAMPLE[0]),
            Message("assistant", EXAMPLE[1]), Message("user", "\n".join(lines))]


def _parse(text: str, count: int) -> dict[int, str]:
    """The numbered questions of a reply (1-based), first one of each number."""
    found: dict[int, str] = {}
    for line in text.splitlines():
        m = _NUMBERED.match(line)
        if m and 1 <= int(m.group(1)) <= count:
            found.setdefault(int(m.group(1)), m.group(2).strip().strip("*\"'"))
    return found


def phrase_fronts(cards: Sequence[StudyCard], backend: Any, *,
                  progress: ProgressFn = no_progress,
                  cancel: Optional[CancelFn] = None) -> tuple[list[StudyCard], int]:
    """``cards`` with the question cards' fronts phrased by ``backend`` where usable.

    Returns:
        The cards (same order, ids, backs and citations) and how many fronts the model
        phrased.  A model that fails (missing, broken) leaves every front as it was.
    """
    out = list(cards)
    todo = [i for i, c in enumerate(out) if c.kind == CARD_QUESTION]
    taken = {front_key(c.front) for c in out}
    phrased = 0
    for start in range(0, len(todo), BATCH):
        check_cancel(cancel)
        progress(start, len(todo), "Phrasing questions")
        batch = [out[i] for i in todo[start:start + BATCH]]
        try:
            text = "".join(t.text for t in backend.stream(
                _messages(batch), max_tokens=TOKENS_PER_CARD * len(batch), temperature=0.1,
                cancel=cancel))
        except BookReaderError as exc:
            log.warning("Study: the model could not phrase questions (%s); the rule-made "
                        "fronts stay", exc)
            break
        check_cancel(cancel)
        replies = _parse(text, len(batch))
        for n, card in enumerate(batch, 1):
            question = replies.get(n, "")
            key = front_key(question)
            if question and usable_question(question, card) and key not in taken:
                taken.add(key)
                out[todo[start + n - 1]] = replace(card, front=" ".join(question.split()))
                phrased += 1
    progress(len(todo), len(todo), "Phrasing questions")
    log.info("Study: the model phrased %d of %d question fronts", phrased, len(todo))
    return out, phrased
