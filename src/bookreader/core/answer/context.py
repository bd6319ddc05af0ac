"""The context stage: what the model reads.

:func:`select_excerpts` picks the passages (a local tier reads the best sentences of all
of them, not the first whole; :mod:`bookreader.core.focus`) and :func:`build_context`
turns them, the question and the selection into the prompt and the structured request
backends receive beside it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

from bookreader.core import prompts
from bookreader.core.citations import CitationSource
from bookreader.core.focus import focus_passages, unique_sentences
from bookreader.core.types import AnswerRequest, Passage

from bookreader.core.answer.modes import strategy
from bookreader.core.answer.run import Run


@dataclass(frozen=True)
class Excerpts:
    """The passages the model reads, and (by passage id) the part of a passage's text
    shown when it was focused."""

    passages: tuple[Passage, ...]
    shown: dict[int, str] = field(default_factory=dict)

    def text_of(self, passage: Passage) -> str:
        return self.shown.get(id(passage), passage.chunk.text)


@dataclass(frozen=True)
class Context:
    """The context stage's output: the run (now holding its prompt), the passages the
    model reads and the structured request."""

    run: Run
    passages: tuple[Passage, ...]
    request: AnswerRequest


def select_excerpts(run: Run, passages: Sequence[Passage]) -> Excerpts:
    """The passages that fit the tier's context: their best sentences (a tier that
    focuses), else whole passages in order while they fit."""
    budget = run.spec.context_chars
    if run.spec.focus_context and passages:
        picked = focus_passages(unique_sentences([p.chunk.text for p in passages]),
                                run.question, budget, embedder=run.validator.embedder,
                                sections=[p.chunk.section or p.chunk.chapter
                                          for p in passages],
                                ranking=run.spec.focus_ranking, order=run.spec.focus_order)
        picked = [(k, text) for k, text in picked if text.strip()] or picked[:1]
        return Excerpts(tuple(passages[k] for k, _ in picked),
                        {id(passages[k]): text for k, text in picked})
    chosen: list[Passage] = []
    used = 0
    for p in passages:
        n = len(p.chunk.text)
        if chosen and used + n > budget:
            break
        chosen.append(p)
        used += n
    return Excerpts(tuple(chosen))


def build_context(run: Run, passages: Sequence[Passage]) -> Context:
    """The prompt of ``run`` over ``passages`` (the model's excerpts chosen from them)."""
    t = time.perf_counter()
    picked = select_excerpts(run, passages)
    excerpts = [
        prompts.Excerpt(i + 1, p.chunk.section or p.chunk.chapter, p.chunk.page_label,
                        picked.text_of(p))
        for i, p in enumerate(picked.passages)
    ]
    sel_label = ""
    if run.page_range and run.page_range[0] == run.page_range[1] and run.pages is not None:
        sel_label = CitationSource.for_selection("", run.page_range, run.pages).label_start
    request = prompts.request_for(
        run.mode, run.question, excerpts=excerpts,
        selection=strategy(run).selection_shown(run), selection_page_label=sel_label,
    )
    run = replace(run, messages=tuple(prompts.messages_for(request)))
    run.timed("prompt", t)
    return Context(run, picked.passages, request)
