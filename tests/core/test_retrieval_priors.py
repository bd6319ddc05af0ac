"""Issue 11 (gold page cited): the ranking priors of hybrid retrieval and the extractive
backend's heading match and score, on a real Qdrant Edge shard, real BM25 and the real MiniLM.

* Apparatus chunks (exercises, summaries, learning objectives) name a chapter's topics in a
  few lines; they rank below the page that explains the topic.
* A chunk under a heading whose words are the question's ranks higher.
* Whether the book covers a question is judged before those priors (the calibrated
  confidence does not move).
"""

from __future__ import annotations

import contextlib

import pytest

from bookreader.config import Settings
from bookreader.core import question_subject
from bookreader.core import retrieval_priors as priors_mod
from bookreader.core.chunking import Chunker
from bookreader.core.lexical import LexicalIndex
from bookreader.core.llm import extractive as extractive_mod
from bookreader.core.llm.extractive import ExtractiveBackend, heading_match
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.retrieval import HybridRetriever
from bookreader.core.retrieval_calibration import Evidence
from bookreader.core.retrieval_terms import query_terms
from bookreader.core.retrieval_priors import chunk_headings, is_apparatus, is_contents
from bookreader.core.store.base import open_store
from bookreader.core.types import Chunk, Mode, Page

EXPLAINS = ("A while loop repeats its body as long as its condition stays true. Java checks "
            "the condition before each pass, so the body may never run at all, and a loop "
            "whose condition never becomes false runs forever.")
EXERCISES = ("Exercise 1: While Loops. Objective: Write a while loop that repeats its body as "
             "long as a condition is true and a for loop that counts. Expected Outcome: a "
             "program that uses while loops and conditions.")
COMPREHENSION = ("Python programs often build one list from another with a for loop. "
                 "10.9 List comprehension\n\nSometimes you want to create a sequence by "
                 "using data from another sequence, in a single expression.")
OTHER = ("Tuples are immutable sequences of values. Lists are mutable, so a list can be "
         "changed in place and a tuple cannot.")
PAGES = [
    ("4 Loops", "4.2 The while Statement", EXPLAINS),
    ("4 Loops", "4.9 Practical Exercises", EXERCISES),
    ("10 Tuples", "10.8 Sequences of sequences", COMPREHENSION),
    ("10 Tuples", "10.1 Tuples are immutable", OTHER),
]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory, embedder):
    settings = Settings(data_dir=tmp_path_factory.mktemp("priors-data"))
    settings.ensure_dirs()
    pages = [Page(i, str(i + 1), text, ch, sec) for i, (ch, sec, text) in enumerate(PAGES)]
    chunks = list(Chunker(embedder.count_tokens, max_tokens=96, overlap=0.1)
                  .chunks(pages, "priors"))
    store = open_store(settings, "priors")
    store.upsert(chunks, embedder.embed([c.text for c in chunks]))
    yield HybridRetriever(store, LexicalIndex.build(chunks), embedder, settings)
    store.close()


@contextlib.contextmanager
def _indexed(tmp_path, embedder, pages: list[Page], name: str):
    """A retriever over ``pages`` (real chunker, Qdrant Edge shard, BM25 and MiniLM)."""
    settings = Settings(data_dir=tmp_path)
    settings.ensure_dirs()
    chunks = list(Chunker(embedder.count_tokens, max_tokens=96, overlap=0.1)
                  .chunks(pages, name))
    store = open_store(settings, name)
    try:
        store.upsert(chunks, embedder.embed([c.text for c in chunks]))
        yield HybridRetriever(store, LexicalIndex.build(chunks), embedder, settings)
    finally:
        store.close()


def _without_and_with(monkeypatch, retriever, question: str, prior: str, value: float,
                      top_k: int):
    """The search for ``question`` with the ranking prior ``prior`` at 0, then at ``value``."""
    monkeypatch.setattr(priors_mod, prior, 0.0)
    before = retriever.search(question, top_k=top_k)
    monkeypatch.setattr(priors_mod, prior, value)
    return before, retriever.search(question, top_k=top_k)


def _chunk(text: str, section: str) -> Chunk:
    return Chunk("c", "b", 0, text, 0, 0, "1", "1", "ch", section, 0, len(text))


def test_apparatus_chunks_are_recognised_by_section_or_text():
    assert is_apparatus(_chunk("Write a loop.", "4.9 Practical Exercises"))
    assert is_apparatus(_chunk("Key ideas.", "Chapter Summary"))
    assert is_apparatus(_chunk("Chapter 10\n\nLearning Objectives\n\nBy the end of this "
                               "chapter, students will be able to ...", "Theoretical Foundations"))
    assert not is_apparatus(_chunk("A while loop repeats its body.", "4.2 The while Statement"))
    assert not is_apparatus(_chunk("loop: A statement that repeats.", "4.10 Vocabulary"))


CONTENTS = ("Contents\n\n4 Loops . . . . . . . . . . . . . . . . . . . . 41\n"
            "4.2 The while Statement . . . . . . . . . . . . . . . 43\n"
            "4.3 The for Statement . . . . . . . . . . . . . . . . 45\n"
            "4.9 Practical Exercises . . . . . . . . . . . . . . . 52\n"
            "10 Tuples . . . . . . . . . . . . . . . . . . . . . . 120")


def test_a_contents_listing_is_recognised_by_its_dot_leaders():
    assert is_contents(_chunk(CONTENTS, ""))
    # the page numbers are often extracted apart from the entries
    assert is_contents(_chunk("SLAM (Simultaneous Localization and Mapping) . . . . . . . . . "
                              "Practical Exercises . . . . . . . . . . Chapter Summary . . . . . . .",
                              ""))
    assert not is_contents(_chunk(EXPLAINS, "4.2 The while Statement"))
    assert not is_contents(_chunk("for x in range(3): ... print('...') # wait...", "4.3 Loops"))


def test_a_contents_page_ranks_below_the_page_it_lists(tmp_path, embedder, monkeypatch):
    pages = [Page(0, "v", CONTENTS, "", ""),
             Page(1, "43", EXPLAINS, "4 Loops", "4.2 The while Statement"),
             Page(2, "120", OTHER, "10 Tuples", "10.1 Tuples are immutable")]
    with _indexed(tmp_path, embedder, pages, "contents") as retriever:
        q = "What is the while statement?"
        before, after = _without_and_with(monkeypatch, retriever, q, "CONTENTS_PENALTY", 0.3,
                                          top_k=3)
        # the listing, all headings, stays a candidate, 0.3 lower
        old = next(p for p in before.passages if is_contents(p.chunk))
        listing = next(p for p in after.passages if is_contents(p.chunk))
        assert listing.score == pytest.approx(old.score - 0.3)
        assert after.passages[0].chunk.page_start == 1
        assert after.confidence == before.confidence  # coverage is judged before the priors


REFERENCES = ("Siciliano, B. (2016). Virtual reality teleoperation of robots. Springer. "
              "Hof, A. L. (2007). Scaling bipedal locomotion. Virtual model control of a biped "
              "robot. Journal of Robotics.")
TELEOPERATION = ("An operator wearing a headset sees through the robot's cameras and moves its "
                 "arms with natural hand movements; this is how virtual reality teleoperation "
                 "lets a person control a robot from far away.")


def test_a_reference_list_ranks_below_the_page_that_explains(tmp_path, embedder):
    """Physical AI: "How can virtual reality be used to control or teleoperate a robot?"
    was answered with lines of "References and Further Reading"."""
    pages = [Page(0, "43", TELEOPERATION, "3 Interfaces", "3.4 Teleoperation"),
             Page(1, "90", REFERENCES, "3 Interfaces", "References and Further Reading")]
    with _indexed(tmp_path, embedder, pages, "references") as retriever:
        asked = retriever.search("How can virtual reality be used to teleoperate a robot?",
                                 top_k=2)
        refs = next(p for p in asked.passages if p.chunk.page_start == 1)
        assert asked.passages[0].chunk.page_start == 0
        # asked what to read, the list keeps its place (only the apparatus 0.05 off)
        reading = retriever.search("What should I read about virtual reality teleoperation "
                                   "of robots?", top_k=2)
        listed = next(p for p in reading.passages if p.chunk.page_start == 1)
        assert listed.score - refs.score > 0.2
    assert priors_mod.REFERENCE_SECTION.search("References and Further Reading")
    assert priors_mod.REFERENCE_SECTION.search("12.4 Further Reading")
    assert not priors_mod.REFERENCE_SECTION.search("7.3 Arrays and References")


def test_headings_inside_a_chunk_are_read():
    heads = chunk_headings(_chunk(COMPREHENSION, "10.8 Sequences of sequences"))
    assert heads == ["10.8 Sequences of sequences", "10.9 List comprehension"]


def test_the_page_that_explains_outranks_the_exercise_that_names_the_topic(retriever):
    q = "How does a while loop repeat its body as long as a condition is true?"
    r = retriever.search(q, top_k=4)
    assert r.passages[0].chunk.page_start == 0, [p.chunk.section for p in r.passages]
    exercise = next(p for p in r.passages if is_apparatus(p.chunk))
    blend = (retriever.settings.dense_weight * exercise.dense_score
             + (1 - retriever.settings.dense_weight) * exercise.bm25_score)
    q_terms = set(query_terms(q))
    prior = priors_mod.HEADING_WEIGHT * priors_mod.heading_match(q_terms, exercise.chunk)
    assert exercise.score == pytest.approx(blend + prior - priors_mod.APPARATUS_PENALTY)


def test_a_chunk_under_a_matching_heading_gets_the_heading_prior(retriever):
    q = "What is a list comprehension?"
    r = retriever.search(q, top_k=4)
    assert r.passages[0].chunk.page_start == 2
    top = r.passages[0]
    blend = (retriever.settings.dense_weight * top.dense_score
             + (1 - retriever.settings.dense_weight) * top.bm25_score)
    # heading "10.9 List comprehension": both its words are the question's (1 x 1)
    assert top.score == pytest.approx(blend + priors_mod.HEADING_WEIGHT)


def test_the_priors_do_not_move_the_coverage_confidence(retriever, monkeypatch):
    questions = ["What is a list comprehension?", "How do I bake bread at home?",
                 "How does a while loop repeat its body as long as a condition is true?"]
    with_priors = [retriever.search(q).confidence for q in questions]
    monkeypatch.setattr(priors_mod, "HEADING_WEIGHT", 0.0)
    monkeypatch.setattr(priors_mod, "APPARATUS_PENALTY", 0.0)
    assert [retriever.search(q).confidence for q in questions] == with_priors


def test_extractive_heading_match_ignores_numbers_and_weighs_both_sides():
    assert heading_match("10.9 List comprehension", {"list", "comprehens"}) == 1.0
    assert heading_match("Lists", {"list", "comprehens"}) == 0.5
    assert heading_match("4.2 Tuples", {"list", "comprehens"}) == 0.0


def test_extractive_prefers_the_sentence_under_the_matching_heading(embedder, monkeypatch):
    # Two sentences that both hold the question's words; the one under the heading line
    # "10.9 List comprehension" inside the later excerpt is the one that answers.
    first = Excerpt(1, "10.1 Tuples are immutable", "120",
                    "A list comprehension makes a new list from the items of an old list.")
    later = Excerpt(2, "10.8 Sequences", "127",
                    "Tuples can be compared.\n\n10.9 List comprehension\n\n"
                    "With a list comprehension the loop that builds the list fits on one line.")
    messages = build_messages(Mode.BOOK, "What is a list comprehension?",
                              excerpts=[first, later])
    line = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    assert line.startswith("With a list comprehension the loop"), line
    assert "(Page 127)" in line
    monkeypatch.setattr(extractive_mod, "HEADING_WEIGHT", 0.0)
    line = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    assert line.startswith("A list comprehension makes a new list"), line


def test_extractive_similarity_separates_sentences_that_hold_every_question_word(embedder):
    # Both sentences hold "API" (coverage 1.0); before, they tied at 1.0 and the one with
    # more keyword hits won however little it said about the question.
    text = ("It is quite common that you need an API key to use a vendor's API, and the API "
            "key goes with every API call. An API is a contract between applications that "
            "defines how two application components interact.")
    messages = build_messages(Mode.BOOK, "What is an API?",
                              excerpts=[Excerpt(1, "Web services", "170", text)])
    first = ExtractiveBackend(embedder, max_sentences=1).answer(messages).splitlines()[0]
    assert first.startswith("An API is a contract"), first



AUDIENCE = ("Target Audience\n\nThis textbook is designed for: university students of computer "
            "science and robotics, and researchers in physical AI who want working examples.")
PREREQUISITES = ("Prerequisites\n\nBefore diving into this textbook, you should have a basic "
                 "understanding of programming, preferably Python, and of linear algebra.")


@pytest.fixture
def front_matter_retriever(tmp_path, embedder):
    pages = [Page(0, "vii", AUDIENCE, "Introduction", "Target Audience"),
             Page(1, "viii", PREREQUISITES, "Introduction", "Prerequisites"),
             Page(2, "43", EXPLAINS, "4 Loops", "4.2 The while Statement"),
             Page(3, "120", OTHER, "10 Tuples", "10.1 Tuples are immutable")]
    with _indexed(tmp_path, embedder, pages, "front") as retriever:
        yield retriever


@pytest.mark.parametrize("question", [
    "Who is this textbook written for?",
    "What background do I need before starting this book?",
])
def test_a_question_about_the_book_is_answered_from_its_front_matter(
        front_matter_retriever, question, monkeypatch):
    """Physical AI: both questions were "not covered in this book" (cosine 0.37 / 0.41)
    though the book's Target Audience and Prerequisites pages answer them."""
    retriever = front_matter_retriever
    # what the blend alone says (the rule switched off): below the threshold
    monkeypatch.setattr(priors_mod, "about_the_book", lambda q, p: False)
    plain = retriever.search(question, top_k=3)
    monkeypatch.undo()
    r = retriever.search(question, top_k=3)
    assert r.confidence >= retriever.settings.confidence_threshold > plain.confidence
    assert retriever.is_covered(r)
    assert priors_mod.is_front_matter(r.passages[0].chunk)


@pytest.mark.parametrize("question", [
    "Does this book explain how to bake a cake?",  # a topic question naming the book
    "Who wrote the play Hamlet?",  # "who" without the book
])
def test_other_questions_are_not_raised_by_the_front_matter_rule(front_matter_retriever,
                                                                 question):
    retriever = front_matter_retriever
    r, parts = retriever.explain(question, top_k=3)
    assert not priors_mod.about_the_book(question, r.passages)
    assert r.confidence == pytest.approx(
        retriever.calibration.confidence(Evidence(
            parts["top_cos"], parts["coverage"], parts["unknown"])), abs=1e-4)
    assert not retriever.is_covered(r)


def test_front_matter_is_early_and_titled_or_numbered_in_roman():
    assert priors_mod.is_front_matter(
        Chunk("c", "b", 0, "x", 5, 5, "12", "12", "", "Preface", 0, 1))
    assert priors_mod.is_front_matter(Chunk("c", "b", 0, "x", 3, 3, "iv", "iv", "", "", 0, 1))
    assert not priors_mod.is_front_matter(
        Chunk("c", "b", 0, "x", 3, 3, "4", "4", "1 Loops", "1.1 While", 0, 1))
    assert not priors_mod.is_front_matter(  # a preface-like title deep in the book
        Chunk("c", "b", 0, "x", 228, 228, "229", "229", "A Appendix", "Preface for Think Python",
              0, 1))


def test_a_question_about_the_book_prefers_its_titled_front_matter(tmp_path, embedder):
    """Physical AI's "Who is this textbook written for?" was answered from the title page
    ("created as part of the ... course project"), not from its Target Audience page."""
    title = ("A TEXTBOOK FOR A UNIVERSITY-LEVEL COURSE. Physical AI and Humanoid Robotics. "
             "This textbook was written as part of a university course project.")
    pages = [Page(0, "i", title, "", ""),
             Page(1, "vii", AUDIENCE, "Introduction", "Target Audience"),
             Page(2, "43", EXPLAINS, "4 Loops", "4.2 The while Statement")]
    with _indexed(tmp_path, embedder, pages, "title") as retriever:
        r = retriever.search("Who is this textbook written for?", top_k=3)
        assert r.passages[0].chunk.section == "Target Audience"
        # a topic question is ranked as before: no front-matter prior
        plain = retriever.search("What does a while loop do?", top_k=3)
        assert plain.passages[0].chunk.page_start == 2


SLAM_LISTING = ("SLAM (Simultaneous Localization and Mapping) Visual SLAM Implementation. "
                "class VisualSLAM: slam = VisualSLAM() # run SLAM on each frame. "
                "slam.process_frame(frame) # SLAM updates the map. print('SLAM done')")
SLAM_SUMMARY = ("Chapter Summary. This chapter covered robot perception. 1. Filtering: "
                "removing noise from images. 2. SLAM: Simultaneous Localization and Mapping "
                "techniques that enable robots to navigate unknown environments while "
                "building maps.")


def test_the_chunk_that_defines_the_term_asked_about_ranks_higher(tmp_path, embedder,
                                                                  monkeypatch):
    """Physical AI: "What is SLAM?" ranked its only definition, an entry of a chapter
    summary, 7th, below listings that name SLAM in every line; quotes of the listing's
    comments were the answer."""
    assert question_subject.defined_term("What is SLAM?") == "SLAM"
    assert question_subject.defined_term("What is a base case in recursion?") == "base case"
    assert question_subject.defined_term("What are tuples?") == "tuples"
    assert question_subject.defined_term("What is the difference between a list and a tuple?") == ""
    assert question_subject.defined_term("What is ROS2 used for?") == ""
    assert question_subject.defines_term("SLAM", _chunk(SLAM_SUMMARY, "Chapter Summary"))
    assert not question_subject.defines_term("SLAM", _chunk(SLAM_LISTING, "SLAM"))
    assert question_subject.defines_term("tuples", _chunk("tuple: A sequence of values.", "V"))
    assert question_subject.defines_term("tuples", _chunk("Tuples are a kind of sequence.", "T"))
    pages = [Page(0, "80", SLAM_LISTING, "7 Perception", "SLAM (Simultaneous Localization "
                  "and Mapping)"),
             Page(1, "85", SLAM_SUMMARY, "7 Perception", "Chapter Summary")]
    with _indexed(tmp_path, embedder, pages, "definition") as retriever:
        q = "What is SLAM?"
        before, after = _without_and_with(monkeypatch, retriever, q, "DEFINITION_PRIOR", 0.1,
                                          top_k=2)
        old = next(p for p in before.passages if p.chunk.page_start == 1)
        new = next(p for p in after.passages if p.chunk.page_start == 1)
        assert new.score == pytest.approx(old.score + 0.1)
        assert before.passages[0].chunk.page_start == 0  # the listing led without it
        assert after.passages[0].chunk.page_start == 1
        assert after.confidence == before.confidence  # coverage is judged before the priors
