"""Cards from running prose (core/study/prose.py), on real PDFs: a name given to what the
sentence before described (both sentences cited as one excerpt), a definition with an
adverb, a framing phrase or a run-in heading, and questions of cause, condition and
dependence.  A chapter of prose that defines nothing makes no card."""

from __future__ import annotations

import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.study.cards import make_cards
from bookreader.core.study.model import CARD_QUESTION, CARD_TERM
from bookreader.core.study.prose import adverb_definition, cause_question
from bookreader.core.study.source import Citer, read_sentences
from pdf_factory import filler, make_pdf

NAMED_PAIR = ("Each gene copy in the next generation picks its parent copy at random from "
              "the copies of the generation before. This model is commonly called the "
              "Wright-Fisher model.")
ADVERB = ("The rate of substitution is therefore the rate at which new alleles become fixed "
          "in the whole population.")
FRAMED = "In words, variance is the expected squared difference of a variable from its mean."
HEADING = ("2.1.2 Test statistics A test statistic is a convenient number for assessing the "
           "null hypothesis from a sample.")
CAUSE = ("Genetic drift occurs because more or fewer copies of an allele are passed on to "
         "the next generation by chance.")
CONDITION = ("A neutral polymorphism occurs when the alleles at a site have no discernible "
             "difference in their effect on fitness.")
DEPENDENCE = "The speed of a sound wave depends on the stiffness and the density of the medium."

#: Prose that states and narrates but neither names nor explains anything.
PLAIN_PROSE = [
    "We walked along the river in the morning and stopped at a small bridge. "
    "The weather was mild, and the path was quiet for most of the day. "
    "Later we ate lunch on a bench and watched the boats pass slowly.",
    "This is called a good day by most of the people we met. "
    "It occurs to me that the town depends on visitors in the summer.",
]


def _cards(path):
    with PdfBook.open(path) as pdf:
        read = read_sentences(pdf, 0, pdf.page_count - 1)
        return make_cards(read.sentences, Citer(pdf), pdf.book_id)


@pytest.fixture(scope="module")
def prose_cards(tmp_path_factory):
    path = tmp_path_factory.mktemp("prose") / "prose.pdf"
    page1 = "\n\n".join([filler(3, 1), NAMED_PAIR, filler(2, 2), ADVERB + " " + FRAMED,
                         HEADING])
    page2 = "\n\n".join([CAUSE + " " + CONDITION, filler(3, 3), DEPENDENCE])
    make_pdf(path, [page1, page2])
    return _cards(path)


def test_a_name_for_the_sentence_before_makes_a_card_citing_both(prose_cards):
    card = next(c for c in prose_cards if c.front == "Wright-Fisher model")
    assert card.kind == CARD_TERM
    assert card.back == NAMED_PAIR
    assert card.citation.verified and card.citation.page == 0
    assert "picks its parent copy at random" in card.citation.excerpt


def test_definitions_read_past_an_adverb_a_framing_phrase_or_a_run_in_heading(prose_cards):
    terms = {c.front: c for c in prose_cards if c.kind == CARD_TERM}
    assert terms["rate of substitution"].back == ADVERB
    assert terms["variance"].back == FRAMED
    assert terms["test statistic"].back == HEADING.split(" ", 3)[3]
    assert all(c.citation.verified for c in terms.values())


def test_cause_condition_and_dependence_make_question_cards(prose_cards):
    questions = {c.front: c for c in prose_cards if c.kind == CARD_QUESTION}
    assert questions["Why does Genetic drift occur?"].back == CAUSE
    assert questions["When does a neutral polymorphism occur?"].back == CONDITION
    assert questions["What does the speed of a sound wave depend on?"].back == DEPENDENCE
    assert all(c.citation.verified and c.citation.page == 1 for c in questions.values())


def test_prose_that_defines_nothing_makes_no_card(tmp_path):
    path = make_pdf(tmp_path / "plain.pdf", ["\n\n".join(PLAIN_PROSE), filler(20, 5)])
    assert _cards(path) == []


@pytest.mark.parametrize("text", [
    "This depends on the data.",  # a subject that points back
    "The result depends on the details of the run.",  # a thing of the page
    "It occurs when the loop ends early.",
    "The importance of the next result arises because the bases differ.",
    "The singular value decomposition leads to the following upper bound.",
])
def test_no_question_about_a_subject_that_is_no_term(text):
    assert cause_question(text) is None


def test_no_definition_from_an_adverb_on_a_gerund_or_a_page_thing():
    assert adverb_definition("Including the squared term is just a trick for the fit.") is None
    assert adverb_definition("The solution is simply a linear function of y here.") is None
