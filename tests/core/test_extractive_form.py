"""Issue 11, section 6: the extractive backend answers with prose, not with the fragments
around it: list items run together, a title-case heading or caption, a code comment or a
docstring line (found on the Physical AI book, stop 18).

The whole-book answer runs on a real PDF (tests/pdf_factory.py), a real Qdrant Edge
shard, the real MiniLM and the real grounding check; the choice rules are also checked on
the prompt the language models read.
"""

from __future__ import annotations

import pytest

from bookreader.core import quotes
from bookreader.core.answering import Answerer
from bookreader.core.citations import strip_citations
from bookreader.core.llm.answer_type import (
    _showable,
    is_caption,
    answer_type_bonus,
    form_penalty,
    is_comment,
    is_fragment_list,
    is_title_line,
)
from bookreader.core.llm.extractive import ExtractiveBackend
from bookreader.core.model_output import parse_citations
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Mode, Outcome

from indexed_book import indexed_book

FRAGMENTS = ("Navigation sensors: GPS and magnetometer sensors \u2022 Contact sensors "
             "\u2022 Wheel encoders")
SENSING = ("Robots find their way with satellite positioning and a compass, and feel "
           "obstacles through their bumpers.")
CHAPTERS = [
    ("6 Mobile Robots", [
        ("6.1 Sensor Suite", f"{FRAGMENTS}\n\nBattery packs are charged overnight in the "
                             "lab.\n\nThe chassis is made of aluminium."),
        ("6.2 Sensing", f"{SENSING} Each reading carries a time stamp."),
    ]),
]


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("extractive_form")
    with indexed_book(root, "robots.pdf", CHAPTERS, embedder,
                      lines_per_page=12, running_header=False) as indexed:
        yield indexed


def _book_answer(embedder, question: str, *excerpts: Excerpt) -> str:
    """The extractive backend's whole-book answer to ``question`` over ``excerpts``."""
    messages = build_messages(Mode.BOOK, question, excerpts=list(excerpts))
    return ExtractiveBackend(embedder).answer(messages)


def test_the_form_of_a_unit_that_is_no_answer():
    assert is_fragment_list(FRAGMENTS)
    assert is_fragment_list("\u2022 Contact sensors")
    assert not is_fragment_list("A robot carries several sensors: \u2022 GPS receivers")
    assert not is_fragment_list("\u2022 Rapidly-exploring Random Trees (RRT): Grow a tree "
                                "from the start toward the goal.")
    assert is_title_line("Linear Quadratic Regulator (LQR)")
    assert is_title_line("SLAM (Simultaneous Localization and Mapping) Visual SLAM "
                         "Implementation")
    assert not is_title_line("Java is a programming language.")
    assert not is_title_line("The robot stops when it detects an obstacle")
    assert is_comment('"""Plan path using A* algorithm"""') and is_comment("# Install Gazebo")
    assert not is_comment("#!/usr/bin/env python3")
    assert form_penalty(SENSING) == 0.0
    assert form_penalty(FRAGMENTS) < 0 and form_penalty("Linear Quadratic Regulator (LQR)") < 0


@pytest.mark.parametrize("unit,caption", [
    ("Figure 3.7: A simple simulation of the coalescent process for three lineages.", True),
    ("Fig. 4. Velocity profile of the boundary layer near the wall.", True),
    ("Table 2.1. Units of the quantities used in this chapter.", True),
    ("Listing 3.1: A loop that counts down.", True),
    # a caption the PDF ran into the sentence beside it
    ("For example, in Figure 2.4 our offspring of first Figure 2.4: Alleles being "
     "transmitted through an inbred pedigree.", True),
    # sentences that point at a figure or table state something themselves
    ("Table 3.2 shows that a p-value of 0.025 corresponds to a z statistic of 1.96.", False),
    ("As Figure 2 shows, the drag grows with the square of the speed.", False),
    ("The figure: a graph of the degree distribution.", False),
])
def test_a_numbered_caption_is_no_answer(unit, caption):
    assert is_caption(unit) is caption
    assert (form_penalty(unit) < 0) is caption
    assert quotes.usable_sentence(unit) is not caption
    assert _showable(unit) is not caption  # nor does it continue an answer


def test_prose_leads_the_answer_when_a_docstring_matches_the_question_better(embedder):
    """Physical AI: '\"\"\"Plan path using A* algorithm\"\"\"' led the answer to "How does the
    A* algorithm use a heuristic?"; the prose on the page says it."""
    listing = ('class AStarPlanner:\n    def plan(self, start, goal):\n'
               '        """Plan path using A* algorithm"""\n'
               '        open_set = []')
    prose = ("The A* algorithm is a popular graph-based path planning algorithm that "
             "guarantees optimal solutions. It uses a heuristic function to guide the search "
             "toward the goal efficiently.")
    lines = _book_answer(embedder,
                         "How does the A* algorithm use a heuristic to find the shortest path?",
                         Excerpt(1, "Path Planning", "89", listing),
                         Excerpt(2, "Path Planning", "88", prose)).splitlines()
    assert lines[0].startswith("The A* algorithm is a popular"), lines
    assert not lines[0].startswith('"""')
    # Prose of another section nearly as good is about something else: the docstring
    # keeps the lead.
    first = prose.split(". ")[0] + "."
    lines = _book_answer(embedder,
                         "How does the A* algorithm use a heuristic to find the shortest path?",
                         Excerpt(1, "Path Planning", "89", listing),
                         Excerpt(2, "Graph Search Overview", "12", first)).splitlines()
    assert lines[0].startswith("Plan path using A* algorithm [Source:"), lines
    # A sentence that says how, read with the one its "It" points to (stop 37), is better
    # than the docstring on its own merits, whatever its section: it leads, after that one.
    lines = _book_answer(embedder,
                         "How does the A* algorithm use a heuristic to find the shortest path?",
                         Excerpt(1, "Path Planning", "89", listing),
                         Excerpt(2, "Graph Search Overview", "12", prose)).splitlines()
    assert lines[0].startswith("The A* algorithm is a popular"), lines
    assert lines[1].startswith("It uses a heuristic function"), lines


def test_a_docstring_still_answers_when_the_passages_hold_no_prose(embedder):
    listing = ('def plan(self, start, goal):\n'
               '    """Plan path using A* algorithm with a heuristic"""\n'
               '    open_set = []')
    messages = build_messages(
        Mode.BOOK, "How does the A* algorithm use a heuristic to find the shortest path?",
        excerpts=[Excerpt(1, "Path Planning", "89", listing)])
    first = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    # shown without its triple quotes (tests/core/test_quotes_prose.py), cited as printed
    assert first.startswith("Plan path using A* algorithm with a heuristic [Source:"), first
    (cite,) = parse_citations(first)
    assert cite.excerpt == "Plan path using A* algorithm with a heuristic"


def test_whole_book_answer_is_the_sentence_not_the_bullet_fragments(book, embedder):
    settings, retriever, pdf = book
    a = Answerer(settings, embedder=embedder).ask(
        "Which sensors does the robot have?",
        mode=Mode.BOOK, retriever=retriever, pages=pdf, backend="extractive")
    assert a.outcome is Outcome.ANSWER, a.text
    shown = strip_citations(a.text)
    assert shown.startswith("Robots find their way"), a.text
    assert "\u2022" not in shown
    assert a.citations and all(c.verified for c in a.citations)


def test_quotes_never_quote_a_heading_or_bare_list_items():
    assert not quotes.usable_sentence("SLAM (Simultaneous Localization and Mapping) Visual "
                                      "SLAM Implementation")
    assert not quotes.usable_sentence(FRAGMENTS)
    assert quotes.usable_sentence(SENSING)


def test_a_lead_in_that_runs_into_its_first_item_takes_the_other_items():
    """Physical AI: "Gazebo worlds are defined in SDF format and can include: • Models and
    their initial positions" was the whole answer; the items after it on their own lines
    belong to it."""
    text = ("Gazebo worlds are defined in SDF format and can include: \u2022 Models and their "
            "initial positions\n\n\u2022 Physics parameters\n\n\u2022 Lighting and environment "
            "settings\n\nHere is an example world file with obstacles:")
    messages = build_messages(Mode.BOOK, "What can a Gazebo world file in SDF format include?",
                              excerpts=[Excerpt(1, "Environment Building", "23", text)])
    shown = strip_citations(ExtractiveBackend().answer(messages))
    assert shown.startswith("Gazebo worlds are defined in SDF format"), shown
    assert "Physics parameters" in shown and "Lighting and environment settings" in shown
    assert "example world file" not in shown


def test_a_statement_of_a_listing_does_not_continue_a_prose_answer(embedder):
    """Physical AI: "Visualizing this sensor data in Unity helps users understand ..." was
    followed by "using UnityEngine; using System."; a comment that says what the listing
    does still may follow a lead-in."""
    unity = ("Visualizing lidar sensor data in Unity helps users understand the robot's "
             "perception:\n\nusing UnityEngine;\nusing System.Collections;\n\n"
             "public class LidarView : MonoBehaviour")
    messages = build_messages(Mode.BOOK, "How can lidar sensor data be visualized in Unity?",
                              excerpts=[Excerpt(1, "Sensor Visualization", "40", unity)])
    shown = strip_citations(ExtractiveBackend(embedder).answer(messages))
    assert shown.startswith("Visualizing lidar sensor data in Unity"), shown
    assert "using UnityEngine" not in shown
    gazebo = ("To install Gazebo with ROS2 support, you'll need to install both the Gazebo "
              "simulator and the ROS2 Gazebo packages:\n\n# Install Gazebo Fortress (or Garden "
              "depending on your ROS2 version)\n"
              "sudo apt install ros-humble-gazebo-ros-pkgs")
    messages = build_messages(Mode.BOOK, "How do I install Gazebo together with ROS2?",
                              excerpts=[Excerpt(1, "Gazebo Setup", "19", gazebo)])
    shown = strip_citations(ExtractiveBackend(embedder).answer(messages))
    assert shown.startswith("To install Gazebo with ROS2 support"), shown
    # (the comment shown without its mark: tests/core/test_quotes_prose.py)
    assert "\nInstall Gazebo Fortress" in shown and "sudo apt" not in shown


VOCABULARY_4 = (
    "scope: The area of a program where a variable can be used. temporary variable: A "
    "short-lived variable, often used for debugging. incremental development: A process for "
    "creating programs by writing a few lines at a time, compiling, and testing. stub: A "
    "placeholder for an incomplete method so that the class will compile. scaffolding: Code "
    "that is used during program development but is not part of the final version.")
INCREMENTAL = (
    "People often make the mistake of writing a lot of code before they try to compile and "
    "run it. Then they spend way too much time debugging. A better approach is incremental "
    "development. Already we can write an outline for the method, which is sometimes called "
    "a stub.")


def test_a_sentence_for_the_other_half_of_a_two_part_question_joins_the_answer(embedder):
    """Think Java: "What is incremental development, and how does a stub help?" was
    answered with the first half only; the stub's entry scores about 70 % of the best
    sentence (the share for a third sentence was 75 %, now ADD_SHARE)."""
    messages = build_messages(
        Mode.BOOK, "What is incremental development, and how does a stub help?",
        excerpts=[Excerpt(1, "4.10. Vocabulary", "64", VOCABULARY_4),
                  Excerpt(2, "4.9. Incremental Development", "61", INCREMENTAL)])
    shown = strip_citations(ExtractiveBackend(embedder).answer(messages))
    assert shown.startswith("incremental development: A process"), shown
    assert "stub: A placeholder for an incomplete method" in shown
    assert len(shown.split()) <= 80



SENSES = [("3 Perception", [("3.1 Sensory Systems",
           "Humanoid robots employ multiple sensory systems to perceive their environment: "
           "1. Vision systems use cameras for color and depth. 2. Tactile sensing uses force "
           "sensors in the skin.")])]


def test_the_book_sentences_answer_shows_no_next_item_number(tmp_path, embedder):
    """Physical AI bench (stop 35), "What sensors do humanoid robots use?": the book's
    sentences, shown as the answer, read "Humanoid robots employ multiple sensory systems
    to perceive their environment: 1." (the quotes card already dropped the number; the
    extractive answer did not).  Its citation is still verified on the page."""
    with indexed_book(tmp_path, "senses.pdf", SENSES, embedder, lines_per_page=12,
                      running_header=False) as (settings, retriever, pdf):
        a = Answerer(settings, embedder=embedder).ask(
            "What sensory systems do humanoid robots employ to perceive their environment?",
            mode=Mode.BOOK, retriever=retriever, pages=pdf, backend="extractive")
    assert a.outcome is Outcome.ANSWER, a.text
    shown = strip_citations(a.text)
    assert "perceive their environment" in shown, a.text
    assert ": 1." not in shown and not any(
        c.excerpt.rstrip().endswith(": 1") for c in a.citations), a.text
    assert a.citations and all(c.verified for c in a.citations), a.citations


def test_a_figures_alternative_text_is_neither_the_answer_nor_a_quote(embedder):
    """Think Java prints each figure's description for screen readers on the page: "alt=
    Diagram showing an oval shape ..." was quoted beside an answer, and "alt=Memory diagram
    showing two variables ..." led the answer to a question about copying arrays."""
    alt = ("alt=Memory diagram showing two variables a and b pointing to separate arrays "
           "after using Arrays.copyOf, demonstrating independent array copies")
    prose = ("Arrays.copyOf makes a new array and copies the elements, so a and b refer to "
             "separate arrays.")
    assert not quotes.usable_sentence(alt) and quotes.usable_sentence(prose)
    messages = build_messages(
        Mode.BOOK, "How do I make an independent copy of an array with Arrays.copyOf?",
        excerpts=[Excerpt(1, "7.4. Copying Arrays", "112", alt + "\n\n" + prose)])
    first = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    assert first.startswith("Arrays.copyOf makes a new array"), first


def test_a_line_that_prints_a_message_is_not_a_sentence_of_the_answer(embedder):
    """Physical AI (stop 34): 'print("Basic image processing operations completed")' joined
    the book's answer to "What basic image processing operations ... do robots use?"; the
    program's message is not what the book says.  (The book's passages, shortened.)"""
    first = ("Basic Image Operations\n\nLet's start with fundamental image processing "
             "operations that form the building blocks for more complex perception systems:"
             "\n\nimport cv2\nimport numpy as np\n\nclass BasicImageProcessor:\n"
             "def gaussian_blur(self, image, kernel_size=5, sigma=1.0):\n"
             '"""Apply Gaussian blur to reduce noise"""\n'
             "return cv2.GaussianBlur(image, (kernel_size, kernel_size), sigma)\n\n"
             "def edge_detection(self, image, low_threshold=50, high_threshold=150):\n"
             '"""Apply Canny edge detection"""\n'
             "edges = cv2.Canny(gray, low_threshold, high_threshold)\nreturn edges")
    second = ("blurred = processor.gaussian_blur(sample_image, kernel_size=5, sigma=1.0)\n"
              "edges = processor.edge_detection(sample_image)\n"
              "thresholded = processor.threshold_image(sample_image, threshold_value=127)\n\n"
              'print("Basic image processing operations completed")\n\n'
              "Advanced Filtering Techniques\n\nFor more sophisticated image processing, we "
              "implement advanced filtering techniques:")
    third = ("Robot perception is the process by which robots acquire, interpret, and "
             "understand information about their environment. Perception systems typically "
             "integrate multiple sensors including cameras, LiDAR, sonar, and tactile sensors.")
    question = ("What basic image processing operations like filtering and edge detection do "
                "robots use?")
    messages = build_messages(Mode.BOOK, question, excerpts=[
        Excerpt(1, "Image Processing Techniques", "66", first),
        Excerpt(2, "Image Processing Techniques", "67", second),
        Excerpt(3, "Theoretical Foundations", "65", third)])
    shown = strip_citations(ExtractiveBackend(embedder).answer(messages))
    assert "fundamental image processing operations" in shown, shown
    assert "print(" not in shown and "operations completed" not in shown, shown


DEBUGGING = ("If the compiler reports 100 error messages, that doesn\u2019t mean there are 100 "
             "errors in your program. When the compiler encounters an error, it often gets "
             "thrown off track for a while. The compiler is spewing error messages.")
KINDS_OF_ERRORS = ("Three kinds of errors can occur in a program: compile-time errors, run-time "
                   "errors, and logic errors. It is useful to distinguish among them in order to "
                   "track them down more quickly. Compile-time errors occur when you violate the "
                   "rules of the Java language. For example, parentheses and braces have to come "
                   "in matching pairs.")


def test_what_is_gets_the_sentence_that_says_when_it_occurs(embedder):
    """Think Java window trial (stop 36): "What is a compile-time error?" was answered
    "If the compiler reports 100 error messages, that doesn't mean there are 100 errors in
    your program." from the appendix on debugging: "doesn't mean" was read as a definition,
    and "Compile-time errors occur when you violate the rules of the Java language." was
    not."""
    q_terms = {"compil", "time", "error"}
    assert answer_type_bonus("definition", "Compile-time errors occur when you violate the "
                             "rules of the Java language.", q_terms) > 0
    assert answer_type_bonus("definition", DEBUGGING.split(". ")[0] + ".", q_terms) == 0
    lines = _book_answer(embedder, "What is a compile-time error?",
                         Excerpt(1, "D.1 Compile-Time Errors", "328", DEBUGGING),
                         Excerpt(2, "2.9 Compiler Error Messages", "27",
                                 KINDS_OF_ERRORS)).splitlines()
    assert lines[0].startswith("Compile-time errors occur when you violate the rules"), lines


def test_a_sentence_that_points_back_is_judged_with_the_one_it_points_to(embedder):
    """Physical AI (stop 37): "How can a robot's interface show its state and intentions to
    the operator?"  The book answers in "This can be achieved through visual indicators,
    status displays, and predictive animations.", whose "this" is the sentence before it;
    read alone it holds none of the question's words, and the answer was another page's
    sentence about feedback in general."""
    hri = ("Key principles include: Transparency: Users should understand the robot's "
           "intentions, current state, and decision-making process. This can be achieved "
           "through visual indicators, status displays, and predictive animations. Intuitive "
           "Controls: Interface elements should map naturally to user expectations.")
    unity = ("Effective HRI in Unity relies heavily on visual feedback mechanisms that "
             "communicate robot state, intentions, and capabilities to human operators. These "
             "systems must be intuitive, responsive, and consistent with user expectations.")
    lines = _book_answer(embedder,
                         "How can a robot's interface show its state and intentions to the "
                         "operator?",
                         Excerpt(1, "Visual Feedback Systems", "32", unity),
                         Excerpt(2, "Human-Robot Interaction Design", "27", hri)).splitlines()
    # the sentence that says how, after the one that says what "this" is
    assert lines[0].startswith("Key principles include: Transparency:"), lines
    assert lines[1].startswith("This can be achieved through visual indicators"), lines
    # the means is the shape of a "how" answer
    assert answer_type_bonus("procedure", "This can be achieved through visual indicators.",
                             set()) > 0
    assert answer_type_bonus("procedure", "This is achieved.", set()) == 0
