"""The choose stage: the book's own sentences as the answer, when they are the better bet.

A small local model writes a verified answer to about a third of ordinary whole-book
questions; for the rest its answer is off target, cannot be verified (quotes) or does not
start in time.  The extractive backend, on the same retrieved passages, picks the book
sentences that answer the question's type (a definition for "what is", a procedure for
"how").  Both answers carry a calibrated confidence (an estimate of being correct,
fitted per kind of backend: :mod:`bookreader.core.confidence`), so the run shows the one
more likely to be right:

* the model's verified answer stays unless the book's sentences are more likely right by
  more than :data:`MARGIN`;
* when the model gave no verified answer (quotes, or no answer in time), the book's
  sentences are the answer when their confidence reaches :data:`MIN_CONFIDENCE`; below
  that the quotes card stays (it quotes the same sentences, said to be unverified).

Nothing is trusted more for it: the extractive answer is built and checked by the same
stages as any answer, and its card says where the text came from (the Answer's
``model``: "book sentences ... in place of <model>", also in the audit log, which keeps
the model's raw output).  Whole-book mode only (the tiers that set ``book_sentences``).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from bookreader.core import confidence as calibration
from bookreader.core.types import Answer, Mode, Outcome

from bookreader.core.answer.render import confidence_level
from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)

#: The book's sentences replace a verified model answer only when their calibrated
#: confidence is higher by more than this (a tie keeps the model's own words).  Chosen on
#: a tune half of the evaluation books (margins -0.2 to 0.2 tried).
MARGIN = 0.0
#: Least calibrated confidence for the book's sentences to be the answer when the model
#: wrote none that could be verified (below it, the quotes card): 0.4 on the scale before
#: the recalibration (``confidence.RECALIBRATION``), restated on today's scale.
MIN_CONFIDENCE = calibration.recalibrated(0.4)
#: The backend whose answer competes.
RIVAL = "extractive"


def applies(run: Run, answer: Answer) -> bool:
    """Whole-book answers of a tier that compares, when they could still be improved."""
    return (run.mode is Mode.BOOK and bool(run.spec.book_sentences)
            and answer.outcome in (Outcome.ANSWER, Outcome.QUOTES, Outcome.TIMEOUT))


def choose(run: Run, answer: Answer, book: Answer, ms: float) -> Answer:
    """``answer``, or ``book`` (the :data:`RIVAL`'s answer, which took ``ms``) when the
    book's sentences are the better bet (module doc)."""
    if book.outcome is not Outcome.ANSWER:
        return answer
    # judged as what it would be: the book's sentences in place of the model's answer
    signals = {**book.confidence_signals, "in_place": 1.0}
    book = replace(book, confidence=calibration.calibrated(signals), confidence_signals=signals)
    who = answer.model or answer.backend
    if answer.outcome is Outcome.ANSWER:
        if book.confidence <= answer.confidence + MARGIN:
            return answer
        reason = "its answer was less likely right"
    elif book.confidence < MIN_CONFIDENCE:
        return answer
    elif answer.outcome is Outcome.TIMEOUT or answer.text.startswith("No answer in time"):
        reason = "no answer in time"
    else:
        reason = "its answer could not be verified"
    log.info("Book sentences (confidence %.2f) in place of %s (%s, %.2f)", book.confidence,
             who, answer.outcome.value if answer.outcome else "", answer.confidence)
    return replace(
        book,
        query_id=answer.query_id, answer_id=answer.answer_id,
        backend=answer.backend,
        model=f"book sentences (extractive), in place of {who}: {reason}",
        raw_output=answer.raw_output, prompt=answer.prompt,
        first_token_ms=answer.first_token_ms, generation_ms=answer.generation_ms,
        confidence_level=confidence_level(book.confidence), latency_ms=run.elapsed_ms(),
        stage_ms={**answer.stage_ms, "book_sentences": round(ms, 1)},
        replaced_by_validator=answer.outcome is not Outcome.ANSWER,
    )
