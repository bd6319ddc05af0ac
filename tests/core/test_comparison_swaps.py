"""A comparison answer must not say of one side what the book says of the other.

Python for Everybody, window trial of stop 34: "What is the difference between a list and
a tuple?" got "The important difference is that lists are immutable." with a verified
citation of the book's "The important difference is that tuples are immutable.": every
other word is the book's and "list" is in the passage, so the check passed it.  Real PDF,
MiniLM, grounding and citations; the model's answer comes from the fake Claude server on
127.0.0.1.
"""

from __future__ import annotations

from bookreader.core.grounding_checks import swaps_compared_side
from bookreader.core.llm.answer_type import comparison_sides
from bookreader.core.types import Mode, Outcome

from fakes.claude_server import Behaviour
from indexed_book import indexed_book

QUESTION = "What is the difference between a list and a tuple?"
TUPLES = ("A tuple is a sequence of values much like a list. The values stored in a tuple "
          "can be any type, and they are indexed by integers. The important difference is "
          "that tuples are immutable. Tuples are also comparable and hashable so we can "
          "sort lists of them and use tuples as key values in Python dictionaries.")
SEQUENCES = ("Lists are more common than tuples, mostly because they are mutable. But there "
             "are a few cases where you might prefer tuples.")


def test_a_sentence_that_moves_the_books_words_to_the_other_side_is_a_swap():
    sides = comparison_sides(QUESTION)
    assert sides == ("list", "tuple")
    context = [*TUPLES.split(". "), SEQUENCES]
    assert swaps_compared_side("The important difference is that lists are immutable.",
                               context, sides)
    # what the book says, of the side it says it of, or of both sides at once
    for fine in ("The important difference is that tuples are immutable.",
                 "Lists are more common than tuples because they are mutable.",
                 "A tuple is a sequence of values much like a list."):
        assert not swaps_compared_side(fine, context, sides), fine
    # a word the book says of both sides is no swap; nor is a question that compares nothing
    assert not swaps_compared_side("Lists are common.", ["Lists and tuples are common."],
                                   sides)
    assert not swaps_compared_side("The important difference is that lists are immutable.",
                                   context, comparison_sides("What is a tuple?"))


KINEMATICS = [
    "For robotic manipulators, we distinguish between forward kinematics and inverse "
    "kinematics.",
    "Forward kinematics involves calculating the position and orientation of the "
    "end-effector given the joint angles.",
    "Inverse kinematics, conversely, involves determining the joint angles required to "
    "achieve a desired end-effector position and orientation.",
]


def test_a_sentence_naming_both_sides_is_judged_side_by_side():
    """Physical AI window trial (stop 35): the small tier said of forward kinematics what
    the book says of inverse kinematics only, in a sentence naming both sides, and the
    check passed it."""
    sides = comparison_sides("What is the difference between forward and inverse kinematics?")
    assert sides == ("forward", "inverse kinematics")
    assert swaps_compared_side(
        "The difference between forward and inverse kinematics is that forward kinematics "
        "involves determining the joint angles required to achieve a desired end-effector "
        "position and orientation, while inverse kinematics involves determining the joint "
        "angles required to achieve a desired end-effector position and orientation.",
        KINEMATICS, sides)
    # each side given what the book says of it, or the book's own sentence naming both
    for fine in ("Forward kinematics involves calculating the position and orientation of "
                 "the end-effector given the joint angles, while inverse kinematics involves "
                 "determining the joint angles required to achieve a desired end-effector "
                 "position and orientation.",
                 KINEMATICS[0],
                 "Inverse kinematics involves determining the joint angles required to "
                 "achieve a desired end-effector position, unlike forward kinematics."):
        assert not swaps_compared_side(fine, KINEMATICS, sides), fine


def test_the_swapped_sentence_is_dropped_and_the_books_own_stays(tmp_path, embedder,
                                                                claude_server, claude_answerer):
    server, answerer = claude_server, claude_answerer
    chapters = [("10 Tuples", [("10.1 Tuples are immutable", TUPLES),
                               ("10.2 Sequences: strings, lists, and tuples", SEQUENCES)])]
    with indexed_book(tmp_path / "book", "tuples.pdf", chapters, embedder,
                      running_header=False) as (_, retriever, pdf):
        server.queue(Behaviour.normal(
            "The important difference is that lists are immutable. [Source: 10.1 Tuples are "
            "immutable (Page 1) - \"The important difference is that tuples are immutable\"] "
            "Lists are more common than tuples, mostly because they are mutable. [Source: "
            "10.2 Sequences: strings, lists, and tuples (Page 1) - \"Lists are more common "
            "than tuples, mostly because they are mutable\"]\nConfidence: 0.9"))
        a = answerer.ask(QUESTION, mode=Mode.BOOK, retriever=retriever, pages=pdf,
                         backend="claude")
    assert "lists are immutable" not in a.text, a.text
    assert a.outcome is Outcome.ANSWER, a.text
    assert a.text.startswith("Lists are more common than tuples"), a.text
    assert a.citations and all(c.verified for c in a.citations)
