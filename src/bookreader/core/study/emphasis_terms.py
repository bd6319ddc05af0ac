"""Term cards from the book's own emphasis: a term set in italics or bold where a
sentence says what it is.

A run of emphasis (:attr:`~bookreader.core.study.source.StudySentence.emphasis`) is a
term candidate when it reads as a term (:func:`emphasised_term`: words of two letters or
more, no digits or symbols, not a word set in italics for stress) and either has more
than one word or is used again elsewhere in the pages read (a word stressed once is not
a term).  The sentence must have the shape of saying what the term is
(:func:`defines_emphasised`): "X is/are/refers to/means ...", "... called/known as/termed
X", "... refer to this as X", "X, which is ...", "X (abbreviation) is ...".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Optional, Sequence

from bookreader.core.sentences import STOPWORDS
from bookreader.core.study.source import StudySentence
from bookreader.core.study.terms import clean_term

#: Words a book sets in italics or bold for stress, never as a term it defines.
STRESSED = frozenset("""all any every each not no none only total must both either neither
never always very same different more less most least one own exactly before after entire
whole itself also first last new many much few some several really actually just even still
do does did can cannot may might should would could will shall need necessarily
""".split())
_WORD = re.compile(r"[A-Za-z\u00c0-\u024f][A-Za-z\u00c0-\u024f'\u2019\-]*[A-Za-z\u00c0-\u024f]")
_ABBREV = r"(?:\s*\([^()]{1,24}\))?"
#: "is"/"are" that says what the subject is, not what it does or what is done to it
#: ("are accounting", "is related to", "are usually situated").
_DEFINING_VERB = (r"(?:is|are)(?!\s+(?:not|also|often|usually|sometimes|then|now|still|"
                  r"\w+ing|\w+ed|given|shown|drawn|found|written|known|seen|made|true|false)\b)|"
                  r"refers?\s+to|means|denotes|describes|is\s+defined\s+as|"
                  r"are\s+defined\s+as|is\s+the\s+name")
#: After the term: "(Ne) is ...", ", or X, is ...", ", which is ...".
_AFTER = re.compile(r"^" + _ABBREV + r"(?:\s*,\s*(?:or\s+[^,]{1,40},\s*)?)?\s*(?:"
                    + _DEFINING_VERB + r")\s+\S|^" + _ABBREV
                    + r"\s*,\s*which\s+(?:is|are|refers?\s+to|means|describes|denotes)\s",
                    re.IGNORECASE)
#: Before a term that opens its clause: nothing, an article, or a short opening phrase
#: ending in a comma ("Formally, the ...").
_OPENS = re.compile(r"^(?:[^,]{0,40},\s*)?(?:(?:a|an|the)\s+)?$", re.IGNORECASE)
#: Before the term when the sentence names it: "... called a", "known as", "termed",
#: "refer to this event as a", "we call this", "is defined as".
_NAMES_IT = re.compile(
    r"\b(?:called|named|known\s+as|termed|dubbed|refer(?:s|red)?\s+to\s+[\w\s\-]{0,40}?as|"
    r"defined?\s+[\w\s\-]{0,40}?as|call(?:s)?\s+(?:this|it|these|them|that|such\s+[\w\-]+)"
    r"(?:\s+[\w\-]+){0,2})\s+(?:(?:a|an|the)\s+)?[\"'\u201c\u2018]?$", re.IGNORECASE)


def emphasised_term(run: str) -> Optional[str]:
    """The run as a card's front, or None when it does not read as a term."""
    run = run.strip(" \t.,;:!?\"'\u201c\u201d\u2018\u2019()")
    ws = run.split()
    if not ws or len(ws) > 5 or not all(_WORD.fullmatch(w) for w in ws):
        return None  # one letter, a variable, a digit or a symbol
    low = [w.lower() for w in ws]
    if len(ws) == 1 and (low[0] in STOPWORDS or low[0] in STRESSED):
        return None
    if low[0] in STRESSED:
        return None
    return clean_term(run)


#: What may follow a term the sentence names: the clause's end, or a word that opens
#: the next one ("called a loop because ...").  "the standard error of b1" names one
#: instance, "the independent variable" a longer term than the emphasis.
_NAMED_END = re.compile(r"^(?:\s*$|\s*[.,;:()\-\u2013\u2014\"\u201d'\u2019!?]|\s+(?:that|which|who|"
                        r"because|by|and|or|in|to|since|when|where|whose|as|from|with)\b)")
#: A word pointing at what an earlier sentence described ("We call this quantity ...",
#: "These structures are called ...", "It is called ...").
_POINTS_BACK = re.compile(r"\b(?:this|these|those|it|such|above|former|latter)\b",
                          re.IGNORECASE)
#: Fewest words before a pointer for the sentence itself to hold what it points at
#: ("... have touched, and refer to this moment as a contact event").
MIN_WORDS_BEFORE_POINTER = 6


#: A sentence that leans on a formula or item elsewhere: "the equation above", "the
#: inequality in (d)", "the denominator of 5.10".
_ELSEWHERE = re.compile(r"\b(?:above|aforementioned)\b|"
                        r"\(\s*(?:[a-z]|[ivx]{1,4}|\d+(?:\.\d+)*)\s*\)|\b\d+\.\d+\b")


#: "the equation above", "the example below": what the sentence says is elsewhere.
_POINTS_AT = re.compile(r"\b(?:equation|formula|figure|table|example|expression|definition|"
                        r"result|theorem|code|program|listing)s?\s+(?:above|below)\b",
                        re.IGNORECASE)


#: "A dummy variable is also called ...": the sentence gives another name for a term it
#: does not define ("The mean, also called the expected value, of ... is ..." goes on).
_SYNONYM = re.compile(r"\b(?:is|are)\s+also\s+(?:\w+\s+)?(?:called|known\s+as|termed|"
                      r"referred\s+to\s+as)\s+(?:(?:a|an|the)\s+)?$", re.IGNORECASE)


#: "... a service that was called X": the name one thing had, told in the past, not a
#: term the field calls things by.
_NAMED_ONCE = re.compile(r"\b(?:was|were)\s+(?:\w+\s+)?(?:called|named|known\s+as|termed|"
                         r"dubbed)\s+(?:(?:a|an|the)\s+)?[\"'\u201c\u2018]?$", re.IGNORECASE)


def _points_back(before: str) -> bool:
    if _ELSEWHERE.search(re.sub(r"^\d+(?:\.\d+)+\s+", "", before)):  # not its heading's number
        return True
    clause = before.rsplit("(", 1)[-1]
    m = _POINTS_BACK.search(clause)
    return m is not None and len(clause[:m.start()].split()) < MIN_WORDS_BEFORE_POINTER


def _whole(sentence: str) -> bool:
    """A sentence as the book wrote it: a capital (or a numbered heading run into it)
    first, a full stop last, not a list."""
    s = sentence.strip().rstrip("\"'\u201d\u2019)")
    return (bool(s) and (s[0].isupper() or s[0].isdigit()) and s.endswith((".", "!"))
            and "\u2022" not in s)


def defines_emphasised(sentence: str, run: str) -> bool:
    """True when ``sentence`` says what the emphasised ``run`` is (see the module)."""
    if not _whole(sentence) or _POINTS_AT.search(sentence):
        return False
    for m in re.finditer(r"(?<![\w\-])" + re.escape(run) + r"(?![\w\-])", sentence):
        before, after = sentence[:m.start()], sentence[m.end():]
        if _NAMES_IT.search(before):
            if (_NAMED_END.match(after) and not _points_back(before)
                    and not _SYNONYM.search(before) and not _NAMED_ONCE.search(before)):
                return True
            continue
        if (_OPENS.match(before) or _heading_then(before, run)) and _AFTER.match(after):
            return True
    return False


def _heading_then(before: str, run: str) -> bool:
    """True when ``before`` is a heading naming the term that ran into the sentence:
    "3.2 The mean free path the mean free path (l) is ..."."""
    return bool(re.fullmatch(r"(?:[\d.]+\s+)?(?:(?:a|an|the)\s+)?" + re.escape(run)
                             + r"\s+(?:(?:a|an|the)\s+)?", before, re.IGNORECASE))


def _uses(sentences: Iterable[StudySentence]) -> Counter[str]:
    return Counter(w.lower() for s in sentences for w in _WORD.findall(s.text))


def emphasis_terms(sentences: Sequence[StudySentence]) -> dict[int, tuple[str, str]]:
    """For each sentence (by position) that defines an emphasised term, ``(term, run)``:
    the first such term of the sentence."""
    uses: Optional[Counter[str]] = None
    out: dict[int, tuple[str, str]] = {}
    for s in sentences:
        for run in s.emphasis:
            term = emphasised_term(run)
            if term is None or not defines_emphasised(s.text, run):
                continue
            if len(term.split()) == 1:
                uses = _uses(sentences) if uses is None else uses
                if uses[term.lower()] < 2:
                    continue  # used once: stressed, not a term the book goes on with
            out[s.position] = (term, run)
            break
    return out
