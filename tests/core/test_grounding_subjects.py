"""The grounding validator (real MiniLM, the app's int8 copy): what a claim says of its
subject must be said of that subject by the context, not assembled from words that the
context says of something else (stop 19)."""

from __future__ import annotations

import pytest

from bookreader.core.claim_text import negation_cues
from bookreader.core.grounding import GroundingValidator
from bookreader.core.grounding_checks import echoed_terms, outside_subject
from bookreader.core.grounding_context import support_sentences
from bookreader.core.grounding_roles import roles_swapped

#: A listing with a docstring, in the shape of the Physical AI book's "Example 1: ZMP (Zero
#: Moment Point) Calculation" (written for this test; line breaks as core/pdf.py gives
#: them: each field of the docstring on a line of its own).
LISTING = (
    "Practical Examples\n\nExample 1: ZMP (Zero Moment Point) Calculation\n\n"
    "import numpy as np\n\n"
    "def calculate_zmp(com_pos, com_vel, com_acc, gravity=9.81, height=0.8):\n"
    '"""\nCalculate Zero Moment Point for bipedal robot\n'
    "com_pos: Center of mass position [x, y, z]\n\n"
    "com_vel: Center of mass velocity [vx, vy, vz]\n"
    "com_acc: Center of mass acceleration [ax, ay, az]\n"
    '"""\nx, y, z = com_pos\nvx, vy, vz = com_vel\nax, ay, az = com_acc\n\n'
    "# ZMP equations (simplified for horizontal movement)\n"
    "zmp_x = x - height * ax / (gravity + az)\nzmp_y = y - height * ay / (gravity + az)\n\n"
    "return zmp_x, zmp_y"
)
QUESTION = "What is the Zero Moment Point?"
#: The small tier's answer in the stop-18 window trial, shown as a verified answer: its
#: predicate is the docstring's description of ``com_pos`` plus the "Zero" of the name.
STITCHED = "The Zero Moment Point is the point where the center of mass position is zero."

#: A vocabulary-like passage: a term on a line ending in ":", its description after it.
HEADED = (
    "The first step is to examine the place in the program where the error occurred and "
    "see if you can figure out what happened:\n\nNullPointerException:\n\nYou tried to "
    "access an instance variable or invoke a method on an object that is currently null. "
    "You should figure out which variable is null and then figure out how it got to be "
    "that way."
)


@pytest.fixture(scope="module")
def app_validator(embedder):
    return GroundingValidator(embedder.quantized_copy())


def test_a_docstring_field_on_its_own_line_is_a_support_sentence_of_its_own():
    sentences = support_sentences(LISTING)
    assert "com_pos: Center of mass position [x, y, z]" in sentences
    assert any(s.endswith("Calculate Zero Moment Point for bipedal robot") for s in sentences)
    # A prose line that happens to hold a colon is not a field.
    assert support_sentences("The result is printed\nas follows: Hello, World.") == [
        "The result is printed\nas follows: Hello, World."]


@pytest.mark.parametrize("claim", [
    STITCHED,
    "The Zero Moment Point is the center of mass position.",
])
def test_a_definition_stitched_from_another_names_description_fails(app_validator, claim):
    v = app_validator.validate(claim, LISTING, question=QUESTION)
    assert not v.passed, v


def test_the_pair_that_stitches_it_is_not_about_the_subject(app_validator):
    (score,) = app_validator.score_sentences([STITCHED], LISTING, QUESTION)
    ctx = app_validator._context(LISTING)
    field = ctx.windows.index("com_pos: Center of mass position [x, y, z]")
    pair = next(w for w in score.clauses[0] if w.sentences == (field - 1, field))
    assert pair.coverage == 1.0  # every word is there ...
    assert not pair.about_subject  # ... but the field is about com_pos
    assert not app_validator.window_supports(pair)


def test_a_line_ending_in_a_colon_introduces_what_follows(app_validator):
    """A term on its own line ("NullPointerException:") and the sentence after it: the
    sentence is about the term, so a definition may join the two."""
    claim = ("A NullPointerException means you tried to invoke a method on an object that "
             "is currently null.")
    assert app_validator.validate(claim, HEADED).passed


def test_the_window_trial_answer_against_the_book(app_validator, eval_dir):
    """The trial's own passage, read from the shared book with core/pdf.py."""
    from bookreader.core.pdf import PdfBook

    book = PdfBook.open(eval_dir / "books" / "physical_ai_textbook.pdf")
    try:
        text = book.page(13).text + "\n" + book.page(14).text
    finally:
        book.close()
    start = text.index("Practical Examples")
    context = text[start: text.index("Example 2:", start)]
    assert "Calculate Zero Moment Point for bipedal robot" in context
    assert not app_validator.validate(STITCHED, context, question=QUESTION).passed


# --- roles: two terms exchanged around the word that relates them ---------------------------
CALLS = (
    "When the program starts, main calls printTwice, which displays its argument two times. "
    "After the last statement of printTwice, the flow of execution goes back to where it "
    "left off."
)
ENGINE = (
    "The simulator uses the Open Dynamics Engine (ODE) as its primary physics engine, though "
    "it also supports Bullet and Simbody. The physics engine handles collision detection and "
    "joint constraints."
)


def test_roles_swapped_helper():
    assert roles_swapped("printTwice calls main.", "main calls printTwice.")
    assert not roles_swapped("main calls printTwice.", "main calls printTwice.")
    # A passive on one side only turns the roles back.
    assert not roles_swapped("printTwice is called by main.", "main calls printTwice.")
    # Moving a clause moves the relating word with its terms.
    assert not roles_swapped(
        "The simulator supports Bullet and Simbody but uses ODE as its primary engine.",
        "The simulator uses ODE as its primary engine, though it also supports Bullet and "
        "Simbody.")
    # Alternatives are stated in either order.
    assert not roles_swapped(
        "ROS is a framework for robot software rather than a traditional operating system.",
        "ROS is not a traditional operating system but rather a framework for robot software.")


@pytest.mark.parametrize("context, claim", [
    (CALLS, "When the program starts, printTwice calls main."),
    (ENGINE, "The simulator uses Bullet as its primary physics engine, though it also supports "
             "ODE and Simbody."),
])
def test_a_claim_that_exchanges_two_roles_fails(app_validator, context, claim):
    assert not app_validator.validate(claim, context).passed


@pytest.mark.parametrize("context, claim", [
    (CALLS, "When the program starts, main calls printTwice."),
    (CALLS, "printTwice is called by main when the program starts."),
    (ENGINE, "The simulator uses ODE as its primary physics engine and also supports Bullet "
             "and Simbody."),
])
def test_the_same_roles_in_other_words_pass(app_validator, context, claim):
    assert app_validator.validate(claim, context).passed


# --- beliefs and steps the text calls mistaken -------------------------------------------
TEMPTING = (
    "Because the language uses the = symbol for assignment, it is tempting to read the "
    "statement a = b as a statement of equality. Equality is commutative, and assignment "
    "is not."
)
MISTAKE = (
    "A common mistake that beginners make is to put import statements between the "
    "documentation and the public class line. Doing so separates the documentation from "
    "the class itself."
)
EXPECTED = (
    "As you might expect, you can assign list values to variables. A list that contains "
    "no elements is called an empty list."
)


def test_mistaken_frames_are_negations():
    (cue,) = negation_cues("A common mistake is to assume that toUpperCase somehow affects "
                           "the original string.")
    assert cue.kind == "not" and cue.mistaken
    assert {"touppercas", "affect", "origin", "string"} <= cue.scope
    assert negation_cues("You might expect the variable y to get the value 0.333333.")
    assert negation_cues("Because the rules are simple, it sounds like they modify strings.")
    # Agreeing turns of phrase are not.
    assert negation_cues("As you might expect, you can assign list values to variables.") == []
    assert negation_cues("It goes faster than you might think.") == []


@pytest.mark.parametrize("context, claim", [
    (TEMPTING, "The statement a = b is a statement of equality."),
    (MISTAKE, "Import statements should go between the documentation and the public class "
              "line."),
])
def test_a_claim_that_states_what_the_text_calls_a_mistake_fails(app_validator, context, claim):
    assert not app_validator.validate(claim, context).passed


@pytest.mark.parametrize("context, claim", [
    (MISTAKE, "Putting import statements between the documentation and the public class line "
              "separates the documentation from the class."),
    (EXPECTED, "You can assign list values to variables."),
])
def test_a_claim_about_the_mistaken_step_or_an_expected_fact_passes(app_validator, context,
                                                                     claim):
    assert app_validator.validate(claim, context).passed


# --- a definition's predicate in its subject's own words ---------------------------------
PROSE = (
    "Example 1. Calculate Zero Moment Point for bipedal robot from the center of mass "
    "position and its acceleration. The result is returned as a pair."
)
LOCOMOTION = (
    "Humanoid robots can achieve locomotion through various mechanisms:\n\n"
    "1. Static Walking: Maintains stability at every step by keeping the center of pressure "
    "(CoP) within the support polygon\n\n"
    "2. Dynamic Walking: Uses dynamic balance where the robot is only stable during motion\n\n"
    "3. Running: Involves flight phases where both feet are off the ground"
)


def test_echoed_terms_are_the_subjects_words_said_again_after_the_head():
    assert echoed_terms(STITCHED) == (["0", "moment", "point"], {"0"})
    assert echoed_terms("A recursive method is a method that invokes itself.") == (
        ["recurs", "method"], set())
    assert outside_subject(["calcul", "0", "moment", "point", "center", "0"],
                           ["0", "moment", "point"]) == {"calcul", "center", "0"}


@pytest.mark.parametrize("context, claim", [
    (PROSE, STITCHED),
    (LOCOMOTION, "Running is locomotion in which the robot runs while keeping the center of "
                 "pressure within the support polygon."),
])
def test_a_predicate_that_only_the_subjects_name_says_fails(app_validator, context, claim):
    assert not app_validator.validate(claim, context).passed


def test_a_predicate_that_repeats_a_word_the_context_says_passes(app_validator):
    claim = ("Dynamic Walking is a walking mode that uses dynamic balance, where the robot is "
             "only stable during motion.")
    assert app_validator.validate(claim, LOCOMOTION).passed


# --- a reworded support beside a sentence that denies the claim's word -------------------
MERGE = (
    "The merge method takes two piles, loops through the cards of the second pile, and adds "
    "them to the first. Notice that it does not remove the cards from the second pile, so "
    "both piles share cards. That is not a problem because cards are immutable."
)


@pytest.mark.parametrize("claim", [
    "The merge method removes the cards from the second pile.",
    "The merge method removes the cards from the second pile as it adds them to the first.",
])
def test_a_claim_whose_added_word_the_next_sentence_denies_fails(app_validator, claim):
    assert not app_validator.validate(claim, MERGE).passed


@pytest.mark.parametrize("claim", [
    "The merge method loops through the cards of the second pile and adds them to the first.",
    "The merge method does not remove the cards from the second pile, so both piles share "
    "them.",
])
def test_what_the_passage_says_of_merge_passes(app_validator, claim):
    assert app_validator.validate(claim, MERGE).passed
