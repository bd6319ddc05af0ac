"""Issue 11, sections 4 and 6: the extractive backend and quotes pick answers, not neighbours,
and the calibrated confidence can tell a good answer from a weak one.

Whole-book answers run on a real PDF (tests/pdf_factory.py), a real Qdrant Edge shard, the
real MiniLM and the real grounding check; the choice rules are also checked on the prompt
the language models read.
"""

from __future__ import annotations

import pytest

from bookreader.core import confidence as calibration
from bookreader.core import quotes
from bookreader.core.answering import Answerer
from bookreader.core.citations import CitationSource, strip_citations
from bookreader.core.llm.extractive import ExtractiveBackend, split_sentences
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Mode, Outcome

from indexed_book import indexed_book

LOOPS = ("A loop that goes through every element of an array is called a traversal. Java "
         "also has a shorter form for that, the enhanced for loop, which visits each element "
         "of the array in turn without an index variable. An accumulator is often updated "
         "inside such a loop, for example to add up the elements.")
# Think Java's chapter-end vocabulary lists run their entries together in one paragraph.
VOCABULARY = ("reduce: A traversal pattern that combines the elements of an array into a "
              "single value. accumulator: A variable used to accumulate results during a "
              "traversal. histogram: An array of integers in which each integer counts the "
              "number of values that fall into a certain range.")
CONTENTS = "7.1 Creating Arrays ........ 101 7.2 Accessing Elements ........ 103"
CHAPTERS = [
    ("7 Arrays", [("7.5 Traversing Arrays", LOOPS), ("7.10 Vocabulary", VOCABULARY)]),
]


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("extractive_choice")
    with indexed_book(root, "arrays.pdf", CHAPTERS, embedder,
                      lines_per_page=12, running_header=False) as indexed:
        yield indexed


def _page_of(pdf, needle):
    return next(i for i in range(pdf.page_count) if needle in " ".join(pdf.page(i).text.split()))


def test_vocabulary_entries_run_together_are_units_of_their_own():
    units = split_sentences(VOCABULARY)
    assert units[1] == "accumulator: A variable used to accumulate results during a traversal."
    assert len(units) == 3
    # An abbreviation's full stop does not start an entry.
    assert split_sentences("See e.g. this: Foo bar.") == ["See e.g. this: Foo bar."]
    # Prose that runs into a listing after its colon: the listing is a unit of its own.
    lead, code = split_sentences("Kalman filters fuse data from several sensors: "
                                 "#!/usr/bin/env python3 import numpy as np")
    assert lead.endswith("sensors:") and code.startswith("#!")


def test_a_glossary_without_colons_run_together_is_split_into_its_entries():
    """Python for Everybody's glossaries print "term Definition." with no colon; run
    together after a full stop they were one unit of ten entries, shown whole as the
    answer to "What happens when two variables refer to the same list?"."""
    glossary = ("8.15 Glossary aliasing A circumstance where two or more variables refer to "
                "the same object. delimiter A character or string used to indicate where a "
                "string should be split. equivalent Having the same value. list traversal "
                "The sequential accessing of each element in a list.")
    units = split_sentences(glossary)
    assert units[1:] == [
        "delimiter A character or string used to indicate where a string should be split.",
        "equivalent Having the same value.",
        "list traversal The sequential accessing of each element in a list."]
    assert units[0].endswith("refer to the same object.")
    # Prose and code whose next sentence starts in lower case stay as they were.
    assert split_sentences("Set x = 5. print(x) shows 5. Then it ends.") == [
        "Set x = 5. print(x) shows 5.", "Then it ends."]
    assert split_sentences("It is fast. iPhone apps use it.") == ["It is fast. iPhone apps use it."]


def test_whole_book_what_is_gets_the_glossary_entry_and_the_page_that_explains_it(book, embedder):
    settings, retriever, pdf = book
    a = Answerer(settings, embedder=embedder).ask(
        "What is an accumulator?", mode=Mode.BOOK, retriever=retriever, pages=pdf,
        backend="extractive")
    assert a.outcome is Outcome.ANSWER, a.text
    shown = strip_citations(a.text)
    # The matching entry, alone: not the whole vocabulary paragraph.
    assert "accumulator: A variable used to accumulate results" in shown
    assert "histogram" not in shown and "reduce:" not in shown
    assert a.citations and all(c.verified for c in a.citations)
    assert _page_of(pdf, "accumulator: A variable") in {c.page for c in a.citations}


def test_extractive_never_answers_with_a_lead_in_a_contents_line_or_an_exercise():
    text = ("Exercise 3. Explain how an enhanced for loop visits the elements of an array. "
            "For example, here is an enhanced for loop: for (int value : values) {\n\n"
            "System.out.println(value); }\n\n"
            "The enhanced for loop visits each element of the array in turn without an index.")
    messages = build_messages(Mode.BOOK, "How does an enhanced for loop visit the elements?",
                              excerpts=[Excerpt(1, "7.8 The Enhanced for Loop", "120", text),
                                        Excerpt(2, "Contents", "v", CONTENTS)])
    answer = ExtractiveBackend().answer(messages)
    first = answer.splitlines()[0]
    assert first.startswith("The enhanced for loop visits each element"), answer
    assert "here is" not in answer and "........" not in answer
    assert not first.startswith("Exercise")


def test_extractive_adds_the_first_passages_sentence_to_a_pick_from_a_later_one():
    later = Excerpt(2, "7.10 Vocabulary", "125", VOCABULARY)
    first = Excerpt(1, "7.5 Traversing Arrays", "118", LOOPS)
    messages = build_messages(Mode.BOOK, "What is an accumulator?", excerpts=[first, later])
    lines = ExtractiveBackend(max_sentences=2).answer(messages).splitlines()
    assert lines[0].startswith("accumulator: A variable")
    assert "(Page 118)" in lines[1] and "accumulator is often updated" in lines[1]


def test_a_claim_that_introduces_a_listing_is_shown_as_a_statement():
    text = ("Kalman filters are essential for fusing data from multiple sensors with different "
            "noise characteristics: #!/usr/bin/env python3 import numpy as np")
    messages = build_messages(Mode.BOOK, "How does a Kalman filter fuse sensor data?",
                              excerpts=[Excerpt(1, "4.2 Sensor Fusion", "85", text)])
    first = ExtractiveBackend().answer(messages).splitlines()[0]
    assert first.startswith("Kalman filters are essential for fusing data from multiple "
                            "sensors with different noise characteristics. [Source:"), first
    assert "python3" not in strip_citations(first)


def test_quotes_prefer_the_definition_over_a_passing_remark():
    """Found in the Think Java trial: "writing constructors gets boring" was quoted for
    "What is a constructor?"."""
    src = CitationSource(
        "As you write more constructors, writing constructors gets boring, because they all "
        "look alike. constructor: A special method that initializes the instance variables "
        "of a newly constructed object.", "11.11 Vocabulary", 20, 20, "200", "200")
    picked = quotes.pick_quotes("What is a constructor?", [src])
    assert picked[0].sentence.startswith("constructor: A special method")
    assert not quotes.usable_sentence(CONTENTS)
    assert not quotes.usable_sentence("def fuse(self, data): return self.kf.update(data) # x")


def test_answer_type_and_length_signals_separate_a_definition_from_a_lead_in():
    q = "What is an accumulator?"
    good = "accumulator: A variable used to accumulate results during a traversal."
    lead = "For example, here is an accumulator:"
    assert calibration.answer_type(q, good) > 0 > calibration.answer_type(q, lead)
    assert calibration.answer_length("one two three") == pytest.approx(3 / 60, abs=1e-3)
    cited = good + ' [Source: 7.10 Vocabulary (Page 125) - "accumulator: A variable used"]'
    assert calibration.answer_length(cited) == calibration.answer_length(good)


def test_the_fitted_calibration_can_say_medium_and_says_low_for_a_weak_answer():
    best = calibration.Signals(generation=1.0, answer_type=0.3, relevance=1.0, coverage=1.0,
                               length=1.0, extractive=1.0)
    weak = calibration.Signals(generation=0.4, answer_type=-1.0, relevance=0.3, coverage=0.3,
                               length=0.1, extractive=1.0)
    assert calibration.level(calibration.calibrated(best)) in ("medium", "high")
    assert calibration.level(calibration.calibrated(weak)) == "low"
    assert calibration.calibrated(weak) < 0.3 < calibration.calibrated(best)


@pytest.mark.parametrize("question, defines, names_by_it", [
    # A synonym stated by the asked term defines the other name, not the term.
    ("What is a linear map?",
     "A linear map from V to W is a function T from V to W with the following properties.",
     "Some authors use the phrase linear transformation, which means the same as linear map."),
    ("What is a traversal?",
     "A traversal is a loop that goes through every element of an array in turn.",
     "Iterating over an array, which means the same as a traversal, is common."),
    # "X is called Y" defines Y: a name given to the asked term is not its definition.
    ("What is a linear map?",
     "A function that preserves addition and scalar multiplication is called a linear map.",
     "A linear map is called injective if it sends distinct vectors to distinct vectors."),
])
def test_a_sentence_that_defines_another_name_by_the_asked_term_is_not_its_definition(
        question, defines, names_by_it):
    from bookreader.core.llm.answer_type import answer_type_bonus, content_terms

    q_terms = set(content_terms(question))
    assert answer_type_bonus("definition", defines, q_terms) > answer_type_bonus(
        "definition", names_by_it, q_terms)
    messages = build_messages(Mode.BOOK, question, excerpts=[
        Excerpt(1, "3.A Definitions", "52", f"{names_by_it} {defines}")])
    first = ExtractiveBackend().answer(messages).splitlines()[0]
    assert first.startswith(defines[:30]), first
    # A sentence that classifies something as the asked-for thing still says what it is.
    classifies = "When a single sentence is a contradiction, then it cannot be true."
    assert answer_type_bonus("definition", classifies, {"contradiction"}) > 0


def test_the_sentence_that_gives_a_name_answers_the_question_that_asks_for_it():
    from bookreader.core.llm.answer_type import answer_type_bonus, asks_for_name, content_terms

    question = "What is the order in which statements are executed called?"
    names = ("You have to know the order in which statements are executed, which is called "
             "the flow of execution.")
    other = "Statements are executed one at a time, in order from top to bottom."
    assert asks_for_name(question) and asks_for_name("What do we call a loop over a list?")
    assert asks_for_name("What is the term for a value with no name in a program?")
    assert not asks_for_name("What is a linear map?")
    q_terms = set(content_terms(question))
    assert answer_type_bonus("definition", names, q_terms, asks_name=True) == 0.15
    assert answer_type_bonus("definition", names, q_terms) == 0.0  # "What is X?" reading
    messages = build_messages(Mode.BOOK, question, excerpts=[
        Excerpt(1, "3.6 Flow of Execution", "25", f"{other} {names}")])
    first = ExtractiveBackend().answer(messages).splitlines()[0]
    assert "flow of execution" in first, first
