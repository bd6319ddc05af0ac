"""The generate stage (core/answer/generate.py) alone: the real extractive backend on a
real context, and the answer of a generation a budget cut off."""

from __future__ import annotations

import pytest

from bookreader.core import prompts
from bookreader.core.answer.context import build_context
from bookreader.core.answer.generate import (
    Model,
    generated,
    open_model,
    stream,
    timed_out,
    writing,
)
from bookreader.core.answer.modes import WholeBook
from bookreader.core.generation import Generation
from bookreader.core.types import AnswerStage, Mode, Outcome, never_cancel


@pytest.fixture
def context(make_run, stage_book):
    found = WholeBook().retrieve(make_run("Which molecule stores the energy from food?"),
                                 stage_book[1])
    return found, build_context(found.run, found.passages)


def test_the_runs_backend_opens_with_its_budgets(make_run):
    model = open_model(make_run("q?"))
    assert model.name == "extractive" or model.name
    assert (model.first_budget, model.total_budget) == (None, 120.0)


def test_the_backend_streams_a_cited_answer_and_writing_is_told_once(context):
    found, ctx = context
    heard, tokens = [], []
    run = ctx.run.learned(on_stage=heard.append)
    model = open_model(run)
    run.parts.load(model.backend, run.messages[:-1])
    gen = stream(run, ctx, model, tokens.append, never_cancel)
    assert not gen.timed_out and "ATP" in gen.raw and "[Source:" in gen.raw
    assert "".join(tokens) == gen.raw
    assert heard == [AnswerStage.WRITING]
    assert "generation" in run.stage_ms
    written = generated(gen)
    assert (written.raw, written.cut, written.first_token_ms) == (gen.raw, gen.cut,
                                                                 gen.first_token_ms)


def test_writing_forwards_every_token():
    heard, tokens = [], []

    class FakeRun:  # only on_stage is read
        on_stage = staticmethod(heard.append)

    token = writing(FakeRun(), tokens.append)  # type: ignore[arg-type]
    token("a")
    token("b")
    assert tokens == ["a", "b"] and heard == [AnswerStage.WRITING]


def test_a_whole_book_answer_cut_off_by_its_budget_gives_quotes(context):
    found, ctx = context
    model = Model(None, "a slow model", None, 5.0)
    a = timed_out(ctx.run, ctx.passages, found.confidence,
                  Generation(raw="The energy", timed_out="total"), model)
    assert a.outcome is Outcome.QUOTES and a.text.startswith("No answer in time")
    assert a.citations and all(c.verified for c in a.citations)
    assert a.raw_output == "The energy"


def test_a_selected_text_answer_cut_off_gives_the_timeout_message(make_run):
    run = make_run("What do root hairs take up?", mode=Mode.SELECTED, backend="claude",
                   selection="Root hairs take up water and dissolved minerals.")
    a = timed_out(run, (), 1.0, Generation(timed_out="first_token"),
                  Model(None, "m", 3.0, None))
    assert a.outcome is Outcome.TIMEOUT and a.error and a.fallback
    assert a.text == a.error and a.text != prompts.NOT_IN_SELECTION
