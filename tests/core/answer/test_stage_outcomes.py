"""The fallbacks (core/answer/fallbacks.py), the render stage (render.py) and the choose
stage (choose.py), each called alone with its typed input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bookreader.core import confidence as calibration
from bookreader.core import prompts, quotes
from bookreader.core.answer import choose as choose_stage
from bookreader.core.answer.draft import Generated, parse
from bookreader.core.answer.fallbacks import declined, from_selection, no_answer, not_shown
from bookreader.core.answer.modes import WholeBook
from bookreader.core.answer.render import answer, confidence_level, failed, verified
from bookreader.core.types import Mode, Outcome, Validation
from bookreader.errors import InvalidInput, QueryTimeout

ROOTS = "Root hairs take up water and dissolved minerals. Roots anchor a plant in the soil."


@pytest.fixture
def found(make_run, stage_book):
    return WholeBook().retrieve(make_run("Which molecule stores the energy from food?",
                                         backend="claude"), stage_book[1])


def _selected(make_run, question: str, backend: str = "claude"):
    return make_run(question, mode=Mode.SELECTED, selection=ROOTS, backend=backend)


# --- fallbacks -----------------------------------------------------------------------------
def test_a_whole_book_dead_end_becomes_quotes_with_verified_citations(found, page_of):
    a = no_answer(found.run, found.passages, found.confidence, Generated("raw"),
                  reason="rejected")
    assert a is not None and a.outcome is Outcome.QUOTES and a.fallback
    assert a.text.startswith(quotes.QUOTES_INTRO)
    assert any(c.verified and c.page == page_of("called ATP") for c in a.citations)
    assert a.replaced_by_validator and a.raw_output == "raw"


def test_a_selected_text_look_up_has_no_quotes_but_a_request_about_it_is_explained(make_run):
    assert no_answer(_selected(make_run, "What do root hairs take up?"), (), 1.0, None,
                     reason="declined") is None
    a = no_answer(_selected(make_run, "Explain this"), (), 1.0, None, reason="declined")
    assert a is not None and a.outcome is Outcome.ANSWER and a.in_selected_text
    assert a.citations and "Root" in a.text


def test_declined_and_not_shown_fall_back_to_the_modes_sentence(make_run):
    run = _selected(make_run, "What do root hairs take up?")
    draft = parse(run, Generated(prompts.NOT_IN_SELECTION), 1.0)
    a = declined(run, (), 1.0, draft, 0.0)
    assert a.outcome is Outcome.NOT_IN_SELECTION and a.text == prompts.NOT_IN_SELECTION
    assert a.confidence_level != "high" and "validation" in a.stage_ms
    bad = Validation(0.1, 0.1, False, 1.0)
    b = not_shown(run, (), 1.0, draft, "rejected", bad, 0.0)
    assert b.outcome is Outcome.NOT_IN_SELECTION and b.replaced_by_validator
    assert b.validation == bad


def test_the_selections_answering_sentence_stands_in_for_a_refused_answer(make_run):
    run = _selected(make_run, "What do root hairs take up?")
    draft = parse(run, Generated("Leaves make sugar."), 1.0)
    a = from_selection(run, draft, 0.0)
    assert a is not None and a.outcome is Outcome.ANSWER and a.in_selected_text
    assert "dissolved minerals" in a.text and a.replaced_by_validator
    extractive = _selected(make_run, "What do root hairs take up?", backend="extractive")
    assert from_selection(extractive, draft, 0.0) is None


# --- render --------------------------------------------------------------------------------
def test_an_answer_records_the_run(make_run, found):
    run = found.run.learned(asked="Which molecule stores the energy from food? Quick!",
                            messages=("m",), model_name="a model")
    run.stage_ms["extra"] = 1.0
    a = answer(run, "ATP.", fallback=False, confidence=0.9)
    assert a.question == run.asked and a.model == "a model" and a.prompt == ("m",)
    assert a.chapter == "1 Cells" and a.retrieval is run.retrieval
    assert a.stage_ms == run.stage_ms and a.stage_ms is not run.stage_ms
    assert a.in_selected_text is None and a.selection_page is None
    assert a.outcome is Outcome.ANSWER and a.confidence_level == confidence_level(0.9)


def test_every_outcome_but_an_answer_is_a_fallback_with_its_confidence_capped(make_run):
    book = make_run("q?")
    a = answer(book, prompts.NOT_COVERED, fallback=True, confidence=0.99)
    assert a.outcome is Outcome.NOT_COVERED and a.confidence == calibration.cap_non_answer(0.99)
    sel = make_run("q?", mode=Mode.SELECTED, selection="x", page_range=(0, 0))
    s = answer(sel, prompts.NOT_IN_SELECTION, fallback=True, confidence=0.5)
    assert s.outcome is Outcome.NOT_IN_SELECTION and s.in_selected_text is False
    assert s.selection_page == 0
    assert answer(book, "x", fallback=True, confidence=0.5, error="boom").outcome is (
        Outcome.ERROR)
    assert failed(book, QueryTimeout("slow")).outcome is Outcome.TIMEOUT
    f = failed(book, InvalidInput("bad"))
    assert f.outcome is Outcome.ERROR and f.error == "bad" and f.text == "bad"


def test_confidence_levels():
    assert [confidence_level(x) for x in (0.86, 0.85, 0.7, 0.69)] == ["high", "medium",
                                                                      "medium", "low"]


def test_a_verified_answer_is_calibrated_on_the_text_the_model_wrote(found):
    run = found.run
    draft = parse(run, Generated("The energy is stored in ATP."), found.confidence)
    ok = Validation(0.9, 0.9, True, 1.0)
    cite = '[Source: 1.1 Mitochondria (Page 1) - "called ATP"]'
    shown = f"Cells keep the energy of their food in one molecule: 1. {cite}"
    a = verified(run, draft, ok, "The energy is stored in ATP.", shown, (),
                 found.confidence, 0.0)
    assert a.outcome is Outcome.ANSWER and not a.fallback
    assert a.text == shown
    assert a.confidence == calibration.calibrated(a.confidence_signals)
    judged = verified(run, draft, ok, "Leaves are green.", shown, (), found.confidence, 0.0)
    assert judged.confidence_signals != a.confidence_signals  # judged on what was written
    extractive = run.with_backend("extractive")
    assert verified(extractive, draft, ok, "x", shown, (), 1.0, 0.0).text == shown


def test_a_highlight_answer_says_whether_it_comes_from_the_selection(make_run):
    run = make_run("What do root hairs take up?", mode=Mode.HIGHLIGHT, selection=ROOTS,
                   page_range=(0, 0))
    draft = parse(run, Generated("x"), 1.0)
    ok = Validation(0.9, 0.9, True, 1.0)
    inside = verified(run, draft, ok, "", "Root hairs take up water and dissolved minerals.",
                      (), 1.0, 0.0)
    outside = verified(run, draft, ok, "", "The Eiffel Tower was painted purple in Peru.",
                       (), 1.0, 0.0)
    assert inside.in_selected_text is True and outside.in_selected_text is False


# --- choose --------------------------------------------------------------------------------
def _pair(run, model_outcome: Outcome, model_conf: float, book_signals: dict):
    model = answer(run.learned(model_name="small model"), "Model words.",
                   fallback=model_outcome is not Outcome.ANSWER, confidence=model_conf,
                   outcome=model_outcome, raw_output="raw")
    book = answer(run.with_backend("extractive"), "Book words.", fallback=False,
                  confidence=0.0, confidence_signals=book_signals, outcome=Outcome.ANSWER)
    return model, book


def test_the_book_sentences_replace_a_less_likely_model_answer(found):
    run = replace(found.run, spec=replace(found.run.spec, book_sentences=True))
    strong = dict(retrieval=1.0, similarity=1.0, overlap=1.0, relevance=1.0, generation=1.0,
                  extractive=1.0)
    model, book = _pair(run, Outcome.ANSWER, 0.01, strong)
    assert choose_stage.applies(run, model)
    chosen = choose_stage.choose(run, model, book, 12.0)
    assert chosen.text == "Book words." and chosen.query_id == model.query_id
    assert chosen.model.startswith("book sentences (extractive), in place of small model")
    assert chosen.raw_output == "raw" and chosen.stage_ms["book_sentences"] == 12.0
    assert chosen.confidence_signals["in_place"] == 1.0
    sure, _ = _pair(run, Outcome.ANSWER, 1.0, strong)
    assert choose_stage.choose(run, sure, book, 1.0) is sure


def test_a_model_answer_stays_when_the_book_has_none_or_a_weak_one(found, monkeypatch):
    run = replace(found.run, spec=replace(found.run.spec, book_sentences=True))
    model, book = _pair(run, Outcome.QUOTES, 0.3, {})
    assert choose_stage.choose(run, model, replace(book, outcome=Outcome.QUOTES), 1.0) is model
    monkeypatch.setattr(choose_stage, "MIN_CONFIDENCE", 1.01)
    assert choose_stage.choose(run, model, book, 1.0) is model
    assert not choose_stage.applies(found.run, model)  # a tier that does not compare
