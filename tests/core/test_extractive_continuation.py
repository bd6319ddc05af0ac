"""The extractive answer keeps the sentences that continue its best one.

Found in the three evaluation books: the best-scored sentence often restates the question
("The value of minute is 59, and 59 divided by 60 should be 0.98333, not 0.") and the next
one answers it ("The problem is that Java performs integer division ..."); a lead-in opens
a list ("... to perceive their environment: 1. Vision Systems: ...").  Whole-book answers
run on a real PDF (tests/pdf_factory.py), a real Qdrant Edge shard, the real MiniLM and the real grounding
check; the rules are also checked on their own.
"""

from __future__ import annotations

import pytest

from bookreader.core import quotes
from bookreader.core.answering import Answerer
from bookreader.core.citations import strip_citations
from bookreader.core.llm.continuation import continuation, continues, is_lead_in
from bookreader.core.llm.answer_type import is_heading
from bookreader.core.llm.extractive import ExtractiveBackend, parse_prompt
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Mode, Outcome

from indexed_book import indexed_book

DIVISION = ("Addition, subtraction, and multiplication all do what you expect, but you might "
            "be surprised by division. This result often confuses people. The value of minute "
            "is 59, and 59 divided by 60 should be 0.98333, not 0. The problem is that Java "
            "performs integer division when the operands are integers. By design, integer "
            "division always rounds toward zero.")
SENSES = ("Humanoid robots employ multiple sensory systems to perceive their environment:\n\n"
          "1. Vision systems: cameras for color, depth and motion information.\n\n"
          "2. Tactile sensing: force sensors and a tactile skin for contact detection.\n\n"
          "3. Auditory systems: microphones for sound and speech recognition.")
KEYS = ("However when we are inserting millions of rows, it is nice to have the database "
        "automatically generate the values for the id column. We do this by declaring the id "
        "column as a PRIMARY KEY and leave out the id value when inserting the row: DROP TABLE "
        "IF EXISTS Artist; CREATE TABLE Artist (id INTEGER PRIMARY KEY, name TEXT);")
FILLER = ("Tuples are compared element by element. Sorting a list of tuples sorts them by "
          "their first elements. A dictionary maps keys to values.")
CHAPTERS = [
    ("2 Variables and Operators", [("2.5 Arithmetic Operators", DIVISION)]),
    ("3 Perception Systems", [("3.1 Sensory Modalities", SENSES)]),
    ("15 Databases", [("15.8 Automatically creating primary keys", KEYS),
                      ("15.9 Tuples", FILLER)]),
]


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("extractive_continuation")
    with indexed_book(root, "continued.pdf", CHAPTERS, embedder,
                      lines_per_page=14, running_header=False) as indexed:
        yield indexed


def _ask(book, embedder, question):
    settings, retriever, pdf = book
    return Answerer(settings, embedder=embedder).ask(
        question, mode=Mode.BOOK, retriever=retriever, pages=pdf, backend="extractive")


def _page_of(pdf, needle):
    return next(i for i in range(pdf.page_count) if needle in " ".join(pdf.page(i).text.split()))


def test_the_sentence_that_resolves_a_restated_problem_joins_it(book, embedder):
    a = _ask(book, embedder, "Why does 59 divided by 60 come out as zero in Java?")
    assert a.outcome is Outcome.ANSWER, a.text
    lines = [strip_citations(x).strip() for x in a.text.splitlines()]
    first = next(n for n, x in enumerate(lines) if x.startswith("The value of minute is 59"))
    assert lines[first + 1].startswith("The problem is that Java performs integer division")
    assert a.citations and all(c.verified for c in a.citations)
    assert _page_of(book[2], "The problem is that Java") in {c.page for c in a.citations}


def test_a_lead_in_brings_its_list(book, embedder):
    a = _ask(book, embedder, "What senses do humanoid robots use to perceive their environment?")
    assert a.outcome is Outcome.ANSWER, a.text
    shown = strip_citations(a.text)
    assert "Humanoid robots employ multiple sensory systems" in shown
    assert "cameras for color" in shown and "force sensors" in shown
    assert all(c.verified for c in a.citations)


def test_the_quotes_lead_carries_the_continuation_too(embedder):
    from bookreader.core.citations import CitationSource

    src = CitationSource(DIVISION, "2.5 Arithmetic Operators", 20, 20, "22", "22")
    picked = quotes.extractive_quotes("Why does 59 divided by 60 come out as zero in Java?", [src],
                                       embedder)
    said = [q.sentence for q in picked]
    assert said[0].startswith("The value of minute is 59")
    assert said[1].startswith("The problem is that Java performs integer division")


def test_continuation_rules():
    assert continues("The problem is that Java performs integer division.")
    assert continues("To solve this problem, you need an extra nextLine after nextInt:")
    assert continues("We do this by declaring the id column as a primary key.")
    assert not continues("Strings are sequences of characters.")
    assert is_lead_in("They perceive their environment: 1.") and is_lead_in("as follows:")
    # A next sentence that starts something new does not join a long best sentence.
    best = ("Python starts by comparing the first element from each sequence of values "
            "that the two tuples hold in their order.")
    assert continuation(best, ["Dictionaries map keys to values.", "It is fast."]) == 0
    assert continuation(best, ["If they are equal, it goes on.", "x"]) == 0
    assert continuation("The value is 0.98, not 0.", ["The problem is integer division.",
                                                        "That rounds toward zero.", "x"]) == 2
    # A lead-in takes its items, bare list numbers skipped, within the word budget.
    items = ["2.", "Tactile: force sensors.", "3.", "Audio: microphones."]
    assert continuation("Robots use several senses: 1.", ["Vision: cameras."] + items) == 5
    assert continuation("Robots use several senses: 1.", ["Vision: cameras."] + items,
                        max_words=8) == 1
    # A lead-in whose list does not fit is not shown alone.
    assert continuation("It may not be clear why this helps.",
                        ["There are several reasons:", "one " * 70]) == 0
    # A sentence that may not be shown (a listing) stops the continuation.
    assert continuation("The value is 0.98, not 0.", ["It is x = f(y); z = g(x); w[0] = 1;"],
                        usable=lambda s: "=" not in s) == 0


def test_a_lead_in_that_runs_into_its_first_named_item_brings_the_next_items():
    # Physical AI: "... to provide advantages such as: Redundancy and Robustness: Multiple
    # robots can continue ..." is a lead-in whose first item ("Term: what it is") shares
    # its sentence; the items after it are its list, as after "...: \u2022 first item".
    best = ("These systems use distributed control to provide advantages such as: "
            "Redundancy and Robustness: Multiple robots continue when one fails.")
    items = ["Parallel Processing: Tasks run in parallel.", "Scalability: Add robots."]
    assert continuation(best, items + ["Multi-robot systems can be classified."]) == 2
    # a sentence with one colon is no lead-in with its item; "A: B: C" inside a claim is
    # only a list when a short name stands between the colons
    assert continuation("Topics: Named buses over which nodes exchange messages.",
                        ["Services: Request and response."]) == 0
    assert continuation("The rule is simple: the first value wins: Python keeps it. "
                        "It is long enough to not be short at all, really, truly.",
                        ["Dictionaries: map keys to values."]) == 0


def test_a_short_line_of_code_is_no_section_heading():
    assert is_heading("10.2 Comparing tuples")
    assert not is_heading(">>> t[0] = 'A'")
    text = ("10.2 Comparing tuples\n\n>>> t[0] = 'A'\n\n"
            "Python compares two tuples by comparing the first element from each sequence.")
    messages = build_messages(Mode.BOOK, "How does Python compare two tuples?",
                              excerpts=[Excerpt(1, "10.1 Tuples are immutable", "125", text)])
    chosen = ExtractiveBackend().select(parse_prompt(messages))
    assert chosen[0].heading == "10.2 Comparing tuples"


def test_the_added_sentences_stop_at_the_answer_word_budget():
    # Each sentence holds a question word the others do not, so each is worth adding.
    sentences = [
        "Every stack frame is drawn in the diagram of a recursion as one box, and the box "
        "appears when the method is invoked and goes away again when the method returns.",
        "The stack frame of a call lists each parameter of the method with its value, "
        "written in a box that carries the method's name above it for the reader.",
        "A stack diagram also shows each local variable of the call in its box, so that a "
        "reader can follow how the values change while the program runs its statements.",
    ]
    messages = build_messages(
        Mode.BOOK, "stack frame diagram parameter variable recursion",
        excerpts=[Excerpt(1, "4.5 Stack Diagrams", "57", " ".join(sentences))])
    prompt = parse_prompt(messages)
    unbounded = ExtractiveBackend(max_words=None).select(prompt)
    bounded = ExtractiveBackend().select(prompt)
    assert len(unbounded) == 3
    assert 1 <= len(bounded) < 3
    assert sum(len(c.sentence.split()) for c in bounded) <= 60


@pytest.mark.parametrize("definition, items", [
    # a maths book: the properties follow with their bullets lost in the page text
    ("A linear map from \U0001D449 to \U0001D44A is a function \U0001D447 with the "
     "following properties.",
     ["additivity \U0001D447(\U0001D462 + \U0001D463) = \U0001D447\U0001D462 + "
      "\U0001D447\U0001D463 for all \U0001D462, \U0001D463 \u2208 \U0001D449.",
      "homogeneity \U0001D447(\u03bb\U0001D463) = \u03bb(\U0001D447\U0001D463) for all "
      "\u03bb \u2208 \U0001D405."]),
    # a logic book: a definition announced "as follows."
    ("A sentence is valid, by definition, exactly when it is defined as follows.",
     ["true on every line of its complete truth table;",
      "false on none of them, whatever the atoms' values."]),
])
def test_a_sentence_that_announces_its_list_brings_its_items_formulas_too(
        definition, items):
    from bookreader.core.code_text import is_code_line, is_maths
    from bookreader.core.llm.extractive_candidates import continues_with

    after = "Some authors use another name for it."
    assert continuation(definition, items + [after], usable=continues_with) == 2
    # a formula's brackets and "=" read as a listing's line elsewhere; as an item of a list
    # it joins
    first = items[0]
    if is_maths(first):
        assert is_code_line(first) and not continues_with(first)
    # a statement of code still stops a list, and a sentence that announces nothing is none
    assert continuation(definition, ["x = f(y); z = g(x);"], usable=continues_with) == 0
    assert continuation("A map between two spaces is a function that sends each element of "
                        "the first space to exactly one element of the second.", items) == 0


@pytest.mark.parametrize("question, passage, restated, answer", [
    # a programming book: the best sentence says again what the student asked
    ("Do I need to type quit() at the end of a Python script file?",
     "You will notice that there was no need to have quit() at the end of the Python "
     "program in the file. When Python is reading your source code from a file, it knows "
     "to stop when it reaches the end of the file. Input and output come next.",
     "You will notice that there was no need", "When Python is reading your source code"),
    # a statistics book: the same, in a worked answer
    ("Can two variables have zero covariance even though they are clearly related?",
     "This is another example of how the covariance between two variables can be zero, "
     "even when the variables are clearly related. Covariance is a measure of linear "
     "dependence, so a non-linear relationship can still yield zero covariance. Tables of "
     "data follow.",
     "This is another example of how the covariance", "Covariance is a measure of linear"),
])
def test_a_sentence_that_restates_the_question_brings_the_next_one(
        question, passage, restated, answer, embedder):
    prompt = parse_prompt(build_messages(
        Mode.BOOK, question, excerpts=[Excerpt(1, "Notes", "12", passage)]))
    chosen = [c.sentence for c in ExtractiveBackend(embedder).select(prompt)]
    assert chosen[0].startswith(restated), chosen
    assert len(chosen) >= 2 and chosen[1].startswith(answer), chosen


def test_restating_sentence_rule():
    # A long best sentence that restates the question is read as a short one: the next
    # sentence joins when it is related, never when it is a list item.
    best = ("You will notice that there was no need to have quit() at the end of the "
            "Python program in the file.")
    after = ["When Python reads a file, it stops at the end of the file.", "x"]
    assert continuation(best, after) == 0
    assert continuation(best, after, restates=True) == 1
    assert continuation(best, ["1. Open the file.", "x"], restates=True) == 0
    assert continuation(best, after, restates=True, related=lambda s: False) == 0
