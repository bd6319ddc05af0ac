"""The grounding validator (real MiniLM, the app's int8 copy): what a claim says of its
subject must be in the window, not only the subject's own words."""

from __future__ import annotations

import pytest

from bookreader.core.grounding import GroundingValidator
from bookreader.core.grounding_checks import (
    defined_names,
    given_terms,
    narrows_defined_subject,
    relation_as_identity,
)
from bookreader.core.sentences import split_sentences

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


#: Think Java, section 6 ("The switch statement"), as core/pdf.py reads it.
SWITCH = (
    "The body of a switch statement is organized into one or more case blocks.\n"
    "Each case ends with a break statement, which exits the switch body. The\n"
    "default block is optional and executed only if none of the cases apply."
)

STADIUM = (
    " Their Goodison Park home hosted the drawn semi final between Wednesday and Bolton "
    "Wanderers.Goodison Park is a football stadium located in Walton, Liverpool, England."
)


def test_a_verdict_does_not_depend_on_what_was_embedded_before(embedder):
    """The int8 copy quantizes a forward pass's activations together, so a text embedded
    beside others got another vector than alone.  The validator embeds one text at a time,
    and since stop 34 the int8 embedder itself does, whatever batch size it is asked for
    (the focus step and the quotes share its cache)."""
    claim = "If the value does not match any case, the default block is executed."
    fresh = GroundingValidator(embedder.quantized_copy())
    first = fresh.validate(claim, SWITCH)
    busy = GroundingValidator(embedder.quantized_copy())
    # Other answers checked first against a context holding the same sentences embed
    # them with other texts (the app's validator checks many answers).
    busy.validate("The default block runs when no case applies; each case ends with a "
                  "break statement.", REGEX + "\n\n" + SWITCH)
    again = busy.validate(claim, SWITCH)
    assert (again.passed, again.similarity) == (first.passed, first.similarity)
    # Asked for batches, the embedder still reads one text per pass: the same verdict.
    batched = GroundingValidator(embedder.quantized_copy())
    batched.embed_batch_size = None
    batched._embed([claim] + SWITCH.split(". "))
    batched._embed([claim, "The\ndefault block is optional and executed only if none of the "
                    "cases apply.", "Each case ends with a break statement, which exits "
                    "the switch body."])
    assert batched.validate(claim, SWITCH).similarity == first.similarity


def test_the_question_words_are_not_what_the_answer_adds(app_validator):
    question = ("The 1895/96 Football League season was the eighth in Football League "
                "history with Everton, their Goodison Park home, is a football stadium "
                "located in Walton, Liverpool, in which country?")
    claim = "Goodison Park is located in the city of Liverpool."
    # Everything it says beyond the question ("city") is absent from the context.
    assert not app_validator.validate(claim, STADIUM, question=question).passed
    blind = GroundingValidator(app_validator.embedder)
    blind.use_question = False
    assert blind.validate(claim, STADIUM, question=question).passed
    # The right answer passes with the question too.
    assert app_validator.validate("Goodison Park is in Liverpool, England.", STADIUM,
                                  question=question).passed


#: A definition given to a shorter name whose head noun the book's name has and the
#: claim's has not: every word is in the book, but it defines another thing.
NARROWED = [
    # linear algebra: an inner product space, not an inner product
    ("An inner product space is a vector space V along with an inner product on V. When we "
     "say that a vector space V is an inner product space, we are also thinking that an "
     "inner product on V is lurking nearby.",
     "An inner product is a vector space along with an inner product on that vector space."),
    # probability: a sample space, not a sample
    ("The sample space of an experiment is the set of all possible outcomes of the "
     "experiment. An event is a subset of the sample space.",
     "A sample is the set of all possible outcomes of the experiment."),
    # a mention read as the thing: the sentence is about the word, not about eigenvalues
    ("The word eigenvalue is half-German, half-English. The German prefix eigen means "
     "own in the sense of characterizing an intrinsic property.",
     "An eigenvalue is half-German, half-English."),
    # ... in another field: where a word comes from is not what the thing is
    ("The term algorithm is a Latin rendering of the name of a Persian mathematician. An "
     "algorithm is a sequence of steps that solves a problem.",
     "An algorithm is a Latin rendering of the name of a Persian mathematician."),
    # ... also when the claim's subject carries a modifier of its own from the context
    ("The word eigenvalue is half-German, half-English. An operator on V is a linear map "
     "from V to itself.",
     "An eigenvalue of an operator is half-German, half-English."),
    ("The term algorithm is a Latin rendering of the name of a Persian mathematician. A "
     "sorting algorithm puts the items of a list in order.",
     "A sorting algorithm is a Latin rendering of the name of a Persian mathematician."),
    # a modifier that names a kind, dropped: the claim defines the wider thing
    ("Suppose T is an operator on V and λ is an eigenvalue of T. A vector v in V is called "
     "a generalized eigenvector of T corresponding to λ if v is not 0 and (T - λI)^k v = 0 "
     "for some positive integer k.",
     "An eigenvector is a vector v corresponding to λ such that v is not 0 and "
     "(T - λI)^k v = 0 for some positive integer k."),
    ("A simple random sample is a sample in which every member of the population has an "
     "equal chance of being chosen.",
     "A random sample is a sample in which every member of the population has an equal "
     "chance of being chosen."),
    ("A binary tree is a tree in which every node has at most two children.",
     "A tree is a structure in which every node has at most two children."),
]

#: The same name, or a name with the same head: a fair restatement.
KEPT = [
    ("An inner product space is a vector space V along with an inner product on V.",
     "An inner product space is a vector space along with an inner product on V."),
    ("A Java String is a sequence of characters that can be printed.",
     "A string is a sequence of characters that can be printed."),
    ("A basis of V is a list of vectors in V that is linearly independent and spans V.",
     "A basis is a list of vectors that is linearly independent and spans V."),
    # a mention whose verb gives the meaning defines the thing too
    ("The term heteroskedasticity means differing dispersion of the errors.",
     "Heteroskedasticity means differing dispersion of the errors."),
    ("The term bug refers to an error in a program that makes it behave wrongly.",
     "A bug is an error in a program that makes it behave wrongly."),
    # a capitalised modifier names a context (a language, a library), not a kind
    ("In Python, a list is mutable. A Python list is an ordered sequence of values of any "
     "type.",
     "A list is an ordered sequence of values of any type."),
    # the defined name with all its modifiers, said of it by "is called"
    ("A vector v in V is called a generalized eigenvector of T if v is not 0 and "
     "(T - λI)^k v = 0 for some positive integer k.",
     "A generalized eigenvector of T is a vector v such that v is not 0 and (T - λI)^k v = 0 "
     "for some positive integer k."),
]


@pytest.mark.parametrize("context,claim", NARROWED)
def test_a_definition_given_to_a_name_without_its_head_noun_is_unsupported(
        app_validator, context, claim):
    result = app_validator.validate(claim, context)
    assert not result.passed and claim in result.unsupported_sentences, result
    assert narrows_defined_subject(claim, defined_names(split_sentences(context)))


@pytest.mark.parametrize("context,claim", KEPT)
def test_a_definition_of_the_same_head_noun_is_kept(app_validator, context, claim):
    assert app_validator.validate(claim, context).passed


def test_an_opening_that_is_a_clause_is_no_defined_name():
    names = defined_names([
        "These observations suggest that emergent properties are fundamentally unpredictable.",
        "Emergent properties are surprising: it is hard to predict the behavior of the system.",
        "A sample space is the set of all possible outcomes.",
    ])
    assert [sorted(n.terms) for n in names] == [["sampl", "space"]]


def test_a_name_given_by_is_called_is_the_defined_name_with_its_kind():
    names = defined_names(["A vector v in V is called a generalized eigenvector of T if "
                           "v is not 0 and (T - λI)^k v = 0 for some positive integer k.",
                           "A Java String is a sequence of characters."])
    assert [(sorted(n.terms), n.head, sorted(n.kinds)) for n in names] == [
        (["eigenvector", "general"], "eigenvector", ["general"]),
        (["java", "string"], "string", [])]


#: The context relates the subject to the words by another verb; the claim makes the
#: subject be them.
RELATION_AS_IDENTITY = [
    ("A quantifier must always be followed by a variable and a formula that includes that "
     "variable. The formula that follows the quantifier is called the scope of the "
     "quantifier.",
     "A quantifier is a variable and a formula that includes that variable."),
    ("A buffer holds the bytes read from a file until the program asks for them.",
     "A buffer is the bytes read from a file until the program asks for them."),
]

#: A copula in the context, with or without a degree adverb, says what the claim says.
IDENTITY_KEPT = [
    ("A list is always ordered by the position of its values.",
     "A list is ordered by the position of its values."),
    ("A tautology is a sentence that must be true, as a matter of logic.",
     "A tautology is a sentence that must be true as a matter of logic."),
    # A glossary entry ("X: Y") says what X is, whatever words open its definition.
    ("bug: An error in a program.\ndebugging: The process of finding and removing errors.",
     "Debugging is finding and removing errors."),
    ("Image Processing: Techniques for enhancing, filtering, and analyzing visual data.\n"
     "SLAM: Simultaneous Localization and Mapping techniques that enable robots to navigate "
     "unknown environments while building maps.",
     "SLAM is a technique that enables robots to navigate unknown environments while "
     "building maps."),
]


@pytest.mark.parametrize("context,claim", RELATION_AS_IDENTITY)
def test_a_relation_restated_as_what_the_subject_is_is_unsupported(app_validator, context,
                                                                   claim):
    assert relation_as_identity(claim, split_sentences(context))
    assert not app_validator.validate(claim, context).passed


@pytest.mark.parametrize("context,claim", IDENTITY_KEPT)
def test_a_copula_in_the_context_supports_the_same_copula(app_validator, context, claim):
    assert not relation_as_identity(claim, split_sentences(context))
    assert app_validator.validate(claim, context).passed
