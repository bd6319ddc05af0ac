"""The grounding validator (real MiniLM) on the shapes of the small tier's whole-book
answers that stop 16 looked at: correct answers the check used to reject, and a garbled
one it used to accept.  The passages are written for these tests."""

from __future__ import annotations

import pytest

from bookreader.core.claim_text import (
    claim_terms,
    negation_cues,
    number_terms,
    polarity_agrees,
    speaks_of_requirement,
)
from bookreader.core.grounding_checks import dangling_name
from bookreader.core.grounding_context import support_sentences

SWITCH = (
    "The body of a switch statement is organized into one or more case blocks. Each case "
    "ends with a break statement, which exits the switch body. The default block is optional "
    "and runs only if none of the cases match."
)


@pytest.mark.parametrize("answer", [
    "No, you do not have to include a default case.",
    "If the value does not match any case, the default block is executed.",
])
def test_a_passage_saying_optional_supports_claims_that_are_not_about_requirement(
        validator, answer):
    v = validator.validate(answer, SWITCH, question="Do I need a default case in a switch?")
    assert v.passed, v


@pytest.mark.parametrize("answer", [
    "Yes, every switch statement must include a default case.",
    "The default block is required.",
    "The default block cannot be omitted.",
    "There is no default case.",
    "The default block is never executed.",
])
def test_claims_against_optional_or_one_or_more_still_fail(validator, answer):
    assert not validator.validate(answer, SWITCH).passed, answer


def test_requirement_words():
    assert speaks_of_requirement("Every switch must include a default case.")
    assert speaks_of_requirement("The default block cannot be omitted.")
    assert speaks_of_requirement("You have to declare it.")
    assert not speaks_of_requirement("The default block runs when no case matches.")


def test_a_window_optional_needs_a_claim_optional_only_for_requirement_claims():
    window = negation_cues("The default block is optional.")
    terms = {"default", "block", "execut"}
    assert polarity_agrees([], window, terms, {"default", "block", "option"}, requirement=False)
    assert not polarity_agrees([], window, terms, {"default", "block", "option"},
                               requirement=True)


ARRAYS = (
    "To create the array itself, you use the new operator. The new operator allocates memory "
    "for the array and automatically initializes all of its elements to zero."
)


def test_number_words_and_digits_are_one_term(validator):
    assert set(claim_terms("its elements are zero")) == set(claim_terms("its elements are 0"))
    assert validator.validate("The new operator initializes all elements of the array to 0.",
                              ARRAYS).passed
    assert not validator.validate("The new operator initializes all elements of the array "
                                  "to 1.", ARRAYS).passed


def test_one_as_a_pronoun_is_no_number():
    assert number_terms("the one before it") == set()


SELECTION = (
    "An array is a sequence of values; the values in an array are called elements. You can "
    "make an array of ints, doubles, Strings, or any other type."
)


def test_a_naming_sentence_without_its_name_fails(validator):
    assert dangling_name("The values in an array called are Strings.")
    assert not dangling_name("The values in an array are called elements.")
    assert not validator.validate("The values in an array called are Strings.", SELECTION).passed
    assert validator.validate("The values in an array are called elements.", SELECTION).passed


EQUALITY = (
    "There are two ways to check whether values are equal: the == operator and the equals "
    "method. With objects you can use either one, but they are not the same. The == operator "
    "checks whether two references are identical, that is, whether they refer to the same "
    "object. The equals method checks whether two objects are equivalent, that is, whether "
    "they have the same values."
)


def test_different_restates_not_the_same(validator):
    answer = ("The difference between == and the equals method is that == checks whether two "
              "references are identical, while the equals method checks whether two objects "
              "are equivalent.")
    assert validator.validate(answer, EQUALITY).passed
    assert not validator.validate("With objects, == and equals do not differ.", EQUALITY).passed


GLOSSARY = (
    "refactor: To reorganize existing code without changing its behavior. abstract class: A "
    "class that is declared as abstract; it cannot be instantiated, and it may (or may not) "
    "include abstract methods. concrete class: A class that is not declared as abstract."
)


def test_glossary_entries_are_statements_of_their_own(validator):
    assert support_sentences(GLOSSARY) == [
        "refactor: To reorganize existing code without changing its behavior.",
        "abstract class: A class that is declared as abstract; it cannot be instantiated, and "
        "it may (or may not) include abstract methods.",
        "concrete class: A class that is not declared as abstract.",
    ]
    assert validator.validate("An abstract class is a class that is declared as abstract; it "
                              "cannot be instantiated.", GLOSSARY).passed
    assert not validator.validate("An abstract class can be instantiated.", GLOSSARY).passed
    assert not validator.validate("A concrete class is declared as abstract.", GLOSSARY).passed


def test_a_negation_naming_no_content_word_bears_on_nothing():
    (cue,) = [c for c in negation_cues("or may not") if c.kind == "not"]
    assert not cue.bears_on({"abstract", "class"})


PLANNING = (
    "Multi-Agent Planning: Conflict-Based Search coordinates multiple robots to avoid "
    "conflicts while reaching their goals."
)


def test_avoid_says_not_of_its_object(validator):
    assert validator.validate("Conflict-Based Search coordinates multiple robots so that they "
                              "reach their goals without conflicts.", PLANNING).passed
    # an avoiding verb matches a negation about its own object only
    assert not validator.validate("Conflict-Based Search coordinates multiple robots without "
                                  "planning.", PLANNING).passed
    (cue,) = negation_cues("robots plan paths to avoid conflicts")
    assert cue.kind == "avoid" and cue.head == "conflict"
    assert polarity_agrees(negation_cues("robots reach goals without conflicts"), [cue],
                           {"robot", "reach", "goal", "conflict"},
                           {"robot", "plan", "path", "avoid", "conflict"})


def test_a_list_items_number_left_at_a_sentence_end_is_not_claimed():
    assert number_terms("To set it up, follow these steps: 1.") == set()
    assert number_terms("Create it: python -m venv env\n2.") == set()
    # a quoted copy of the sentence (a quote line beside an answer) reads the same
    assert number_terms("\u201cIt uses several sensors: 1.\u201d") == set()
    assert number_terms("The result is 2.") == {"2"}
    assert number_terms("as in Figure 9.4.") == {"9.4"}


# Python for Everybody 10.1, as the small tier answered "What is the difference between a list
# and a tuple?" in stop 16's trial: the passage's other term named again in the subject's place.
TUPLE = ("A tuple is a sequence of values much like a list. The values stored in a tuple can be "
         "any type, and they are indexed by integers. The important difference is that tuples "
         "are immutable.")


def test_the_other_term_named_again_in_the_subjects_place_is_a_swap(validator):
    assert not validator.validate("A list is a sequence of values much like a list.",
                                  TUPLE).passed
    assert validator.validate("A tuple is a sequence of values much like a list.", TUPLE).passed
    assert validator.validate("Tuples are immutable, which is the important difference.",
                              TUPLE).passed


HEALTHCARE_LISTING = (
    'class HealthcareRoboticsSystem:\n"""Comprehensive healthcare robotics system"""\n'
    "def __init__(self):\nself.patients = {}\n# Monitor every patient's vital signs\n"
    "self.robot_tasks = {}\nself.safety_protocols = {}"
)


def test_a_docstring_or_comment_quoted_word_for_word_is_a_copy(validator):
    """Physical AI (stop 35): a listing's lines are one support sentence, so the book's
    sentence "Comprehensive healthcare robotics system" (a docstring, shown without its
    triple quotes) was scored 0.755 against the whole listing, and the book's sentences
    quoting it fell under the confidence they need.  Quoted word for word, a docstring
    or a comment line is a copy; a claim built on its words is still judged."""
    for quoted in ("Comprehensive healthcare robotics system.",
                   "Monitor every patient's vital signs."):
        v = validator.validate(quoted, HEALTHCARE_LISTING)
        assert v.passed and v.similarity == 1.0, (quoted, v)
    v = validator.validate("The healthcare robotics system is comprehensive and monitors "
                           "the vital signs of every surgeon.", HEALTHCARE_LISTING)
    assert not v.passed, v
