"""Terms and what the book says they are, read from its sentences.

Three forms make a term card, tried in this order on every sentence:

* a **glossary entry**: "base case: A condition that causes a recursive method not to
  make a recursive call." (in any section), or, inside a section titled glossary,
  vocabulary or key terms, "bug An error in a program." (a lower-case term of up to four
  words, then a capitalised definition);
* a **defining sentence**: "A variable is a named storage location ...", "Recursion is
  the process of ...", "An algorithm refers to ...", "... is called *polymorphism*." —
  the term read by one pattern, then confirmed by the answering pipeline's own
  :func:`~bookreader.core.selection_types.defines` (the same test that decides whether a
  sentence answers "What is X?");
* a **key statement** about a named subject, made a question: "X is used to ..." ->
  "What is X used for?", "X consists of ..." -> "What does X consist of?", "There are
  three kinds of X: ..." -> "What kinds of X are there?" (:func:`question_for`).

A term must read as a name: one to five words, letters, not a pronoun or a word that
points back ("This", "It", "The result"), not a bare generic noun.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from bookreader.core.selection_types import defines
from bookreader.core.sentences import STOPWORDS, words

#: Longest term, in words.
MAX_TERM_WORDS = 5
#: Fewest words the definition after the term must have.
MIN_DEFINITION_WORDS = 3

#: Words that cannot start (or be) a term: pronouns, words that point back, generic heads
#: that name nothing on their own ("The result is a list" defines nothing).
_DEICTIC = frozenset("""this that these those it its they them there here which what who
whose whom he she we you i one ones each every some any all both another other such first
second third last next following previous former latter same main key many most few
several various certain""".split())
_GENERIC = frozenset("""result results answer answers problem problems example examples reason
reasons idea ideas goal goals point way ways thing things case cases question questions
difference differences output input part parts step steps kind kinds type types use purpose
rest end start chapter section figure table book page text note notes lot number
approach method methods model models process system value values""".split())
#: Small words a term may hold inside it ("degrees of freedom", "supply and demand").
_TERM_JOINERS = frozenset("of and in on".split())
#: Adverbs left at the end of a subject ("X merely refers to ...").
_ADVERBS = frozenset("""merely simply just also usually often generally typically basically
essentially actually really thus therefore then now still always sometimes""".split())
#: Words that cannot end a term (a clause, not a name, ran into it).
_BAD_LAST = frozenset("of to for with and or in on at by as from than that which".split())

_DET = r"(?:(?:a|an|the)\s+)?"
_TERM = r"(?P<term>[A-Za-z\u00c0-\u024f][\w'\u2019\-]*(?:\s+[\w'\u2019\-]+){0,4}?)"
#: "term: definition" (a glossary or summary entry).
_ENTRY = re.compile(
    r"^\s*(?:[\u2022*\-]\s*)?(?P<term>[A-Za-z\u00c0-\u024f][\w'\u2019\-]*"
    r"(?:[ \-][\w'\u2019\-]+){0,4})\s*(?:\([^)]{1,40}\))?\s*:\s+(?P<definition>\S.+)$")
#: "term Definition" inside a glossary section: a lower-case term, then a capital.
_BARE_ENTRY = re.compile(
    r"^\s*(?P<term>[a-z\u00e0-\u024f][\w'\u2019\-]*(?:\s[a-z][\w'\u2019\-]*){0,3})\s+"
    r"(?P<definition>[A-Z\u201c\"](?:[a-z]|\s).+)$")
#: "A TERM is a ...", "TERM is the ...", "TERM refers to ...", "TERM means ...".
_COPULA = re.compile(
    rf"^\s*{_DET}{_TERM}\s*(?:\([^)]{{1,60}}\)\s*)?,?\s+"
    r"(?P<verb>(?:is|are)\s+defined\s+as\s|(?:is|are)\s+(?:an?|the|one|any)\s"
    r"|refers?\s+to\s|means\s)"
    r"(?P<definition>.+)$", re.IGNORECASE)
#: "... is called a TERM." / "... is known as TERM," / "... are called TERMS."
_CALLED = re.compile(
    r"\b(?:is|are)\s+(?:called|known\s+as|termed|referred\s+to\s+as)\s+(?:an?\s+|the\s+)?"
    r"[\"'\u201c\u2018]?(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[A-Za-z][\w'\u2019\-]*){0,3}?)"
    r"[\"'\u201d\u2019]?\s*(?:[.,;:]|$)")
#: Verbs a key statement about a subject may use; the question asks with the bare form.
_ACTION_VERBS = frozenset("""returns produces computes measures describes determines
represents stores creates converts contains requires includes provides controls
specifies estimates predicts generates evaluates performs allows enables causes
consists""".split())
_SUBJECT_VERB = re.compile(
    rf"^\s*(?P<det>(?:a|an|the)\s+)?{_TERM}\s+(?P<verb>is\s+used\s+(?:to|for)|are\s+used\s+(?:to|for)"
    r"|consists?\s+of|is\s+made\s+up\s+of|are\s+made\s+up\s+of|"
    + "|".join(sorted(_ACTION_VERBS)) + r")\s+(?P<rest>.+)$",
    re.IGNORECASE)
_THERE_ARE = re.compile(
    r"^\s*there\s+are\s+(?P<count>two|three|four|five|six|seven|eight|nine|ten|\d+|several"
    r"|many)\s+(?P<what>kinds|types|ways|steps|parts|forms|categories|classes|stages|phases"
    r"|components|properties|rules|methods)\s+(?P<prep>of|to)\s+(?P<of>[^:.;,]{2,50}?)\s*[:.,;]",
    re.IGNORECASE)


@dataclass(frozen=True)
class Definition:
    """A term and the text that defines it (the back of its card)."""

    term: str
    back: str  # the book's words that define the term
    form: str  # "entry", "defining" or "called"


@dataclass(frozen=True)
class Statement:
    """A question a key statement answers, with that statement as the answer."""

    question: str
    subject: str
    back: str


def clean_term(term: str) -> Optional[str]:
    """The term as a card's front, or None when it does not read as a name."""
    term = " ".join(term.strip(" \t*\u2022-\"'\u201c\u201d\u2018\u2019").split())
    term = re.sub(r"^(?:a|an|the)\s+", "", term, flags=re.IGNORECASE)
    ws = term.split()
    while len(ws) > 1 and ws[-1].lower() in _ADVERBS:  # "Linkage disequilibrium merely"
        ws.pop()
    term = " ".join(ws)
    if not 1 <= len(ws) <= MAX_TERM_WORDS:
        return None
    low = [w.lower() for w in ws]
    if low[0] in _DEICTIC or low[0] in STOPWORDS or low[-1] in _BAD_LAST:
        return None
    if len(ws) == 1 and (low[0] in _GENERIC or len(low[0]) < 3):
        return None
    if any(w in ("is", "are", "was", "were", "be", "been", "can", "will", "would", "should",
                 "we", "you", "i", "if", "when", "because", "not") for w in low):
        return None
    if any(w in STOPWORDS and w not in _TERM_JOINERS for w in low[1:]):
        return None  # a clause ran into it: "process continues until the subtasks"
    if not all(re.fullmatch(r"[\w'\u2019\-]+", w) for w in ws):
        return None
    if not any(w not in STOPWORDS and w not in _GENERIC for w in low):
        return None
    if any(ch.isdigit() for ch in term) and len(ws) == 1:
        return None
    return term


def _enough(definition: str) -> bool:
    return len(words(definition)) >= MIN_DEFINITION_WORDS


def definition_in(sentence: str, glossary: bool = False) -> Optional[Definition]:
    """The term ``sentence`` defines and its definition, or None."""
    m = _ENTRY.match(sentence)
    if m and _enough(m.group("definition")):
        term = clean_term(m.group("term"))
        # A lead-in ("The steps are as follows: ...") is not an entry: the "term" part of
        # an entry is a name, short and without a verb.
        if term and (glossary or m.group("definition")[:1].isupper()):
            return Definition(term, m.group("definition").strip(), "entry")
    if glossary:
        m = _BARE_ENTRY.match(sentence)
        if m and _enough(m.group("definition")):
            term = clean_term(m.group("term"))
            if term:
                return Definition(term, m.group("definition").strip(), "entry")
    m = _COPULA.match(sentence)
    if m and _enough(m.group("definition")):
        term = clean_term(m.group("term"))
        verb = " ".join(m.group("verb").lower().split())
        if term and verb.startswith("are") and not term.lower().endswith("s"):
            term = None  # "Java are ..." is not a defining sentence's grammar
        if term and defines(sentence, term) and not _generic_subject(sentence, term):
            return Definition(term, sentence, "defining")
    m = _CALLED.search(sentence)
    if m:
        term = clean_term(m.group("term"))
        before = sentence[:m.start()]
        if term and len(words(before)) >= MIN_DEFINITION_WORDS and defines(sentence, term):
            return Definition(term, sentence, "called")
    return None


def _generic_subject(sentence: str, term: str) -> bool:
    """True for "The TERM is the ..." where TERM is one plain word: a reference to
    something named before ("The function is the one that ..."), not a definition."""
    return bool(re.match(r"^\s*the\s+\S+\s+(?:is|are)\s+the\b", sentence, re.IGNORECASE)
                and len(term.split()) == 1 and term.islower())


def _bare(verb: str) -> str:
    """The bare form of a third-person verb ("returns" -> "return")."""
    v = verb.lower()
    if v.endswith("ies"):
        return v[:-3] + "y"
    if v.endswith(("sses", "shes", "ches", "xes", "zes")):
        return v[:-2]
    return v[:-1] if v.endswith("s") else v


def question_for(sentence: str) -> Optional[Statement]:
    """A question ``sentence`` answers as a key statement about a named subject, or None."""
    m = _THERE_ARE.match(sentence)
    if m:
        of = clean_term(m.group("of"))
        if of:
            what, prep = m.group("what").lower(), m.group("prep").lower()
            return Statement(f"What {what} {prep} {of} are there?", of, sentence)
    m = _SUBJECT_VERB.match(sentence)
    if not m or len(words(m.group("rest"))) < MIN_DEFINITION_WORDS:
        return None
    subject = clean_term(m.group("term"))
    if not subject:
        return None
    det = (m.group("det") or "").lower()
    named = det + subject  # "What does a wrong password produce?"
    verb = " ".join(m.group("verb").lower().split())
    plural = verb.startswith("are") or verb == "consist"
    aux = "do" if plural else "does"
    be = "are" if plural else "is"
    if verb.endswith("used to") or verb.endswith("used for"):
        q = f"What {be} {named} used for?"
    elif verb.startswith("consist") or "made up of" in verb:
        q = f"What {aux} {named} consist of?"
    elif verb in _ACTION_VERBS:
        bare = _bare(verb)
        q = f"What {aux} {named} {bare}?"
    else:
        return None
    return Statement(q, subject, sentence)
