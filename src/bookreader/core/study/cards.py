"""Flashcards from a range of pages: term -> definition, question -> answer.

Candidates come from :mod:`bookreader.core.study.terms`; each one's back is cited on its
page by :class:`~bookreader.core.study.source.Citer` and dropped when it is not found
there.  A card whose subject names an individual rather than a term ("Smith is a
surgeon" in an example) is not made (:class:`~bookreader.core.study.names.NameEvidence`).  Fronts are deduplicated over the whole range (a glossary entry wins over a
defining sentence, which wins over a key statement; then the first in reading order),
and the cards come out in reading order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from bookreader.core.sentences import stem, words
from bookreader.core.study.model import CARD_QUESTION, CARD_TERM, StudyCard, stable_id
from bookreader.core.study.names import NameEvidence
from bookreader.core.study.source import Citer, StudySentence
from bookreader.core.study.terms import definition_in, question_for
from bookreader.core.types import CancelFn, ProgressFn, check_cancel, no_progress

#: Preference when two candidates share a front (lower wins).
_RANK = {"entry": 0, "defining": 1, "called": 2, "question": 3}


def front_key(front: str) -> str:
    """What two fronts must share to be the same card: their stemmed words."""
    return " ".join(stem(w.lower()) for w in words(front))


@dataclass(frozen=True)
class _Candidate:
    sentence: StudySentence
    kind: str
    front: str
    back: str
    term: str
    rank: int


def candidates(sentences: Sequence[StudySentence], *, questions: bool = True,
               names: Optional[NameEvidence] = None,
               labels: Optional[Callable[[], frozenset[str]]] = None,
               progress: ProgressFn = no_progress,
               cancel: Optional[CancelFn] = None) -> list[_Candidate]:
    """Every card the sentences could make, before citing and deduplication.

    ``names``: how the book writes its words; a sentence whose subject it judges the
    name of an individual makes no card (default: judged from ``sentences`` alone).
    ``labels``: called (once, and only when a "term: text" line outside a glossary
    section is met) for the heads the book repeats as labels
    (:func:`~bookreader.core.study.labels.repeated_labels`); such a line makes no card.
    """
    repeated: Optional[frozenset[str]] = None
    if names is None:
        names = NameEvidence(s.text for s in sentences)
    out: list[_Candidate] = []
    total = len(sentences)
    for n, s in enumerate(sentences):
        if n % 50 == 0:
            check_cancel(cancel)
            progress(n, total, "Finding terms")
        d = definition_in(s.text, s.glossary)
        if d is not None and names.individual(d.term):
            continue
        if d is not None and d.form == "entry" and not s.glossary and labels is not None:
            repeated = labels() if repeated is None else repeated
            if d.term.casefold() in repeated:
                continue  # "Caution: ...": a label the book heads its remarks with
        if d is not None:
            out.append(_Candidate(s, CARD_TERM, d.term, d.back, d.term, _RANK[d.form]))
            continue
        if questions:
            q = question_for(s.text)
            if q is not None and not names.individual(q.subject):
                out.append(_Candidate(s, CARD_QUESTION, q.question, q.back, q.subject,
                                      _RANK["question"]))
    progress(total, total, "Finding terms")
    return out


def make_cards(sentences: Sequence[StudySentence], citer: Citer, book_id: str, *,
               questions: bool = True, limit: Optional[int] = None,
               names: Optional[NameEvidence] = None,
               labels: Optional[Callable[[], frozenset[str]]] = None,
               progress: ProgressFn = no_progress,
               cancel: Optional[CancelFn] = None) -> list[StudyCard]:
    """Cited, deduplicated flashcards in reading order (at most ``limit``)."""
    found = candidates(sentences, questions=questions, names=names, labels=labels,
                       progress=progress, cancel=cancel)
    best: dict[str, _Candidate] = {}
    for c in found:
        key = front_key(c.front)
        if key and (key not in best or c.rank < best[key].rank):
            best[key] = c
    chosen = sorted(best.values(), key=lambda c: c.sentence.position)
    cards: list[StudyCard] = []
    total = len(chosen)
    for n, c in enumerate(chosen):
        if n % 20 == 0:
            check_cancel(cancel)
            progress(n, total, "Checking citations")
        cit = citer.cite(c.sentence, must_hold=c.back)
        if cit is None:
            continue
        cards.append(StudyCard(
            card_id=stable_id(book_id, c.kind, front_key(c.front), c.back),
            kind=c.kind, front=c.front, back=c.back, citation=cit,
            chapter=c.sentence.chapter, term=c.term))
        if limit is not None and len(cards) >= limit:
            break
    progress(total, total, "Checking citations")
    return cards
