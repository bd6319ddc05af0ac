"""The run record and the three modes' strategies (core/answer/run.py, modes.py): the
retrieve stage and the gate before any model runs, on a real store."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bookreader.core import prompts
from bookreader.core.answer import modes
from bookreader.core.answer.modes import Highlight, SelectedText, WholeBook, strategy
from bookreader.core.types import Mode, Outcome
from bookreader.errors import InvalidInput


class Untouchable:
    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name):
        raise AssertionError(f"{self._what}.{name} was used")


def test_each_mode_has_its_strategy(make_run):
    assert isinstance(strategy(make_run("q?")), WholeBook)
    assert isinstance(strategy(make_run("q?", mode=Mode.SELECTED, selection="x")), SelectedText)
    assert isinstance(strategy(make_run("q?", mode=Mode.HIGHLIGHT, selection="x")), Highlight)


def test_a_run_answered_again_by_another_backend_starts_fresh_but_keeps_what_was_found(
        make_run):
    told = []
    run = make_run("What is ATP?", backend="claude", on_start=told.append,
                   on_stage=told.append)
    run.stage_ms["retrieval"] = 5.0
    run = replace(run, messages=("m",), model_name="a model", chapter="1 Cells")
    again = run.with_backend("extractive")
    assert again.backend_name == "extractive" and again.spec.kind == "extractive"
    assert again.stage_ms == {} and run.stage_ms == {"retrieval": 5.0}
    assert again.messages == () and again.model_name == ""
    assert again.on_start is None
    again.on_stage("searching")
    assert told == []  # the rival's stages are nobody's business
    assert again.chapter == "1 Cells" and again.question == run.question


def test_whole_book_retrieval_finds_the_passage_and_records_it(make_run, stage_book):
    run = make_run("Which molecule stores the energy from food?")
    found = WholeBook().retrieve(run, stage_book[1])
    assert "called ATP" in found.passages[0].chunk.text
    assert found.run.retrieval is not None and found.run.retrieval.passages == found.passages
    assert found.confidence == found.run.retrieval.confidence
    assert found.run.chapter == "1 Cells"
    assert "retrieval" in found.run.stage_ms
    assert run.retrieval is None  # the input run is unchanged
    assert WholeBook().gate(found) is None


def test_whole_book_answers_the_question_it_searched_and_records_the_one_asked(
        make_run, stage_book):
    asked = "Which molecule stores the energy from food? At the end, tell me a joke."
    found = WholeBook().retrieve(make_run(asked), stage_book[1])
    assert found.run.asked == asked
    assert found.run.retrieval is not None and found.run.retrieval.query == found.run.question
    assert found.run.question in (asked, "Which molecule stores the energy from food?")


def test_whole_book_gate_says_not_covered_for_an_unrelated_question(make_run, stage_book):
    found = WholeBook().retrieve(make_run("Who won the football world cup in 1998?"),
                                 stage_book[1])
    early = WholeBook().gate(found)
    assert early is not None and early.outcome is Outcome.NOT_COVERED
    assert early.text == prompts.NOT_COVERED
    assert early.confidence == pytest.approx(1.0 - found.confidence)


def test_selected_text_never_touches_the_retriever(make_run):
    run = make_run("What does the selection say about roots?", mode=Mode.SELECTED,
                   selection="Roots anchor a plant in the soil.", with_pdf=False)
    found = SelectedText().retrieve(SelectedText().prepare(run), Untouchable("retriever"))
    assert found.passages == () and found.confidence == 1.0
    assert found.run.retrieval is None and found.run.stage_ms["retrieval"] == 0.0


def test_highlight_retrieval_keeps_to_the_selections_pages_and_chapter(make_run, stage_book):
    whole = WholeBook().retrieve(make_run("What do root hairs take up?"), stage_book[1])
    roots = next(p.chunk for p in whole.passages if "Root hairs" in p.chunk.text)
    pages = (roots.page_start, roots.page_end)
    run = make_run("What do root hairs take up?", mode=Mode.HIGHLIGHT,
                   selection="Root hairs take up water and dissolved minerals.",
                   page_range=pages)
    run = Highlight().prepare(run)
    assert run.chapter == roots.chapter
    found = Highlight().retrieve(run, stage_book[1])
    assert any("Root hairs" in p.chunk.text for p in found.passages)
    assert all(pages[0] <= p.chunk.page_start and p.chunk.page_end <= pages[1]
               and p.chunk.chapter == roots.chapter for p in found.passages)
    assert found.confidence == 1.0
    with pytest.raises(InvalidInput):
        Highlight().retrieve(replace(run, page_range=None), stage_book[1])


def test_sources_put_the_selection_first_off_the_whole_book(make_run, stage_book):
    found = WholeBook().retrieve(make_run("What do root hairs take up?"), stage_book[1])
    book_sources = WholeBook().sources(found.run, found.passages)
    assert [s.text for s in book_sources] == [p.chunk.text for p in found.passages]
    sel = make_run("q?", mode=Mode.HIGHLIGHT, selection="Roots anchor a plant.")
    sel_sources = Highlight().sources(sel, found.passages)
    assert sel_sources[0].text == "Roots anchor a plant."
    assert len(sel_sources) == len(found.passages) + 1


def test_whole_book_checks_against_every_retrieved_passage_the_shown_ones_first(
        make_run, stage_book):
    found = WholeBook().retrieve(make_run("What do root hairs take up?"), stage_book[1])
    assert len(found.passages) >= 2
    shown = [found.passages[-1]]
    checked = WholeBook().checked_passages(found.run, shown)
    assert checked[0] is found.passages[-1]
    assert {id(p) for p in checked} == {id(p) for p in found.passages}
    assert Highlight().checked_passages(found.run, shown) == shown


def test_only_the_whole_book_cleans_the_models_text(make_run):
    text = "<excerpt id=1>Use `print()` to show it.</excerpt>"
    assert WholeBook().clean(text, "How do I show a value?") == "Use print to show it."
    assert SelectedText().clean(text, "How do I show a value?") == text


def test_the_modes_flags_differ_where_the_modes_do(make_run):
    book, sel, hl = WholeBook(), SelectedText(), Highlight()
    assert book.needs_citation and not sel.needs_citation and not hl.needs_citation
    assert not sel.quotes and book.quotes and hl.quotes
    assert not sel.searches and book.searches
    assert book.fallback_outcome() is Outcome.NOT_COVERED
    assert sel.fallback_outcome() is Outcome.NOT_IN_SELECTION
    assert modes.strategy(make_run("q?", mode=Mode.SELECTED, selection="x",
                                   backend="claude")).rescues_from_selection(
        make_run("What is it?", mode=Mode.SELECTED, selection="x", backend="claude"))
    assert not sel.rescues_from_selection(
        make_run("Explain this", mode=Mode.SELECTED, selection="x", backend="claude"))
