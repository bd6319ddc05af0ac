"""The pipeline (core/answer/pipeline.py): the stages in order and each named exit, on
the real book with the real extractive backend (a language model's text is handed to
:func:`finish` as the generate stage would)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bookreader.core import prompts
from bookreader.core.answer.draft import Generated
from bookreader.core.answer.modes import WholeBook
from bookreader.core.answer.pipeline import (
    answer_passages,
    answer_question,
    book_sentences_instead,
    finish,
    retrieve,
)
from bookreader.core.answer.render import answer
from bookreader.core.model_output import format_citation
from bookreader.core.types import Answer, AnswerStage, Mode, Outcome, never_cancel
from bookreader.errors import BookReaderError, Cancelled

from biology_text import MITO


class Untouchable:
    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name):
        raise AssertionError(f"{self._what}.{name} was used")


def _no_model(name):
    raise AssertionError(f"a model ({name}) was built")


@pytest.fixture
def found(make_run, stage_book):
    return WholeBook().retrieve(make_run("Which molecule stores the energy from food?",
                                         backend="claude"), stage_book[1])


def test_a_whole_book_question_is_answered_with_a_verified_citation(make_run, stage_book,
                                                                     page_of):
    heard = []
    run = make_run("Which molecule stores the energy from food?", on_stage=heard.append)
    a = answer_question(run, stage_book[1], None, never_cancel)
    assert a.outcome is Outcome.ANSWER and "ATP" in a.text
    assert any(c.verified and c.page == page_of("called ATP") for c in a.citations)
    assert {"retrieval", "prompt", "validation"} <= set(a.stage_ms)
    assert heard[:2] == [AnswerStage.SEARCHING, AnswerStage.READING]
    assert AnswerStage.CHECKING in heard


def test_not_covered_ends_before_any_model_is_built(make_run, stage_book):
    run = make_run("Who won the football world cup in 1998?")
    run = replace(run, parts=replace(run.parts, backend_factory=_no_model))
    a = answer_question(run, stage_book[1], None, never_cancel)
    assert a.outcome is Outcome.NOT_COVERED and a.text == prompts.NOT_COVERED


def test_selected_text_never_searches(make_run):
    run = make_run("Where is the energy of food stored?", mode=Mode.SELECTED, with_pdf=False,
                   selection=MITO)
    a = answer_question(run, Untouchable("retriever"), None, never_cancel)
    assert a.outcome is Outcome.ANSWER and "ATP" in a.text and a.in_selected_text
    assert a.retrieval is None and a.stage_ms["retrieval"] == 0.0
    assert a.citations and all(c.section == "Selected text" for c in a.citations)


def test_a_failed_search_is_an_error_answer_and_stop_raises(make_run, stage_book):
    class Failing:
        def search(self, *a, **k):
            raise BookReaderError("The index is damaged.")

    a = retrieve(make_run("What is ATP?", mode=Mode.HIGHLIGHT, selection="x",
                          page_range=(0, 0)), Failing())
    assert isinstance(a, Answer) and a.outcome is Outcome.ERROR
    assert a.error == "The index is damaged."
    with pytest.raises(Cancelled):
        answer_question(make_run("What is ATP?"), stage_book[1], None, lambda: True)


def test_a_backend_that_cannot_be_built_is_an_error_answer(found):
    def broken(name):
        raise BookReaderError("The model file is missing.")

    run = replace(found.run, parts=replace(found.run.parts, backend_factory=broken))
    a = answer_passages(run, found.passages, found.confidence, None, never_cancel)
    assert a.outcome is Outcome.ERROR and a.error == "The model file is missing."


def test_the_write_ahead_record_is_made_once_before_the_model_answers(make_run, stage_book):
    started = []
    run = make_run("Which molecule stores the energy from food?", on_start=started.append)
    run = replace(run, spec=replace(run.spec, book_sentences=True))
    a = answer_question(run, stage_book[1], None, never_cancel)
    assert len(started) == 1 and started[0].text == "" and started[0].prompt == a.prompt


# --- finish: what the model wrote, through parse, cite, check and render -------------------
def _cited(found, needle: str, excerpt: str) -> str:
    p = next(p for p in found.passages if needle in p.chunk.text)
    return format_citation(p.chunk.section or p.chunk.chapter, p.chunk.page_label, excerpt)


def test_a_supported_model_answer_is_shown_with_its_checked_citation(found):
    text = ("The energy from food is stored in a molecule called ATP. "
            + _cited(found, "ATP", "stored in a molecule called ATP") + "\nConfidence: 0.9")
    a = finish(found.run, found.passages, Generated(text), found.confidence)
    assert a.outcome is Outcome.ANSWER and not a.fallback
    assert a.citations and all(c.verified for c in a.citations)
    assert "Confidence" not in a.text and a.raw_output == text


def test_a_model_answer_the_book_does_not_support_becomes_quotes(found):
    text = "The energy of food is stored in glass marbles kept inside the liver."
    a = finish(found.run, found.passages, Generated(text), found.confidence)
    assert a.outcome is Outcome.QUOTES and a.replaced_by_validator
    assert "marbles" not in a.text and "ATP" in a.text


def test_a_model_that_declines_gives_quotes_on_the_whole_book(found):
    a = finish(found.run, found.passages, Generated(prompts.NOT_COVERED), found.confidence)
    assert a.outcome is Outcome.QUOTES and prompts.NOT_COVERED not in a.text


def test_the_book_sentences_stand_in_for_a_model_answer_that_could_not_be_verified(found):
    run = replace(found.run, spec=replace(found.run.spec, book_sentences=True))
    written = finish(run, found.passages, Generated("Glass marbles in the liver."),
                     found.confidence)
    assert written.outcome is Outcome.QUOTES
    chosen = book_sentences_instead(run, written, found, never_cancel)
    if chosen is not written:  # the extractive answer was the better bet
        assert chosen.outcome is Outcome.ANSWER and "ATP" in chosen.text
        assert chosen.model.startswith("book sentences (extractive), in place of")
        assert chosen.query_id == written.query_id and "book_sentences" in chosen.stage_ms
    plain = answer(found.run, "x", fallback=False, confidence=0.9)
    assert book_sentences_instead(found.run, plain, found, never_cancel) is plain
