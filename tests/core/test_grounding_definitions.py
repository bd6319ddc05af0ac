"""The grounding validator (real MiniLM, the app's int8 copy): what a claim says of its
subject must be in the window, not only the subject's own words."""

from __future__ import annotations

import pytest

from bookreader.core.grounding import GroundingValidator
from bookreader.core.grounding_checks import given_terms

#: Python for Everybody, chapter 11's opening (the book's words and line breaks, as
#: core/pdf.py reads them: the cosines depend on them).
REGEX = (
    "So far we have been reading through files, looking for patterns and extracting\n"
    "various bits of lines that we find interesting. We have been using string methods\n"
    "like split and find and using lists and string slicing to extract portions of the\n"
    "lines.\n\n"
    "This task of searching and extracting is so common that Python has a very powerful\n"
    "module called regular expressions that handles many of these tasks quite elegantly.\n"
    "The reason we have not introduced regular expressions earlier in the book is because\n"
    "while they are very powerful, they are a little complicated and their syntax takes\n"
    "some getting used to.\n\n"
    "Regular expressions are almost their own little programming language for searching\n"
    "and parsing strings. As a matter of fact, entire books have been written on the\n"
    "topic of regular expressions. In this chapter, we will only cover the basics of regular\n"
    "expressions. For more detail on regular expressions, see:\n\n"
    "https://en.wikipedia.org/wiki/Regular_expression\n\n"
    "https://docs.python.org/library/re.html\n\n"
    "The regular expression module re must be imported into your program before you\n"
    "can use it. The simplest use of the regular expression module is the search()\n"
    "function. The following program demonstrates a trivial use of the search function."
)

ALGORITHM = (
    "An algorithm is a sequence of steps that specifies how to solve a problem. Some "
    "algorithms are faster than others, and some use less space in computer memory. "
    "Computer science is the science of algorithms, including their discovery and analysis."
)


@pytest.fixture(scope="module")
def app_validator(embedder):
    return GroundingValidator(embedder.quantized_copy())


def test_given_terms_are_the_subject_of_a_definition_and_the_question():
    assert given_terms("A regular expression is a sequence of characters.") == {"regular", "express"}
    # No defining verb, no question: nothing is given.
    assert given_terms("Python evaluates the right side first.") == set()
    # A long opening is a clause, not a subject.
    assert given_terms("The reason we have not introduced regular expressions earlier is "
                       "their syntax.") == set()
    # The question's words that the claim repeats.
    assert given_terms("The search function scans the string.",
                       "What does the search function do?") == {"search", "function"}


@pytest.mark.parametrize("context, claim", [
    (REGEX, "A regular expression is a sequence of characters that define a search pattern."),
    (ALGORITHM, "An algorithm is a program written in a programming language that a "
                "computer can run."),
])
def test_a_definition_whose_defining_words_are_absent_fails(app_validator, context, claim):
    v = app_validator.validate(claim, context)
    assert not v.passed
    # What fails it: with the rule off, the paraphrase route accepted the regex claim
    # (the subject's words made up most of the window's coverage).
    if context is REGEX:
        off = GroundingValidator(app_validator.embedder)
        off.paraphrase_new_overlap = 0.0
        assert off.validate(claim, context).passed


@pytest.mark.parametrize("context, claim", [
    (REGEX, "Regular expressions are almost a small programming language of their own for "
            "searching and parsing strings."),
    (ALGORITHM, "An algorithm is a series of steps that says how to solve a problem."),
])
def test_a_definition_restated_in_other_words_passes(app_validator, context, claim):
    assert app_validator.validate(claim, context, question="What is it?").passed
