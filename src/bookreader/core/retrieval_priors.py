"""Ranking priors of the hybrid search: what kind of section a chunk is and how well its
headings match the question, and the weights the retriever adds to or takes off a
passage's blended score for that (see "Ranking priors" in :mod:`bookreader.core.retrieval`).

Separate from the retriever because these are judgements about a chunk's text and title
alone (apparatus, contents, references, front matter, heading lines), testable without a
store or an embedding model; the calibration reuses them to leave such sections out of its
in-book probes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Sequence

from bookreader.core import question_subject
from bookreader.core.retrieval_calibration import EVIDENCE_DEPTH
from bookreader.core.retrieval_terms import query_terms as _query_terms
from bookreader.core.types import Chunk, Passage

#: Sections that list a chapter's topics rather than explain them: exercises, assessment
#: questions, quizzes, summaries, learning objectives, further reading.  Their chunks name
#: every topic of the chapter in a few lines, so they match many questions well while the
#: explanation is elsewhere.  A glossary or vocabulary section is not one of them: it
#: defines.  (Measured on the tune half of the question files; see ``APPARATUS_PENALTY``.)
APPARATUS_SECTION = re.compile(
    r"exercise|assessment|quiz|review\s+question|\bsummary\b|further\s+reading|"
    r"learning\s+(?:objective|outcome|goal)|key\s+takeaway|references|bibliography",
    re.IGNORECASE)
#: The same, read from the chunk's own text (a chapter opening's objectives list sits under
#: the chapter's title, an exercise block under the section before it).
APPARATUS_TEXT = re.compile(
    r"\bLearning Objectives\b|\bBy the end of this chapter\b|\bExpected Outcome:|"
    r"(?:^|\n)\s*Exercise\s+\d+\s*:", re.IGNORECASE)
#: Score taken off an apparatus chunk (scores are cosines near 0.4-0.8).
APPARATUS_PENALTY = 0.05
#: The dot leaders of a table of contents entry ("Osmosis . . . . . . 80"; the page numbers
#: are often extracted apart from their lines).
_CONTENTS_ENTRY = re.compile(r"(?:\.[ \t]?){6,}")
#: Entries that make a chunk a contents listing.
CONTENTS_ENTRIES = 3
#: Score taken off a contents listing.  It never explains anything, but its lines are
#: headings, so a short question ("What is osmosis?") can match it best and get the
#: contents page as its first passage.  Dot leaders find it even when the page numbers
#: are extracted apart from their entries.
CONTENTS_PENALTY = 0.3
#: A reference list ("References and Further Reading", "Further Reading": authors, years,
#: titles) names a topic in a title and explains nothing, yet it reaches the top five
#: and an answer can end up quoting its entries ("Smith, J. (2007). Soil chemistry.").
#: Taken down as far as a contents page, unless the question asks what to read: a
#: reference list is never the answer a student asked for.
REFERENCES_PENALTY = 0.3
REFERENCE_SECTION = re.compile(
    r"^\s*(?:[\d.]+\s*)?(?:references?(?:\s+and\s+further\s+reading)?|bibliography|"
    r"(?:further|suggested|recommended)\s+reading|works\s+cited|sources)\s*$", re.IGNORECASE)
ASKS_FOR_READING = re.compile(
    r"\b(?:read|reading|references?|bibliography|papers?|articles?|sources?|cited?|"
    r"books?\s+(?:on|about|by))\b", re.IGNORECASE)
#: A question about the book itself: "Who is this textbook written for?", "What do I need
#: to know before starting this book?".  The book answers it in its front matter (a
#: preface, "Target Audience", "Prerequisites"), in words a student does not use ("designed
#: for", "you should have"), so its cosine stays low and such questions were declined
#: as "not covered in this book".
ABOUT_THE_BOOK = re.compile(r"\b(?:this|the|your)\s+(?:text\s?book|book)\b", re.IGNORECASE)
#: ... and asks about the book as a book: its readers, what they need first, its
#: organisation, author or purpose.  "Does this book explain how to bake a cake?" does not
#: (a topic question is judged as any other).
BOOK_AS_BOOK = re.compile(
    r"\b(?:who|whom|audience|intended|written|designed|meant|aimed|background|"
    r"prerequisites?|need\s+to\s+know|(?:know|learn)\s+(?:first|before)|before\s+"
    r"(?:starting|reading|using|beginning)|organi[sz]ed|structured|author|wrote|purpose|"
    r"goals?\s+of|how\s+(?:should|do|can)\s+i\s+(?:use|read|study))\b", re.IGNORECASE)
#: Section titles of front matter.
FRONT_MATTER_SECTION = re.compile(
    r"preface|foreword|introduction|about\s+(?:this|the)\b|audience|prerequisite|"
    r"how\s+to\s+use|who\s+should|acknowledg|organi[sz]ation|to\s+the\s+"
    r"(?:student|reader|instructor|teacher)|welcome", re.IGNORECASE)
#: Front matter lies in the book's first pages (0-based, exclusive).
FRONT_MATTER_PAGES = 30
#: Added, for a question about the book, to a front-matter section titled as one (a
#: preface, "Target Audience", "Prerequisites"): the book speaks of itself there, not on
#: its title or copyright page, which otherwise can rank first for such a question.
FRONT_MATTER_PRIOR = 0.1
_ROMAN = re.compile(r"^[ivxlc]+$", re.IGNORECASE)


def is_front_matter(chunk: Chunk) -> bool:
    """True for a chunk of the book's front matter: in its first pages, and under a
    preface-like title or on a page numbered in roman numerals."""
    if chunk.page_start >= FRONT_MATTER_PAGES:
        return False
    return bool(_ROMAN.match(chunk.label_start or "")
                or FRONT_MATTER_SECTION.search(chunk.section or "")
                or FRONT_MATTER_SECTION.search(chunk.chapter or ""))


def about_the_book(query: str, passages: Sequence[Passage]) -> bool:
    """A question about the book itself whose best passages include its front matter: it
    is covered (its confidence is raised to the threshold, no higher), whatever its
    cosine.  A question naming "this book" that retrieval answers from elsewhere is judged
    as any other."""
    return bool(ABOUT_THE_BOOK.search(query) and BOOK_AS_BOOK.search(query)) and any(
        is_front_matter(p.chunk) for p in passages[:EVIDENCE_DEPTH])



#: Added to a chunk that defines the term a "What is X?" question asks about: a glossary
#: or summary entry ("Osmosis: the movement of water across a membrane ..."), a sentence
#: "X is a ..." (:func:`defines_term`).  A term's only definition can sit in a chapter
#: summary, ranked below sections that name the term in every line without defining it.
DEFINITION_PRIOR = 0.1


#: Weight of the heading match: a chunk under a heading (its outline section or a heading
#: line inside it) whose words are the question's gets up to this much more.
HEADING_WEIGHT = 0.15
#: A heading line inside a chunk: a short title on a paragraph of its own, optionally
#: numbered ("10.9 List comprehension", "2.7 Rounding Errors", "Theoretical Foundations").
_HEADING_LINE = re.compile(
    r"(?:^|\n\n|(?<=[.!?:])\s)((?:\d+(?:\.\d+)*\.?\s+)?[A-Z][^\n.!?:;]{1,60})(?=\n\n|$)")


def is_apparatus(chunk: Chunk) -> bool:
    """True for a chunk of exercises, questions, objectives or a summary (see above)."""
    return _apparatus(chunk.section or "", chunk.text[:1500])


@functools.lru_cache(maxsize=8192)
def _apparatus(section: str, head: str) -> bool:
    """Cached: the patterns scan 1,500 characters, for every candidate of every question
    (a fifth of a served extractive answer's time before)."""
    return bool(APPARATUS_SECTION.search(section) or APPARATUS_TEXT.search(head))


def is_contents(chunk: Chunk) -> bool:
    """True for a chunk of a table of contents (or an index): dot-leader entries."""
    return _contents(chunk.text[:3000])


@functools.lru_cache(maxsize=8192)
def _contents(head: str) -> bool:
    return len(_CONTENTS_ENTRY.findall(head)) >= CONTENTS_ENTRIES


def chunk_headings(chunk: Chunk) -> list[str]:
    """The chunk's outline section and the heading lines inside it."""
    heads = [chunk.section] if chunk.section else []
    heads += [h for h in _HEADING_LINE.findall(chunk.text) if len(h.split()) <= 8]
    return heads


def heading_match(query_terms: set[str], chunk: Chunk) -> float:
    """Best match in [0, 1] between the question's terms and one of the chunk's headings:
    (share of the heading's terms in the question) x (share of the question's terms in
    the heading), so a one-word heading ("Lists") weighs little against a long question."""
    if not query_terms:
        return 0.0
    best = 0.0
    for terms in _heading_terms(chunk.section, chunk.text):
        hit = len(terms & query_terms)
        if hit:
            best = max(best, (hit / len(terms)) * (hit / len(query_terms)))
    return best


@functools.lru_cache(maxsize=8192)
def _heading_terms(section: str, text: str) -> tuple[frozenset[str], ...]:
    """The BM25 terms of each heading of a chunk, numbers left out (cached: the same chunks
    come back question after question)."""
    from bookreader.core.lexical import tokenize

    chunk = Chunk("", "", 0, text, 0, 0, "", "", "", section, 0, 0)
    out = []
    for head in chunk_headings(chunk):
        terms = frozenset(t for t in tokenize(head) if not t[0].isdigit())
        if terms:
            out.append(terms)
    return tuple(out)


def ranked(blended: Sequence[Passage], query: str, term: str,
           book_question: bool) -> list[Passage]:
    """The blended passages with the ranking priors added, best first: apparatus,
    contents and reference chunks down, chunks under a matching heading, defining
    ``term`` (the term a "What is X?" question asks about, or "") or, for a question about
    the book (``book_question``), titled front matter, up."""
    q_terms = set(_query_terms(query))
    wants_reading = bool(ASKS_FOR_READING.search(query))
    scored = []
    for p in blended:
        prior = HEADING_WEIGHT * heading_match(q_terms, p.chunk)
        if term and question_subject.defines_term(term, p.chunk):
            prior += DEFINITION_PRIOR
        if (book_question and FRONT_MATTER_SECTION.search(p.chunk.section or "")
                and is_front_matter(p.chunk)):
            prior += FRONT_MATTER_PRIOR
        if APPARATUS_PENALTY and is_apparatus(p.chunk):
            prior -= APPARATUS_PENALTY
        if CONTENTS_PENALTY and is_contents(p.chunk):
            prior -= CONTENTS_PENALTY
        if (REFERENCES_PENALTY and not wants_reading
                and REFERENCE_SECTION.search(p.chunk.section or "")):
            prior -= REFERENCES_PENALTY
        scored.append(replace(p, score=p.score + prior) if prior else p)
    scored.sort(key=lambda p: (-p.score, p.chunk.position))
    return scored


def not_a_topic(chunk: Chunk) -> bool:
    """Sections that are no topic of the book: not probed as headings."""
    return (is_apparatus(chunk) or is_contents(chunk) or is_front_matter(chunk)
            or bool(REFERENCE_SECTION.search(chunk.section or "")))


def chunk_heading_terms(chunk: Chunk) -> tuple[frozenset[str], ...]:
    """The BM25 terms of each of the chunk's headings (see :func:`chunk_headings`)."""
    return _heading_terms(chunk.section, chunk.text)
