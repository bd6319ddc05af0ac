"""The parse stage (core/answer/draft.py) and the context stage (context.py), alone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bookreader.core import prompts
from bookreader.core.answer.context import build_context, select_excerpts
from bookreader.core.answer.draft import (
    Generated,
    combine_confidence,
    declines,
    generation_confidence,
    parse,
)
from bookreader.core.answer.modes import WholeBook
from bookreader.core.model_output import format_citation
from bookreader.core.types import Mode


@pytest.fixture
def found(make_run, stage_book):
    return WholeBook().retrieve(make_run("Which molecule stores the energy from food?"),
                                stage_book[1])


# --- parse ---------------------------------------------------------------------------------
def test_the_models_text_is_read_once_into_claims_with_their_citations(make_run):
    cite = format_citation("1.1 Mitochondria", "1", "stored in a molecule called ATP")
    raw = f"The energy is stored in ATP. {cite}\nPlants make oxygen.\nConfidence: 0.9"
    draft = parse(make_run("Which molecule stores energy?"), Generated(raw), 0.5)
    assert "Confidence" not in draft.text
    assert [c.text for c in draft.claims] == ["The energy is stored in ATP.",
                                             "Plants make oxygen."]
    assert draft.claims[0].citations[0].excerpt == "stored in a molecule called ATP"
    assert draft.claims[1].citations == ()
    assert draft.generation == pytest.approx(0.9)
    assert draft.confidence == combine_confidence(0.5, 0.9)
    assert not draft.declined


def test_the_claims_the_claim_cap_kept_are_the_draft_not_all_that_streamed(make_run):
    gen = Generated("First claim. Second claim. Third", cut="First claim.")
    assert parse(make_run("q?"), gen, 1.0).text == "First claim."


def test_a_model_that_says_it_cannot_answer_declines(make_run):
    run = make_run("q?", mode=Mode.SELECTED, selection="x")
    assert parse(run, Generated(prompts.NOT_IN_SELECTION), 1.0).declined
    assert parse(run, Generated("  \n"), 1.0).declined
    assert declines("Sorry. " + prompts.NOT_COVERED.lower())
    assert not declines("Roots take up water.")


def test_the_whole_book_draft_loses_the_prompts_tags_a_selection_draft_keeps_its_text(
        make_run):
    raw = "<question>Use `print()` here.</question>"
    assert parse(make_run("How do I show it?"), Generated(raw), 1.0).text == "Use print here."
    sel = make_run("How do I show it?", mode=Mode.SELECTED, selection="x")
    assert parse(sel, Generated(raw), 1.0).text == raw


def test_generation_confidence_is_stated_else_token_probabilities_else_the_default():
    assert generation_confidence(0.3, [-0.1]) == 0.3
    assert generation_confidence(None, [0.0, 0.0]) == pytest.approx(1.0)
    assert generation_confidence(None, []) == 0.8
    assert combine_confidence(1.0, 0.5) == pytest.approx(0.8)


# --- context -------------------------------------------------------------------------------
def test_whole_passages_are_kept_in_order_while_they_fit(found):
    run = found.run
    total = sum(len(p.chunk.text) for p in found.passages)
    wide = replace(run, spec=replace(run.spec, context_chars=total, focus_context=False))
    assert select_excerpts(wide, found.passages).passages == found.passages
    narrow = replace(wide, spec=replace(wide.spec, context_chars=1))
    picked = select_excerpts(narrow, found.passages)
    assert picked.passages == found.passages[:1] and picked.shown == {}


def test_a_focusing_tier_reads_the_best_sentences_of_the_passages(found):
    run = replace(found.run, spec=replace(found.run.spec, focus_context=True,
                                          context_chars=120))
    picked = select_excerpts(run, found.passages)
    assert picked.passages and picked.shown
    shown = [picked.text_of(p) for p in picked.passages]
    assert sum(map(len, shown)) < sum(len(p.chunk.text) for p in picked.passages)
    assert any("ATP" in s for s in shown)


def test_the_prompt_carries_the_excerpts_and_the_question(found):
    context = build_context(found.run, found.passages)
    assert found.run.messages == ()  # the input run is unchanged
    last = context.run.messages[-1].content
    assert "Which molecule stores the energy from food?" in last
    assert all(p.chunk.text[:40] in last for p in context.passages)
    assert context.request.mode is Mode.BOOK
    assert [e.text for e in context.request.excerpts] == [p.chunk.text
                                                         for p in context.passages]
    assert "prompt" in context.run.stage_ms


def test_a_selected_text_prompt_carries_the_selection_and_no_excerpts(make_run, found):
    run = make_run("What do root hairs take up?", mode=Mode.SELECTED,
                   selection="Root hairs take up water and dissolved minerals.")
    context = build_context(run, found.passages)
    assert context.request.excerpts == ()
    assert "dissolved minerals" in context.run.messages[-1].content
    assert "called ATP" not in context.run.messages[-1].content
