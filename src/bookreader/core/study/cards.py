"""Flashcards from a range of pages: term -> definition, question -> answer.

Candidates come from :mod:`bookreader.core.study.terms`: each sentence's readings as a
definition, each with the rules it breaks, and its key statement's question
(:func:`readings_of`).  The rules choose at most one a sentence (:func:`rule_choice`);
a learned model (:mod:`~bookreader.core.study.card_model`, an experiment) may choose
instead when one is given.  A reading whose subject names an individual rather than a
term ("Smith is a surgeon" in an example) is barred
(:class:`~bookreader.core.study.names.NameEvidence`), and a "label: text" line outside
a glossary whose text opens with a verb of the book as a command ("Collision avoidance:
Avoid obstacles") breaks the rule ``imperative``.
Where a sentence made no term card, running prose may still give one
(:mod:`~bookreader.core.study.prose`: a name for what the sentence before described, a
definition read past an adverb or a run-in heading, a question of cause or dependence).
Each card's back is cited on its page by :class:`~bookreader.core.study.source.Citer` and
dropped when it is not found there.  Fronts are deduplicated over the whole range (a
glossary entry wins over a defining sentence, which wins over a key statement; then the
first in reading order), and the cards come out in reading order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

from bookreader.core.sentences import STOPWORDS, stem, words
from bookreader.core.study.model import CARD_QUESTION, CARD_TERM, StudyCard, stable_id
from bookreader.core.study.names import NameEvidence
from bookreader.core.study.source import Citer, StudySentence
from bookreader.core.study.card_model import BookUse, CardWeights, features
from bookreader.core.study.emphasis_terms import emphasis_terms
from bookreader.core.study.prose import prose_cards
from bookreader.core.study.terms import question_for, readings
from bookreader.core.types import CancelFn, ProgressFn, check_cancel, no_progress

#: Preference when two candidates share a front (lower wins).
_RANK = {"entry": 0, "defining": 1, "called": 2, "antecedent": 2, "emphasis": 3,
         "question": 4}


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
    form: str = ""
    flags: tuple[str, ...] = ()
    score: float = 1.0
    #: The subject names an individual, or the head is a label the book repeats.
    barred: bool = False


def _verbs_after_to(sentences: Sequence[StudySentence]) -> frozenset[str]:
    """Words the pages use as verbs: lower-case words after "to" ("to perform", "to
    check"), small words left out."""
    found = (m.group(1) for s in sentences for m in _TO_VERB.finditer(s.text))
    return frozenset(w for w in found if w not in STOPWORDS)


_TO_VERB = re.compile(r"\bto\s+([a-z]{3,})\b")


def _imperative(text: str, verbs: frozenset[str]) -> bool:
    """True for an entry's text that opens with a verb the book uses after "to", written
    as a command ("Perform an action repeatedly", "Avoid obstacles"): an item of a list
    of what something does, not what the label is."""
    first = text.split(" ", 1)[0]
    return first[:1].isupper() and first.lower() in verbs


def readings_of(sentences: Sequence[StudySentence], *, questions: bool = True,
                names: Optional[NameEvidence] = None,
                labels: Optional[Callable[[], frozenset[str]]] = None,
                progress: ProgressFn = no_progress,
                cancel: Optional[CancelFn] = None) -> list[list[_Candidate]]:
    """For each sentence that could make a card, every card it could make, in the order
    the rules try them: its readings as a definition (each with the rules it breaks,
    :func:`~bookreader.core.study.terms.readings`), then its key statement's question.

    ``names``: how the book writes its words; a term reading whose subject it judges the
    name of an individual is ``barred`` (default: judged from ``sentences`` alone), and a
    question about one is not made.  ``labels``: called (once, and only when a "term:
    text" line outside a glossary section is met) for the heads the book repeats as
    labels (:func:`~bookreader.core.study.labels.repeated_labels`); such an entry is
    ``barred``.
    """
    repeated: Optional[frozenset[str]] = None
    if names is None:
        names = NameEvidence(s.text for s in sentences)
    verbs = _verbs_after_to(sentences)
    out: list[list[_Candidate]] = []
    total = len(sentences)
    for n, s in enumerate(sentences):
        if n % 50 == 0:
            check_cancel(cancel)
            progress(n, total, "Finding terms")
        found: list[_Candidate] = []
        for d, flags in readings(s.text, s.glossary):
            if d.form == "entry" and not s.glossary and _imperative(d.back, verbs):
                flags = (*flags, "imperative")
            barred = names.individual(d.term)
            if not barred and d.form == "entry" and not s.glossary and labels is not None:
                repeated = labels() if repeated is None else repeated
                # "Caution: ...": a label the book heads its remarks with
                barred = d.term.casefold() in repeated
            found.append(_Candidate(s, CARD_TERM, d.term, d.back, d.term, _RANK[d.form],
                                    d.form, flags, barred=barred))
        if questions:
            q = question_for(s.text)
            if q is not None and not names.individual(q.subject):
                found.append(_Candidate(s, CARD_QUESTION, q.question, q.back, q.subject,
                                        _RANK["question"], "question"))
        if found:
            out.append(found)
    progress(total, total, "Finding terms")
    return out


def rule_choice(found: Sequence[_Candidate]) -> Optional[_Candidate]:
    """The card the rules alone make from one sentence's candidates: its first reading
    as a definition that breaks no rule (none when that one is barred), else, when every
    reading breaks a rule or there is none, its key statement's question."""
    ok = [c for c in found if c.kind == CARD_TERM and not c.flags]
    if ok:
        return None if ok[0].barred else ok[0]
    return found[-1] if found and found[-1].kind == CARD_QUESTION else None


def with_features(per_sentence: Sequence[Sequence[_Candidate]],
                  sentences: Sequence[StudySentence], names: NameEvidence
                  ) -> list[list[tuple[_Candidate, list[float]]]]:
    """Each sentence's candidates that are not barred, with their feature vectors
    (:func:`~bookreader.core.study.card_model.features`)."""
    use = BookUse([s.text for s in sentences], names)
    # a "label: text" line next to another one outside a glossary: an item of a list
    entries = {c.sentence.position for found in per_sentence for c in found
               if c.form == "entry" and not c.sentence.glossary}
    out = []
    for found in per_sentence:
        chosen = rule_choice(found)
        row = []
        for c in found:
            if c.barred:
                continue
            at = c.sentence.position
            listed = c.form == "entry" and not c.sentence.glossary and (
                at - 1 in entries or at + 1 in entries)
            row.append((c, features(c.form, c.flags, c.front, c.back, c.term, use,
                                    rule_choice=c is chosen, list_item=listed)))
        out.append(row)
    return out


def candidates(sentences: Sequence[StudySentence], *, questions: bool = True,
               names: Optional[NameEvidence] = None,
               labels: Optional[Callable[[], frozenset[str]]] = None,
               model: Optional[CardWeights] = None,
               progress: ProgressFn = no_progress,
               cancel: Optional[CancelFn] = None) -> list[_Candidate]:
    """Every card the sentences make, before citing and deduplication: at most one a
    sentence.

    Without ``model``, the rules decide (:func:`rule_choice`).  With ``model``
    (:mod:`~bookreader.core.study.card_model`), every reading and the question are
    scored, the rules' own choice being one of the features, and the best one at or
    above the model's threshold is kept.
    """
    if names is None:
        names = NameEvidence(s.text for s in sentences)
    per_sentence = readings_of(sentences, questions=questions, names=names, labels=labels,
                               progress=progress, cancel=cancel)
    if model is None:
        chosen = [c for c in map(rule_choice, per_sentence) if c is not None]
        return with_emphasis(with_prose(chosen, sentences, names), sentences)
    out: list[_Candidate] = []
    for row in with_features(per_sentence, sentences, names):
        scored = [replace(c, score=model.probability(x)) for c, x in row]
        best = max(scored, key=lambda c: c.score, default=None)
        if best is not None and best.score >= model.threshold:
            out.append(best)
    return with_emphasis(with_prose(out, sentences, names), sentences)


def with_prose(found: Sequence[_Candidate], sentences: Sequence[StudySentence],
               names: NameEvidence) -> list[_Candidate]:
    """``found`` with the cards running prose gives where a sentence made no term card
    (:func:`~bookreader.core.study.prose.prose_cards`): a term card takes the place of
    the sentence's question, a question is added only where the sentence made none."""
    by_position = {c.sentence.position: c for c in found}
    taken = {p for p, c in by_position.items() if c.kind == CARD_TERM}
    for s, kind, front, back, term, form in prose_cards(sentences, taken):
        if (kind == CARD_QUESTION and s.position in by_position) or names.individual(term):
            continue
        by_position[s.position] = _Candidate(s, kind, front, back, term, _RANK[form], form)
    return [by_position[p] for p in sorted(by_position)]


def with_emphasis(found: Sequence[_Candidate], sentences: Sequence[StudySentence]
                  ) -> list[_Candidate]:
    """``found`` with a term card for each sentence that defines a term the book sets in
    italics or bold (:func:`~bookreader.core.study.emphasis_terms.emphasis_terms`), where
    that sentence made no term card: it takes the place of the sentence's question."""
    terms = emphasis_terms(sentences)
    if not terms:
        return list(found)
    by_position = {c.sentence.position: c for c in found}
    for s in sentences:
        hit = terms.get(s.position)
        made = by_position.get(s.position)
        if hit is None or (made is not None and made.kind == CARD_TERM):
            continue
        by_position[s.position] = _Candidate(s, CARD_TERM, hit[0], s.text, hit[0],
                                             _RANK["emphasis"], "emphasis")
    return [by_position[p] for p in sorted(by_position)]


def make_cards(sentences: Sequence[StudySentence], citer: Citer, book_id: str, *,
               questions: bool = True, limit: Optional[int] = None,
               names: Optional[NameEvidence] = None,
               labels: Optional[Callable[[], frozenset[str]]] = None,
               model: Optional[CardWeights] = None,
               progress: ProgressFn = no_progress,
               cancel: Optional[CancelFn] = None) -> list[StudyCard]:
    """Cited, deduplicated flashcards in reading order (at most ``limit``); ``model``:
    the learned decision that chooses the candidates (:func:`candidates`)."""
    found = candidates(sentences, questions=questions, names=names, labels=labels,
                       model=model, progress=progress, cancel=cancel)
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
