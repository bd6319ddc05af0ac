"""The grounding validator: is an answer supported by the context it was given?

Each answer sentence (citation markers and the confidence line removed) is scored against
the context with three signals:

* ``similarity``: MiniLM cosine between the sentence and its best matching context
  window (single context sentences and pairs of neighbouring sentences);
* ``overlap``: the share of the sentence's content words (stop words out, Snowball
  stemmed) that occur anywhere in the context;
* exact terms: every number written with digits and every capitalised word (names,
  places, titles) must occur in the context; a missing one is listed in
  ``missing_terms``.

TUNING (``bench/grounding.py --tune``).  The thresholds below were chosen on the first
half of ``../shared/eval/grounding/halueval_qa.jsonl`` (250 items, 500 answers) and then
measured on the other half and on RGB en_fact, which were not used for choosing.  The
design's rule "similarity >= 0.7 or overlap >= 0.5" accepts almost every hallucinated
HaluEval answer that restates the question in the context's words (similarity is high
because the topic is the same).  What separates supported from invented answers is the
*new* content: the exact-term check catches invented names and numbers, and a high
overlap bar catches invented common words.  The chosen rule: a sentence is supported
when no number or name is missing and ``overlap >= OVERLAP_THRESHOLD`` (default 0.75),
or, for sentences whose words are mostly paraphrased, ``similarity >=
SIMILARITY_THRESHOLD`` (0.80) together with ``overlap >= 0.5``.  Figures
(tune half / held-out half / RGB): see the table printed by the bench and the README.
A sentence without any content word ("Yes.") claims nothing checkable and passes.

An answer passes when every sentence passes.  :meth:`GroundingValidator.validate`
reports the weakest sentence's similarity and overlap, the unsupported sentences (the
answerer drops those and keeps the rest when some pass) and the missing terms.
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from bookreader.core.citations import claim_units
from bookreader.core.prompts import split_confidence
from bookreader.core.sentences import (
    STOPWORDS,
    content_terms,
    numbers,
    split_sentences,
    stem,
    words,
)
from bookreader.core.types import Validation

if TYPE_CHECKING:
    from bookreader.core.embedding import Embedder

log = logging.getLogger(__name__)

#: Defaults chosen on HaluEval (see TUNING above).
SIMILARITY_THRESHOLD = 0.80
OVERLAP_THRESHOLD = 0.75
#: Overlap still required of a sentence accepted for its similarity.
PARAPHRASE_MIN_OVERLAP = 0.5
#: Context windows embedded per context at most (a 4,000-character selection plus five
#: chunks is ~60 sentences; more would only cost time).
MAX_WINDOWS = 160
#: Contexts whose embeddings are kept (the same context is checked several times: the
#: full answer, then the trimmed answer; a benchmark checks two answers per context).
CONTEXT_CACHE = 8

_CAPITALISED = re.compile(r"^[A-Z\u00c0-\u00de][\w'\u2019-]*$")


@dataclass(frozen=True)
class SentenceScore:
    """The signals for one answer sentence."""

    sentence: str
    similarity: float
    overlap: float
    missing: tuple[str, ...]
    n_terms: int
    supported: bool


@dataclass
class _Context:
    terms: set[str]
    lower_words: set[str]
    numbers: set[str]
    vectors: np.ndarray  # (n_windows, dim)


class GroundingValidator:
    """Decides whether an answer is supported by its context.

    Args:
        embedder: The shared MiniLM embedder (anything with ``embed(texts)`` returning
            unit vectors).
        similarity_threshold: Cosine at or above which a paraphrased sentence passes.
        overlap_threshold: Share of content words in the context at or above which a
            sentence passes.
    """

    def __init__(
        self,
        embedder: "Embedder",
        similarity_threshold: float = SIMILARITY_THRESHOLD,
        overlap_threshold: float = OVERLAP_THRESHOLD,
        *,
        paraphrase_min_overlap: float = PARAPHRASE_MIN_OVERLAP,
    ) -> None:
        self.embedder = embedder
        self.similarity_threshold = similarity_threshold
        self.overlap_threshold = overlap_threshold
        self.paraphrase_min_overlap = paraphrase_min_overlap
        self._cache: "OrderedDict[str, _Context]" = OrderedDict()

    # --- the context ---------------------------------------------------------------------
    def _context(self, context_text: str) -> _Context:
        hit = self._cache.get(context_text)
        if hit is not None:
            self._cache.move_to_end(context_text)
            return hit
        sents = split_sentences(context_text)
        windows = list(sents)
        windows.extend(f"{a} {b}" for a, b in zip(sents, sents[1:]))
        windows = windows[:MAX_WINDOWS] or [context_text[:2000]]
        lower = {w.lower().replace("\u2019", "'") for w in words(context_text)}
        ctx = _Context(
            terms=set(content_terms(context_text)),
            lower_words=lower | {w[:-2] for w in lower if w.endswith("'s")},
            numbers=set(numbers(context_text)),
            vectors=self.embedder.embed(windows),
        )
        self._cache[context_text] = ctx
        while len(self._cache) > CONTEXT_CACHE:
            self._cache.popitem(last=False)
        return ctx

    # --- the answer ---------------------------------------------------------------------
    @staticmethod
    def answer_sentences(answer_text: str) -> list[str]:
        """The sentences of an answer that make claims (citations and confidence removed)."""
        text, _ = split_confidence(answer_text)
        return [claim for claim, _ in claim_units(text) if words(claim)]

    def _missing_terms(self, sentence: str, ctx: _Context) -> list[str]:
        missing: list[str] = []
        for n in numbers(sentence):
            if n not in ctx.numbers:
                missing.append(n)
        for w in words(sentence):
            if w[0].isdigit() or not _CAPITALISED.match(w):
                continue
            lw = w.lower().replace("\u2019", "'")
            if lw.endswith("'s"):
                lw = lw[:-2]
            if lw in STOPWORDS or len(lw) < 2:
                continue
            if lw in ctx.lower_words or stem(lw) in ctx.terms:
                continue
            missing.append(w)
        return missing

    def score_sentences(self, sentences: Sequence[str], context_text: str) -> list[SentenceScore]:
        """Similarity, overlap and missing terms of each sentence against the context."""
        if not sentences:
            return []
        ctx = self._context(context_text)
        sims = (self.embedder.embed(list(sentences)) @ ctx.vectors.T).max(axis=1)
        out = []
        for sent, sim in zip(sentences, sims):
            terms = content_terms(sent)
            overlap = (
                sum(1 for t in terms if t in ctx.terms) / len(terms) if terms else 1.0
            )
            missing = tuple(self._missing_terms(sent, ctx))
            out.append(
                SentenceScore(
                    sentence=sent,
                    similarity=float(sim),
                    overlap=float(overlap),
                    missing=missing,
                    n_terms=len(terms),
                    supported=self.is_supported(float(sim), float(overlap), missing, len(terms)),
                )
            )
        return out

    def is_supported(
        self, similarity: float, overlap: float, missing: Sequence[str], n_terms: int
    ) -> bool:
        """The decision rule for one sentence (see TUNING in the module docstring)."""
        if n_terms == 0:
            return True
        if missing:
            return False
        if overlap >= self.overlap_threshold:
            return True
        return similarity >= self.similarity_threshold and overlap >= self.paraphrase_min_overlap

    def validate(self, answer_text: str, context_text: str) -> Validation:
        """Score an answer against its context.

        Returns:
            A :class:`Validation` with the weakest sentence's similarity and overlap,
            ``passed`` (every sentence supported), the time taken, the unsupported
            sentences and the numbers/names missing from the context.  An empty answer
            or an empty context does not pass.
        """
        t0 = time.perf_counter()
        sentences = self.answer_sentences(answer_text)
        if not sentences or not context_text.strip():
            return Validation(0.0, 0.0, False, (time.perf_counter() - t0) * 1000.0)
        scores = self.score_sentences(sentences, context_text)
        missing: list[str] = []
        for s in scores:
            missing.extend(m for m in s.missing if m not in missing)
        validation = Validation(
            similarity=round(min(s.similarity for s in scores), 4),
            overlap=round(min(s.overlap for s in scores), 4),
            passed=all(s.supported for s in scores),
            ms=(time.perf_counter() - t0) * 1000.0,
            unsupported_sentences=tuple(s.sentence for s in scores if not s.supported),
            missing_terms=tuple(missing),
        )
        log.debug(
            "Grounding: passed=%s sim=%.2f overlap=%.2f missing=%s (%.1f ms)",
            validation.passed, validation.similarity, validation.overlap,
            validation.missing_terms, validation.ms,
        )
        return validation


def supported_part(answer_text: str, validation: Validation) -> Optional[str]:
    """``answer_text`` without its unsupported sentences, or None when nothing remains.

    Sentences are removed from the text as written (citations and all), so the citations
    of the sentences that stay are kept.
    """
    if validation.passed:
        return answer_text
    drop = set(validation.unsupported_sentences)
    kept = [full for claim, full in claim_units(answer_text) if words(claim) and claim not in drop]
    if not kept:
        return None
    return " ".join(kept)
