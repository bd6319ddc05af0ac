"""Selected text: where a model's answer was taken from, and a question naming a number
the selection never writes (core/selection_relevance.py and its hooks in
the selected-text path of core/answering.py).

The answering path runs with the real MiniLM embedder and the real grounding validator;
the model's answers are scripted through the local fake of the Claude API (the only model
the tests may fake: it is remote), replaying what the small tier wrote on SQuAD 2.0 cases.
"""

from __future__ import annotations


from bookreader.core.selection_relevance import (
    answer_span,
    answered_from,
)
from bookreader.core.types import Mode, Outcome

from fakes.claude_server import Behaviour

SEJM = ("In 1529, Warsaw for the first time became the seat of the General Sejm, permanent "
        "from 1569. In 1573 the city gave its name to the Warsaw Confederation, formally "
        "establishing religious freedom in the Polish\u2013Lithuanian Commonwealth. Due to its "
        "central location between the Commonwealth's capitals of Krak\u00f3w and Vilnius, Warsaw "
        "became the capital of the Commonwealth and the Crown of the Kingdom of Poland when King "
        "Sigismund III Vasa moved his court from Krak\u00f3w to Warsaw in 1596.")


def test_an_answer_on_target_is_kept(claude_server, claude_answerer):
    claude_server.queue(Behaviour.normal(
        'In 1569. [Source: Selected text - "permanent from 1569"]\nConfidence: 0.9'))
    a = claude_answerer.ask("When did Warsaw become the permanent seat of the General Sejm?",
                            mode=Mode.SELECTED, selection=SEJM, backend="claude")
    assert a.outcome is Outcome.ANSWER and not a.replaced_by_validator
    assert a.text.startswith("In 1569.")

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

