"""Hybrid search: dense (MiniLM + vector store) and BM25 candidates, blended, with a
retrieval confidence that says whether the book covers the question at all.

Scoring, per query:

* Dense candidates: the ``DENSE_POOL`` nearest chunks by cosine similarity (inside the
  filter).  The dense score is the cosine itself, clipped at 0: MiniLM's cosines are
  already on a fixed [0, 1] scale for text.  A chunk found only by BM25 gets the pool's
  lowest cosine (its own is lower still).
* BM25 candidates: raw BM25 scores of the chunks inside the filter, divided by the
  query's best one, so [0, 1] with 0 meaning "no query term occurs".
* ``score = dense_weight * dense + bm25_weight * bm25`` (0.85 / 0.15 by default).

Why the dense side is not stretched per query: min-max over the dense pool, or dividing
by the best cosine, stretches the dense differences most when the model is unsure (low
cosines), which is exactly when the keywords should count, and BM25 at 0.15 could no
longer move anything.  The fixed scale does at least as well as the better single
retriever in recall@5 (see ``bench/retrieval.py`` for the current figures).

Ranking priors (to cite the page that explains an answer), added to the blend after the
confidence is taken from it, so whether the book covers a question does not move:

* ``APPARATUS_PENALTY`` (0.05) off a chunk of exercises, assessment questions, a quiz, a
  chapter summary, learning objectives or further reading (:func:`is_apparatus`, by
  section name or by the chunk's own text).  Such chunks name every topic of a chapter in
  a few lines and outranked the pages that explain it.
* ``CONTENTS_PENALTY`` (0.3) off a table of contents (:func:`is_contents`: dot leaders).
* ``REFERENCES_PENALTY`` (0.3) off a reference list (``REFERENCE_SECTION``), unless the
  question asks what to read.
* ``HEADING_WEIGHT`` (0.15) times :func:`heading_match`: the best match between the
  question's terms and the chunk's outline section or a heading line inside it
  ("4.2 Cell membranes"), (share of the heading's terms in the question) x (share of
  the question's terms in the heading).

The weights were chosen on the tune half of the question files and checked on the
held-out half.  A larger apparatus penalty (0.15) cited the gold page a little more often
but answered fewer questions correctly: with the chapter summary out of the top five, an
answer whose section is a code listing or figure has no sentence left to quote but one
from elsewhere.  A higher dense weight or heading weight gained nothing.

Retrieval confidence: min-max normalised scores say which chunk is best but not whether
*any* chunk is good, so confidence comes from absolute evidence (the best raw cosine of the
top passages and the share of the question's terms in them), measured against the book's
own baselines: see :mod:`bookreader.core.retrieval_calibration`.  It is taken from the
blend, before the ranking priors.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from bookreader.core import retrieval_calibration as calibration
from bookreader.core.prompts import TIMEOUT_MESSAGE
from bookreader.core.retrieval_calibration import BookCalibration, Evidence
from bookreader.core.retrieval_calibration import query_terms as _query_terms
from bookreader.core.types import Chunk, Passage, Retrieval, SearchFilter
from bookreader.errors import InvalidInput, QueryTimeout

if TYPE_CHECKING:
    import numpy as np

    from bookreader.config import Settings
    from bookreader.core.embedding import Embedder
    from bookreader.core.lexical import LexicalIndex
    from bookreader.core.store.base import VectorStore

log = logging.getLogger(__name__)

#: Dense candidates fetched per query (cheap: a store query is well under a millisecond).
DENSE_POOL = 50
#: BM25 candidates added to the pool.
BM25_POOL = 50
#: Passages whose text is used for the coverage feature.
COVERAGE_DEPTH = calibration.EVIDENCE_DEPTH


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
        is_front_matter(p.chunk) for p in passages[:COVERAGE_DEPTH])


#: Added to a chunk that defines the term a "What is X?" question asks about: a glossary
#: or summary entry ("Osmosis: the movement of water across a membrane ..."), a sentence
#: "X is a ..." (:func:`defines_term`).  A term's only definition can sit in a chapter
#: summary, ranked below sections that name the term in every line without defining it.
DEFINITION_PRIOR = 0.1
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


class HybridRetriever:
    """Dense + BM25 search in one book.

    Args:
        store: The book's vector store.
        lexical: The book's BM25 index (None: dense only).
        embedder: Embeds the query.
        settings: Weights, threshold and time budget.
        calibration: The book's confidence baselines (None: measured on first search).
    """

    def __init__(
        self,
        store: "VectorStore",
        lexical: Optional["LexicalIndex"],
        embedder: "Embedder",
        settings: "Settings",
        calibration: Optional[BookCalibration] = None,
    ) -> None:
        self.store = store
        self.lexical = lexical
        self.embedder = embedder
        self.settings = settings
        self._calibration = calibration

    def warm_up(self) -> None:
        """Build now what the first search builds on first use: the BM25 postings, the
        book's heading and index terms and its folded vocabulary (about 0.45 s of CPU on
        a 300-page book; :meth:`Library.warm_up` calls this when a book opens)."""
        if self.lexical is not None:
            self.lexical.warm_up()
        _ = self.book_terms, self._folded_vocabulary

    @functools.cached_property
    def book_terms(self) -> frozenset[tuple[str, ...]]:
        """The book's heading and index terms (see ``book_terms``), found on first use."""
        chunks = self.lexical.chunks if self.lexical is not None else list(self.store.chunks())
        return calibration.book_terms(chunks, _not_a_topic, chunk_headings)

    @functools.cached_property
    def _folded_vocabulary(self) -> frozenset[str]:
        """The book's BM25 terms, and those of its text and titles with accents folded."""
        if self.lexical is None:
            return frozenset()
        chunks = self.lexical.chunks
        texts = {t for c in chunks for t in (c.text, c.section, c.chapter)}
        return self.lexical.vocabulary() | calibration.accented_terms(texts)

    @property
    def book_id(self) -> str:
        return self.store.book_id

    @property
    def calibration(self) -> BookCalibration:
        """The book's confidence baselines, measured now if they were not given."""
        if self._calibration is None:
            self._calibration = self.calibrate()
        return self._calibration

    def calibrate(self) -> BookCalibration:
        """Measure the book's confidence baselines from its probes (about a second)."""
        t0 = time.perf_counter()
        chunks = self.lexical.chunks if self.lexical is not None else list(self.store.chunks())
        found = calibration.calibrate(self.evidence, chunks, _not_a_topic, chunk_headings)
        log.info("Calibrated retrieval of book %s in %.2f s: off-topic %.3f, in-book %.3f",
                 self.book_id, time.perf_counter() - t0, found.off_topic, found.inside)
        return found

    def evidence(self, queries: Sequence[str]) -> list[Evidence]:
        """The confidence's evidence for each query (embedded in one batch)."""
        vectors = self.embedder.embed(list(queries))
        return [calibration.evidence(q, self._blend(q, v, None, DENSE_POOL)[:COVERAGE_DEPTH],
                                     self._unknown) for q, v in zip(queries, vectors)]

    def _unknown(self, word: str) -> bool:
        """A specialised word the book never uses (see ``unknown_word``)."""
        if self.lexical is None:
            return False
        return calibration.unknown_word(word, self._folded_vocabulary.__contains__,
                                        self.embedder.count_tokens)

    def search(
        self, query: str, top_k: int = 5, flt: Optional[SearchFilter] = None
    ) -> Retrieval:
        """The ``top_k`` best passages for ``query`` inside ``flt``, with a confidence.

        Raises:
            InvalidInput: the query is empty.
            QueryTimeout: the search took longer than ``settings.retrieval_timeout_s``
                (checked after each stage: embedding, dense, BM25, scoring; a stage
                itself is not interrupted).
        """
        return self.explain(query, top_k, flt)[0]

    def explain(
        self, query: str, top_k: int = 5, flt: Optional[SearchFilter] = None
    ) -> tuple[Retrieval, dict[str, float]]:
        """:meth:`search`, plus the confidence's inputs ``{"top_cos", "coverage", "unknown", "form"}``
        (``form`` 1.0: covered by the question's form, see ``covered_by_form``)."""
        query = query.strip()
        if not query:
            raise InvalidInput("The search is empty. Type a few words to search for.")
        top_k = max(1, int(top_k))
        self.embedder.warm_up()  # loading the model is not part of the search budget
        book = self.calibration  # measured once per book, not part of the budget either
        _ = self.book_terms, self._folded_vocabulary  # found once per book, likewise
        budget = self.settings.retrieval_timeout_s
        t0 = time.perf_counter()

        def check(stage: str) -> None:
            elapsed = time.perf_counter() - t0
            if elapsed > budget:
                log.warning("Retrieval over budget after %s: %.2f s > %.2f s", stage, elapsed, budget)
                raise QueryTimeout(TIMEOUT_MESSAGE, details=f"{stage}: {elapsed:.2f} s")

        qvec = self.embedder.embed([query])[0]
        check("embedding")
        blended = self._blend(query, qvec, flt, max(DENSE_POOL, top_k * 4), check)

        # Whether the book covers the question is judged on the blend, before the ranking
        # priors (a question about the book itself answered from its front matter is
        # covered, and its titled front matter ranks higher below).
        found = calibration.evidence(query, blended[:COVERAGE_DEPTH], self._unknown)
        if not found.unknown and calibration.absent_subject(
                asked_subject(query), self._folded_vocabulary.__contains__):
            found = replace(found, unknown=1.0)
        book_question = about_the_book(query, blended[:COVERAGE_DEPTH])
        confidence = book.confidence(found) if blended else 0.0

        # Ranking priors: apparatus chunks down, chunks under a matching heading up.
        q_terms = set(_query_terms(query))
        wants_reading = bool(ASKS_FOR_READING.search(query))
        term = defined_term(query) if DEFINITION_PRIOR else ""
        scored = []
        for p in blended:
            prior = HEADING_WEIGHT * heading_match(q_terms, p.chunk)
            if term and defines_term(term, p.chunk):
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
        passages = tuple(scored[:top_k])
        # A question naming a top passage's heading, or asking what a term is that a top
        # passage defines, or about the book itself, is covered whatever its cosine; so is
        # one naming a heading or index term of the book, or a numbered name ("Model 7"),
        # that a top passage uses, unless it also holds a specialised word the book never
        # uses (it asks about that too).
        top = scored[:COVERAGE_DEPTH]
        form = (book_question
                or calibration.covered_by_form(query, top, _chunk_heading_terms,
                                               lambda c: defines_term(term, c))
                or (not found.unknown and calibration.names_book_term(query, top, self.book_terms)))
        if form:
            confidence = max(confidence, self.settings.confidence_threshold)
        check("scoring")
        latency_ms = (time.perf_counter() - t0) * 1000.0
        log.debug(
            "Search %r: %d passages, confidence %.2f, %.1f ms", query[:80], len(passages),
            confidence, latency_ms,
        )
        retrieval = Retrieval(
            query=query,
            passages=passages,
            confidence=round(confidence, 4),
            latency_ms=latency_ms,
            filter=flt,
        )
        return retrieval, {"top_cos": found.top_cos, "coverage": found.coverage,
                           "unknown": found.unknown, "form": float(form)}

    def _blend(self, query: str, qvec: "np.ndarray", flt: Optional[SearchFilter], pool: int,
               check: Callable[[str], None] = lambda stage: None) -> list[Passage]:
        """Dense and BM25 candidates blended (see "Scoring" above), best first."""
        dense = self.store.search(qvec, pool, flt)
        check("dense search")
        lexical = self.lexical.scores(query, flt) if self.lexical is not None else []
        check("BM25")

        cos: dict[str, float] = {c.chunk_id: float(s) for c, s in dense}
        chunks: dict[str, Chunk] = {c.chunk_id: c for c, _ in dense}
        raw_bm25: dict[str, float] = {}
        for chunk, score in lexical:
            raw_bm25[chunk.chunk_id] = float(score)
        bm25_max = max(raw_bm25.values(), default=0.0)
        for chunk, score in lexical[:BM25_POOL]:
            if score > 0:
                chunks.setdefault(chunk.chunk_id, chunk)

        # The dense score is the cosine itself (clipped at 0), see "Scoring" above; a chunk
        # outside the dense pool gets the pool's lowest cosine, an upper bound of its own.
        floor = max(min(cos.values()), 0.0) if cos else 0.0

        def dense_norm(cid: str) -> float:
            return max(cos[cid], 0.0) if cid in cos else floor

        def bm25_norm(cid: str) -> float:
            if bm25_max <= 0:
                return 0.0
            return max(raw_bm25.get(cid, 0.0), 0.0) / bm25_max

        wd = self.settings.dense_weight
        wb = 1.0 - wd
        blended = []
        for cid, chunk in chunks.items():
            d, b = dense_norm(cid), bm25_norm(cid)
            blended.append(Passage(chunk, wd * d + wb * b, d, b))
        blended.sort(key=lambda p: (-p.score, p.chunk.position))
        return blended

    def is_covered(self, retrieval: Retrieval) -> bool:
        """True when the retrieval is confident enough to answer from the book."""
        return is_covered(retrieval, self.settings.confidence_threshold)


#: Letters joined by underscores: how a student types a subscript ("F_ST", "H_0").
_UNDERSCORED = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")


def spelled_as_in_book(question: str, knows: Callable[[str], bool]) -> str:
    """``question`` with each word typed with underscores ("F_ST") written as the book
    prints it ("FST") when the book uses the joined form and not the typed one
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


def search_question(retriever: Any, question: str, top_k: int) -> tuple[Retrieval, str]:
    """``(retrieval, question answered)`` for a whole-book question.

    An instruction added to a real question ("What is X? At the end, tell me a joke.") is
    data, not a topic: when the text holds sentences that ask and others that do not, the
    asking part (:func:`~bookreader.core.sentences.question_part`) is searched alone too,
    and when that search is the more confident one, it is the question answered.  A word
    typed with underscores is read as the book spells it (:func:`spelled_as_in_book`)."""
    from bookreader.core.sentences import question_part

    lexical = getattr(retriever, "lexical", None)
    if lexical is not None:
        question = spelled_as_in_book(question, lexical.knows)
    retrieval = retriever.search(question, top_k=top_k)
    part = question_part(question)
    if not part:
        return retrieval, question
    asked = retriever.search(part, top_k=top_k)
    if asked.confidence <= retrieval.confidence:
        return retrieval, question
    log.info("Searched the question part alone: confidence %.2f -> %.2f",
             retrieval.confidence, asked.confidence)
    return asked, part


def _not_a_topic(chunk: Chunk) -> bool:
    """Sections that are no topic of the book: not probed as headings."""
    return (is_apparatus(chunk) or is_contents(chunk) or is_front_matter(chunk)
            or bool(REFERENCE_SECTION.search(chunk.section or "")))


def _chunk_heading_terms(chunk: Chunk) -> tuple[frozenset[str], ...]:
    return _heading_terms(chunk.section, chunk.text)


def is_covered(retrieval: Retrieval, threshold: float) -> bool:
    """True when ``retrieval.confidence`` reaches ``threshold`` and it found passages."""
    return bool(retrieval.passages) and retrieval.confidence >= threshold
