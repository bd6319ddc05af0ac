"""The generate stage: the backend writes its answer within its budgets.

:func:`open_model` builds the run's backend and its (first-token, total) budgets,
:func:`stream` runs :func:`bookreader.core.generation.generate` (its stop rules and
budgets) and :func:`timed_out` is what a question whose answer was cut off by a budget
shows: quotes of the pages when retrieval was confident, else the timeout message.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from bookreader.core import quotes
from bookreader.core.generation import Generation, budget_pair, generate
from bookreader.core.llm.specs import timeout_message
from bookreader.core.types import Answer, AnswerStage, CancelFn, Outcome, Passage

from bookreader.core.answer.context import Context
from bookreader.core.answer.draft import Generated
from bookreader.core.answer.fallbacks import no_answer
from bookreader.core.answer.render import answer
from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Model:
    """A backend ready to answer, with its budgets in seconds (None: no such limit)."""

    backend: Any
    name: str
    first_budget: Optional[float]
    total_budget: Optional[float]


def open_model(run: Run) -> Model:
    """The run's backend and budgets.

    Raises:
        BookReaderError: the backend cannot be built.
    """
    backend = run.parts.backend_factory(run.backend_name)
    first, total = budget_pair(run.parts.budget_fn(run.backend_name))
    return Model(backend, getattr(backend, "model_name", "") or run.backend_name, first, total)


def writing(run: Run, on_token: Optional[Callable[[str], None]]) -> Callable[[str], None]:
    """``on_token``, telling ``run.on_stage`` that writing began at the first token."""
    started: list[bool] = []

    def token(text: str) -> None:
        if not started:
            started.append(True)
            run.on_stage(AnswerStage.WRITING)
        if on_token is not None:
            on_token(text)

    return token


def stream(run: Run, context: Context, model: Model,
           on_token: Optional[Callable[[str], None]], cancel: CancelFn) -> Generation:
    """The model's answer to ``context``, streamed within its budgets.

    Raises:
        BookReaderError: the backend failed.
        Cancelled: the user pressed Stop.
    """
    max_tokens = int(run.settings.max_new_tokens)
    if run.spec.max_tokens:
        max_tokens = min(max_tokens, run.spec.max_tokens)
    return generate(
        model.backend, run.messages, request=context.request, max_tokens=max_tokens,
        temperature=float(run.settings.temperature), first_budget=model.first_budget,
        total_budget=model.total_budget, max_claims=run.spec.max_claims,
        quote_words=run.spec.quote_words, started=run.t0, stage_ms=run.stage_ms,
        on_token=writing(run, on_token), cancel=cancel,
    )


def generated(gen: Generation) -> Generated:
    """What a finished generation hands the parse stage."""
    return Generated(gen.raw, gen.cut, tuple(gen.logprobs), gen.first_token_ms,
                     gen.generation_ms)


def timed_out(run: Run, passages: Sequence[Passage], retrieval_conf: float, gen: Generation,
              model: Model) -> Answer:
    """An answer cut off by a budget (one that finished is kept, however long it took):
    quotes of the pages when retrieval was confident, else the timeout message."""
    seconds = model.first_budget if gen.timed_out == "first_token" else model.total_budget
    message = timeout_message(run.spec, gen.timed_out, float(seconds or 0.0))
    log.warning("Generation with %s over its %s budget of %.1f s",
                run.backend_name, gen.timed_out, seconds)
    written = generated(gen)
    rescued = no_answer(run, passages, retrieval_conf, written, reason="timeout",
                        lead=quotes.timeout_lead(run.spec.label, gen.timed_out,
                                                 float(seconds or 0.0)))
    if rescued is not None:
        return rescued
    return answer(run, message, fallback=True, confidence=0.0, error=message,
                  outcome=Outcome.TIMEOUT, **written.record())
