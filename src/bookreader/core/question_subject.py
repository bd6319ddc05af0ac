"""What a question asks about: the term of a "What is X?" question, the subject of "How
does X work?" and the first word of another question's subject, and whether a chunk
defines a term; and a word the student types otherwise than the book prints it.

Separate from the retriever because it reads only the question's form (and a chunk's
text): the retriever uses it for the definition prior, the calibration for the subject a
book never names.
"""

from __future__ import annotations

import functools
import re

from typing import Callable

from bookreader.core.types import Chunk

#: "What is X?" / "What are Xs?" with a short X (at most DEFINED_WORDS words), also
#: followed by a comma and a rider ("What is a p-value, in plain words?").
_WHAT_IS = re.compile(
    r"^\s*what\s+(?:is|are)\s+(?:an?\s+|the\s+)?(?P<term>[^?,;]+?)\s*(?:[,;][^?]*)?\??\s*$",
    re.IGNORECASE)
DEFINED_WORDS = 4


def defined_term(query: str) -> str:
    """The term a "What is X?" question asks to define, or ""."""
    m = _WHAT_IS.match(query)
    if m is None:
        return ""
    term = re.split(r"\s+in\s+", m.group("term").strip(), maxsplit=1)[0]  # "... in Java"
    if (len(term.split()) > DEFINED_WORDS
            or re.search(r"\b(?:and|or|between|difference|used|in|of|for)\b", term, re.I)):
        return ""
    return term


#: "How does X work?": X is what the question asks about.
_HOW_WORKS = re.compile(r"^\s*how\s+(?:do|does)\s+(?P<term>[^?,;]+?)\s+work\b", re.IGNORECASE)


#: The first word of what a question asks about, where the question goes on past the
#: point a pattern can tell its subject ends: "What is the liar paradox and why ...?",
#: "How does fuzzy logic handle ...?", "What does the volatile keyword do?", "How do I read
#: a Moody chart to ...?" (after "How do I <verb>": the object, which must open with a
#: determiner, so that "How do I get rid of ...?" names no subject "rid").  The word after
#: the question word, its auxiliary, an optional pronoun and verb, and a determiner.  "Why"
#: questions are left out: they restate a fact in the student's own words, and on the tune
#: books the form declined no further out-of-scope question.
_DETERMINER = r"(?:a|an|the|this|that|these|those|my|your|its|their|our|some|any)\s+"
_PRONOUN = r"(?:i|you|we|one|they|it|he|she|someone|people)\b"
_AUXILIARY = r"(?:do|does|did|can|could|should|would|will|is|are|was|were)"
_SUBJECT_START = re.compile(
    r"^\s*(?:(?:what|who)(?:\s+(?:is|are|was|were)|['\u2019]s)\s+"
    rf"|what\s+(?:does|do|did)\s+(?!{_PRONOUN})"
    rf"|how\s+{_AUXILIARY}\s+(?:{_PRONOUN}\s+[A-Za-z-]+\s+{_DETERMINER}|(?!{_PRONOUN})))"
    rf"(?:{_DETERMINER})?(?P<word>[A-Za-z][\w+#.-]*[\w+#]|[A-Za-z])", re.IGNORECASE)


def asked_subject(query: str) -> str:
    """What a "What is X?" or "How does X work?" question asks about; for another "What
    is/does ...", "Who is ..." or "How do ..." question, the first word of its subject
    (:data:`_SUBJECT_START`); or ""."""
    m = _HOW_WORKS.match(query)
    subject = defined_term(query) or (m.group("term") if m else "")
    if subject:
        return subject
    start = _SUBJECT_START.match(query)
    return start.group("word") if start else ""


@functools.lru_cache(maxsize=4096)
def _definition_pattern(term: str) -> re.Pattern[str]:
    if len(term) > 3 and term.lower().endswith("s") and not term.lower().endswith("ss"):
        term = term[:-1]  # "What are tuples?": "tuple: A ..." and "Tuples are ..." both
    t = r"\s+".join(re.escape(w) for w in term.split())
    return re.compile(
        rf"(?:^|[\n.!?:\u2022]\s*|\d\.\s+){t}(?:e?s)?\s*(?:\([^)]{{1,60}}\))?\s*:\s+[A-Z(]"
        rf"|\b{t}(?:e?s)?\s+(?:is|are)\s+(?:an?|the|one|any)\s"
        rf"|\b{t}(?:e?s)?\s+(?:refers?\s+to|means)\s", re.IGNORECASE)


def defines_term(term: str, chunk: Chunk) -> bool:
    """True when ``chunk`` holds an entry or a sentence that defines ``term``."""
    return bool(term) and bool(_definition_pattern(term).search(chunk.text))


#: Letters joined by underscores: how a student types a subscript ("v_0", "H_0").
_UNDERSCORED = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")


def spelled_as_in_book(question: str, knows: Callable[[str], bool]) -> str:
    """``question`` with each word typed with underscores ("v_0") written as the book
    prints it ("v0") when the book uses the joined form and not the typed one
    (``knows``: a BM25 term of the book).  A student types a subscript the way a
    formula is written; the book's text has the letters side by side, so the search,
    its confidence and the answer's sentences would look for a word the book never
    uses.  A name the book itself writes with underscores (``my_var``) is kept."""
    from bookreader.core.lexical import tokenize

    def spelled(m: "re.Match[str]") -> str:
        typed, joined = tokenize(m.group()), tokenize(m.group().replace("_", ""))
        if joined and knows(joined[0]) and not (typed and knows(typed[0])):
            return m.group().replace("_", "")
        return m.group()

    return _UNDERSCORED.sub(spelled, question)
