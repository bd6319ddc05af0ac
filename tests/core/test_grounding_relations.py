"""A claim that asserts a relation (a cause, a purpose, a condition) must find that
relation, between the same parts, in its support: shared words are not enough.

Passages are written here in the manner of three kinds of book (an engineering text, a
programming text, a statistics text); none is copied from a book.
"""

from __future__ import annotations

import pytest

from bookreader.core.claim_relations import change_reversed, changes, relation_misstated, relations
from bookreader.core.grounding import GroundingValidator
from bookreader.core.grounding_context import support_sentences

FLOW = ("Thin layers are a blessing, since they restore our faith in potential solutions: "
        "many flows look like potential flows at some distance from a body. "
        "It also solves the paradox of zero drag, since the velocity field can still meet "
        "the no-slip condition and exert drag forces on obstacles. "
        "Inside the layer the velocity grows from zero at the wall to its outer value.")
CODE = ("The right side of this.hour = hour refers to the parameter hour, since it was "
        "declared most recently. This situation is called shadowing, because the parameter "
        "hides the instance variable with the same name.")
DICE = ("The probability of rolling a seven with one die is zero, and of rolling a three "
        "is 1/6. This definition works for the example because we can imagine rolling the "
        "die many times under the same conditions and counting how often each face comes up.")


def test_relations_read_the_connective_and_its_two_parts():
    (r,) = relations("A boundary layer forms because the velocity field meets the no-slip "
                     "condition.")
    assert (r.kind, r.consequent, r.ground) == (
        "cause", "A boundary layer forms", "the velocity field meets the no-slip condition.")
    (r,) = relations("Because 1 / 3 divides two integers, Java does integer division.")
    assert (r.ground, r.consequent) == ("1 / 3 divides two integers",
                                         "Java does integer division.")
    # "A because B, so C": B grounds A, and B grounds C
    a, b = relations("The assignment fails because strings are immutable, so an existing "
                     "string cannot be changed.")
    assert a.ground == b.ground == "strings are immutable"
    assert relations("Use a 24-hour clock so that at 2 PM the hour is 14.")[0].kind == "purpose"
    # opening a sentence, the sentence before is the ground (or, "This is because", the
    # consequent)
    (r,) = relations("Therefore, the drag is zero.", "The pressure is symmetric.")
    assert (r.ground, r.consequent) == ("The pressure is symmetric.", "the drag is zero.")
    (r,) = relations("This is because strings are immutable.", "The assignment fails.")
    assert (r.ground, r.consequent) == ("strings are immutable.", "The assignment fails.")


def test_words_that_only_look_like_connectives_state_nothing():
    assert relations("Debugging is the process of finding the cause of an error.") == ()
    assert relations("If you want to do so, type the command.")[0].kind == "condition"
    assert relations("You can do so by typing the command.") == ()
    assert relations("Even if the list is empty, the loop runs.") == ()
    assert relations("The drag is therefore zero.") == ()  # no sentence before: no ground


@pytest.mark.parametrize("context, claim", [
    # the passage gives this cause for something else
    (FLOW, "A boundary layer forms because the velocity field can still meet the no-slip "
           "condition and exert drag forces on obstacles."),
    (CODE, "This situation is called shadowing because the parameter hour was declared "
           "most recently."),
    (DICE, "The probability of rolling a three is 1/6 because we can imagine rolling the die "
           "many times under the same conditions."),
    # the two parts the other way round
    (CODE, "The parameter hour was declared most recently because the right side of "
           "this.hour = hour refers to it."),
])
def test_a_relation_between_other_parts_is_misstated(context, claim):
    assert relation_misstated(claim, support_sentences(context))


@pytest.mark.parametrize("context, claim", [
    (FLOW, "The thin layer solves the paradox of zero drag because the velocity field can "
           "meet the no-slip condition and exert drag forces."),
    (CODE, "It is called shadowing since the parameter hides the instance variable that "
           "has the same name."),
    (CODE, "Because it was declared most recently, the parameter hour is what the right "
           "side of this.hour = hour refers to."),
    (DICE, "The definition works here since we can imagine rolling the die many times under "
           "the same conditions and counting how often each face comes up."),
    # no connective in the passage: the relation is implicit, not contradicted
    ("The size of the stack is limited. If you exceed the limit, you get an error.",
     "Because the stack has a limited size, going past the limit gives an error."),
    # a claim without a relation is not this check's business
    (CODE, "The parameter hides the instance variable with the same name."),
])
def test_a_relation_the_passage_states_or_leaves_implicit_passes(context, claim):
    assert not relation_misstated(claim, support_sentences(context))


@pytest.mark.parametrize("context, wrong, right", [
    (FLOW, "Many flows look like potential flows at some distance from a body because the "
           "velocity field can still meet the no-slip condition.",
     "The thin layer solves the paradox of zero drag because the velocity field can meet "
     "the no-slip condition and exert drag forces."),
    (CODE, "The parameter hour was declared most recently because the right side of "
           "this.hour = hour refers to it.",
     "This situation is called shadowing, because the parameter hides the instance "
     "variable with the same name."),
    (DICE, "The probability of rolling a three with one die is 1/6 because we can imagine "
           "rolling the die many times under the same conditions and counting how often "
           "each face comes up.",
     "The definition works here since we can imagine rolling the die many times under the "
     "same conditions and counting how often each face comes up."),
])
def test_the_validator_rejects_a_misstated_relation(embedder, context, wrong, right):
    # every word of the wrong claim is in the passage: without the relation check the
    # window rules accepted all three
    v = GroundingValidator(embedder.quantized_copy())
    verdict = v.validate(wrong, context)
    assert not verdict.passed
    assert verdict.unsupported_sentences == (wrong,)
    assert v.validate(right, context).passed


def test_a_change_given_the_other_way_round_is_misstated(embedder):
    estimates = ("Adding the two controls matters. The estimated slope has changed from 0.42 "
                 "to 0.57 between the two regressions.")
    heat = "The pump moves heat from the cold reservoir to the warm room, using work."
    assert changes(estimates) == {("0.42", "0.57")}
    assert change_reversed("The estimated slope has changed from 0.57 to 0.42.",
                           support_sentences(estimates))
    assert change_reversed("The pump moves heat from the warm room to the cold reservoir.",
                           support_sentences(heat))
    assert not change_reversed("The slope went from 0.42 to 0.57.", support_sentences(estimates))
    # both orders stated: a cycle, nothing is reversed
    assert not change_reversed("It flows from A1 to B2.", ["It flows from A1 to B2 and "
                                                           "back from B2 to A1."])
    v = GroundingValidator(embedder.quantized_copy())
    assert not v.validate("The estimated slope has changed from 0.57 to 0.42.", estimates).passed
    assert v.validate("The estimated slope has changed from 0.42 to 0.57.", estimates).passed


def test_a_part_said_in_other_words_or_a_meaning_either_way_round_passes(embedder):
    models = ("A sentence is a tautology only if it is true in every model. This cannot be "
              "avoided just by constructing partial models, because there are infinitely many "
              "partial models.")
    cells = ("Most automata are deterministic, which means that their rules do not have any "
             "random elements.")
    reworded = ("Building partial models does not get around this, since there are infinitely "
                "many partial models.")
    # by words alone the consequent looks like something else ...
    assert relation_misstated(reworded, support_sentences(models))
    # ... the validator's embedder reads it as the same part in other words
    v = GroundingValidator(embedder.quantized_copy())
    assert not relation_misstated(reworded, support_sentences(models), v.text_similarity)
    # "X, which means Y" may be restated from Y to X
    assert not relation_misstated("Because their rules have no random elements, most "
                                  "automata are deterministic.", support_sentences(cells))
