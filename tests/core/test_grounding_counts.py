"""A number said of another count."""

from __future__ import annotations

from bookreader.core.claim_text import number_terms
from bookreader.core.grounding import GroundingValidator
from bookreader.core.grounding_checks import counts, miscounted

STATE = ("The figure shows the state of the model after 100 time steps, with about 250 "
         "agents. The agents who survive tend to be the lucky ones.")
RULES = ("If a cell is alive, it survives if it has 2 or 3 neighbors and dies otherwise. "
         "If a cell is dead, it stays dead unless it has exactly 3 neighbors.")


def test_counts_read_what_a_number_counts():
    assert counts("after 100 time steps, with about 250 agents") == {
        "time": {"100"}, "agent": {"250"}}
    # punctuation ends the search, a number inside a word is no count, another number
    # ends it too ("2 or 3 neighbors": the 3 counts them)
    assert counts("In version 3, dividing gives a float.") == {}
    assert counts("ROS1 uses 2 or 3 neighbors") == {"neighbor": {"3"}}


def test_numbers_exchanged_between_what_they_count_are_caught():
    ctx = [STATE]
    assert miscounted("The model is shown after 250 time steps, with about 100 agents.",
                      ctx) == ["250 time", "100 agent"]
    assert miscounted("After 100 time steps about 250 agents remain.", ctx) == []
    assert miscounted("A dead cell stays dead unless it has exactly 2 neighbors.",
                      [RULES]) == ["2 neighbor"]
    assert miscounted("Live cells survive with 2 or 3 neighbors.", [RULES]) == []


def test_a_hyphenated_dimension_is_its_number():
    assert number_terms("in 3-D space") == {"3"}


def test_the_validator_rejects_swapped_counts(embedder):
    v = GroundingValidator(embedder.quantized_copy())
    assert v.validate("The figure shows the state of the model after 100 time steps, with "
                      "about 250 agents.", STATE).passed
    swapped = v.validate("The figure shows the state of the model after 250 time steps, "
                         "with about 100 agents.", STATE)
    assert not swapped.passed
