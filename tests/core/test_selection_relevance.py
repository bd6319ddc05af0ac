"""Selected text: a verified answer that does not address the question, and a question
naming a number the selection never writes (core/selection_relevance.py and its hooks in
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
from bookreader.core.selection_answer import LEAD
from bookreader.core.selection_relevance import (
    answer_span,
    answered_from,
    names_absent_number,
    names_only_after,
    off_target,
    relevance,
)
from bookreader.core.types import Mode, Outcome

from fakes.claude_server import Behaviour

SEJM = ("In 1529, Warsaw for the first time became the seat of the General Sejm, permanent "
        "from 1569. In 1573 the city gave its name to the Warsaw Confederation, formally "
        "establishing religious freedom in the Polish\u2013Lithuanian Commonwealth. Due to its "
        "central location between the Commonwealth's capitals of Krak\u00f3w and Vilnius, Warsaw "
        "became the capital of the Commonwealth and the Crown of the Kingdom of Poland when King "
        "Sigismund III Vasa moved his court from Krak\u00f3w to Warsaw in 1596.")
CONFEDERATION = ("In 1573 the city gave its name to the Warsaw Confederation, formally "
                 "establishing religious freedom in the Polish\u2013Lithuanian Commonwealth.")
QUICKSORT = ("For example, consider the deterministic sorting algorithm quicksort. This solves "
             "the problem of sorting a list of integers that is given as the input. The "
             "worst-case is when the input is sorted or sorted in reverse order.")
DIVISION = ("The value of minute / 60 should be 0.98333, not 0. The problem is that Java "
            "performs integer division when the operands are integers.")
STRCMP = ("The problem is that the == operator checks whether the two operands refer to the "
          "same object. The equals method returns true if the strings contain the same "
          "characters.")
SCOTLAND = ("The Scotland Act 1998, passed by the Parliament of the United Kingdom, set out the "
            "powers of the Scottish Parliament. It was given royal assent in November 1998.")


@pytest.mark.parametrize("question, answer, selection, expected", [
    # The small tier's answer to an unanswerable SQuAD question: verified, beside the point.
    ("When did General Sejm make Vilnius its permanent seat?", CONFEDERATION, SEJM, True),
    ("When did Warsaw become the permanent seat of the General Sejm?", CONFEDERATION, SEJM,
     True),
    # Short answers are judged by the selection's sentence that holds them.
    ("When did Warsaw become the permanent seat of the General Sejm?", "In 1569.", SEJM, False),
    ("When did Warsaw become the permanent seat of the General Sejm?",
     "Warsaw became the seat of the General Sejm in 1529, permanent from 1569.", SEJM, False),
    # The sentence after the answer's goes on about it ("This solves ...").
    ("What provides a solution to a list of integers provided as input?",
     "The deterministic sorting algorithm quicksort.", QUICKSORT, False),
    # A reason follows what it explains.
    ("Why does minute divided by 60 give 0 instead of 0.98333?",
     "Because Java performs integer division when the operands are integers.", DIVISION,
     False),
    # An operator is what the question asks about: not judged by its words.
    ("What is the difference between == and equals for strings?",
     "The == operator checks whether the two operands refer to the same object.", STRCMP,
     False),
])
def test_an_answer_that_does_not_address_the_question(question, answer, selection, expected):
    assert off_target(question, answer, selection) is expected


def test_relevance_counts_the_question_words_the_selection_holds():
    mine, best = relevance("When did General Sejm make Vilnius its permanent seat?",
                           CONFEDERATION, SEJM)
    # 'make' is not in the selection; of general, sejm, vilnius, permanent, seat the
    # answer's sentence holds none, the first sentence four.
    assert mine == 0.0 and best == pytest.approx(0.8)


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


def _confederation_answer() -> Behaviour:
    return Behaviour.normal(f'{CONFEDERATION} [Source: Selected text - "In 1573 the city gave '
                            f'its name to the Warsaw Confederation"]\nConfidence: 0.9')


def test_an_off_target_answer_to_an_unanswerable_question_gets_the_fallback(
        claude_server, claude_answerer):
    claude_server.queue(_confederation_answer())
    a = claude_answerer.ask("When did General Sejm make Vilnius its permanent seat?",
                            mode=Mode.SELECTED, selection=SEJM, backend="claude")
    assert a.fallback and a.text == prompts.NOT_IN_SELECTION
    assert a.outcome is Outcome.NOT_IN_SELECTION and a.replaced_by_validator
    assert not a.citations and a.retrieval is None


def test_an_off_target_answer_gives_way_to_the_sentence_that_answers(claude_server,
                                                                     claude_answerer):
    claude_server.queue(_confederation_answer())
    a = claude_answerer.ask("When did Warsaw become the permanent seat of the General Sejm?",
                            mode=Mode.SELECTED, selection=SEJM, backend="claude")
    assert a.outcome is Outcome.ANSWER and not a.fallback and a.replaced_by_validator
    assert a.text.startswith(LEAD) and "permanent from 1569" in a.text
    assert "Confederation" not in a.text
    assert a.citations and all(c.section == prompts.SELECTION_SECTION for c in a.citations)


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

ENDOWMENT = ("Kelvane College holds the largest endowment in the region. It was worth $3 "
             "billion in 2011. It lost about 30% in 2008. The Ledger, a local paper, put the "
             "loss at $1 billion in March 2009.")


@pytest.mark.parametrize("question, expected", [
    # The Ledger is named only after the sentence the answer comes from ("It" is the
    # college): the answer speaks of something else.
    ("How much of a loss did the Ledger suffer in 2008?", "Ledger"),
    # Kelvane is named before it: "It" may well be the college.
    ("How much of a loss did Kelvane College suffer in 2008?", ""),
])
def test_an_answer_from_before_the_question_s_name_is_named(question, expected):
    assert names_only_after(question, "30%", ENDOWMENT) == expected
    assert off_target(question, "30%", ENDOWMENT) is bool(expected)