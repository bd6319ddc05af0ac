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
