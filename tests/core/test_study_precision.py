"""Flashcards that read alone: a program's own identifiers (told by the page's fonts), a
list item that is a sentence about something else, praise, a work or a person, and a
glossary entry that the next one ran into make no card (real PDFs where fonts matter)."""

from __future__ import annotations

import pytest

from bookreader.core.emphasis import code_runs, emphasised_runs
from bookreader.core.pdf import PdfBook
from bookreader.core.study.cards import make_cards
from bookreader.core.study.source import Citer, glossary_entries, read_sentences
from bookreader.core.study.terms import definition_in, question_for
from pdf_factory import LEADING, Line, make_pdf, styled_line

_PLAIN = "helv"
_CODE = "cour"


def _code_page(code: str) -> list[Line]:
    """Prose with identifiers set in ``code`` (Courier, or the body font for the control)."""
    rows: list[list[tuple[str, str]]] = [
        [("A grid is a table of cells arranged in rows and columns of equal size.", _PLAIN)],
        [("The function draw takes the grid and two numbers and paints every cell.", _PLAIN)],
        [("The parameter ", _PLAIN), ("rows", code),
         (" is the number of lines of cells that the function paints.", _PLAIN)],
        [("Then we call the ", _PLAIN), ("sort", code),
         (" method on the list to order the cells in the frame object.", _PLAIN)],
        [("import", code),
         (" statement: A statement that reads a module file and makes a module object.",
          _PLAIN)],
    ]
    lines: list[Line] = []
    for i, parts in enumerate(rows):
        lines.extend(styled_line(parts, 100.0 + i * LEADING * 2))
    return lines


def _fronts(path) -> set[str]:
    with PdfBook.open(path) as pdf:
        read = read_sentences(pdf, 0, pdf.page_count - 1)
        return {c.front for c in make_cards(read.sentences, Citer(pdf), pdf.book_id)}


@pytest.fixture(scope="module")
def code_pdfs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("code")
    return (make_pdf(folder / "courier.pdf", [_code_page(_CODE)]),
            make_pdf(folder / "plain.pdf", [_code_page(_PLAIN)]))


def test_inline_courier_is_read_as_code_and_not_as_emphasis(code_pdfs):
    courier, plain = code_pdfs
    with PdfBook.open(courier) as pdf:
        assert {"rows", "sort", "import"} <= set(pdf.code(0))
        read = read_sentences(pdf, 0, 0)
        said = next(s for s in read.sentences if s.text.startswith("The parameter rows"))
        assert said.code == ("rows",)
    with PdfBook.open(plain) as pdf:
        assert pdf.code(0) == []


def test_a_programs_identifier_makes_no_term_card_where_the_same_words_in_prose_do(code_pdfs):
    courier, plain = code_pdfs
    in_prose, in_code = _fronts(plain), _fronts(courier)
    assert "parameter rows" in in_prose  # the same words in the body font: a term card
    assert "parameter rows" not in in_code  # "rows" of one function: no card
    assert "frame object" not in in_code  # "we call the sort method": a call, not a name
    assert "grid" in in_code  # prose terms on the page still make their cards
    assert "import statement" in in_code  # an entry's code term is the book's own term


def test_a_book_set_in_a_monospaced_font_has_no_code_and_keeps_its_emphasis(tmp_path):
    rows = [
        [("Robots sense the world with cameras, touch and sound in every task.", _CODE)],
        [("A ", _CODE), ("depth camera", "cobo"),
         (" is a camera that measures the distance to each point.", _CODE)],
    ]
    lines = [ln for i, parts in enumerate(rows)
             for ln in styled_line(parts, 100.0 + i * LEADING)]
    path = make_pdf(tmp_path / "mono.pdf", [lines])
    import fitz

    with fitz.open(path) as doc:
        info = doc[0].get_text("dict")
    assert code_runs(info) == []
    assert "depth camera" in emphasised_runs(info)


_LIST_PAGE = """Agents of the model

Initially there are 400 agents placed at random locations. Each agent has three
randomly chosen attributes:

Sugar: Each agent starts with an endowment of sugar chosen between 5 and 25 units.

Vision: Each agent can see the amount of sugar in nearby cells and move to the richest.

Growth: Instead of starting with many vertices, the model starts with a small graph.

Kalman filtering: Optimal estimation for linear systems with Gaussian noise.
"""


def test_a_list_item_that_is_a_sentence_about_something_else_makes_no_card(tmp_path):
    fronts = _fronts(make_pdf(tmp_path / "list.pdf", [_LIST_PAGE]))
    assert not {"Sugar", "Vision", "Growth"} & fronts
    assert "Kalman filtering" in fronts  # an item that says what its label is


@pytest.mark.parametrize("sentence", [
    "Writing programs (or programming) is a very creative and rewarding activity.",
    "Data modeling is a relatively sophisticated skill and we will only introduce it here.",
    "Evolution of Cooperation is the title of the first book where Axelrod presented results.",
    "Strogatz is a mathematician, so his enthusiasm for proofs is understandable.",
    "The return value is the fraction of automata that do.",
    "The temperature tomorrow is a continuous random variable.",
    "Data contains wage, schooling and age. \u2022 Goal: estimate the returns to schooling.",
    "Two more rules are called Smith\u2019s Laws, named for the logician Ann Smith.",
    "Read Flatland: A Romance of Many Dimensions, by Edwin A. Abbott, for an amusing account.",
    "The site provides a view of the notebooks and of the results I generated for the book.",
])
def test_praise_works_persons_and_leaning_sentences_define_nothing(sentence):
    assert definition_in(sentence) is None and question_for(sentence) is None


@pytest.mark.parametrize("sentence,term", [
    ("A random variable is a variable whose value is the outcome of a random process.",
     "random variable"),
    ("Spectral analysis is the process of finding the components that make up a signal.",
     "Spectral analysis"),
    ("We call the variable that changes each time the loop runs the iteration variable.",
     "iteration variable"),
])
def test_plain_definitions_still_define(sentence, term):
    found = definition_in(sentence)
    assert found is not None and found.term == term


def test_a_glossary_entry_ends_where_an_abbreviation_or_a_bracketed_term_begins():
    block = ("data structure A collection of related values, often organized in lists,\n"
             "tuples, etc.\n"
             "DSU Abbreviation of \u201cdecorate-sort-undecorate\u201d, a pattern that sorts\n"
             "a list of tuples.\n"
             "scatter The operation of treating a sequence as a list of arguments.\n"
             "shape (of a data structure) A summary of the type, size, and composition of\n"
             "a data structure.")
    entries = glossary_entries(block)
    assert entries[0] == ("data structure A collection of related values, often organized "
                          "in lists, tuples, etc.")
    assert entries[2] == "scatter The operation of treating a sequence as a list of arguments."
    assert entries[3].startswith("shape (of a data structure) A summary")


_PARALLEL_PAGE = """Cells in a row

To say that an automaton has dimensions is to say that its cells are arranged in a
space. In one dimension, there are three natural configurations:

Finite line: A finite number of cells arranged in a row. All cells but the ends have two
neighbors.

Circle: A finite number of cells arranged in a ring. All cells have two neighbors.

Endless line: An infinite number of cells arranged in a row.

Birds flocking in the sky keep moving together. Each bird follows three rules:

Separation: Avoid crowding the neighbors that come too near.

Cohesion: Move toward the average position of the neighbors.

Alignment: Steer toward the average heading of the neighbors.

A filter estimates a state from noisy readings. Two filters are common:

Kalman filtering: Optimal estimation for linear systems with Gaussian noise.

Particle filtering: A sampling method for systems that are neither linear nor Gaussian.
"""


def test_items_of_one_frame_and_lists_of_commands_make_no_cards(tmp_path):
    fronts = _fronts(make_pdf(tmp_path / "lists.pdf", [_PARALLEL_PAGE]))
    # "A finite number of cells arranged in a row / a ring": each says what it is only
    # against the others, in the frame of the lead-in
    assert not {"Finite line", "Circle", "Endless line"} & fronts
    # "Move" is a verb of the page ("moving"); its list's other items are commands too
    assert not {"Separation", "Cohesion", "Alignment"} & fronts
    assert {"Kalman filtering", "Particle filtering"} <= fronts


def test_a_name_one_thing_had_is_no_emphasised_term():
    from bookreader.core.study.emphasis_terms import defines_emphasised

    assert not defines_emphasised("We use data from an archive service that was called "
                                  "mailbox - the service has since been shut down.", "mailbox")
    assert defines_emphasised("A loop that never ends is called an infinite loop.",
                              "infinite loop")
