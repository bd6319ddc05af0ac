"""Selected text: where a model's answer was taken from, and a question naming a number
the selection never writes (core/selection_relevance.py and its hooks in
the selected-text path of core/answering.py).

The answering path runs with the real MiniLM embedder and the real grounding validator;
the model's answers are scripted through the local fake of the Claude API (the only model
the tests may fake: it is remote), replaying what the small tier wrote on SQuAD 2.0 cases.
"""

from __future__ import annotations

import pytest

from bookreader.config import Settings
from bookreader.core import prompts
from bookreader.core.answering import Answerer
from bookreader.core.selection_relevance import (
    answer_span,
    answered_from,
    names_absent_number,
)
from bookreader.core.types import Mode, Outcome

from fakes.claude_server import Behaviour

SEJM = ("In 1529, Warsaw for the first time became the seat of the General Sejm, permanent "
        "from 1569. In 1573 the city gave its name to the Warsaw Confederation, formally "
        "establishing religious freedom in the Polish\u2013Lithuanian Commonwealth. Due to its "
        "central location between the Commonwealth's capitals of Krak\u00f3w and Vilnius, Warsaw "
        "became the capital of the Commonwealth and the Crown of the Kingdom of Poland when King "
        "Sigismund III Vasa moved his court from Krak\u00f3w to Warsaw in 1596.")
SCOTLAND = ("The Scotland Act 1998, passed by the Parliament of the United Kingdom, set out the "
            "powers of the Scottish Parliament. It was given royal assent in November 1998.")

@pytest.mark.parametrize("question, expected", [
    ("Who passed the Scotland Act of 1988?", True),
    ("Who passed the Scotland Act of 1998?", False),
    ("Who passed the Scotland Act?", False),
    ("How many powers did the 1,998 act set out?", False),  # "1,998" is written 1998 there
])
def test_a_question_naming_a_number_the_selection_never_writes(question, expected):
    assert names_absent_number(question, SCOTLAND) is expected


NORMANS = ("A few years after the First Crusade, in 1107, the Normans under the command of "
           "Bohemond laid siege to Dyrrachium.")


@pytest.mark.parametrize("question, selection, expected", [
    ("Who did the Normans besiege in the 11th century?", NORMANS, True),
    ("Who did the Normans besiege in the 12th century?", NORMANS + " It was the 12th century.",
     False),
    ("Who did the Normans besiege in the 12th century?", NORMANS + " It was the twelfth century.",
     False),
])
def test_an_ordinal_the_selection_never_writes(question, selection, expected):
    assert names_absent_number(question, selection) is expected


def test_an_answer_on_target_is_kept(claude_server, claude_answerer):
    claude_server.queue(Behaviour.normal(
        'In 1569. [Source: Selected text - "permanent from 1569"]\nConfidence: 0.9'))
    a = claude_answerer.ask("When did Warsaw become the permanent seat of the General Sejm?",
                            mode=Mode.SELECTED, selection=SEJM, backend="claude")
    assert a.outcome is Outcome.ANSWER and not a.replaced_by_validator
    assert a.text.startswith("In 1569.")


def test_a_question_naming_an_absent_number_gets_the_fallback_without_a_model(embedder,
                                                                              tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    settings.ensure_dirs()

    def no_model(name):
        raise AssertionError("no model may run for this question")

    a = Answerer(settings, embedder=embedder, backend_factory=no_model)
    ans = a.ask("Who passed the Scotland Act of 1988?", mode=Mode.SELECTED, selection=SCOTLAND)
    assert ans.fallback and ans.outcome is Outcome.NOT_IN_SELECTION
    assert ans.text == prompts.NOT_IN_SELECTION


def test_a_long_copied_span_with_one_word_changed_points_at_its_sentence():
    question = "What made the mill close for a year?"
    sentence = ("The river flooded in the spring of 1912 and the water wheel broke, which "
                "became the main reason the mill stood idle.")
    # The model copied the sentence, re-inflecting "became" as "becoming".
    _, span = answer_span(question, "The river flooded in the spring of 1912 and the water "
                          "wheel broke, becoming the main reason.")
    assert len(span) >= 6 and answered_from(span, sentence)
    # A short span must be there whole: "the wheel froze" is not "the water wheel broke".
    _, short = answer_span(question, "The wheel froze.")
    assert not answered_from(short, sentence)
    # Two words of its own are no copy.
    _, two = answer_span(question, "The river froze in the winter of 1912 and the water "
                         "wheel broke, becoming the main reason.")
    assert not answered_from(two, sentence)

