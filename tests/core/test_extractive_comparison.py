"""Issue 11, section 6: a comparison question ("What is the difference between == and
equals?") is answered by the book's sentence that names both sides, not by one about either
alone (window trial on Think Java, stop 18: "If the strings are equal, their difference is
zero." led the answer).  Real MiniLM."""

from __future__ import annotations

from bookreader.core.llm import extractive as extractive_mod
from bookreader.core.llm.answer_type import comparison_sides, names_both
from bookreader.core.llm.extractive import ExtractiveBackend
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Mode

COMPARE_TO = ("The return value from compareTo is the difference between the first "
              "characters in the strings that are not the same. If the strings are equal, "
              "their difference is zero. Both equals and compareTo are case-sensitive.")
SIDE_BY_SIDE = ("With objects, you can use either one, but they are not the same. The == "
                "operator checks whether two references are identical, while the equals "
                "method checks whether two objects have the same values.")


def test_the_two_sides_of_a_comparison_question():
    assert comparison_sides("What is the difference between == and equals for strings?") == (
        "==", "equals")
    assert comparison_sides("What is the difference between a fruitful function and a "
                            "void function?") == ("fruitful", "void")
    assert comparison_sides("How does ROS1 differ from ROS2?") is None  # no "between"/"compare"
    assert comparison_sides("Compare lists with tuples.") == ("lists", "tuples")
    assert comparison_sides("ASIMO vs Atlas?") == ("ASIMO", "Atlas")
    assert comparison_sides("What is a base case?") is None


def test_a_sentence_names_a_side_by_its_words_or_its_symbol():
    sides = ("==", "equals")
    assert names_both("The == operator checks identity; the equals method checks values.",
                      sides)
    assert not names_both("If the strings are equal, their difference is zero.", sides)
    assert names_both("A fruitful function returns a value; a void function does not.",
                      ("fruitful", "void"))


def test_the_sentence_naming_both_sides_leads(embedder, monkeypatch):
    messages = build_messages(
        Mode.BOOK, "What is the difference between == and equals for strings?",
        excerpts=[Excerpt(1, "6.10 String Comparison", "102", COMPARE_TO),
                  Excerpt(2, "11.7 The equals Method", "192", SIDE_BY_SIDE)])
    first = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    assert first.startswith("The == operator checks whether two references"), first
    monkeypatch.setattr(extractive_mod, "COMPARISON_BONUS", 0.0)
    first = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    assert not first.startswith("The == operator"), first  # the rule is what moved it
