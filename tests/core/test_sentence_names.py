"""The sentence splitter keeps dotted code names and abbreviations whole, and still splits
run-together sentences (a lost line break)."""

from __future__ import annotations

import pytest

from bookreader.core.sentences import split_sentences


@pytest.mark.parametrize("text", [
    # econometrics: an R data frame's column
    "The model omits a missing variable Living.Area (the size of the house in square feet).",
    # Java and Python names
    "Call System.out.println to print a line, or Math.PI for pi.",
    "The column my_df.Price and the class pkg.module.Reader are both named.",
    # numbers and abbreviations
    "Pi is about 3.14 and e.g. Fig. 2 shows it, as Smith et al. reported.",
])
def test_one_sentence_stays_one(text):
    assert split_sentences(text) == [text]


def test_run_together_sentences_still_split():
    assert split_sentences("One is here.Two follows. She moved to Paris.The city was big.") == [
        "One is here.", "Two follows.", "She moved to Paris.", "The city was big."]
    assert split_sentences("It uses Living.Area here. Then it stops.") == [
        "It uses Living.Area here.", "Then it stops."]


@pytest.mark.parametrize("text,sentences", [
    # a sentence that ends with a variable's letter, then a function word: two sentences
    ("Suppose λ is an eigenvalue of T. A vector v is called an eigenvector of T.",
     ["Suppose λ is an eigenvalue of T.", "A vector v is called an eigenvector of T."]),
    ("Let x be the mean of sample X. Then the variance is the mean squared deviation.",
     ["Let x be the mean of sample X.", "Then the variance is the mean squared deviation."]),
    # initials before a name stay one sentence, also when an initial is a function word's
    # letter ("A.")
    ("The method is due to R. A. Fisher in 1925.", ["The method is due to R. A. Fisher in 1925."]),
    ("It was written by J. Smith. The book is long.",
     ["It was written by J. Smith.", "The book is long."]),
])
def test_a_full_stop_after_a_single_letter(text, sentences):
    assert split_sentences(text) == sentences
