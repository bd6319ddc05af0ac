"""The render stage: every way a question ends, as one :class:`~bookreader.core.types.Answer`.

An ``answer`` carries its checked citations and calibrated confidence; every other
outcome (quotes, the mode's fallback, a timeout, an error) is capped below "medium".
Confidence levels: high > 0.85, medium 0.70-0.85, low < 0.70
(:mod:`bookreader.core.confidence`).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Sequence

from bookreader.core import confidence as calibration
from bookreader.core.types import Answer, Citation, ConfidenceLevel, Mode, Outcome, Validation
from bookreader.errors import BookReaderError, QueryTimeout

from bookreader.core.answer.draft import Draft
from bookreader.core.answer.modes import strategy
from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)

# --- confidence ------------------------------------------------------------------------
def confidence_level(confidence: float) -> ConfidenceLevel:
    """"high" above 0.85, "medium" from 0.70 to 0.85, "low" below 0.70."""
    if confidence > 0.85:
        return ConfidenceLevel.HIGH
    if confidence >= 0.70:
        return ConfidenceLevel.MEDIUM
    return ConfidenceLevel.LOW


def signals(run: Run, text: str, validation: Any, retrieval_conf: float,
            gen_conf: float) -> calibration.Signals:
    """The inputs of the calibrated confidence for a verified answer."""
    return calibration.answer_signals(
        run.question, text, validation, retrieval=retrieval_conf,
        passage_scores=strategy(run).passage_scores(run), generation=gen_conf,
        extractive=run.spec.kind == "extractive", selected=run.mode is Mode.SELECTED,
        embedder=run.validator.embedder,
    )


# --- the Answer ------------------------------------------------------------------------
def answer(run: Run, text: str, *, fallback: bool, confidence: float, **kw: Any) -> Answer:
    """The Answer of ``run`` showing ``text``; ``kw`` are further Answer fields.

    An outcome other than ``answer`` is a fallback with its confidence capped; without an
    outcome a fallback is an error (``error`` given) or the mode's fixed sentence."""
    in_sel = kw.pop("in_selected_text", None)
    outcome = kw.pop("outcome", None)
    mode = strategy(run)
    if outcome is None:
        outcome = Outcome.ANSWER if not fallback else (
            Outcome.ERROR if kw.get("error") else mode.fallback_outcome())
    if outcome is not Outcome.ANSWER:
        fallback = True
        confidence = calibration.cap_non_answer(confidence)
    whole_book = run.mode is Mode.BOOK
    if not whole_book and in_sel is None:
        in_sel = not fallback
    return Answer(
        query_id=str(uuid.uuid4()),
        answer_id=str(uuid.uuid4()),
        question=run.asked,
        mode=run.mode,
        text=text,
        fallback=fallback,
        in_selected_text=None if whole_book else in_sel,
        confidence=confidence,
        confidence_level=confidence_level(confidence),
        truncation_warning=run.warning,
        backend=run.backend_name,
        model=run.model_name,
        latency_ms=run.elapsed_ms(),
        retrieval=run.retrieval,
        prompt=run.messages,
        book_id=run.book_id,
        book_title=run.book_title,
        selection=run.selection,
        stage_ms=dict(run.stage_ms),
        chapter=run.chapter,
        selection_page=run.page_range[0] if run.page_range and not whole_book else None,
        outcome=outcome,
        **kw,
    )


def failed(run: Run, exc: BookReaderError) -> Answer:
    """The Answer of a run that failed (a timeout, a model that would not load ...)."""
    log.warning("Answering failed: %s", exc.user_message)
    outcome = Outcome.TIMEOUT if isinstance(exc, QueryTimeout) else Outcome.ERROR
    return answer(run, exc.user_message, fallback=True, confidence=0.0,
                  error=exc.user_message, outcome=outcome)


def verified(run: Run, draft: Draft, validation: Validation, judged: str, text: str,
             citations: Sequence[Citation], retrieval_conf: float, started: float) -> Answer:
    """The Answer of a checked, cited answer showing ``text``.

    Its confidence is calibrated on ``judged``, the answer as the model wrote it once
    checked (before the book's sentences were put beside it: the calibration is fitted on
    that text)."""
    mode = strategy(run)
    in_sel = mode.in_selection(run, text)
    given = signals(run, judged, validation, retrieval_conf, draft.generation)
    run.timed("validation", started)
    return answer(run, text, fallback=False, confidence=calibration.calibrated(given),
                  citations=tuple(citations), validation=validation,
                  confidence_signals=given.as_dict(), in_selected_text=in_sel,
                  outcome=Outcome.ANSWER, **draft.generated.record())
