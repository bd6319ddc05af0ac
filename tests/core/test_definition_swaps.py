"""A definition the book gives one term must not be said of another.

Physical AI window trial, stop 36: "What is imitation learning?" got "Imitation learning is
the ability to apply knowledge learned in one context to new but related tasks, which is
crucial for efficient learning in robotics." at medium confidence.  The book says that of
transfer learning; its entry for imitation learning says "Robots learn by observing and
mimicking human demonstrations."  Every word of the answer is in the two entries, and
"learning" is in both labels, so the check passed it.  Real MiniLM and grounding; the
passage is the book's (p. 203).
"""

from __future__ import annotations

import pytest

from bookreader.core.grounding_checks import labelled_entries, swaps_defined_subject

LEARNING = (
    "Reinforcement Learning: Robots learn through trial and error, receiving rewards or "
    "penalties for their actions. Imitation Learning: Robots learn by observing and "
    "mimicking human demonstrations. This approach is valuable for teaching complex "
    "manipulation tasks that are difficult to program manually. Learning Theory and "
    "Generalization. For robotic learning systems to be effective, they must generalize from "
    "training experiences to new situations. Key concepts include: Bias-Variance Tradeoff: The "
    "balance between model complexity and generalization ability. Sample Complexity: The "
    "amount of data required for effective learning, which is particularly important in "
    "robotics where data collection can be expensive and time-consuming. Transfer Learning: "
    "The ability to apply knowledge learned in one context to new but related tasks, which is "
    "crucial for efficient learning in robotics.")
SWAPPED = ("Imitation learning is the ability to apply knowledge learned in one context to new "
           "but related tasks, which is crucial for efficient learning in robotics.")


def test_the_trials_swapped_definition_is_not_supported(validator):
    v = validator.validate(SWAPPED, LEARNING, question="What is imitation learning?")
    assert not v.passed and SWAPPED in v.unsupported_sentences, v


@pytest.mark.parametrize("answer", [
    "Imitation learning is when robots learn by observing and mimicking human demonstrations.",
    "Transfer learning is the ability to apply knowledge learned in one context to new but "
    "related tasks.",
])
def test_each_term_with_its_own_definition_still_passes(validator, answer):
    v = validator.validate(answer, LEARNING)
    assert v.passed, v


def test_only_parallel_definitions_count_as_a_swap():
    entries = labelled_entries(["Transfer Learning: The ability to apply knowledge learned in one context to "
               "new but related tasks.",
               "Imitation Learning: Robots learn by observing and mimicking demonstrations."])
    assert swaps_defined_subject(
        "Imitation learning is the ability to apply knowledge learned in one context to new "
        "tasks.", entries)
    # the subject has no entry of its own: a synonym or a paraphrase, not a swap
    assert not swaps_defined_subject(
        "Knowledge transfer is the ability to apply knowledge learned in one context to new "
        "tasks.", entries)
    # the right entry
    assert not swaps_defined_subject(
        "Transfer learning is the ability to apply knowledge learned in one context to new "
        "tasks.", entries)
    # not a definition
    assert not swaps_defined_subject(
        "Robots apply knowledge learned in one context to new tasks.", entries)


BOOLEANS = ("boolean: A data type with only two possible values, true and false. "
            "relational operator: An operator that compares two values and produces a "
            "boolean indicating the relationship between them. string: A sequence of "
            "characters; the primary data type for text.")


def test_a_modifiers_definition_said_of_the_whole_term_is_not_supported(validator):
    """Think Java window trial, stop 36: "What is a boolean expression?" got "A boolean
    expression is a data type with only two possible values, true and false." at medium
    confidence: the vocabulary's definition of boolean, said of an expression."""
    swapped = ("A boolean expression is a data type with only two possible values, true "
               "and false.")
    v = validator.validate(swapped, BOOLEANS, question="What is a boolean expression?")
    assert not v.passed and swapped in v.unsupported_sentences, v
    for answer in ("A boolean is a data type with only two possible values, true and false.",
                   "A string is a sequence of characters, the primary data type for text."):
        assert validator.validate(answer, BOOLEANS).passed, answer
    # the entry's term as the subject's head, with a modifier before it: no swap
    assert not swaps_defined_subject(
        "A Java String is a sequence of characters, the primary data type for text.",
        labelled_entries([BOOLEANS.split(". ")[-1]]))


def test_the_head_of_a_subject_ends_before_its_preposition():
    """Physical AI's held-out answer "Supervised learning with classification and
    regression is used on robots to learn from labeled training data." (correct) repeats the
    entry "Supervised Learning: In this approach, robots learn from labeled training data.":
    its head is "learning", which the label names."""
    entries = labelled_entries(["Supervised Learning: In this approach, robots learn from "
                                "labeled training data."])
    assert not swaps_defined_subject(
        "Supervised learning with classification and regression is used on robots to learn "
        "from labeled training data.", entries)
