"""The grounding validator (real MiniLM) on explicit negation, stop 18: the closest
sentence vetoes a claim only when one of the two negates what the other asserts; "even
if" needs a concession in the passage; a negation's scope ends where a new predicate
begins; Python's ``None`` is a value, not a negation; "skip" says "not do".  The passages
are written for these tests after passages of the shared books."""

from __future__ import annotations

import pytest

from bookreader.core.claim_text import (
    concedes,
    concession_marked,
    denies,
    negation_cues,
    polarity_agrees,
)
from bookreader.core.sentences import content_terms

SHORT_CIRCUIT = (
    "When Python detects that there is nothing to be gained by evaluating the rest of a "
    "logical expression, it stops its evaluation and does not do the computations in the rest "
    "of the logical expression. When the evaluation of a logical expression stops because the "
    "overall value is already known, it is called short-circuiting the evaluation."
)

FRUITFUL = (
    "When you call a function in interactive mode, Python displays the result. But in a "
    "script, if you call a fruitful function and do not store the result of the function in a "
    "variable, the return value vanishes into the mist!"
)

TUPLES = (
    "Python starts by comparing the first element from each sequence. If they are equal, it "
    "goes on to the next element, and so on, until it finds elements that differ. Subsequent "
    "elements are not considered (even if they are really big)."
)

EMPTY = (
    "If the first index is greater than or equal to the second the result is an empty string, "
    "represented by two quotation marks. An empty string contains no characters and has length "
    "0, but other than that, it is the same as any other string."
)

STYLE = (
    "As a matter of style, you should always assign floating-point values to floating-point "
    "variables. The compiler won't make you do it, but you never know when a simple mistake "
    "will come back and haunt you."
)


def _terms(text: str) -> set[str]:
    return set(content_terms(text))


# --- a sentence that negates the very word the claim asserts --------------------------------
def test_denies_helper():
    window = "Notice that it does not remove the cards from the Deck."
    claim = "addDeck removes the cards from the Deck."
    assert denies(negation_cues(claim), negation_cues(window), _terms(claim), _terms(window))
    # the other way round: the claim negates what the window asserts
    claim2 = "Python does not close open files when the program ends."
    window2 = "Python makes sure that all open files are closed when the program ends."
    assert denies(negation_cues(claim2), negation_cues(window2), _terms(claim2), _terms(window2))
    # a negation of the same word on both sides is agreement
    same = "addDeck does not remove the cards from the Deck."
    assert not denies(negation_cues(same), negation_cues(window), _terms(same), _terms(window))
    # said of another subject ("concrete class"), the negation denies nothing of this one
    glossary = "concrete class: A class that is not declared as abstract."
    abstract = "An abstract class is a class that is declared as abstract."
    assert not denies(negation_cues(abstract), negation_cues(glossary), _terms(abstract),
                      _terms(glossary))


def test_the_closest_sentence_vetoes_only_with_a_negation_of_its_own(validator):
    # The closest sentence ("As a matter of style ...") holds no negation: the claim's "does
    # not enforce" is the next sentence's "won't make you do it", not a contradiction.
    ok = validator.validate("Assigning floating-point values to floating-point variables is a "
                            "matter of style that the compiler does not enforce.", STYLE)
    assert ok.passed, ok
    bad = validator.validate("The compiler forces you to assign floating-point values to "
                             "floating-point variables.", STYLE)
    assert not bad.passed


# --- concessions ------------------------------------------------------------------------------
def test_concession_helpers():
    assert concedes("The except block runs even if there is no error.")
    assert concedes("It works whether or not the file exists.")
    assert not concedes("Even numbers are divisible by two.")
    assert concession_marked("Subsequent elements are not considered (even if they are big).")
    assert concession_marked("Although it is not necessary, it is common to use them.")
    assert not concession_marked("If an exception occurs, Python runs the except block.")


@pytest.mark.parametrize("answer, context", [
    ("Python keeps evaluating a logical expression even if there is nothing to be gained.",
     SHORT_CIRCUIT),
    ("In a script, a fruitful function's return value is displayed even if you do not store it "
     "in a variable.", FRUITFUL),
])
def test_even_if_against_a_passage_stating_the_ordinary_case_fails(validator, answer, context):
    assert not validator.validate(answer, context).passed


def test_even_if_said_by_the_passage_passes(validator):
    ok = validator.validate("Elements after the first difference are not considered, even if "
                            "they are really big.", TUPLES)
    assert ok.passed, ok


# --- where a negation's scope ends -------------------------------------------------------------
def test_a_negation_scope_ends_at_a_new_predicate():
    cue, = negation_cues("An empty string contains no characters and has length 0.")
    assert cue.scope == {"charact"} and "length" not in cue.reach
    cue, = negation_cues("It does not change the list, because it makes a copy.")
    assert "copi" not in cue.reach
    # "or" with no verb after it keeps the negation on both ("no way to access ... or invoke")
    cue, = negation_cues("There is no way to access its attributes or invoke a method.")
    assert "invok" in cue.reach


def test_a_coordinated_predicate_after_a_negation_is_asserted(validator):
    assert not validator.validate("An empty string does not have length 0.", EMPTY).passed
    ok = validator.validate("It is an empty string, which has length 0.", EMPTY)
    assert ok.passed, ok


# --- verbs that say "not" of their object --------------------------------------------------------
def test_skipping_the_computations_restates_not_doing_them(validator):
    claim = "Python skips the computations in the rest of the expression."
    window = "It stops its evaluation and does not do the computations in the rest of it."
    assert polarity_agrees(negation_cues(claim), negation_cues(window), _terms(claim),
                           _terms(window))
    ok = validator.validate("Once the value of a logical expression is already known, Python "
                            "skips the computations in the rest of it; this is called "
                            "short-circuiting.", SHORT_CIRCUIT)
    assert ok.passed, ok
    bad = validator.validate("Python does the computations in the rest of a logical expression "
                             "once its overall value is known.", SHORT_CIRCUIT)
    assert not bad.passed


# --- from the small tier's replayed whole-book answers ------------------------------------------
TOSTRING = (
    "The Java library includes a class, java.util.Arrays, that provides methods for working "
    "with arrays. One of them, toString, returns a string representation of an array. After "
    "importing Arrays, we can invoke toString like this: System.out.println(Arrays.toString(a)); "
    "And the output is shown here: [1, 2, 3, 4] Notice that Arrays.toString uses square "
    "brackets instead of curly braces. But it beats writing your own printArray method."
)

TRY_CATCH = (
    "If a different exception occurs during the try block, Java does whatever it would do "
    "otherwise, which is probably to display a message and end the program. If no exceptions "
    "occur during the try block, the catch block doesn't run and the program continues. As an "
    "alternative, we could use the catch block to display a customized message, end the "
    "program, or handle the exception in whatever way is appropriate."
)


def test_a_negation_about_our_own_words_does_not_match_another_of_ours():
    # "instead of curly braces" is about the claim's "curly braces": it cannot also stand
    # for the claim's "instead of the elements", which the window says nothing of.
    claim = ("Printing an array shows strange characters instead of the elements because it "
             "uses square brackets instead of curly braces.")
    window = "Notice that Arrays.toString uses square brackets instead of curly braces."
    assert not polarity_agrees(negation_cues(claim), negation_cues(window), _terms(claim),
                               _terms(window))
    # a reworded negation the window states about something else still matches
    claim2 = "A final variable cannot be modified."
    window2 = "Once you assign a final variable, it can't be changed."
    assert polarity_agrees(negation_cues(claim2), negation_cues(window2), _terms(claim2),
                           _terms(window2))


def test_an_invented_reason_beside_an_instead_of_fails(validator):
    bad = validator.validate("Printing an array with println shows strange characters instead "
                             "of the elements because it uses square brackets instead of curly "
                             "braces.", TOSTRING)
    assert not bad.passed
    ok = validator.validate("Arrays.toString returns a string representation of an array, "
                            "written with square brackets instead of curly braces.", TOSTRING)
    assert ok.passed, ok


def test_a_negation_inside_a_condition_denies_nothing():
    cue = negation_cues("If no exceptions occur during the try block, the catch block runs.")[0]
    assert cue.conditional
    claim = "To catch an exception, you can use the catch block."
    window = "If no exceptions occur during the try block, the catch block doesn't run."
    assert not denies(negation_cues(claim), negation_cues(window), _terms(claim), _terms(window))


def test_catching_an_exception_with_the_catch_block_passes(app_validator):
    ok = app_validator.validate("To catch an exception so that your program doesn't stop, you "
                                "can use the catch block.", TRY_CATCH)
    assert ok.passed, ok
    bad = app_validator.validate("If no exceptions occur during the try block, the catch block "
                                 "still runs.", TRY_CATCH)
    assert not bad.passed


@pytest.fixture(scope="module")
def app_validator(embedder):
    """The validator on the int8 copy of MiniLM, as the app builds it (exact verdicts)."""
    from bookreader.core.grounding import GroundingValidator

    return GroundingValidator(embedder.quantized_copy())


SCRAPING = (
    "One of the common uses of the urllib capability in Python is to scrape the web. Web "
    "scraping is when we write a program that pretends to be a web browser and retrieves "
    "pages, then examines the data in those pages looking for patterns."
)

def test_an_answer_naming_an_operator_the_question_lacks_is_no_restatement():
    from bookreader.core.grounding_checks import is_tautology

    question = "Which Python operator is used for exponentiation?"
    assert not is_tautology("The Python operator used for exponentiation is **.", question)
    assert is_tautology("The Python operator is used for exponentiation.", question)
    assert not is_tautology("A year has 12 months.", "How many months does a year have?")


def test_a_word_repeated_in_a_restatement_is_not_a_swap(validator):
    # "web" said four times where the passage says it twice, in a rewording of a longer
    # stretch: no term of the passage put in another's place
    ok = validator.validate("Web scraping is when a program pretends to be a web browser, "
                            "retrieves a web page and then looks at the web page content.",
                            SCRAPING, question="What is web scraping?")
    assert ok.passed, ok



ERRORS = (
    "Syntax errors These are the first errors you will make and the easiest to fix. A syntax "
    "error means that you have violated the grammar rules of Python. Logic errors A logic "
    "error is when your program has good syntax but there is a mistake in the order of the "
    "statements or perhaps a mistake in how the statements relate to one another."
)


def test_a_repeated_word_put_in_the_subjects_place_is_still_a_swap(validator):
    # "syntax" named again where the passage's subject ("logic") was: the other error's
    # definition given to this one
    bad = validator.validate("A syntax error is when your program has good syntax but there "
                             "is a mistake in the order of the statements.", ERRORS)
    assert not bad.passed


ALIASING = (
    "Make copies to avoid aliasing. If you want to use a method like sort that modifies the "
    "argument, but you need to keep the original list as well, you can make a copy. "
    "orig = t[:] t.sort() In this example you could also use the built-in function sorted, "
    "which returns a new, sorted list and leaves the original alone.")


def test_a_goal_in_place_of_the_sentences_opening_still_passes(validator):
    """Py4E window trial (stop 23), "How do I sort a list?": the small tier copied the
    sentence about sorted with the question's goal ("To sort a list,") in place of its
    opening ("In this example"); the answer is supported."""
    ok = validator.validate("To sort a list, you can use the built-in function sorted, which "
                            "returns a new, sorted list and leaves the original alone.",
                            ALIASING, question="How do I sort a list?")
    assert ok.passed, ok
    # a term of the passage put in another's place is found behind a leading goal too
    from bookreader.core.claim_swaps import noun_terms, swapped_terms

    window = ("In this example you could also use the built-in function sorted, which "
              "returns a new, sorted list and leaves the original alone.")
    assert swapped_terms("To keep a copy, you can use the built-in function sorted, which "
                         "returns a new, sorted list and leaves the argument alone.", window,
                         noun_terms(ALIASING)) == [("argument", "origin")]
