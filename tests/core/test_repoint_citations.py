"""A citation that quotes a sentence unrelated to its claim is moved to the one that holds it."""

from __future__ import annotations

from bookreader.core.citations import CitationSource, verify_answer
from bookreader.core.model_output import parse_citations
from bookreader.core.answer_quotes import repoint_citations

# Two passages on two pages, as whole-book retrieval gives them (Think Java, 1.1).
FIRST = CitationSource(
    "When people hear the word computer, they often think of a desktop or a laptop. However, "
    "in a more general sense, a computer can be any type of device that stores and processes "
    "data.", "1. Computer Programming", 21, 22, "1", "2")
SECOND = CitationSource(
    "Users generally see and interact with touchscreens, keyboards, and monitors, but it's the "
    "processors and memory that perform the actual computation.",
    "1.1. What Is a Computer?", 22, 23, "2", "3")


def test_citation_of_a_neighbouring_passage_moves_to_the_claims_sentence():
    answer = ('A computer can be any type of device that stores and processes data. '
              '[Source: 1.1. What Is a Computer? (Page 2) - "Users generally see and interact '
              'with touchscreens, keyboards, and monitors"]')
    moved = repoint_citations(answer, [FIRST, SECOND])
    cite = parse_citations(moved)[0]
    assert "stores and processes data" in cite.excerpt
    assert moved.startswith("A computer can be any type of device that stores and processes data.")
    # the moved citation is verbatim context, so the usual check verifies it
    text, citations = verify_answer(moved, [FIRST, SECOND], add_missing=False)
    assert [c.verified for c in citations] == [True]
    assert citations[0].section == "1. Computer Programming"


def test_a_citation_that_supports_its_claim_is_left_alone():
    answer = ('Processors and memory perform the actual computation. [Source: 1.1. What Is a '
              'Computer? (Page 2) - "it\'s the processors and memory that perform the actual '
              'computation"]')
    assert repoint_citations(answer, [FIRST, SECOND]) == answer


def test_a_claim_no_context_sentence_holds_keeps_its_citation():
    # Nothing in the context holds this claim: moving the citation would lend it support.
    answer = ('Quantum computers use qubits for parallel search. [Source: 1.1. What Is a '
              'Computer? (Page 2) - "Users generally see and interact with touchscreens"]')
    assert repoint_citations(answer, [FIRST, SECOND]) == answer


def test_an_answer_repeating_a_word_across_a_subordinate_copula_is_not_a_tautology():
    from bookreader.core import quotes

    # Think Java 2.5: the correct answer was thrown away as "restating the question".
    assert not quotes.is_tautology(
        "Java performs integer division when the operands are integers.",
        "Why does 59 divided by 60 come out as zero in Java?")
    assert quotes.is_tautology("The frame called the base case is called the base case.",
                               "Which frame is called the base case?")
    assert quotes.is_tautology("A base case is a base case.", "What is a base case?")


def test_a_long_sentence_is_quoted_where_it_holds_the_claim():
    long = CitationSource(
        "Users generally see and interact with touchscreens, keyboards, and monitors, and "
        "they rarely think about the parts inside, but it's the processors and memory that "
        "perform the actual computation of every program.", "1.1. What Is a Computer?",
        22, 23, "2", "3")
    answer = ('Processors and memory perform the actual computation of every program. '
              '[Source: 1. Computer Programming (Page 1) - "When people hear the word computer"]')
    cite = parse_citations(repoint_citations(answer, [FIRST, long]))[0]
    assert len(cite.excerpt.split()) <= 20
    assert "processors and memory that perform the actual computation" in cite.excerpt


def test_overlapping_chunks_show_a_repeated_sentence_once():
    from bookreader.core.focus import unique_sentences

    a = ("When you run nextInt, it reads characters until it gets to a non-digit. But since the "
         "next character is already a newline, nextLine returns the empty string.")
    b = ("But since the next character is already a newline, nextLine returns the empty string. "
         "To solve this problem, you need an extra nextLine after nextInt.")
    c = "Scanner reads input from the keyboard."
    out = unique_sentences([a, b, c, a])
    assert out[0] == a and out[2] == c and out[3] == ""
    assert out[1] == "To solve this problem, you need an extra nextLine after nextInt."


# Think Java 6.9, as the small tier copied it whole into its citation (stop 15's trial).
SUBSTRING = CitationSource(
    "The substring method returns a new string that copies letters from an existing string, "
    "given a pair of indexes. For example, fruit.substring(0, 3) returns ban, and "
    "fruit.substring(2, 5) returns nan, because the second index is not included in the result "
    "and the letters from the first index up to the second are copied into the new string.",
    "6.9. Substrings", 99, 100, "80", "80")


def test_a_copied_paragraph_is_cut_to_the_words_that_prove_the_claim():
    from bookreader.core.answer_quotes import trim_excerpts
    from bookreader.core.quotes import EXCERPT_WORDS

    paragraph = " ".join(SUBSTRING.text.split()[-40:])
    answer = ('The second index is not included in the result of substring. '
              f'[Source: 6.9. Substrings (Page 80) - "{paragraph}"]')
    trimmed = trim_excerpts(answer)
    cite = parse_citations(trimmed)[0]
    assert len(cite.excerpt.split()) == EXCERPT_WORDS
    assert "second index is not included in the result" in cite.excerpt
    assert trimmed.startswith("The second index is not included in the result of substring. ")
    # the stretch is verbatim context: the usual check verifies it on its page
    _, citations = verify_answer(trimmed, [SUBSTRING], add_missing=False)
    assert [c.verified for c in citations] == [True]
    assert citations[0].excerpt == cite.excerpt


def test_a_short_excerpt_is_left_as_written():
    from bookreader.core.answer_quotes import trim_excerpts

    answer = ('Substring copies letters. [Source: 6.9. Substrings (Page 80) - "The substring '
              'method returns a new string that copies letters from an existing string"]')
    assert trim_excerpts(answer) == answer
