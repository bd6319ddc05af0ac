"""The extractive answer reads as a student's answer: not an exercise brief, not a
sentence about the chapter, and no unrelated sentence tacked on to a short one.

Found in the Physical AI book (an extractive answer led with "Design a privacy-preserving
data collection system for a healthcare robot.", another with "We explored: ...") and in
Think Java ("So 76 inches is 6 feet, 4 inches." was followed by "Many people (and
textbooks) incorrectly refer to % as the modulus operator").  Whole-book answers run on
a real PDF (tests/pdf_factory.py), a real Qdrant Edge shard, the real MiniLM and the real
grounding check; the rules are also checked on their own.
"""

from __future__ import annotations

import pytest

from bookreader.core import quotes
from bookreader.core.answering import Answerer
from bookreader.core.citations import CitationSource, strip_citations
from bookreader.core.llm.answer_type import META, TASK, answer_type_bonus
from bookreader.core.llm.continuation import continuation, continues
from bookreader.core.llm.extractive import ExtractiveBackend, parse_prompt
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Mode, Outcome

from indexed_book import indexed_book

PRIVACY = ("Robots in homes and hospitals collect personal data such as images, voices and "
           "health records. To keep it safe, a robot should collect only what it needs, "
           "anonymize and encrypt what it stores, and ask people for consent before "
           "recording them.")
EXERCISES = ("Exercise 3: Privacy-Preserving Robot\n\n"
             "Design a system that protects the personal data a robot collects.\n\n"
             "Expected Outcome: A robot that protects the personal data it collects.")
SUMMARY = ("This chapter covered how a robot should protect the personal data it collects. "
           "Wheeled robots are the most common type of mobile robot.")
CHAPTERS = [
    ("12 Ethics and Privacy", [("12.3 Protecting Personal Data", PRIVACY)]),
    ("12 Exercises", [("12.9 Practical Exercises", EXERCISES)]),
    ("13 Summary", [("13.1 Chapter Summary", SUMMARY)]),
]


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("extractive_briefs")
    with indexed_book(root, "briefs.pdf", CHAPTERS, embedder,
                      lines_per_page=14, running_header=False) as indexed:
        yield indexed


def test_whole_book_answer_is_the_explanation_not_the_exercise_or_the_summary(book, embedder):
    settings, retriever, pdf = book
    a = Answerer(settings, embedder=embedder).ask(
        "How should a robot protect the personal data it collects?", mode=Mode.BOOK,
        retriever=retriever, pages=pdf, backend="extractive")
    assert a.outcome is Outcome.ANSWER, a.text
    first = strip_citations(a.text.splitlines()[0]).strip()
    assert first.startswith("To keep it safe, a robot should collect only"), a.text
    shown = strip_citations(a.text)
    assert "Design a system" not in shown and "Expected Outcome" not in shown
    assert a.citations and all(c.verified for c in a.citations)


def test_the_quotes_lead_skips_the_exercise_brief(embedder):
    sources = [CitationSource(EXERCISES, "12.9 Practical Exercises", 40, 40, "40", "40"),
               CitationSource(PRIVACY, "12.3 Protecting Personal Data", 38, 38, "38", "38")]
    picked = quotes.extractive_quotes(
        "How should a robot protect the personal data it collects?", sources, embedder)
    assert picked and picked[0].sentence.startswith("To keep it safe")


def test_briefs_and_sentences_about_the_chapter_rank_down():
    for brief in ("Design a privacy-preserving data collection system for a robot.",
                  "Implement a policy gradient method for continuous control.",
                  "2. Develop an ethical decision-making framework for a robot.",
                  "Expected Outcome: A working SLAM system that maps the room."):
        assert TASK.match(brief), brief
        assert answer_type_bonus("other", brief, {"robot"}) < 0
    for meta in ("By the end of this chapter, you will be able to: build a robot.",
                 "This chapter covered the essential concepts of robot learning.",
                 "In this chapter, you'll learn how to use while and for loops.",
                 "We explored the distinction between digital AI and Physical AI.",
                 "Let's start with fundamental image processing operations."):
        assert META.match(meta), meta
        assert answer_type_bonus("other", meta, {"loop"}) < 0
    # Ordinary statements keep their standing.
    for plain in ("Designing a robot starts with its tasks.",
                  "The design of a controller sets its gains.",
                  "A chapter of a book is a unit of text."):
        assert not TASK.match(plain) and not META.match(plain)
        assert answer_type_bonus("other", plain, {"robot"}) == 0


def test_a_sentence_about_the_chapter_still_shows_the_topic_is_covered(embedder):
    # The only passage that matches is a sentence about the chapter: it ranks down, but the
    # book does cover the question, so the answer is not "not covered".
    text = ("In this chapter, you will learn how to use while loops to repeat a block of "
            "statements as long as a condition holds.")
    messages = build_messages(Mode.BOOK, "How do I repeat a block of statements while a "
                              "condition holds?",
                              excerpts=[Excerpt(1, "6 Loops and Strings", "89", text)])
    answer = ExtractiveBackend(embedder).answer(messages)
    assert "not covered" not in answer
    assert "while loops" in answer


def test_a_short_best_sentence_takes_only_a_related_next_sentence(embedder):
    remainder = ("So 76 inches is 6 feet, 4 inches. Many people incorrectly call the percent "
                 "sign the modulus operator in their textbooks.")
    messages = build_messages(Mode.BOOK, "How many feet and inches are 76 inches?",
                              excerpts=[Excerpt(1, "3.8 Remainder Operator", "42", remainder)])
    chosen = ExtractiveBackend(embedder).select(parse_prompt(messages))
    said = [c.sentence for c in chosen]
    assert said[0] == "So 76 inches is 6 feet, 4 inches."
    assert not any("modulus" in s for s in said), said
    # The rule itself: an unrelated sentence after a short one is left out, a sentence
    # that points back ("But ...") joins without the check.
    short = "So 76 inches is 6 feet, 4 inches."
    assert continuation(short, ["Strings are immutable."], related=lambda s: False) == 0
    assert continuation(short, ["Strings are immutable."], related=lambda s: True) == 1
    assert continues("But that will almost never work.")
    assert continuation("It is tempting to use ==.", ["But that will almost never work."],
                        related=lambda s: False) == 1


def test_without_an_embedder_a_shared_word_relates_the_next_sentence():
    text = ("So 76 inches is 6 feet, 4 inches. Many people call the percent sign the "
            "modulus operator. ")
    messages = build_messages(Mode.BOOK, "How many feet and inches are 76 inches?",
                              excerpts=[Excerpt(1, "3.8 Remainder Operator", "42", text)])
    said = [c.sentence for c in ExtractiveBackend().select(parse_prompt(messages))]
    assert said[0] == "So 76 inches is 6 feet, 4 inches."
    assert not any("modulus" in s for s in said), said
    text2 = "So 76 inches is 6 feet, 4 inches. Twelve inches make one of the feet."
    messages = build_messages(Mode.BOOK, "How many feet and inches are 76 inches?",
                              excerpts=[Excerpt(1, "3.8 Remainder Operator", "42", text2)])
    said = [c.sentence for c in ExtractiveBackend().select(parse_prompt(messages))]
    assert said[:2] == ["So 76 inches is 6 feet, 4 inches.",
                        "Twelve inches make one of the feet."]


def test_a_best_sentence_that_says_this_brings_the_sentence_that_names_it():
    text = ("Forward kinematics computes the position of the end effector from the joint "
            "angles. This is accomplished with transformation matrices built from the "
            "Denavit-Hartenberg parameters of each link. Wheeled robots are common.")
    messages = build_messages(
        Mode.BOOK, "How are Denavit-Hartenberg parameters used with transformation matrices?",
        excerpts=[Excerpt(1, "4.2 Kinematics", "46", text)])
    said = [c.sentence for c in ExtractiveBackend().select(parse_prompt(messages))]
    assert said[0].startswith("Forward kinematics computes the position"), said
    assert said[1].startswith("This is accomplished with transformation matrices"), said
    # "It is possible ..." points at nothing: no sentence is brought before it.
    text2 = ("Wheeled robots are common. It is possible to have two variables that refer to "
             "the same object.")
    messages = build_messages(Mode.BOOK, "Can two variables refer to the same object?",
                              excerpts=[Excerpt(1, "10.5 Aliasing", "172", text2)])
    said = [c.sentence for c in ExtractiveBackend().select(parse_prompt(messages))]
    assert said[0].startswith("It is possible to have two variables"), said


def test_a_brief_decides_but_the_best_sentence_of_prose_leads():
    # Physical AI: the learning objectives held every word of "What are ROS services and
    # actions used for compared to topics?" and led the answer; the body's entry, which
    # says what a service is, scored higher but holds too few of the question's words to
    # decide alone.
    from bookreader.core.llm.extractive import ContextBlock, ParsedPrompt

    objectives = ("By the end of this chapter, students will be able to: \u2022 Implement ROS "
                  "nodes, topics, services, and actions for robotic applications")
    entry = "Services: Synchronous request/response communication pattern."
    body = f"Nodes are processes that perform computation. {entry} Parameters are values."
    prompt = ParsedPrompt((ContextBlock("excerpt", objectives, "Learning Objectives", "2", 1),
                           ContextBlock("excerpt", body, "Theoretical Foundations", "5", 2)),
                          "What are ROS services for, next to topics and actions?", None)
    chosen = ExtractiveBackend().select(prompt)
    assert chosen, "the brief shows that the context answers"
    assert chosen[0].sentence == entry


def test_when_a_listing_line_ranks_first_the_best_sentence_of_prose_still_leads(embedder):
    # Physical AI: a docstring ranked first for "How can a policy trained in simulation be
    # transferred to a real robot?" and held too little of the question to decide; the
    # chapter summary's opening decided, led the answer and brought its list of topics.
    from bookreader.core.llm.extractive import ContextBlock, ParsedPrompt

    summary = ("This chapter covered the essential concepts of robot learning and adaptation: "
               "1. Supervised Learning: Implementing classification and regression models for "
               "robot perception. Transfer Learning: Techniques for transferring knowledge "
               "between tasks and domains.")
    listing = ('def select_action(self, state):\n    """Select action using the agent\'s '
               'policy"""\n    return self.policy(state)')
    theory = ("Transfer Learning: The ability to apply knowledge learned in one context to new "
              "but related tasks, which is crucial for efficient learning in robotics.")
    prompt = ParsedPrompt((ContextBlock("excerpt", listing, "Reinforcement Learning for Robots", "3", 1),
                           ContextBlock("excerpt", summary, "Chapter Summary", "9", 2),
                           ContextBlock("excerpt", theory, "Learning Theory", "5", 3)),
                          "How can a policy trained in simulation be transferred to a real robot?",
                          None)
    chosen = ExtractiveBackend(embedder).select(prompt)
    assert chosen and chosen[0].sentence == theory
    assert not any(c.sentence.startswith("This chapter covered") for c in chosen)
