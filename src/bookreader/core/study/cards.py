"""Flashcards from a range of pages: term -> definition, question -> answer.

Candidates come from :mod:`bookreader.core.study.terms`: each sentence's readings as a
definition, each with the rules it breaks, and its key statement's question
(:func:`readings_of`).  The rules choose at most one a sentence (:func:`rule_choice`);
a learned model (:mod:`~bookreader.core.study.card_model`, an experiment) may choose
instead when one is given.  A reading whose subject names an individual rather than a
term ("Smith is a surgeon" in an example) is barred
(:class:`~bookreader.core.study.names.NameEvidence`), and a "label: text" line outside
a glossary whose text opens with a verb of the book as a command ("Collision avoidance:
Avoid obstacles") breaks the rule ``imperative``, as do its list's other items that open
with a bare word; items of one list that share half their words break ``parallel_item``
(:func:`_list_flags`).  A term holding an identifier the page sets in a monospaced font,
said of with "the" ("The parameter rows is ..."), breaks ``code_instance``, and "we call
the <code> method" ``code_call`` (:func:`_code_flags`).
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
    check") and the bare forms of their "-ing" words ("moving" -> "move", "running" ->
    "run"), small words left out."""
    found = {m.group(1) for s in sentences for m in _TO_VERB.finditer(s.text)}
    for s in sentences:
        for m in _ING.finditer(s.text):
            stem_ = m.group(1)
            found.update((stem_, stem_ + "e"))
            if len(stem_) > 3 and stem_[-1] == stem_[-2]:
                found.add(stem_[:-1])  # "running" -> "run"
    return frozenset(w for w in found if w not in STOPWORDS)


_TO_VERB = re.compile(r"\bto\s+([a-z]{3,})\b")
_ING = re.compile(r"\b([a-z]{3,})ing\b")


def _imperative(text: str, verbs: frozenset[str]) -> bool:
    """True for an entry's text that opens with a verb the book uses after "to", written
    as a command ("Perform an action repeatedly", "Avoid obstacles"): an item of a list
    of what something does, not what the label is."""
    first = text.split(" ", 1)[0]
    return first[:1].isupper() and first.lower() in verbs


_CODE_WORD = re.compile(r"\w+")
#: "we call the sort method", "We call the load() method": a program's call, not a name.
_CALLS = re.compile(r"\bcall\s+(?:the\s+)?(\w+)", re.IGNORECASE)


def _code_flags(s: StudySentence, form: str, term: str, back: str) -> tuple[str, ...]:
    """The rules a reading breaks by the program text set in the sentence (its
    monospaced runs, :attr:`~bookreader.core.study.source.StudySentence.code`):

    * ``code_instance``: the sentence says what one name of a program is, its subject
      "the" or nothing before a term holding an identifier ("The parameter rows is ...",
      "ShopCart is the parent class", "The user_id column is ..."); "A Counter of words
      is ..." says what a kind is, and a glossary's or a naming sentence's code term
      ("import statement: ...", "... a method called keys") is the book's own term;
    * ``code_call``: "we call" is a program's call of the code after it ("we call the
      sort method with ..."), not the naming of a term.
    """
    if not s.code:
        return ()
    code = {w.casefold() for run in s.code for w in _CODE_WORD.findall(run)}
    out: list[str] = []
    if form == "defining" and any(w.casefold() in code for w in _CODE_WORD.findall(term)):
        first = re.escape(term.split()[0])
        if re.match(rf"^\W*(?:the\s+)?{first}\b", back, re.IGNORECASE):
            out.append("code_instance")
    if form == "called":
        m = _CALLS.search(back)
        if m and m.group(1).casefold() in code:
            out.append("code_call")
    return tuple(out)


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
            flags = (*flags, *_code_flags(s, d.form, d.term, d.back))
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
    return _list_flags(out)


#: Fewest share of content words two neighbouring list items must have in common to be
#: one frame with a word changed ("A finite number of cells arranged in a row" / "... in a
#: ring").
PARALLEL_SHARE = 0.5


def _content(text: str) -> frozenset[str]:
    return frozenset(stem(w.lower()) for w in words(text) if w.lower() not in STOPWORDS)


def _bare_word(text: str) -> bool:
    """True for a text that opens with a capitalised bare word, as a command does
    ("Align velocity ..."), not an article, a plural or an "-ing" or "-ed" form."""
    first = text.split(" ", 1)[0]
    low = first.lower()
    return (first[:1].isupper() and first.isalpha() and low not in STOPWORDS
            and low not in _DETERMINERS and not low.endswith(("s", "ing", "ed", "ly")))


_DETERMINERS = frozenset("a an the each every any all some no both one two".split())


def _list_flags(per_sentence: list[list[_Candidate]]) -> list[list[_Candidate]]:
    """The rules a "label: text" item breaks by its neighbours in a list (entries outside
    a glossary on neighbouring sentences), added to its flags:

    * ``imperative``, for an item that opens with a bare word in a list where another
      item is a command (:func:`_imperative`): a list's items share one form;
    * ``parallel_item``, for an item whose text shares :data:`PARALLEL_SHARE` of its
      content words with another item's of its list: the items say what they are only against each
      other, in the frame of the list's lead-in ("Ring: A finite number of cells arranged
      in a ring").
    """
    entries = {c.sentence.position: c for found in per_sentence for c in found
               if c.form == "entry" and not c.sentence.glossary}
    if len(entries) < 2:
        return per_sentence
    order = sorted(entries)
    # neighbours: the entries before and after, on the same page and in the same or the
    # next paragraph (an item's second sentence may stand between two items)
    before = {b: a for a, b in zip(order, order[1:])
              if entries[a].sentence.page == entries[b].sentence.page
              and entries[b].sentence.paragraph - entries[a].sentence.paragraph <= 1}
    runs: dict[int, int] = {}  # position -> first position of its list
    lists: dict[int, list[_Candidate]] = {}
    for at in order:
        runs[at] = runs[before[at]] if at in before else at
        lists.setdefault(runs[at], []).append(entries[at])
    commands = {runs[at] for at, c in entries.items() if "imperative" in c.flags}
    out = []
    for found in per_sentence:
        row = []
        for c in found:
            at = c.sentence.position
            if entries.get(at) is c:
                added = []
                if (runs[at] in commands and "imperative" not in c.flags
                        and _bare_word(c.back)):
                    added.append("imperative")
                mine = _content(c.back)
                for other in lists[runs[at]]:
                    if other is c or not mine:
                        continue
                    theirs = _content(other.back)
                    if len(mine & theirs) >= PARALLEL_SHARE * len(mine | theirs):
                        added.append("parallel_item")
                        break
                if added:
                    c = replace(c, flags=(*c.flags, *added))
            row.append(c)
        out.append(row)
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
        if kind == CARD_QUESTION:
            front = _sentence_case_inside(front, term, names)
        by_position[s.position] = _Candidate(s, kind, front, back, term, _RANK[form], form)
    return [by_position[p] for p in sorted(by_position)]


def _sentence_case_inside(front: str, term: str, names: NameEvidence) -> str:
    """``front`` with ``term``'s first word in lower case where the term was capitalised
    only because it opened its sentence ("Why does Soil erosion occur?" -> "... soil
    erosion ..."): the book writes that word in lower case inside its prose."""
    first = term.split()[0] if term.split() else ""
    at = front.find(term)
    if (at <= 0 or not first[:1].isupper() or not first[1:].islower()
            or not names.lower_word(first)):
        return front
    return front[:at] + first[0].lower() + front[at + 1:]


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
        if hit is None or (made is not None and made.kind == CARD_TERM) or _judged(s, hit[0]):
            continue
        by_position[s.position] = _Candidate(s, CARD_TERM, hit[0], s.text, hit[0],
                                             _RANK["emphasis"], "emphasis")
    return [by_position[p] for p in sorted(by_position)]


#: Rules about what a predicate says of its subject (praise, a work, a person): they hold
#: for an emphasised term as for any other.
_PREDICATE_FLAGS = frozenset({"evaluative", "names_a_work", "personal"})


def _judged(s: StudySentence, term: str) -> bool:
    """True when the sentence, read as a definition of ``term``, breaks a rule about what
    its predicate says (:data:`_PREDICATE_FLAGS`): "*Foo* is a very versatile model"
    praises, "*The Art of Foo* is the title of ..." names a book."""
    key = front_key(term)
    return any(front_key(d.term) == key and _PREDICATE_FLAGS.intersection(flags)
               for d, flags in readings(s.text, s.glossary))


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
