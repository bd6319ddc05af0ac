"""A claim that asserts a relation must find that relation, between the same parts, in
its support.

"The loop stops *because* the counter reaches the limit" joins two parts with a
cause.  A passage that says "The program prints a warning, *since* the counter reaches
the limit" holds nearly every word of the claim but gives that cause for something
else: shared words are not a stated relation.  This module reads the relation a sentence
states from its grammatical form (a connective of :mod:`bookreader.core.lexicon` and the
two parts it joins: the *ground*, a cause, purpose or condition, and the *consequent*)
and compares the claim's relations with the context's (:func:`relation_misstated`).

Only a relation the context *contradicts by its form* fails a claim: a context relation
of the claim's kind that joins one of the claim's parts to something else, or the two
the other way round.  A relation the context leaves implicit (the two parts stated side
by side, no connective) is left to the other checks: correct paraphrases often make an
implicit "so" explicit.  Chosen on the tune books' pairs (``bench/verifier.py --pairs
bench/relation_pairs.jsonl --split tune``), checked on the textbook and HaluEval tune
halves, where it changes no verdict but one reversed change ("from 0.827 to 0.751").

Plain string work, like :mod:`bookreader.core.claim_text`, cached per sentence; the
validator passes its embedder's cosine to compare two parts said in other words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Set as AbstractSet
from typing import Callable, NamedTuple, Optional, Sequence

from bookreader.core.claim_text import FINITE_VERBS, claim_terms, strip_verdict
from bookreader.core.exact_terms import ANAPHORA, covered
from bookreader.core.lexicon import (
    ADVERBS,
    CHANGE_FROM,
    CHANGE_TO,
    GROUND_AFTER,
    GROUND_BEFORE,
    MEANING,
    NOT_AFTER_SO,
    NOUN_BEFORE_CAUSE,
)
from bookreader.core.sentences import words

#: A claim part whose terms a part of a context relation holds at least this share of
#: corresponds to it; both parts corresponding, the relation is stated.
PART_MATCH = 0.6
#: A claim part held at least this share by one part of a context relation is what that
#: relation is about ...
PART_STRONG = 0.6
#: ... and then the claim's other part held below this share by the relation's other
#: part is not what the context relates it to: the context gives the claim's cause for
#: something else (or another cause for the claim's effect).
PART_WEAK = 0.25
#: ... unless the two parts mean the same in other words: a claim part and the context
#: relation's part at this cosine or more (the validator's sentence embedder) correspond
#: ("Building partial models does not get around this" / "This cannot be avoided by
#: constructing partial models").  Parts about the same subject that say different
#: things measured up to 0.6 on the tune books' pairs.
PART_SIMILAR = 0.65
#: ... and the relation's other part names at least this many terms the claim does not
#: (a short part such as "the error" points back at something, it names nothing else).
OTHER_TERMS = 2

_KIND = {phrase: (kind, "after") for phrase, kind in GROUND_AFTER}
_KIND.update({phrase: (kind, "before") for phrase, kind in GROUND_BEFORE})
#: Every connective, longest first (so "because of" is read before "because").
_CONNECTIVE = re.compile(
    r"\b(?:" + "|".join(r"\s+".join(map(re.escape, p.split()))
                        for p in sorted(_KIND, key=len, reverse=True)) + r")\b",
    re.IGNORECASE)
_CAUSE_VERBS = frozenset({"cause", "causes", "caused", "causing"})
#: Words that open a sentence before a fronted connective ("And because ...").
_OPENERS = frozenset("and but or yet also only even".split())
_JOINED = re.compile(r"(?:[,;:\u2014]|\band)\s*$", re.IGNORECASE)


class Relation(NamedTuple):
    """A relation a sentence states: its kind (:mod:`bookreader.core.lexicon`), the ground
    (cause, purpose, condition) and the consequent, as text."""

    kind: str
    ground: str
    consequent: str


#: "from A to B": the first word of each side (a number, or a word of three letters or
#: more), at most a few words apart.
_CHANGE = re.compile(
    rf"\b{CHANGE_FROM}\s+(?:the\s+|a\s+|an\s+)?(?P<start>[\w.\-]+)(?:\s+[\w\-]+){{0,2}}?\s+"
    rf"{CHANGE_TO}\s+(?:the\s+|a\s+|an\s+)?(?P<end>[\w.\-]+)", re.IGNORECASE)


def changes(text: str) -> set[tuple[str, str]]:
    """The (start, end) pairs ``text`` orders with "from A to B" (lower case, a final full
    stop dropped): "changed from 0.751 to 0.827" -> {("0.751", "0.827")}."""
    out = set()
    for m in _CHANGE.finditer(text):
        a, b = (m.group(g).lower().rstrip(".") for g in ("start", "end"))
        if a != b and (a[:1].isdigit() or len(a) > 2) and (b[:1].isdigit() or len(b) > 2):
            out.add((a, b))
    return out


def change_reversed(claim: str, sentences: Sequence[str]) -> bool:
    """True when ``claim`` orders two terms "from A to B" that the context orders only
    "from B to A": "The returns have changed from 0.827 to 0.751" where the book says they
    changed from 0.751 to 0.827 (both numbers are in the context, and the word-by-word
    checks leave numbers' order alone, since a list may give them in any order)."""
    own = changes(claim)
    if not own:
        return False
    said = set().union(*(changes(s) for s in sentences)) if sentences else set()
    return any((b, a) in said and (a, b) not in said for a, b in own)


def _normal(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def _bare(text: str) -> bool:
    """True when ``text`` names nothing of its own ("This is", "It"): a pointer back."""
    return not [t for t in claim_terms(text) if t not in ANAPHORA]


@lru_cache(maxsize=16384)
def relations(sentence: str, previous: str = "") -> tuple[Relation, ...]:
    """The relations ``sentence`` states with a connective of the lexicon.

    "X because Y", "Y, so X", "Y causes X"; fronted, "Because Y, X" (the ground runs to
    the comma).  A connective opening the sentence ("Therefore, X"), or an adverb inside
    its clause ("X is therefore Y"), takes ``previous`` (the sentence before) as its
    ground, and a part that only points back ("*This is* because Y") stands for
    ``previous``; without it such a relation is not read.  "so" joins clauses only after
    a comma, a semicolon or "and" ("do so" and "so large" state nothing); "since 1990" and
    "the cause of" are not connectives.
    """
    text = strip_verdict(sentence)
    found = []  # (match, phrase, kind, side, opening)
    for m in _CONNECTIVE.finditer(text):
        phrase = _normal(m.group(0))
        kind, side = _KIND[phrase]
        before, after = text[: m.start()], text[m.end():]
        lead = [w.lower() for w in words(before)]
        opening = all(w in _OPENERS for w in lead)
        following = words(after)[:1]
        if phrase == "so" and following and following[0].lower() in NOT_AFTER_SO:
            continue
        if phrase in _CAUSE_VERBS:
            if lead and lead[-1] in NOUN_BEFORE_CAUSE:
                continue  # "the cause of the error": a noun
        if phrase == "if" and lead and lead[-1] in ("even", "as", "what"):
            continue
        if (side == "before" and phrase in ADVERBS and not opening
                and not _JOINED.search(before) and phrase == "so"):
            continue  # "do so", "is so large"
        found.append((m, phrase, kind, side, opening))
    out: list[Relation] = []
    for k, (m, phrase, kind, side, opening) in enumerate(found):
        # each part runs to the next connective (or from the one before): "A because B,
        # so C" relates A to B and B to C
        lo = found[k - 1][0].end() if k else 0
        hi = found[k + 1][0].start() if k + 1 < len(found) else len(text)
        # ... and never across a semicolon, which ends a clause
        before, after = text[lo: m.start()], text[m.end(): hi]
        before, after = before.rpartition(";")[2], after.partition(";")[0]
        if side == "after":
            if opening:
                ground, comma, consequent = after.partition(",")
                if not comma:
                    continue
            else:
                ground, consequent = after, before
        elif phrase in ADVERBS and not opening and not _JOINED.search(before):
            ground, consequent = previous, before + " " + after  # "X is therefore Y"
        elif opening:
            ground, consequent = previous, after  # "Therefore, X" / "This means X"
        else:
            ground, consequent = before, after
        if _bare(ground):
            ground = previous
        if _bare(consequent):
            consequent = previous
        if ground.strip() and consequent.strip():
            out.append(Relation(kind, ground.strip(" ,;:"), consequent.strip(" ,;:")))
    return tuple(out)


def _share(terms: AbstractSet[str], held: AbstractSet[str]) -> float:
    """The share of ``terms`` that ``held`` holds (a word family counts: ``covered``)."""
    if not terms:
        return 0.0
    pool = set(held)
    return sum(1 for t in terms if covered(t, pool)) / len(terms)


#: Pronouns that stand for what the sentence before spoke of ("*It* also solves ...").
_PRONOUNS = frozenset("it they he she".split())
_DEMONSTRATIVES = frozenset("this that these those".split())


def _pronoun_subject(text: str) -> bool:
    """True when ``text`` opens with a pronoun standing alone as its subject ("It also
    ...", "This is ..."), not a determiner of its own noun ("This definition ...")."""
    ws = [w.lower() for w in words(text)[:2]]
    if not ws:
        return False
    if ws[0] in _PRONOUNS:
        return True
    return ws[0] in _DEMONSTRATIVES and len(ws) > 1 and (ws[1] in FINITE_VERBS or ws[1] == "also")


#: Words of a sentence read for its subject at most.
SUBJECT_REACH = 8


def _subject_terms(sentence: str) -> frozenset[str]:
    """The terms of ``sentence``'s subject, what a pronoun after it stands for: its words
    before the first finite verb ("*Thin layers* are a blessing"); none without one in
    :data:`SUBJECT_REACH` words."""
    ws = words(strip_verdict(sentence))
    for i, w in enumerate(ws[:SUBJECT_REACH]):
        if w.lower() in FINITE_VERBS and i:
            return frozenset(claim_terms(" ".join(ws[:i])))
    return frozenset()


class _Held(NamedTuple):
    """The terms of a context relation: its kind, ground and consequent (each with what
    its pronoun stands for) and its sentence's own terms (without them)."""

    kind: str
    ground: frozenset[str]
    consequent: frozenset[str]
    whole: frozenset[str]
    ground_text: str = ""
    consequent_text: str = ""


@lru_cache(maxsize=16384)
def _relation_terms(sentence: str, previous: str) -> tuple[_Held, ...]:
    """The terms of each relation of a context sentence.  A part whose subject is a
    pronoun also holds what the pronoun stands for: in a ground after its consequent ("X,
    since *it* was declared ..."), the consequent's terms; otherwise ("*It* also solves
    ..."), the subject of the sentence before."""
    out = []
    for r in relations(sentence, previous):
        ground = own_ground = frozenset(claim_terms(r.ground))
        consequent = own = frozenset(claim_terms(r.consequent))
        if _pronoun_subject(r.ground):
            inside = r.consequent in sentence and sentence.find(r.consequent) < sentence.find(r.ground)
            ground = ground | (own if inside else _subject_terms(previous))
        if _pronoun_subject(r.consequent):
            consequent = own | _subject_terms(previous)
        out.append(_Held(r.kind, ground, consequent,
                         own_ground | own | frozenset(claim_terms(sentence)),
                         r.ground, r.consequent))
    return tuple(out)


def _new(part: frozenset[str], claim: set[str]) -> int:
    """How many terms of ``part`` the claim does not hold."""
    return sum(1 for t in part if not covered(t, claim))


def relation_misstated(claim: str, sentences: Sequence[str],
                       similar: Optional[Callable[[str, str], float]] = None) -> bool:
    """True when ``claim`` relates two parts in a way no sentence of the context does,
    while a context sentence relates one of those parts to something else.

    For each relation of the claim (:func:`relations`), the context's relations are
    compared part by part (content terms, the terms both parts of the claim share left
    out): a relation of any kind whose ground holds the claim's ground and whose
    consequent holds the claim's consequent (:data:`PART_MATCH`) states it.  Without
    one, a relation of the claim's kind that holds one of the claim's parts well
    (:data:`PART_STRONG`) while its sentence hardly holds the other (:data:`PART_WEAK`),
    or that holds the two the other way round, shows the context relating them
    otherwise: the claim is misstated.  A claim whose parts the context states without a
    connective ("The stack is limited. If you exceed it, ...") is left to the other
    checks: the relation is implicit, not contradicted.  With ``similar`` (a cosine of two
    texts), a claim part that the relation's corresponding part says in other words
    (:data:`PART_SIMILAR`) is not something else.  "X, which means Y" may be restated
    either way round.  A change given the other way round (:func:`change_reversed`) is
    misstated too.
    """
    if change_reversed(claim, sentences):
        return True
    own = relations(claim)
    if not own:
        return False
    support: list[tuple[_Held, set[str]]] = []  # each relation, and the terms said before it
    earlier: set[str] = set()
    for i, s in enumerate(sentences):
        support.extend((held, earlier) for held in _relation_terms(s, sentences[i - 1] if i else ""))
        earlier = earlier | set(claim_terms(s))
    if not support:
        return False
    for rel in own:
        ground, consequent = set(claim_terms(rel.ground)), set(claim_terms(rel.consequent))
        shared = ground & consequent
        if ground - shared and consequent - shared:
            ground, consequent = ground - shared, consequent - shared
        if not ground or not consequent:
            continue
        said = ground | consequent | shared
        if any(_states(ground, consequent, h, before, said) for h, before in support):
            continue
        for h, _ in support:
            if h.kind != rel.kind:
                continue
            side = _relates_otherwise(ground, consequent, h, said)
            if side is None:
                continue
            if similar is not None and side != "reversed":
                mine, theirs = ((rel.consequent, h.consequent_text) if side == "consequent"
                                else (rel.ground, h.ground_text))
                if similar(mine, theirs) >= PART_SIMILAR:
                    continue  # the same part in other words
            return True
    return False


def _states(ground: set[str], consequent: set[str], h: _Held, before: set[str],
            said: set[str]) -> bool:
    """True when the context relation ``h`` states the claim's relation: its ground holds
    the claim's ground and its consequent the claim's consequent.  A part of ``h`` that
    names too little to compare (fewer than :data:`OTHER_TERMS` terms the claim does not
    hold) points back: the text ``before`` it must hold the claim's part instead."""
    def holds(part: set[str], held: frozenset[str]) -> bool:
        if _share(part, held) >= PART_MATCH:
            return True
        return _new(held, said) < OTHER_TERMS and _share(part, before) >= PART_MATCH

    if holds(ground, h.ground) and holds(consequent, h.consequent):
        return True
    return h.kind == MEANING and holds(ground, h.consequent) and holds(consequent, h.ground)


def _relates_otherwise(ground: set[str], consequent: set[str], h: _Held,
                       said: set[str]) -> Optional[str]:
    """Which part of the claim the context relation ``h`` relates otherwise, or None.

    "consequent": ``h`` holds the claim's ground well, its sentence hardly holds the
    claim's consequent, and its own consequent names terms of its own (the ground is
    given for something else); "ground", the same the other way; "reversed": ``h`` holds
    the two parts the other way round (not for "which means", which goes both ways).
    """
    if (_share(ground, h.ground) >= PART_STRONG and _share(consequent, h.whole) < PART_WEAK
            and _new(h.consequent, said) >= OTHER_TERMS):
        return "consequent"
    if (_share(consequent, h.consequent) >= PART_STRONG and _share(ground, h.whole) < PART_WEAK
            and _new(h.ground, said) >= OTHER_TERMS):
        return "ground"
    if (h.kind != MEANING and _share(ground, h.consequent) >= PART_MATCH
            and _share(consequent, h.ground) >= PART_MATCH):
        return "reversed"
    return None
