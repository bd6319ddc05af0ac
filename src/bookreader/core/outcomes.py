"""Outcome assembly: every way a question ends, as one :class:`~bookreader.core.types.Answer`.

:class:`OutcomeAssembly` is the part of a run (:mod:`bookreader.core.answering`) that turns
what happened into the Answer the UI and the audit log receive: an ``answer`` with its
checked citations and calibrated confidence, ``quotes`` of the retrieved passages when no
verified answer could be written, a grounded explanation of the selection for requests
about it ("Explain this"), the mode's fixed fallback, a timeout or an error.

Confidence of an ``answer`` is a calibrated estimate of being correct
(:mod:`bookreader.core.confidence`); every other outcome is capped below "medium".
Levels: high > 0.85, medium 0.70-0.85, low < 0.70.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable, Optional, Sequence

from bookreader.core import confidence as calibration
from bookreader.core import prompts, quotes
from bookreader.core.citations import CitationSource, verify_answer
from bookreader.core.llm.specs import BackendSpec
from bookreader.core.types import (
    Answer,
    ConfidenceLevel,
    Message,
    Mode,
    Outcome,
    Passage,
    Retrieval,
)
from bookreader.errors import BookReaderError, QueryTimeout

log = logging.getLogger(__name__)

#: Generation confidence when the model states none and gives no token probabilities.
DEFAULT_GENERATION_CONFIDENCE = 0.80
RETRIEVAL_WEIGHT = 0.6


# --- confidence ------------------------------------------------------------------------
def confidence_level(confidence: float) -> ConfidenceLevel:
    """"high" above 0.85, "medium" from 0.70 to 0.85, "low" below 0.70."""
    if confidence > 0.85:
        return ConfidenceLevel.HIGH
    if confidence >= 0.70:
        return ConfidenceLevel.MEDIUM
    return ConfidenceLevel.LOW


def combine_confidence(retrieval: float, generation: float) -> float:
    """0.6 x retrieval + 0.4 x generation, clamped to [0, 1]."""
    value = RETRIEVAL_WEIGHT * retrieval + (1.0 - RETRIEVAL_WEIGHT) * generation
    return round(max(0.0, min(1.0, value)), 4)


def generation_confidence(stated: Optional[float], logprobs: Sequence[float]) -> float:
    """The model's stated confidence, else its mean token probability, else 0.80."""
    return calibration.generation_confidence(stated, logprobs)


class OutcomeAssembly:
    """Builds the Answer of one run from its state (mixed into the answering run)."""

    owner: Any  # the Answerer: settings, validator (and its embedder)
    settings: Any
    question: str
    asked: str  # the question as asked, recorded in the Answer
    mode: Mode
    backend_name: str
    spec: BackendSpec
    t0: float
    book_id: str
    book_title: str
    selection: str
    warning: str
    page_range: Optional[tuple[int, int]]
    pages: Any
    stage_ms: dict[str, float]
    retrieval: Optional[Retrieval]
    messages: tuple[Message, ...]
    model_name: str
    chapter: str
    on_start: Optional[Callable[[Answer], None]]

    def _ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000.0

    def _answer(self, text: str, *, fallback: bool, confidence: float, **kw: Any) -> Answer:
        in_sel = kw.pop("in_selected_text", None)
        outcome = kw.pop("outcome", None)
        if outcome is None:
            outcome = Outcome.ANSWER if not fallback else (
                Outcome.ERROR if kw.get("error") else
                Outcome.NOT_COVERED if self.mode is Mode.BOOK else Outcome.NOT_IN_SELECTION
            )
        if outcome is not Outcome.ANSWER:
            fallback = True
            confidence = calibration.cap_non_answer(confidence)
        if self.mode is not Mode.BOOK and in_sel is None:
            in_sel = not fallback
        return Answer(
            query_id=str(uuid.uuid4()),
            answer_id=str(uuid.uuid4()),
            question=self.asked,
            mode=self.mode,
            text=text,
            fallback=fallback,
            in_selected_text=in_sel if self.mode is not Mode.BOOK else None,
            confidence=confidence,
            confidence_level=confidence_level(confidence),
            truncation_warning=self.warning,
            backend=self.backend_name,
            model=self.model_name,
            latency_ms=self._ms(),
            retrieval=self.retrieval,
            prompt=self.messages,
            book_id=self.book_id,
            book_title=self.book_title,
            selection=self.selection,
            stage_ms=dict(self.stage_ms),
            chapter=self.chapter,
            selection_page=self.page_range[0] if self.page_range and self.mode is not Mode.BOOK else None,
            outcome=outcome,
            **kw,
        )

    def _failed(self, exc: BookReaderError) -> Answer:
        log.warning("Answering failed: %s", exc.user_message)
        outcome = Outcome.TIMEOUT if isinstance(exc, QueryTimeout) else Outcome.ERROR
        return self._answer(
            exc.user_message, fallback=True, confidence=0.0, error=exc.user_message,
            outcome=outcome,
        )

    def _sources(self, passages: Sequence[Passage]) -> list[CitationSource]:
        sources: list[CitationSource] = []
        if self.mode is not Mode.BOOK:
            sources.append(CitationSource.for_selection(self.selection, self.page_range, self.pages))
        sources.extend(CitationSource.from_chunk(p.chunk) for p in passages)
        return sources


    def _not_shown(self, passages: Sequence[Passage], retrieval_conf: float, common: dict,
                   reason: str, validation: Any, confidence: float, t: float) -> Answer:
        """A written answer the checks would not show: quotes, else the mode's fallback."""
        self.stage_ms["validation"] = (time.perf_counter() - t) * 1000.0
        rescued = self._no_answer(passages, retrieval_conf, common, reason=reason,
                                  validation=validation)
        if rescued is not None:
            return rescued
        return self._answer(
            prompts.fallback_text(self.mode), fallback=True, confidence=confidence,
            validation=validation, replaced_by_validator=True, **common,
        )

    # --- better ways to fail (core/quotes.py) ---------------------------------------------
    def _mark_tautologies(self, text: str, validation: Any) -> Any:
        """``validation`` with the sentences that only restate the question unsupported."""
        return quotes.mark_tautologies(
            validation, self.owner.validator.answer_sentences(text), self.question,
            self.selection)

    def _no_answer(
        self,
        passages: Sequence[Passage],
        retrieval_conf: float,
        common: dict,
        *,
        reason: str,
        validation: Any = None,
        lead: str = "",
    ) -> Optional[Answer]:
        """What to show instead of a dead end, or None for the mode's fixed fallback.

        A request about the selection gets the selection's own sentences; a whole-book
        question whose retrieval was confident gets quotes; a highlight question gets
        quotes only when a sentence clearly addresses it.  Selected-text look-ups keep
        "The selected text does not contain the answer."  ``lead`` replaces the quotes'
        opening "No verified answer could be written" (a timeout says so).
        """
        embedder = self.owner.embedder  # as the extractive backend ranks (see answer_quotes)
        if self.mode is not Mode.BOOK and self.selection.strip():
            kind = quotes.task_kind(self.question)
            if kind is not None:
                sel = CitationSource.for_selection(self.selection, self.page_range, self.pages)
                text = quotes.explain_selection(kind, self.question, sel, embedder)
                if text:
                    text, citations = verify_answer(text, [sel], self.pages, add_missing=False)
                    signals = calibration.Signals(
                        retrieval=1.0, similarity=1.0, overlap=1.0, relevance=0.5,
                        generation=0.8, selected=float(self.mode is Mode.SELECTED))
                    return self._answer(
                        text, fallback=False, confidence=calibration.calibrated(signals),
                        citations=citations, in_selected_text=True,
                        confidence_signals=signals.as_dict(), outcome=Outcome.ANSWER,
                        **common,
                    )
        if self.mode is Mode.SELECTED or not passages:
            return None
        if self.mode is Mode.BOOK and self.retrieval is not None and self.retrieval.passages:
            # Whole-book quotes come from every retrieved passage, as the book's sentences
            # beside a verified answer do, not only the sentences the model read.
            passages = self.retrieval.passages
        sources = self._sources(passages)
        min_score = 0.0 if self.mode is Mode.BOOK else 0.45
        text = quotes.build_quotes(self.question, sources, embedder, min_score=min_score,
                                   selection_mode=self.mode is Mode.HIGHLIGHT,
                                   lead_extractive=self.mode is Mode.BOOK
                                   and getattr(self.spec, "answer_quote", False),
                                   lines_if_none=self.mode is Mode.BOOK, lead=lead)
        if not text:
            return None
        text, citations = verify_answer(text, sources, self.pages, add_missing=False)
        if not citations:
            return None
        log.info("No verified answer (%s): %d quote(s) instead", reason, len(citations))
        return self._answer(
            text, fallback=True, confidence=retrieval_conf, citations=citations,
            validation=validation, replaced_by_validator=reason == "rejected",
            outcome=Outcome.QUOTES, in_selected_text=False if self.mode is not Mode.BOOK else None,
            **common,
        )

    def _signals(self, text: str, validation: Any, retrieval_conf: float,
                 gen_conf: float) -> calibration.Signals:
        """The inputs of the calibrated confidence for a verified answer."""
        scores = ()
        if self.mode is Mode.BOOK and self.retrieval is not None:
            scores = [p.score for p in self.retrieval.passages[:2]]
        return calibration.answer_signals(
            self.question, text, validation, retrieval=retrieval_conf, passage_scores=scores,
            generation=gen_conf, extractive=self.spec.kind == "extractive",
            selected=self.mode is Mode.SELECTED, embedder=self.owner.validator.embedder,
        )


def declines(text: str) -> bool:
    """True when the model said it cannot answer (either fixed sentence, anywhere)."""
    flat = " ".join(text.split()).lower()
    return any(s.lower().rstrip(".") in flat for s in (prompts.NOT_COVERED, prompts.NOT_IN_SELECTION))
