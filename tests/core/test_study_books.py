"""The study rules on real books of two fields (skips without ../shared/eval)."""

from __future__ import annotations

import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.study import chapter_scope, generate
from bookreader.core.study.terms import definition_in, question_for


def _cards(eval_dir, name: str, title: str):
    with PdfBook.open(eval_dir / "books" / f"{name}.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), title, pdf.page_count)
        return {c.front: c for c in generate(pdf, pdf.book_id, "cards", scope).cards}


def test_a_vocabulary_section_becomes_cards_whole_entries(eval_dir):
    cards = _cards(eval_dir, "thinkjava2", "1. Computer Programming")
    assert cards["bug"].back == "An error in a program."
    # an entry runs on over its wrapped lines, and stops at the next entry
    assert cards["virtual machine"].back == "An emulation of a real machine."
    assert cards["What does the JVM enable?"].back.startswith("The JVM enables a computer")
    assert all(c.citation.section == "1.10. Vocabulary" for f, c in cards.items()
               if f in ("bug", "virtual machine", "compile"))


def test_definitions_in_running_text_of_a_logic_book(eval_dir):
    cards = _cards(eval_dir, "philosophy_forallx", "What is logic?")
    assert cards["tautology"].back == "A logically true sentence is called a tautology."
    assert "contingent sentence" in cards  # "we can define a contingent sentence as ..."
    assert not [f for f in cards if any(ch.isdigit() for ch in f)]  # no "Sentence 14"


@pytest.mark.parametrize("sentence", [
    "Sentence 14 is a bit more complicated.",  # a numbered example (logic book)
    "Consistency is the most important property for an estimator to have.",  # econometrics
    "The positive sign on carat2 means that we have estimated an increasing marginal effect.",
    "White\u2019s test statistic is the nR2 from this auxiliary regression, and the p-value "
    "comes from the Chi-square distribution.",  # points back
    "However, armed with this knowledge, we can construct what is called a bias corrected "
    "estimator.",
    "with more than one place are called polyadic.",  # a fragment cut at a page
])
def test_sentences_that_define_nothing_make_no_card(sentence):
    assert definition_in(sentence) is None and question_for(sentence) is None


@pytest.mark.parametrize("sentence,term", [
    ("We\u2019ll call the proportion of the variance that is genetic the heritability, and "
     "denote it by h2.", "heritability"),  # population genetics
    ("Here, we define the absolute fitness of a genotype as the expected number of offspring "
     "of an individual of that genotype.", "absolute fitness of a genotype"),
    ("The term homoskedasticity (same dispersion) refers to this situation of identically "
     "distributed error terms.", None),  # points back: no card
    ("A dummy variable is a variable that takes on one of two values (usually 0 or 1).",
     "dummy variable"),  # econometrics
])
def test_defining_forms_of_other_fields(sentence, term):
    found = definition_in(sentence)
    assert (found.term if found else None) == term


@pytest.mark.parametrize("sentence,term", [
    # a list item's bullet is not part of the sentence (linear algebra, robotics)
    ("\u2022 A complex number is an ordered pair (\U0001d44e, \U0001d44f), where "
     "\U0001d44e, \U0001d44f\u2208\U0001d411, but we will write this as "
     "\U0001d44e+ \U0001d44f\U0001d456.", "complex number"),
    ("\u2022 A humanoid robot is a robot whose body is shaped like a human body.",
     "humanoid robot"),
    # a mathematical letter the PDF ran into the next word ("over 𝐑is called")
    ("A vector space over \U0001d411is called a real vector space.", "real vector space"),
])
def test_list_items_and_glued_mathematical_letters(sentence, term):
    from bookreader.core.study.source import unglued

    found = definition_in(unglued(sentence))
    assert found is not None and found.term == term


def test_a_linear_algebra_chapter_defines_its_terms_with_glued_letters(eval_dir):
    cards = _cards(eval_dir, "math_ladr4e", "Vector Spaces")
    assert {"complex number", "scalars", "real vector space"} <= set(cards)
    assert cards["real vector space"].citation.verified
