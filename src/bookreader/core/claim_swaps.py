"""Swapped terms: a claim that puts one term of the context in another's place.

"The function list creates a new dictionary" against "... creates a new list": the
answer restates a context sentence with a noun, a name, a number or one of two opposites
("first" for "last") exchanged.  Split from :mod:`bookreader.core.claim_text` (negation,
numbers), whose word lists it shares; used by :mod:`bookreader.core.grounding_windows`.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from bookreader.core.claim_text import NEG_PREFIXES
from bookreader.core.sentences import STOPWORDS, split_sentences, stem, words

#: Opposites that count only where the answer puts one in the other's place (they often
#: occur together in one sentence: "the first and the last element").
_SWAP_OPPOSITES = [
    ("first", "last"), ("ascending", "descending"), ("left", "right"), ("local", "global"),
    ("include", "exclude"), ("add", "remove"), ("accept", "reject"), ("same", "different"),
    ("input", "output"), ("send", "receive"), ("publish", "subscribe"), ("client", "server"),
    ("read", "write"), ("upper", "lower"), ("positive", "negative"), ("higher", "lower"),
    ("faster", "slower"), ("larger", "smaller"), ("bigger", "smaller"), ("greater", "less"),
    ("easy", "hard"), ("simple", "complex"), ("start", "end"), ("begin", "end"),
    ("minimum", "maximum"), ("increase", "decrease"), ("true", "false"), ("open", "closed"),
    ("public", "private"), ("static", "dynamic"), ("before", "after"), ("inside", "outside"),
    ("always", "never"), ("success", "failure"), ("enable", "disable"), ("allow", "prevent"),
    ("mutable", "immutable"), ("synchronous", "asynchronous"), ("increment", "decrement"),
    ("parent", "child"), ("superclass", "subclass"), ("row", "column"), ("key", "value"),
    ("horizontal", "vertical"), ("internal", "external"), ("implicit", "explicit"),
    ("more", "less"), ("more", "fewer"), ("above", "below"), ("up", "down"), ("over", "under"),
]

# --- swapped terms ----------------------------------------------------------------------
_OPPOSITE_STEMS: dict[str, set[str]] = {}
for _a, _b in _SWAP_OPPOSITES:
    _OPPOSITE_STEMS.setdefault(stem(_a), set()).add(stem(_b))
    _OPPOSITE_STEMS.setdefault(stem(_b), set()).add(stem(_a))
#: A replaced stretch longer than this (either side) is a rewording, not a swapped term.
SWAP_SPAN = 3
#: The answer sentence and the window sentence are the same statement when at least this
#: share of the answer's content words align in order.
SWAP_ALIGNED = 0.5


#: Inflected verbs ("changed", "using") are how a paraphrase
#: rewords; a swapped term is a noun or a name.
VERB_FORM = re.compile(r"(?:ed|ing)$")
#: Stop words that are one half of an opposite ("the *same* time"): aligned like content.
POLAR = frozenset("same before after above below more up down over under".split())


def _content_words(text: str) -> list[str]:
    """The lower-cased words :func:`content_terms` keeps, unstemmed, in order."""
    out = []
    for w in words(text):
        lw = w.lower().replace("\u2019", "'")
        if (lw in STOPWORDS and lw not in POLAR) or (len(lw) < 2 and not lw.isdigit()):
            continue
        out.append(lw[:-2] if lw.endswith("'s") else lw)
    return out


def _family(a: str, b: str) -> bool:
    return a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def is_opposite(a: str, b: str) -> bool:
    """True when stems ``a`` and ``b`` are opposites (a listed pair or a un-/in-/non- prefix)."""
    if b in _OPPOSITE_STEMS.get(a, ()):
        return True
    for x, y in ((a, b), (b, a)):
        for p in NEG_PREFIXES + ("non",):
            if x == p + y and len(y) >= 4:
                return True
    return False


_DETERMINERS = frozenset(
    """a an the this that these those each every its their his her our your my some any
    another which whose""".split()
)


#: "the function *dict*", "the keyword *null*": what follows names a thing of that kind.
_KINDS = frozenset(
    """function method class keyword operator variable type module package command library
    attribute field object value parameter argument file""".split()
)


def noun_terms(text: str) -> set[str]:
    """Stems of the words ``text`` uses as nouns or names, as far as words show it.

    A word right after a determiner ("a *list*", "the *server*") or a kind of thing ("the
    function *dict*"), or capitalised inside a sentence ("uses *Dijkstra's* algorithm").
    Verbs and adjectives of a passage are how a paraphrase rewords; its nouns are the terms
    a wrong answer attaches to the wrong subject (:func:`swapped_terms`).
    """
    out: set[str] = set()
    for sent in split_sentences(text):
        ws = words(sent)
        for i, w in enumerate(ws):
            lw = w.lower()
            if lw in STOPWORDS or len(lw) < 2 or lw.isdigit():
                continue
            prev = ws[i - 1].lower() if i > 0 else ""
            if prev in _DETERMINERS or prev in _KINDS or (i > 0 and w[0].isupper()):
                out.add(stem(lw[:-2] if lw.endswith("'s") else lw))
    return out


def swapped_terms(claim: str, window_sentence: str,
                  elsewhere: set[str]) -> list[tuple[str, str]]:
    """The terms ``claim`` puts in the place of other terms of ``window_sentence``.

    The two are aligned word by word (content words, stemmed, in order).  Where the claim
    says the same thing around one short stretch but differs inside it, the claim's word
    ``x`` replaces the window's word ``y`` when ``y`` is absent from the claim and

    * both are numbers ("1000 Hz" for "500 Hz"),
    * they are opposites ("returns false" for "returns true", "immutable"/"mutable"), or
    * ``x`` is absent from the window but a noun of the context elsewhere (``elsewhere``,
      stems, see :func:`noun_terms`) and ``y`` is one too: a term of the passage attached
      to another subject ("the function list creates a new dictionary" where the passage
      says ``dict`` and uses "list" about something else).

    A paraphrase renames ordinary words with words the passage does not use, so it is
    not caught.  Returns (x, y) stem pairs; empty when the sentences are not aligned.
    """
    a_words = _content_words(claim)
    a = [stem(x) for x in a_words]
    w = [stem(x) for x in _content_words(window_sentence)]
    if len(a) < 2 or not w:
        return []
    sm = SequenceMatcher(None, a, w, autojunk=False)
    ops = sm.get_opcodes()
    if sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal") < SWAP_ALIGNED * len(a):
        return []
    aset, wset = set(a), set(w)
    pointers = _pointed_at(window_sentence)
    out: list[tuple[str, str]] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace" or i2 - i1 > SWAP_SPAN or j2 - j1 > SWAP_SPAN:
            continue
        if not ((k > 0 and ops[k - 1][0] == "equal")
                or (k + 1 < len(ops) and ops[k + 1][0] == "equal")):
            continue
        for y in w[j1:j2]:
            if any(_family(y, t) for t in aset):
                continue  # the window's word is still in the claim (moved)
            for x, xw in zip(a[i1:i2], a_words[i1:i2]):
                if x.isdigit() and y.isdigit() and x != y or is_opposite(x, y):
                    out.append((x, y))
                elif (not any(_family(x, t) for t in wset) and x in elsewhere
                      and y in elsewhere and not x.isdigit() and not VERB_FORM.search(xw)
                      and y not in pointers):
                    out.append((x, y))
                elif (a.count(x) > w.count(x) >= 1 and x in elsewhere and not x.isdigit()
                      and i1 <= 1):
                    # The window's other term named again in its subject's place: "A list
                    # is a sequence of values much like a list" for "A tuple is ... like a
                    # list" (further on, repeating a word is how a rewording reads: "a web
                    # page, then ... the web page content").
                    out.append((x, y))
    return out


#: A demonstrative before a noun: the noun points back at what was named before it ("In
#: this design, each request gets its own thread" after "Thread per request:").
_POINTER = re.compile(r"\b(?:this|that|these|those|such)\s+([A-Za-z][\w-]*)", re.IGNORECASE)


def _pointed_at(sentence: str) -> set[str]:
    """Stems of the nouns a demonstrative points with ("this approach": ``approach``).

    A claim that names the thing itself in such a noun's place ("Thread per request ...
    gives each request its own thread") is not attaching another term to the subject: the window
    speaks of the same thing by a pointer.  (A term of the passage put in place of a noun
    that names a thing, "list" for "dict", is still a swap.)"""
    return {stem(m.group(1).lower()) for m in _POINTER.finditer(sentence)}


def repeated_stems(text: str) -> set[str]:
    """Stems of the content words ``text`` uses more than once."""
    stems = [stem(x) for x in _content_words(text)]
    return {x for x in stems if stems.count(x) > 1}
