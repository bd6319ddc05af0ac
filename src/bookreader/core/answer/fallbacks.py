"""Better ways to fail: what is shown when no checked answer of the model can be.

* :func:`from_selection`: on selected text, the selection's sentence that clearly answers
  (:mod:`bookreader.core.selection_answer`).
* :func:`no_answer`: a grounded explanation of the selection for requests about it
  ("Explain this"), else quotes of the passages (:mod:`bookreader.core.quotes`), else
  None for the mode's fixed sentence.
* :func:`not_shown` and :func:`declined`: those, else the mode's fixed sentence.
"""

from __future__ import annotations

import logging
from typing import Any, Optional, Sequence

from bookreader.core import confidence as calibration
from bookreader.core import prompts, quotes
from bookreader.core.citations import CitationSource, verify_answer
from bookreader.core.selection_answer import selection_answer
from bookreader.core.types import Answer, Mode, Outcome, Passage

from bookreader.core.answer.draft import Draft, Generated
from bookreader.core.answer.modes import strategy
from bookreader.core.answer.render import answer, signals
from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)


def no_answer(run: Run, passages: Sequence[Passage], retrieval_conf: float,
              generated: Optional[Generated], *, reason: str, validation: Any = None,
              lead: str = "") -> Optional[Answer]:
    """What to show instead of a dead end, or None for the mode's fixed fallback.

    A request about the selection gets the selection's own sentences; a whole-book
    question whose retrieval was confident gets quotes; a highlight question gets quotes
    only when a sentence clearly addresses it.  Selected-text look-ups keep "The selected
    text does not contain the answer."  ``lead`` replaces the quotes' opening "No
    verified answer could be written" (a timeout says so).
    """
    mode = strategy(run)
    common = generated.record() if generated is not None else {}
    embedder = run.parts.embedder  # as the extractive backend ranks (see answer_quotes)
    if mode.has_selection and run.selection.strip():
        kind = quotes.task_kind(run.question)
        if kind is not None:
            sel = CitationSource.for_selection(run.selection, run.page_range, run.pages)
            text = quotes.explain_selection(kind, run.question, sel, embedder)
            if text:
                text, citations = verify_answer(text, [sel], run.pages, add_missing=False)
                found = calibration.Signals(
                    retrieval=1.0, similarity=1.0, overlap=1.0, relevance=0.5,
                    generation=0.8, selected=float(run.mode is Mode.SELECTED))
                return answer(run, text, fallback=False,
                              confidence=calibration.calibrated(found), citations=citations,
                              in_selected_text=True, confidence_signals=found.as_dict(),
                              outcome=Outcome.ANSWER, **common)
    if not mode.quotes or not passages:
        return None
    sources = mode.sources(run, mode.quoted_passages(run, passages))
    text = quotes.build_quotes(run.question, sources, embedder,
                               min_score=mode.quote_min_score,
                               selection_mode=mode.quotes_near_selection,
                               lead_extractive=mode.book_quote(run),
                               lines_if_none=mode.quote_lines_if_none, lead=lead)
    if not text:
        return None
    text, citations = verify_answer(text, sources, run.pages, add_missing=False)
    if not citations:
        return None
    log.info("No verified answer (%s): %d quote(s) instead", reason, len(citations))
    return answer(run, text, fallback=True, confidence=retrieval_conf, citations=citations,
                  validation=validation, replaced_by_validator=reason == "rejected",
                  outcome=Outcome.QUOTES, in_selected_text=mode.quotes_in_selection(),
                  **common)


def not_shown(run: Run, passages: Sequence[Passage], retrieval_conf: float, draft: Draft,
              reason: str, validation: Any, started: float) -> Answer:
    """A written answer the checks would not show: quotes, else the mode's fallback."""
    run.timed("validation", started)
    rescued = no_answer(run, passages, retrieval_conf, draft.generated, reason=reason,
                        validation=validation)
    if rescued is not None:
        return rescued
    return answer(run, prompts.fallback_text(run.mode), fallback=True,
                  confidence=draft.confidence, validation=validation,
                  replaced_by_validator=True, **draft.generated.record())


def declined(run: Run, passages: Sequence[Passage], retrieval_conf: float, draft: Draft,
             started: float) -> Answer:
    """The model declined (or nothing of its answer is left): quotes, else the fallback."""
    run.timed("validation", started)
    rescued = no_answer(run, passages, retrieval_conf, draft.generated, reason="declined")
    if rescued is not None:
        return rescued
    return answer(run, prompts.fallback_text(run.mode), fallback=True,
                  confidence=draft.confidence, **draft.generated.record())


def from_selection(run: Run, draft: Draft, started: float) -> Optional[Answer]:
    """Selected text: the selection's sentence that clearly answers, in place of a model
    answer that cannot be shown (None when no sentence does, or the mode has none)."""
    if not strategy(run).rescues_from_selection(run):
        return None
    sel = CitationSource.for_selection(run.selection, run.page_range, run.pages)
    found = selection_answer(run.question, sel, run.validator, run.pages)
    if found is None:
        return None
    text, citations, validation, sentence = found
    given = signals(run, sentence, validation, 1.0,
                    calibration.generation_confidence(None, []))
    run.timed("validation", started)
    return answer(run, text, fallback=False, confidence=calibration.calibrated(given),
                  citations=citations, validation=validation, in_selected_text=True,
                  confidence_signals=given.as_dict(), replaced_by_validator=True,
                  outcome=Outcome.ANSWER, **draft.generated.record())


def refused(run: Run, passages: Sequence[Passage], retrieval_conf: float, draft: Draft,
            reason: str, validation: Any, started: float) -> Answer:
    """An answer the checks refused: the selection's answer, else :func:`not_shown`."""
    return from_selection(run, draft, started) or not_shown(
        run, passages, retrieval_conf, draft, reason, validation, started)
