"""What makes a flashcard and what does not, on a real PDF: a reference list, a sentence
about a formula on the page, a footnote mark, and plain definitions in running text; and
the card model's weights file (an experiment) when it is missing, corrupt or trained."""

from __future__ import annotations

import io

import numpy as np
import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.sentences import key_only
from bookreader.core.study import chapter_scope, generate
from bookreader.core.study.card_model import FEATURES, load_weights
from bookreader.core.study.cards import make_cards
from bookreader.core.study.source import Citer, read_sentences
from bookreader.core.study.terms import definition_in
from bookreader.errors import ModelError
from pdf_factory import book_pdf, filler

DEFINITION = ("The kinematic viscosity is the ratio of the dynamic viscosity of a fluid to "
              "its density.")
FOOTNOTED = ("Biological evolution is the change over time in the genetic composition of a "
             "population.1 Our population is made up of interbreeding individuals.")
#: A sentence about a part of a formula on the page: "What does the expression include?"
FORMULA_REMARK = ("The expression includes the volume bulk viscosity, as seems fitting for a "
                  "longitudinal disturbance.")
REFERENCES = [
    "[4] Soumyadeep Chatterjee and Mahendra K. Verma. Kolmogorov flow: Linear stability "
    "and energy transfers in a minimal low-dimensional model. Chaos: An Interdisciplinary "
    "Journal of Nonlinear Science, 30(7):073110, July 2020. Publisher: American Institute "
    "of Physics.",
    "Pure and Applied Mathematics: A Wiley Series of Texts, Monographs and Tracts. John "
    "Wiley, New York, 1999. pp. 12-40.",
]
CHAPTER = "1 Viscous Flow"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    text = "\n\n".join([
        filler(4, 1) + " " + DEFINITION + " " + filler(3, 2),
        filler(2, 3) + " " + FORMULA_REMARK + " " + filler(2, 4),
        FOOTNOTED + " " + filler(3, 5),
        "Bibliography",
        *REFERENCES,
    ])
    spec = book_pdf(tmp_path_factory.mktemp("cards") / "cards.pdf",
                    [(CHAPTER, [("1.1 Stokes Flow", text)])])
    pdf = PdfBook.open(spec.path)
    yield pdf
    pdf.close()


def _cards(book):
    return generate(book, book.book_id, "cards",
                    chapter_scope(book.toc, CHAPTER, book.page_count)).cards


def test_a_plain_definition_in_running_text_makes_a_cited_card(book):
    by_front = {c.front: c for c in _cards(book)}
    card = by_front["kinematic viscosity"]
    assert card.back == DEFINITION
    assert card.citation.verified
    assert key_only(card.back) in key_only(book.page(card.citation.page).text)


def test_reference_list_entries_make_no_card(book):
    cards = _cards(book)
    fronts = {c.front.casefold() for c in cards}
    assert not fronts & {"kolmogorov flow", "publisher", "pure and applied mathematics",
                         "chaos"}
    assert not any("Physics" in c.back or "Wiley" in c.back for c in cards)


def test_a_sentence_about_a_formula_on_the_page_makes_no_question(book):
    cards = _cards(book)
    assert not any("expression" in c.front.casefold() for c in cards)
    assert not any(key_only(FORMULA_REMARK) in key_only(c.back) for c in cards)


def test_a_footnote_mark_ends_the_defining_sentence(book):
    by_front = {c.front: c for c in _cards(book)}
    card = by_front["Biological evolution"]
    assert card.back == ("Biological evolution is the change over time in the genetic "
                         "composition of a population.")


def _weights(weights: np.ndarray, bias: float, threshold: float = 0.5) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, features=np.array(FEATURES), mean=np.zeros(len(FEATURES)),
             scale=np.ones(len(FEATURES)), weights=weights, bias=np.float64(bias),
             threshold=np.float64(threshold))
    return buf.getvalue()


def test_missing_or_corrupt_card_model_weights_are_a_clear_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot be read.*make train-card-model"):
        load_weights(tmp_path / "absent.npz")
    bad = tmp_path / "corrupt.npz"
    bad.write_bytes(b"not an npz file")
    with pytest.raises(ModelError, match="cannot be read"):
        load_weights(bad)
    good = tmp_path / "good.npz"
    good.write_bytes(_weights(np.zeros(len(FEATURES)), 1.0))
    with pytest.raises(ModelError, match="altered"):
        load_weights(good, expected_sha256="0" * 64)
    short = tmp_path / "short.npz"
    buf = io.BytesIO()
    np.savez(buf, features=np.array(FEATURES[:3]), mean=np.zeros(3), scale=np.ones(3),
             weights=np.zeros(3), bias=np.float64(0), threshold=np.float64(0.5))
    short.write_bytes(buf.getvalue())
    with pytest.raises(ModelError, match="other features"):
        load_weights(short)


def test_a_card_model_decides_which_candidates_become_cards(book, tmp_path):
    scope = chapter_scope(book.toc, CHAPTER, book.page_count)
    sentences = read_sentences(book, scope.first, scope.last).sentences
    keep_all = tmp_path / "keep.npz"
    keep_all.write_bytes(_weights(np.zeros(len(FEATURES)), 5.0))
    drop_all = tmp_path / "drop.npz"
    drop_all.write_bytes(_weights(np.zeros(len(FEATURES)), -5.0))
    kept = make_cards(sentences, Citer(book), book.book_id, model=load_weights(keep_all))
    assert "kinematic viscosity" in {c.front for c in kept}
    assert make_cards(sentences, Citer(book), book.book_id,
                      model=load_weights(drop_all)) == []


@pytest.mark.parametrize("sentence, glossary, term", [
    # a glossary entry whose definition holds a semicolon is prose, not code
    ("string: A sequence of characters; the primary data type for text.", True, "string"),
    # a label's text that opens with "This"/"These" and the label's own head describes it
    ("Media Equation Theory: This theory posits that people treat computers and other "
     "media as real social actors.", False, "Media Equation Theory"),
    # a lead opening with a number word or "because" is a description, not a pointer
    ("Two vector spaces are called isomorphic if there is an isomorphism from one vector "
     "space onto the other one.", False, "isomorphic"),
    ("Because variables exist only inside the methods where they are defined, they are "
     "often called local variables.", False, "local variables"),
    # "we'll define X (r) to be ..."
    ("We\u2019ll define the recombination fraction (r) to be the probability of an odd "
     "number of crossing over events between our loci.", False, "recombination fraction"),
])
def test_definitions_the_rules_used_to_drop_make_cards(sentence, glossary, term):
    found = definition_in(sentence, glossary)
    assert found is not None and found.term == term


@pytest.mark.parametrize("sentence", [
    "This kind of isolation is called information hiding.",
    "Thus our subject is called linear algebra.",
    "The seventh line is an even more verbose way of retrieving the first item.",
    "The entire sentence is a conditional with H as its consequent.",
])
def test_pointing_or_passage_bound_sentences_make_no_card(sentence):
    assert definition_in(sentence) is None


def test_a_list_of_commands_in_running_text_makes_no_card(tmp_path):
    text = "\n\n".join([
        filler(3, 1) + " Birds learn to avoid obstacles, to move as a group and to align "
        "with their neighbours. " + filler(2, 2),
        "Collision avoidance: Avoid obstacles, including other birds.",
        "Flock centering: Move toward the center of the flock.",
        "Velocity matching: Align velocity with neighboring birds.",
        "A flock is a group of birds that fly together in one direction.",
    ])
    spec = book_pdf(tmp_path / "flock.pdf", [("1 Flocks", [("1.1 Boids", text)])])
    with PdfBook.open(spec.path) as pdf:
        cards = generate(pdf, pdf.book_id, "cards",
                         chapter_scope(pdf.toc, "1 Flocks", pdf.page_count)).cards
    fronts = {c.front for c in cards}
    assert "flock" in fronts
    assert not fronts & {"Collision avoidance", "Flock centering", "Velocity matching"}
