"""What a local tier's prompt costs (core/llm/prompt_cost.py), with the real model files.

The rules prefix is evaluated once per session and must be reused for every question:
that holds only when each question's prompt begins with the *same tokens*.  Counted with
each tier's own tokenizer and chat template (the bundled tiny tier always; the small tier
when it is installed, as ``make install`` does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookreader.config import default_data_dir
from bookreader.core.focus import focus_passages
from bookreader.core.llm import choose, models, specs
from bookreader.core.llm.llama_cpp import LlamaCppBackend
from bookreader.core.llm.prompt_cost import PromptCounter, common_prefix
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Message, Mode

# Found before the tests' own data folders replace the user's (where `make install` puts it).
TINY_PATH = models.installed_path(specs.TINY, default_data_dir() / "models")
SMALL_PATH = models.installed_path(specs.SMALL, default_data_dir() / "models")
TIER_FILES = [pytest.param(TINY_PATH, id="tiny",
                           marks=pytest.mark.skipif(TINY_PATH is None, reason="tiny not installed")),
              pytest.param(SMALL_PATH, id="small",
                           marks=pytest.mark.skipif(SMALL_PATH is None,
                                                    reason="the small tier is not installed "
                                                           "(bookreader models install small)"))]

Q1 = build_messages(Mode.BOOK, "What is a base case?", excerpts=[
    Excerpt(1, "5.8 Recursive Methods", "74",
            "A recursive method needs a base case. The base case returns without recursion."),
])
Q2 = build_messages(Mode.BOOK, "How do you declare an array?", excerpts=[
    Excerpt(1, "7.1 Creating Arrays", "113", "To declare an array, write int[] counts;"),
    Excerpt(2, "7.2 Accessing Elements", "114", "The index of the first element is 0."),
])
SEL = build_messages(Mode.SELECTED, "Who lit the lamp?",
                     selection="Marta Olsen lit the lamp every evening at six o'clock.")


@pytest.mark.parametrize("path", TIER_FILES)
def test_every_question_reuses_the_primed_rules_prefix(path: Path):
    counter = PromptCounter(path)
    c1, c2 = counter.cost(Q1), counter.cost(Q2)
    assert c1.prefix_shared and c2.prefix_shared
    # The rules and the worked example are the same tokens, whatever the passages.
    assert c1.prefix == c2.prefix > 150
    t1, t2 = counter.tokens(Q1), counter.tokens(Q2)
    assert common_prefix(t1, t2) >= c1.prefix
    # What is read per question is the question's own turn: far less than the whole.
    assert 0 < c1.uncached < c2.uncached < c2.total - 150
    own = len(counter.tokenize(Q2[-1].content))
    assert own <= c2.uncached <= own + 12  # the chat framing adds a handful
    # Another mode has other rules: no false sharing claimed.
    assert counter.cost(SEL).prefix_shared
    assert common_prefix(counter.tokens(SEL), t1) < c1.prefix


@pytest.mark.skipif(TINY_PATH is None, reason="tiny not installed")
def test_llama_cpp_state_keeps_the_prefix_across_questions():
    """After priming and one answer, the model's evaluated tokens still begin with the
    next question's prefix, so llama.cpp reads only that question's own turn."""
    assert TINY_PATH is not None
    counter = PromptCounter(TINY_PATH)
    backend = LlamaCppBackend(TINY_PATH, name="tiny", n_ctx=2048, n_threads=1, seed=1)
    backend.prime(Q1[:-1])
    list(backend.stream(Q1, max_tokens=4, temperature=0.0))
    state = list(backend._ensure_loaded()._input_ids)
    assert common_prefix(state, counter.tokens(Q2)) >= counter.cost(Q2).prefix


def test_passages_pay_for_their_framing():
    question = "What does a compiler translate source code into?"
    best = ("A compiler translates source code into machine code. It reads the whole "
            "program first. Compilers report errors before the program runs.")
    weak = ["Tables hold rows of values in a grid layout for display.",
            "The weather report mentions code names for storms each year."]
    shown = focus_passages([best, *weak], question, 200, passage_cost=80)
    assert [k for k, _ in shown] == [0]  # one weak sentence is not worth a passage's tags
    shown = focus_passages([best, *weak], question, 200, passage_cost=0)
    assert len(shown) > 1


def test_the_estimate_times_the_counted_prompt():
    spec = specs.SMALL
    assert spec.prompt_tokens[0] > 0  # counted by bench/prompt_tokens.py
    f50, f95, t95 = choose.expected(spec, 72.0, 22.8)
    assert f50 == pytest.approx(spec.prompt_tokens[0] / 72.0 + 2 / 22.8)
    assert f95 == pytest.approx((spec.prompt_tokens[1] / 72.0 + 2 / 22.8) * choose.P95_FACTOR)
    assert t95 > f95
    # A tier without counts falls back to the estimate from its passage budget.
    guess = specs.GGUF.context_chars / choose.CHARS_PER_TOKEN + choose.QUESTION_TOKENS
    assert choose.prompt_tokens(specs.GGUF) == (guess, guess)


def test_a_model_file_without_a_chat_template_cannot_be_counted(tmp_path):
    from bookreader.errors import ModelError

    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ModelError):
        PromptCounter(bad)


def test_an_empty_conversation_costs_its_own_tokens_only():
    if TINY_PATH is None:
        pytest.skip("tiny not installed")
    counter = PromptCounter(TINY_PATH)
    cost = counter.cost([Message("user", "Hello there.")])
    assert cost.prefix == 0 and cost.uncached == cost.total > 2


def test_focused_passages_show_no_invented_dots():
    question = "Why does integer division give zero?"
    text = ("Filler about printing values on the screen. The problem is that Java performs "
            "integer division when the operands are integers. More filler about strings and "
            "characters here. Integer division always rounds toward zero. Final filler about "
            "loops and arrays.")
    [(k, shown)] = focus_passages([text], question, 150, passage_cost=0)
    assert "..." not in shown and "\u2026" not in shown
    for line in shown.split("\n"):
        assert line in text  # every line is the book's own text
