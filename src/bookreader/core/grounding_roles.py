"""Which term a sentence says what of: roles exchanged around a verb.

Checks of the grounding validator (:mod:`bookreader.core.grounding_windows` runs them
on every window sentence) kept apart from :mod:`bookreader.core.claim_text`; plain
string work, no model.
"""

from __future__ import annotations

import itertools
import re
from difflib import SequenceMatcher
from functools import lru_cache

from bookreader.core.claim_swaps import POLAR, VERB_FORM
from bookreader.core.claim_text import CONTRAST, NUMBER_WORDS
from bookreader.core.sentences import STOPWORDS, stem, words

#: Content words between two exchanged terms, at most twice this.
ROLE_REACH = 4
#: With the two terms exchanged, at least this share of the claim's words line up with
#: the window (the rest of the sentence says the same).
ROLE_ALIGNED = 0.6
#: "... is called *by* ...", "written by": a passive turns the roles around.
_PASSIVE = re.compile(
    r"\b(?:is|are|was|were|be|been|being|gets?|got)\s+(?:\w+ly\s+)?\w+\s+by\b"
    r"|\b\w+(?:ed|en)\s+by\b", re.IGNORECASE)


def _positions(text: str) -> list[str]:
    """The stems of ``text``'s content words (as :func:`~bookreader.core.claim_swaps._content_words`); a number word or
    an inflected verb is marked with "#" (kept in place, never a role)."""
    stems: list[str] = []
    for w in words(text):
        lw = w.lower().replace("\u2019", "'")
        if (lw in STOPWORDS and lw not in POLAR) or (len(lw) < 2 and not lw.isdigit()):
            continue
        if NUMBER_WORDS.get(lw) or VERB_FORM.search(lw):
            lw = "#" + lw
        stems.append(stem(lw[:-2] if lw.endswith("'s") else lw))
    return stems


def _matched(a: list[str], w: list[str]) -> list[tuple[int, int]]:
    """The (claim, window) positions that ``SequenceMatcher`` aligns."""
    blocks = SequenceMatcher(None, a, w, autojunk=False).get_matching_blocks()
    return [(b.a + d, b.b + d) for b in blocks for d in range(b.size)]


@lru_cache(maxsize=16384)
def roles_swapped(claim: str, window_sentence: str) -> bool:
    """True when ``claim`` exchanges two terms of ``window_sentence`` around words both say.

    "printTwice calls main" against "main calls printTwice"; "The shop uses oak as its
    main timber, though it also stocks pine" against "... uses pine as its main timber,
    though it also stocks oak".  Aligned word by word
    (content words, stemmed, in order) with the window whose two terms are exchanged,
    the claim lines up both terms and a word between them, more words than with the
    window as it is, and most of its words (the rest of the sentence says the same).  Rewording and moving a
    clause do not (the clause moves with its terms); a passive on one side only
    ("printTwice is called by main") turns the roles back; a sentence stating
    alternatives ("rather than", "instead of") may give them in either order; terms said
    more than once in either sentence, numbers and inflected verbs ("declaring",
    "required") are not the terms a relation orders.
    """
    if CONTRAST.search(claim) or CONTRAST.search(window_sentence):
        return False
    if bool(_PASSIVE.search(claim)) != bool(_PASSIVE.search(window_sentence)):
        return False  # a passive on one side only: "printTwice is called by main"
    a = _positions(claim)
    w = _positions(window_sentence)
    roles = [t for t in dict.fromkeys(a) if t[0] != "#" and not t.isdigit()
             and a.count(t) == 1 and w.count(t) == 1]
    if len(roles) < 2 or len(a) < 3:
        return False
    base = len(_matched(a, w))
    for x, y in itertools.combinations(roles, 2):
        ax, ay, wx, wy = a.index(x), a.index(y), w.index(x), w.index(y)
        if (ax < ay) == (wx < wy) or abs(ax - ay) > 2 * ROLE_REACH:
            continue
        exchanged = list(w)
        exchanged[wx], exchanged[wy] = y, x
        pairs = set(_matched(a, exchanged))
        lo, hi = min(ax, ay), max(ax, ay)
        inside = [(i, j) for i, j in pairs if lo < i < hi]
        if (len(pairs) <= base or len(pairs) < ROLE_ALIGNED * len(a) or (ax, wy) not in pairs
                or (ay, wx) not in pairs or not inside):
            continue  # exchanged, they do not line up around a word both say
        return True
    return False
