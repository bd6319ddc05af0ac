"""The entry point (core/answer/answerer.py): input checked before any stage runs, then
the Run the stages take, built from the Answerer's parts."""

from __future__ import annotations

import pytest

from bookreader.core.answer import answerer as answerer_module
from bookreader.core.answering import Answerer
from bookreader.core.types import Mode, Outcome
from bookreader.errors import Cancelled, InvalidInput


def test_the_stages_get_the_answerers_parts(stage_answerer):
    parts = stage_answerer.parts
    assert parts.settings is stage_answerer.settings
    assert parts.validator is stage_answerer.validator
    assert parts.embedder is stage_answerer.embedder
    assert parts.budget_fn("extractive") == 120.0


def test_ask_builds_the_run_the_pipeline_takes(stage_answerer, stage_book, monkeypatch):
    seen = []

    def record(run, retriever, on_token, cancel):
        seen.append((run, retriever))
        return "answered"

    monkeypatch.setattr(answerer_module, "answer_question", record)
    pdf = stage_book[2]
    out = stage_answerer.ask(b"  What do root hairs take up?  ", mode="highlight",
                             retriever="r", selection="Root hairs take up water.",
                             pages=pdf, page_range=(0, 0), backend="extractive",
                             book_id="b1", book_title="Biology")
    assert out == "answered"
    run, retriever = seen[0]
    assert retriever == "r" and run.mode is Mode.HIGHLIGHT
    assert run.question == run.asked == "What do root hairs take up?"
    assert run.selection == "Root hairs take up water." and run.page_range == (0, 0)
    assert run.backend_name == "extractive" and run.spec.kind == "extractive"
    assert (run.book_id, run.book_title, run.pages) == ("b1", "Biology", pdf)
    assert run.retrieval is None and run.stage_ms == {}


def test_bad_input_is_refused_before_any_stage_runs(stage_answerer, stage_book, monkeypatch):
    def no_stage(*a, **k):
        raise AssertionError("a stage ran")

    monkeypatch.setattr(answerer_module, "answer_question", no_stage)
    with pytest.raises(InvalidInput, match="Select"):
        stage_answerer.ask("Why?", mode=Mode.SELECTED)
    with pytest.raises(InvalidInput, match="not valid"):
        stage_answerer.ask("Why?", mode=Mode.HIGHLIGHT, selection="Text.", retriever="r",
                           page_range=(3, 1))
    with pytest.raises(Cancelled):
        stage_answerer.ask("Why?", mode=Mode.BOOK, retriever="r", cancel=lambda: True)


def test_a_whole_book_question_through_the_answerer(stage_answerer, stage_book):
    a = stage_answerer.ask("Which molecule stores the energy from food?", mode=Mode.BOOK,
                           retriever=stage_book[1], pages=stage_book[2], backend="extractive")
    assert a.outcome is Outcome.ANSWER and "ATP" in a.text and a.citations
    assert isinstance(stage_answerer, Answerer)
