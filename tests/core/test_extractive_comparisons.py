"""A comparison question is answered for both of its sides.

Think Java, stop-35 window trial: "What is the difference between a while loop and a for
loop?" got the book's "A while loop is “indefinite” ..." and its example, without "A for
loop is “definite” ...".  "while" and "for" are stopwords, so both sides were just "loop"
to the content words (every sentence about loops "named both"), and "a for loop" was read
as the side "a" (the question's "for" taken for "... for strings").  Real PDF, MiniLM and
the real extractive backend.
"""

from __future__ import annotations

from bookreader.core.answering import Answerer
from bookreader.core.citations import strip_citations
from bookreader.core.llm.answer_type import comparison_sides, names_both, names_side
from bookreader.core.types import Mode, Outcome

from indexed_book import indexed_book

QUESTION = "What is the difference between a while loop and a for loop?"
LOOPS = [("6 Loops", [("6.6 Which Loop to Use", (
    "Loops are used to repeat code. You might wonder when to use one or the other. It "
    "depends on whether you know how many times the loop will repeat. A for loop is "
    "definite, which means we know, at the beginning of the loop, how many times it will "
    "repeat. In the alphabet example, we know it will run 26 times. A while loop is "
    "indefinite, which means we do not know how many times it will repeat. For example, "
    "when validating user input, it is impossible to know how many times the user will "
    "enter a wrong value."))])]


def test_sides_that_differ_only_in_stopwords_are_read_as_phrases():
    sides = comparison_sides(QUESTION)
    assert sides == ("while loop", "for loop")
    assert comparison_sides("What is the difference between == and equals for strings?") == (
        "==", "equals")  # "for" still ends a side after a complete one
    while_loop, for_loop = sides
    definite = "A for loop is definite, which means we know how many times it will repeat."
    assert names_side(definite, for_loop, sides) and not names_side(definite, while_loop, sides)
    assert not names_both(definite, sides)
    assert names_both("Any for loop can be rewritten as a while loop.", sides)
    assert not names_both("Loops are used to repeat code.", sides)


def test_an_answer_for_one_side_gets_the_other_sides_sentence(tmp_path, embedder):
    with indexed_book(tmp_path, "loops.pdf", LOOPS, embedder,
                      running_header=False) as (settings, retriever, pdf):
        a = Answerer(settings, embedder=embedder).ask(
            QUESTION, mode=Mode.BOOK, retriever=retriever, pages=pdf, backend="extractive")
    assert a.outcome is Outcome.ANSWER, a.text
    shown = strip_citations(a.text)
    assert "A for loop is definite" in shown and "A while loop is indefinite" in shown, a.text
    assert a.citations and all(c.verified for c in a.citations), a.citations
