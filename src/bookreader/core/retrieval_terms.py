"""The words of a question against the words of a book, for the retrieval confidence.

A question's content terms (BM25 terms less the words that only frame a question,
:func:`query_terms`) and their share in the top passages (:func:`term_coverage`); whether
the book uses a word at all (:func:`book_uses`, accents folded and a student's hyphens
forgiven), so that a specialised word the book never uses (:func:`unknown_word`) or a
subject it never names (:func:`absent_subject`) marks the question unknown; and the forms
that cover a question whatever its cosine: a heading of a top passage named in it
(:func:`covered_by_form`), or a heading or index term of the book named word for word
(:func:`names_book_term`).

Separate from :mod:`bookreader.core.retrieval_calibration`, which turns this evidence into
a per-book confidence: these are judgements about words alone, with no embedding, no store
and no book scale in them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:
    from bookreader.core.types import Chunk, Passage

#: Words that frame a question rather than name its subject and seldom occur in the text
#: that answers it ("How many gulls were counted?" is answered without "many").  They are
#: left out of ``coverage``.  A longer list (use, get, need, work, difference...) was
#: measured and made calibration worse: those words do occur in answering passages.
QUESTION_WORDS = frozenset("many much please exactly really".split())


@functools.lru_cache(maxsize=1)
def _question_terms() -> frozenset[str]:
    from bookreader.core.lexical import tokenize

    return frozenset(t for word in QUESTION_WORDS for t in tokenize(word))


def query_terms(query: str) -> list[str]:
    """The query's BM25 terms without question words (all of them when nothing is left)."""
    from bookreader.core.lexical import tokenize

    terms = tokenize(query)
    content = [t for t in terms if t not in _question_terms()]
    return content or terms


def term_coverage(query: str, texts: Sequence[str]) -> float:
    """Share of the query's content terms (BM25 terms minus question words) in ``texts``."""
    terms = set(query_terms(query))
    if not terms:
        return 0.0
    found: set[str] = set()
    for text in texts:
        found |= _token_set(text)
    return len(terms & found) / len(terms)


@functools.lru_cache(maxsize=8192)
def _token_set(text: str) -> frozenset[str]:
    """A passage's BM25 terms (cached: the same passages come back question after question)."""
    from bookreader.core.lexical import tokenize

    return frozenset(tokenize(text))



#: A word of a question as a student types it (letters, then letters, digits, + # . -).
_WORD = re.compile(r"[A-Za-z][\w+#.-]*[\w+#]|[A-Za-z]")
#: A quoted example in a question ("Why is 'All dogs bark; Rex is a dog' valid?"): the
#: student's own words, not a term to look up, so no unknown word is looked for in it.  A
#: quote of fewer than QUOTED_WORDS words names a term ("What is a 'sealed class'?").
QUOTED_WORDS = 3
_QUOTED = re.compile("(?<!\\w)(?:'[^'\n]+'|\"[^\"\n]+\"|\u2018[^\u2019\n]+\u2019|\u201c[^\u201d\n]+\u201d)(?!\\w)")

def question_words(query: str) -> list[str]:
    """The words of ``query`` as a student types them (:data:`_WORD`), outside its quoted
    examples of :data:`QUOTED_WORDS` words or more: where an unknown word is looked for."""
    return _WORD.findall(_QUOTED.sub(
        lambda m: " " if len(m.group().split()) >= QUOTED_WORDS else m.group(), query))


def book_uses(word: str, knows: Callable[[str], bool]) -> bool:
    """True when the book uses ``word`` (``knows``: a term of the book, accents folded; for a
    compound such as "LinkedList" its whole term).  A word the student hyphenates
    ("pressure-driven", "brand-new", "reachable-nodes") is used when the book uses the
    hyphenated whole or every one of its parts: the student's hyphens are not the book's
    ("pressure driven", "reachable nodes")."""
    from bookreader.core.lexical import tokenize

    word = fold_accents(word)
    terms = tokenize(word)
    if not terms or knows(terms[0]):
        return True
    parts = [p for p in word.split("-") if p]
    return len(parts) > 1 and all(book_uses(p, knows) for p in parts)


def unknown_word(word: str, knows: Callable[[str], bool], pieces: Callable[[str], int]) -> bool:
    """True for a word the book never uses (:func:`book_uses`) and which the embedding
    model's vocabulary does not hold whole (``pieces``: two word pieces or more): a
    specialised term ("JDBC", "methylation"), not an everyday word ("plain") or a number."""
    if any(ch.isdigit() for ch in word):
        return False
    return not book_uses(word, knows) and pieces(word.lower()) >= 2


def absent_subject(subject: str, knows: Callable[[str], bool]) -> bool:
    """True when the subject a question asks about ("sealed classes" of "What are sealed
    classes in Java?") holds a word the book never uses (``knows``: a term of the book,
    accents folded), whether specialised or not: the book does not name what is asked
    about, though the field's words around it match."""
    for word in _WORD.findall(subject):
        if not any(ch.isdigit() for ch in word) and not book_uses(word, knows):
            return True
    return False


def names_heading(query: str, top: Sequence["Passage"],
                  headings: Callable[["Chunk"], Sequence[frozenset[str]]]) -> bool:
    """True when every content term of a heading (of two terms or more) of one of the top
    passages is in the question: it names a section of the book."""
    terms = set(query_terms(query))
    return any(len(h) >= 2 and h <= terms for p in top for h in headings(p.chunk))


def covered_by_form(query: str, top: Sequence["Passage"],
                    headings: Callable[["Chunk"], Sequence[frozenset[str]]],
                    defines: Callable[["Chunk"], bool]) -> bool:
    """A question that names a heading of a top passage, or asks "What is X?" where a top
    passage defines X (``defines``), is covered whatever its cosine."""
    return names_heading(query, top, headings) or any(defines(p.chunk) for p in top)


#: An accent a PDF extracted as a character of its own, before or after its letter
#: ("Barab\u00b4asi", "Erd\u02ddos").
_SPACING_ACCENT = re.compile(r"(?<=[^\W\d_])[\u00b4\u00a8\u00b8\u02c6\u02c7\u02d8-\u02dd\u02dc](?=[^\W\d_])")


#: Dashes typeset in a name ("Cauchy\u2013Schwarz") read as the hyphen a student types.
_DASHES = {c: "-" for c in range(0x2010, 0x2015)}


def fold_accents(text: str) -> str:
    """``text`` without its accents ("Barabási" -> "Barabasi"), also those extracted apart
    from their letter: a student types a name without the accents the book prints."""
    if text.isascii():
        return text
    text = _SPACING_ACCENT.sub("", text).translate(_DASHES)
    return "".join(ch for ch in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(ch))


#: A word holding a letter with an accent, an accent extracted apart or a typeset dash
#: ("Barab\u00b4asi", "Cauchy\u2013Schwarz").
_ACCENTED_WORD = re.compile(
    r"[\w\u00b4\u00a8\u00b8\u02c6-\u02dd\u2010-\u2014-]*"
    r"(?:[\u00c0-\u024f]|[\u00b4\u00a8\u00b8\u02c6-\u02dd\u2010-\u2014])"
    r"[\w\u00b4\u00a8\u00b8\u02c6-\u02dd\u2010-\u2014-]*")


def accented_terms(texts: Iterable[str]) -> set[str]:
    """The BM25 terms, accents folded, of the words of ``texts`` that carry accents."""
    from bookreader.core.lexical import tokenize

    found: set[str] = set()
    for text in texts:
        if not text.isascii():
            for word in set(_ACCENTED_WORD.findall(text)):
                found.update(tokenize(fold_accents(word)))
    return found


@functools.lru_cache(maxsize=8192)
def term_sequence(text: str) -> tuple[str, ...]:
    """``text``'s BM25 terms in order, accents folded (cached: passages come back)."""
    from bookreader.core.lexical import tokenize

    return tuple(tokenize(fold_accents(text)))


#: An index section of the book ("Index", "Subject Index", "Index of Terms").
INDEX_SECTION = re.compile(r"^\s*(?:subject\s+|general\s+)?index(?:\s+of\s+terms)?\s*$",
                           re.IGNORECASE)
#: An entry of an index: a term followed by its first page number ("key signature, 52").
_INDEX_ENTRY = re.compile(r"([A-Za-z][^,\d\n]{2,60}?),\s*\d")


#: A phrase of two to four words the text puts in quotation marks: how a book marks a
#: term it introduces ("the notes of the “overtone series” sound together"), where its
#: page text keeps no italics.
_QUOTED_TERM = re.compile(r"[“\"]([A-Za-z][\w\-]*(?:\s[\w\-]+){1,3})[”\"]")


def book_terms(chunks: Sequence["Chunk"], skip: Callable[["Chunk"], bool],
               headings_of: Callable[["Chunk"], Sequence[str]]) -> frozenset[tuple[str, ...]]:
    """The book's named terms of two BM25 terms or more, as term sequences: its headings
    (``headings_of``, numbers left out; ``skip`` leaves out chunks that are no topic of
    the book), the entries of its index and the phrases its text puts in quotation marks
    (:data:`_QUOTED_TERM`)."""
    terms: set[tuple[str, ...]] = set()
    for chunk in chunks:
        if INDEX_SECTION.match(chunk.section or "") or INDEX_SECTION.match(chunk.chapter or ""):
            found = [m.group(1) for m in _INDEX_ENTRY.finditer(chunk.text)]
        elif skip(chunk):
            continue
        else:
            found = list(headings_of(chunk))
            found += [m.group(1) for m in _QUOTED_TERM.finditer(chunk.text)]
        for title in found:
            seq = tuple(t for t in term_sequence(" ".join(title.split())) if not t[0].isdigit())
            if len(seq) >= 2:
                terms.add(seq)
    return frozenset(terms)


def _holds(seq: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(tuple(seq[i:i + n]) == tuple(part) for i in range(len(seq) - n + 1))


def named_terms(query: str, terms: frozenset[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The distinctive phrases of the question: a heading or index term of the book
    (``terms``, see :func:`book_terms`) it holds word for word, and a name made of a word and
    a number ("Model 7", "Phase 2")."""
    seq = term_sequence(query)
    found = [t for t in terms if len(t) <= len(seq) and _holds(seq, t)]
    found += [(a, b) for a, b in zip(seq, seq[1:]) if a.isalpha() and b.isdigit()]
    return found


def names_book_term(query: str, top: Sequence["Passage"],
                    terms: frozenset[tuple[str, ...]]) -> bool:
    """True when the question names a term of the book (:func:`named_terms`) that one of the
    top passages uses word for word: the book speaks of what it asks about."""
    named = named_terms(query, terms)
    return bool(named) and any(_holds(term_sequence(p.chunk.text), t)
                               for p in top for t in named)
