"""The book's own sentences as the answer, when they are the better bet.

A small local model (the default ``small`` tier, Qwen2.5-Coder-0.5B on two cores) writes
a verified answer to about a third of ordinary whole-book questions; for the rest its
answer is off target, cannot be verified (quotes) or does not start in time.  The
extractive backend, on the same retrieved passages, picks the book sentences that answer
the question's type (a definition for "what is", a procedure for "how") and is right
more often on exactly those questions.  Both answers carry a calibrated confidence (an
estimate of being correct, fitted per kind of backend: :mod:`bookreader.core.confidence`),
so the run shows the one more likely to be right:

* the model's verified answer stays unless the book's sentences are more likely right by
  more than :data:`MARGIN`;
* when the model gave no verified answer (quotes, or no answer in time), the book's
  sentences are the answer when their confidence reaches :data:`MIN_CONFIDENCE`; below
  that the quotes card stays (it quotes the same sentences, said to be unverified).

Nothing is trusted more for it: the extractive answer is built and checked by the same
path as any answer (its sentences are the book's own, each with a citation verified on
the page), and its card says where the text came from (the Answer's ``model``: "book
sentences ... in place of <model>", also in the audit log, which keeps the model's raw
output).  Whole-book mode only: the selected-text and highlight paths are unchanged.

Measured (``bench/answer_quality.py --backend small``, three books, thresholds chosen on
the tune half): see the module's figures in ``docs/``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any, Sequence

from bookreader.core import confidence as calibration
from bookreader.core.outcomes import confidence_level
from bookreader.core.types import Answer, CancelFn, Mode, Outcome, Passage

log = logging.getLogger(__name__)

#: The book's sentences replace a verified model answer only when their calibrated
#: confidence is higher by more than this (a tie keeps the model's own words).  Chosen on
#: the tune half of the three books (margins -0.2 to 0.2 tried): 0 kept the most correct
#: answers; a negative margin gained on a tune half what it lost on the held-out half.
MARGIN = 0.0
#: Least calibrated confidence for the book's sentences to be the answer when the model
#: wrote none that could be verified (below it, the quotes card).  On the tune half, the
#: 12 such answers below 0.4 held 1 correct one (0 to 0.5 tried).  That 0.4 was on the
#: scale before the recalibration (``confidence.RECALIBRATION``, +0.48 logit):
#: restated on today's scale (0.5186), so the same answers are chosen.
MIN_CONFIDENCE = calibration.recalibrated(0.4)
#: The backend whose answer competes.
RIVAL = "extractive"


def applies(run: Any, answer: Answer) -> bool:
    """Whole-book answers of a tier that compares, when they could still be improved."""
    return (run.mode is Mode.BOOK and run.spec.book_sentences
            and answer.outcome in (Outcome.ANSWER, Outcome.QUOTES, Outcome.TIMEOUT))


def rival_answer(run: Any, passages: Sequence[Passage], retrieval_conf: float,
                 cancel: CancelFn) -> Answer:
    """The extractive backend's answer to the run's question on the same passages."""
    sub = type(run)(run.owner, run.question, run.mode, RIVAL, run.t0, run.book_id,
                    run.book_title, run.selection, run.warning)
    sub.page_range, sub.pages = run.page_range, run.pages
    sub.asked = run.asked
    sub.retrieval, sub.chapter = run.retrieval, run.chapter
    return sub._generate(list(passages), retrieval_conf, None, cancel)


def choose(run: Any, answer: Answer, passages: Sequence[Passage], retrieval_conf: float,
           cancel: CancelFn) -> Answer:
    """``answer``, or the book's sentences when they are the better bet (module doc)."""
    if not applies(run, answer) or not passages:
        return answer
    t = time.perf_counter()
    book = rival_answer(run, passages, retrieval_conf, cancel)
    ms = (time.perf_counter() - t) * 1000.0
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
        confidence_level=confidence_level(book.confidence), latency_ms=run._ms(),
        stage_ms={**answer.stage_ms, "book_sentences": round(ms, 1)},
        replaced_by_validator=answer.outcome is not Outcome.ANSWER,
    )
