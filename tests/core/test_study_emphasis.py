"""Term cards from the book's own emphasis: an italic or bold term in the sentence that
says what it is makes a card; an italic variable or a word in italics for stress does not."""

from __future__ import annotations

import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.study.cards import make_cards
from bookreader.core.study.emphasis_terms import defines_emphasised, emphasised_term
from bookreader.core.study.model import CARD_TERM
from bookreader.core.study.source import Citer, read_sentences
from pdf_factory import LEADING, Line, make_pdf, styled_line

_PLAIN = "helv"


def _page(italic: str, bold: str) -> list[Line]:
    rows: list[list[tuple[str, str]]] = [
        [("Random sampling of gametes changes allele frequencies from one generation", _PLAIN)],
        [("to the next, and the smaller the population the faster the change.", _PLAIN)],
        [("Two gene copies that find their common parent have coalesced, and we refer to",
          _PLAIN)],
        [("this event as a ", _PLAIN), ("coalescent event", italic), (".", _PLAIN)],
        [("In every generation the population holds ", _PLAIN), ("N", italic),
         (" diploid individuals of one kind.", _PLAIN)],
        [("Drift acts in ", _PLAIN), ("any", italic),
         (" generation, whatever the size of the population may be.", _PLAIN)],
        [("The ", _PLAIN), ("fixation index", bold),
         (" is the share of variation found between the subpopulations.", _PLAIN)],
        [("Each subpopulation drifts on its own, so the fixation index grows with time.",
          _PLAIN)],
    ]
    lines: list[Line] = []
    for i, parts in enumerate(rows):
        lines.extend(styled_line(parts, 100.0 + i * LEADING))
    return lines


def _cards(path):
    with PdfBook.open(path) as pdf:
        read = read_sentences(pdf, 0, pdf.page_count - 1)
        return make_cards(read.sentences, Citer(pdf), pdf.book_id)


@pytest.fixture(scope="module")
def emphasised(tmp_path_factory):
    path = tmp_path_factory.mktemp("emph") / "emphasis.pdf"
    make_pdf(path, [_page("heit", "hebo")])
    return _cards(path)


def test_italic_and_bold_terms_in_defining_sentences_make_cards(emphasised):
    terms = {c.front: c for c in emphasised if c.kind == CARD_TERM}
    assert "coalescent event" in terms
    assert terms["coalescent event"].back.endswith("refer to this event as a coalescent event.")
    assert "fixation index" in terms
    assert terms["fixation index"].back.startswith("The fixation index is the share")
    for card in terms.values():
        assert card.citation.verified and card.citation.page == 0


def test_italic_variable_and_stressed_word_make_no_card(emphasised):
    fronts = {c.front.casefold() for c in emphasised}
    assert "n" not in fronts and "any" not in fronts


def test_the_same_page_without_emphasis_makes_no_such_cards(tmp_path):
    path = tmp_path / "plain.pdf"
    make_pdf(path, [_page(_PLAIN, _PLAIN)])
    fronts = {c.front for c in _cards(path)}
    assert "coalescent event" not in fronts


@pytest.mark.parametrize("run", ["N", "x2", "any", "not", "total", "p(t)"])
def test_runs_that_are_not_terms(run):
    assert emphasised_term(run) is None


@pytest.mark.parametrize("sentence, run, ok", [
    ("The effective population size (Ne) is the size of an ideal population.",
     "effective population size", True),
    ("Programs that produce random-seeming numbers are called pseudo-random generators.",
     "pseudo-random generators", True),
    ("These structures are called spaceships.", "spaceships", False),
    ("The denominator of 5.10 is called the standard error of b1.", "standard error", False),
    ("A dummy variable is also sometimes called a binary variable.", "binary variable", False),
    ("The unobserved factors are accounting for more of the variation.",
     "unobserved factors", False),
])
def test_defining_shapes(sentence, run, ok):
    assert defines_emphasised(sentence, run) is ok
