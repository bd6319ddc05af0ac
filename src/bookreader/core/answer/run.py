"""What one question carries through the answering stages.

:class:`Parts` are the Answerer's long-lived components (settings, embedders, the grounding
validator, how a backend is built and budgeted).  :class:`Run` is one question: what was
asked, in which mode, with which backend, and what the stages have learned so far (the
retrieval, the chapter, the prompt, the model's name).  A Run is frozen: a stage that
learns something returns ``dataclasses.replace(run, ...)``.  Its one mutable field is
``stage_ms``, the stage timings the Answer reports, which the streaming generation fills
as it goes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence

from bookreader.core.grounding import GroundingValidator
from bookreader.core.llm.specs import BackendSpec, family_spec, spec_for
from bookreader.core.types import Answer, AnswerStage, Message, Mode, Retrieval


def no_stage(_stage: AnswerStage) -> None:
    """The default ``on_stage``: nobody is told."""


@dataclass(frozen=True)
class Parts:
    """The Answerer's components every stage may use."""

    settings: Any
    #: The shared MiniLM (the extractive backend's ranking, quotes).
    embedder: Any
    validator: GroundingValidator
    #: ``factory(name) -> LLMBackend``.
    backend_factory: Callable[[str], Any]
    #: ``budget(name) -> (first-token seconds, total seconds)`` or a total.
    budget_fn: Callable[[str], Any]
    #: ``load(model, prefix)``: the one-off work before a model answers.
    load: Callable[[Any, Sequence[Message]], None]


def backend_spec(name: str, settings: Any) -> BackendSpec:
    """The spec of backend ``name`` (a model server's is its model family's)."""
    return family_spec(spec_for(name), settings.openai_model)


@dataclass(frozen=True)
class Run:
    """One question while it is being answered."""

    parts: Parts
    #: What the stages answer: the question part alone when an instruction came with it.
    question: str
    #: The text as the student asked it (recorded in the Answer).
    asked: str
    mode: Mode
    backend_name: str
    spec: BackendSpec
    t0: float
    book_id: str = ""
    book_title: str = ""
    selection: str = ""
    warning: str = ""
    page_range: Optional[tuple[int, int]] = None
    pages: Any = None
    on_start: Optional[Callable[[Answer], None]] = None
    on_stage: Callable[[AnswerStage], None] = no_stage
    #: Stage timings (ms), filled as the stages finish: the Run's one mutable part.
    stage_ms: dict[str, float] = field(default_factory=dict)
    # --- learned by the stages ---
    retrieval: Optional[Retrieval] = None
    chapter: str = ""
    messages: tuple[Message, ...] = ()
    model_name: str = ""

    @property
    def settings(self) -> Any:
        return self.parts.settings

    @property
    def validator(self) -> GroundingValidator:
        return self.parts.validator

    def elapsed_ms(self) -> float:
        """Milliseconds since the question was asked."""
        return (time.perf_counter() - self.t0) * 1000.0

    def timed(self, stage: str, since: float) -> None:
        """Record ``stage`` as having run from ``since`` (a ``perf_counter``) until now."""
        self.stage_ms[stage] = (time.perf_counter() - since) * 1000.0

    def learned(self, **fields: Any) -> "Run":
        """This run knowing more (``retrieval``, ``chapter``, ``messages``, ...)."""
        return replace(self, **fields)

    def with_backend(self, name: str) -> "Run":
        """This question answered again by backend ``name``, with fresh timings, no
        prompt or model yet and nobody told of its start or stages (what was retrieved
        stays)."""
        return replace(self, backend_name=name, spec=backend_spec(name, self.settings),
                       stage_ms={}, messages=(), model_name="", on_start=None,
                       on_stage=no_stage)
