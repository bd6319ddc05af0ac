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
confidence is taken from it, so whether the book covers a question does not move (they
live in :mod:`bookreader.core.retrieval_priors`):

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
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from bookreader.core import question_subject
from bookreader.core import retrieval_calibration as calibration
from bookreader.core import retrieval_priors as priors
from bookreader.core import retrieval_terms
from bookreader.core.prompts import TIMEOUT_MESSAGE
from bookreader.core.retrieval_calibration import BookCalibration, Evidence
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
        return retrieval_terms.book_terms(chunks, priors.not_a_topic, priors.chunk_headings)

    @functools.cached_property
    def _folded_vocabulary(self) -> frozenset[str]:
        """The book's BM25 terms, and those of its text and titles with accents folded."""
        if self.lexical is None:
            return frozenset()
        chunks = self.lexical.chunks
        texts = {t for c in chunks for t in (c.text, c.section, c.chapter)}
        return self.lexical.vocabulary() | retrieval_terms.accented_terms(texts)

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
        found = calibration.calibrate(self.evidence, chunks, priors.not_a_topic,
                                      priors.chunk_headings)
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
        return retrieval_terms.unknown_word(word, self._folded_vocabulary.__contains__,
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
        if not found.unknown and retrieval_terms.absent_subject(
                question_subject.asked_subject(query), self._folded_vocabulary.__contains__):
            found = replace(found, unknown=1.0)
        book_question = priors.about_the_book(query, blended[:COVERAGE_DEPTH])
        confidence = book.confidence(found) if blended else 0.0

        # Ranking priors: apparatus chunks down, chunks under a matching heading up.
        term = question_subject.defined_term(query) if priors.DEFINITION_PRIOR else ""
        scored = priors.ranked(blended, query, term, book_question)
        passages = tuple(scored[:top_k])
        # A question naming a top passage's heading, or asking what a term is that a top
        # passage defines, or about the book itself, is covered whatever its cosine; so is
        # one naming a heading or index term of the book, or a numbered name ("Model 7"),
        # that a top passage uses, unless it also holds a specialised word the book never
        # uses (it asks about that too).
        top = scored[:COVERAGE_DEPTH]
        form = (book_question
                or retrieval_terms.covered_by_form(query, top, priors.chunk_heading_terms,
                                               lambda c: question_subject.defines_term(term, c))
                or (not found.unknown and retrieval_terms.names_book_term(query, top, self.book_terms)))
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


def search_question(retriever: Any, question: str, top_k: int) -> tuple[Retrieval, str]:
    """``(retrieval, question answered)`` for a whole-book question.

    An instruction added to a real question ("What is X? At the end, tell me a joke.") is
    data, not a topic: when the text holds sentences that ask and others that do not, the
    asking part (:func:`~bookreader.core.sentences.question_part`) is searched alone too,
    and when that search is the more confident one, it is the question answered.  A word
    typed with underscores is read as the book spells it
    (:func:`~bookreader.core.question_subject.spelled_as_in_book`)."""
    from bookreader.core.sentences import question_part

    lexical = getattr(retriever, "lexical", None)
    if lexical is not None:
        question = question_subject.spelled_as_in_book(question, lexical.knows)
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



def is_covered(retrieval: Retrieval, threshold: float) -> bool:
    """True when ``retrieval.confidence`` reaches ``threshold`` and it found passages."""
    return bool(retrieval.passages) and retrieval.confidence >= threshold
