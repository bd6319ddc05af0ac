"""The cite stages (core/answer/cite.py) and the check stage (check.py), alone, against
the real book's passages, the real grounding validator and citation checker."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bookreader.core.answer import cite as cite_stage
from bookreader.core.answer.check import (
    OFF_TARGET,
    REJECTED,
    check,
    invented_excerpt,
    only_captions,
    only_code,
    swapped_sides,
    uncited,
)
from bookreader.core.answer.cite import (
    Cited,
    cite_as_written,
    cite_for_display,
    with_book_sentences,
)
from bookreader.core.answer.modes import WholeBook
from bookreader.core.model_output import format_citation
from bookreader.core.types import Citation, Mode, Validation


@pytest.fixture
def book_sources(make_run, stage_book):
    """``(run, sources, context)`` of a whole-book question about energy."""
    found = WholeBook().retrieve(make_run("Which molecule stores the energy from food?",
                                          backend="claude"), stage_book[1])
    sources = WholeBook().sources(found.run, found.passages)
    return found.run, sources, "\n\n".join(s.text for s in sources)


def _cite(sources, needle: str, excerpt: str) -> str:
    s = next(s for s in sources if needle in s.text)
    label = s.label_start if s.label_start == s.label_end else f"{s.label_start}-{s.label_end}"
    return format_citation(s.section, label, excerpt)


# --- cite ----------------------------------------------------------------------------------
def test_a_citation_as_written_is_checked_on_its_page(book_sources, page_of):
    run, sources, _ = book_sources
    text = "The energy is stored in ATP. " + _cite(sources, "ATP", "a molecule called ATP")
    cited = cite_as_written(run, text, sources)
    assert cited is not None and len(cited.citations) == 1
    c = cited.citations[0]
    assert c.verified and not c.repaired and c.page == page_of("called ATP")
    assert cited.invented == frozenset()


def test_an_invented_excerpt_is_repaired_and_remembered(book_sources):
    run, sources, _ = book_sources
    text = ("The energy is stored in ATP. "
            + _cite(sources, "ATP", "the energy of food is stored in the molecule ATP"))
    cited = cite_as_written(run, text, sources)
    assert cited is not None and cited.citations and cited.citations[0].repaired
    assert cited.invented
    shown = cite_for_display(run, cited.text, sources, cited.invented)
    assert shown.citations and all(c.repaired for c in shown.citations
                                   if "ATP" in c.excerpt)


def test_as_written_adds_no_citation_for_display_adds_the_missing_one(book_sources):
    run, sources, _ = book_sources
    text = "Mitochondria release the energy stored in food."
    assert cite_as_written(run, text, sources).citations == ()
    shown = cite_for_display(run, text, sources, frozenset())
    assert shown.citations and shown.citations[0].verified
    assert "[Source:" in shown.text


def test_every_pass_of_the_citation_check_is_named(book_sources, monkeypatch):
    run, sources, _ = book_sources
    calls = []
    real = cite_stage.verify_answer

    def recording(text, srcs, pages, *, add_missing=True):
        calls.append(add_missing)
        return real(text, srcs, pages, add_missing=add_missing)

    monkeypatch.setattr(cite_stage, "verify_answer", recording)
    text = "Mitochondria release the energy stored in food."
    cite_as_written(run, text, sources)
    cite_for_display(run, text, sources, frozenset())
    assert calls[0] is False and calls[1:] and all(calls[1:])
    assert cite_stage.verify(cite_stage.FOR_DISPLAY, run, text, sources).citations
    assert not cite_stage.verify(cite_stage.AS_WRITTEN, run, text, sources).citations


def test_the_books_sentence_goes_beside_an_answer_only_for_a_tier_that_quotes(book_sources):
    run, sources, _ = book_sources
    text = "ATP. " + _cite(sources, "ATP", "a molecule called ATP")
    shown = cite_for_display(run, text, sources, frozenset())
    assert with_book_sentences(run, shown, sources) == shown
    quoting = replace(run, spec=replace(run.spec, answer_quote=True))
    beside = with_book_sentences(quoting, shown, sources)
    assert len(beside.text) >= len(shown.text)
    assert all(c.verified for c in beside.citations)


# --- check ---------------------------------------------------------------------------------
def test_a_supported_answer_passes_every_check(book_sources):
    run, sources, context = book_sources
    text = "The energy is stored in a molecule called ATP. " + _cite(
        sources, "ATP", "stored in a molecule called ATP")
    cited = cite_as_written(run, text, sources)
    verdict = check(run, cited, context, text)
    assert verdict.refusal == "" and verdict.validation.passed
    assert "ATP" in verdict.text


def test_an_answer_the_book_does_not_support_is_rejected(book_sources):
    run, sources, context = book_sources
    text = "The energy of food is stored in glass marbles kept inside the liver."
    verdict = check(run, Cited(text, ()), context, text)
    assert verdict.refusal == REJECTED and not verdict.validation.passed


def test_an_unsupported_sentence_is_dropped_when_the_rest_stands(book_sources):
    run, sources, context = book_sources
    text = ("The energy is stored in a molecule called ATP. "
            "The Eiffel Tower was painted purple in 1850 by the king of Peru.")
    verdict = check(run, Cited(text, ()), context, text)
    assert verdict.refusal == "" and "Eiffel" not in verdict.text and "ATP" in verdict.text


def test_on_selected_text_an_unsupported_first_sentence_refuses_the_answer(make_run):
    selection = "Root hairs take up water and dissolved minerals."
    run = make_run("What do root hairs take up?", mode=Mode.SELECTED, selection=selection,
                   backend="claude")
    text = ("The Eiffel Tower was painted purple in 1850 by the king of Peru. "
            "Root hairs take up water and dissolved minerals.")
    verdict = check(run, Cited(text, ()), selection, text)
    assert verdict.refusal in (REJECTED, OFF_TARGET)


def test_an_invented_excerpt_in_a_loosely_similar_answer_is_refused():
    cited = Cited("Some answer.", (), frozenset({(3, "made up words")}))
    loose = Validation(similarity=0.5, overlap=0.9, passed=True, ms=1.0)
    assert invented_excerpt(cited, loose, "Some answer.", "Other context entirely.")
    assert not invented_excerpt(cited, replace(loose, similarity=0.9), "Some answer.",
                                "Other context entirely.")
    assert not invented_excerpt(replace(cited, invented=frozenset()), loose, "Some answer.",
                                "Other context entirely.")


def test_only_lines_of_code_answer_no_question_that_asks_for_none(make_run):
    model = make_run("Why do roots matter to a plant?", backend="claude")
    assert only_code(model, "total = count + 1;\nprint(total)")
    assert not only_code(model, "Roots anchor a plant in the soil.")
    assert not only_code(make_run("Why do roots matter?"), "total = count + 1;")  # extractive
    assert not only_code(make_run("Write the code that adds one to count.", backend="claude"),
                         "total = count + 1;")


def test_an_answer_that_is_only_a_caption_says_nothing(make_run):
    model = make_run("What is the coalescent?", backend="claude")
    caption = "Figure 3.7: A simple simulation of the coalescent process for three lineages."
    assert only_captions(model, caption)
    assert not only_captions(model, caption + " The coalescent traces lineages back in time.")
    assert not only_captions(model, "As Figure 3.7 shows, two lineages merge going back.")
    assert not only_captions(make_run("What is the coalescent?"), caption)  # extractive


def test_saying_of_one_side_what_the_book_says_of_the_other_is_unsupported(make_run):
    run = make_run("What is the difference between a list and a tuple?", backend="claude")
    context = ("Lists and tuples hold sequences of values. The important difference is that "
               "tuples are immutable.")
    ok = Validation(similarity=0.9, overlap=0.9, passed=True, ms=1.0)
    swapped = "The important difference is that lists are immutable."
    marked = swapped_sides(run, swapped, ok, context)
    assert swapped in marked.unsupported_sentences
    right = "The important difference is that tuples are immutable."
    assert swapped_sides(run, right, ok, context) == ok


def test_a_whole_book_answer_needs_a_verified_citation(make_run):
    unverified = Citation("1.1", 0, "1", "x", verified=False)
    verified = replace(unverified, verified=True)
    assert uncited(make_run("q?"), [unverified]) and uncited(make_run("q?"), [])
    assert not uncited(make_run("q?"), [verified])
    assert not uncited(make_run("q?", mode=Mode.SELECTED, selection="x"), [])
