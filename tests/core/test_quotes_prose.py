"""The book sentences BookReader quotes (a quotes card, the sentences beside a verified
answer, the extractive backend's answer) are prose, not code: a docstring's parameter
list, an import line or a comment does not lead when a sentence of prose addresses the
question, and a docstring or comment is quoted without its marks (found on the Physical
AI book with the small tier, session 19).  A question that asks for syntax gets the
book's example (Think Java window trial: "How do you declare an array in Java?").

The rendering test runs on a real PDF (tests/pdf_factory.py) chunked by the real chunker;
the choice rules run on the passages as chunk text, with the real MiniLM.
"""

from __future__ import annotations

import pytest

from bookreader.core import quotes
from bookreader.core.citations import CitationSource, strip_citations, verify_answer
from bookreader.core.llm.answer_type import (
    code_penalty,
    form_penalty,
    is_claiming_lead_in,
    unmarked,
    wants_code,
    without_list_number,
)
from bookreader.core.llm.extractive import ExtractiveBackend
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Mode

PID_QUESTION = "What do the proportional, integral and derivative terms of a PID controller do?"
PID_PROSE = ("Proportional-Integral-Derivative (PID) control is the most widely used control "
             "strategy in robotics due to its simplicity and effectiveness:")
PID_DOCSTRING = ('""" Advanced PID controller with additional features :param kp: Proportional '
                 'gain :param ki: Integral gain :param kd: Derivative gain """')
# As the chunker writes a listing: one unit a line, the docstring on one line.
PID_TEXT = (f"{PID_PROSE}\n\nclass AdvancedPIDController:\n"
            "def __init__(self, kp: float, ki: float, kd: float):\n"
            f"{PID_DOCSTRING}\nself.kp = kp\nself.ki = ki")


def _source(text: str, section: str, label: str, page: int = 3) -> CitationSource:
    return CitationSource(text, section, page, page, label, label)


def test_units_of_code_and_how_they_are_shown():
    assert unmarked('"""Create AR overlay for robot"""') == "Create AR overlay for robot"
    assert unmarked("# Install Gazebo Fortress") == "Install Gazebo Fortress"
    assert unmarked(PID_DOCSTRING).startswith("Advanced PID controller with additional")
    assert unmarked("#!/usr/bin/env python3") == "#!/usr/bin/env python3"
    assert unmarked("A sentence of prose.") == "A sentence of prose."
    imports = "import numpy as np import cv2 from collections import deque"
    assert form_penalty(imports) < 0 and not quotes.usable_sentence(imports)
    assert form_penalty("Import the data before you plot it.") == 0
    assert code_penalty(PID_DOCSTRING, PID_QUESTION) < 0
    assert code_penalty(PID_PROSE, PID_QUESTION) == 0
    assert wants_code("How do you declare an array in Java?")
    assert wants_code("What is the syntax of a switch statement?")
    assert not wants_code(PID_QUESTION)
    assert not wants_code("How does Java turn my source code into byte code?")
    # a lead-in that claims something is quotable; a bare one is not
    assert is_claiming_lead_in(PID_PROSE) and quotes.usable_sentence(PID_PROSE)
    assert not quotes.usable_sentence("For example, here is a method without a base case:")


def test_quotes_lead_with_the_books_prose_not_a_docstrings_parameter_list(embedder):
    """Physical AI: three ':param kp: Proportional gain' docstrings were the quotes for
    the PID question; the page's sentence of prose leads now, as a statement."""
    src = _source(PID_TEXT, "Classical Control Methods", "153")
    text = quotes.build_quotes(PID_QUESTION, [src], embedder, min_score=0.0,
                               lead_extractive=True, lines_if_none=True)
    assert text is not None
    lines = text.split("\n")[1:]
    assert lines[0].startswith("\u201cProportional-Integral-Derivative (PID) control is the "
                               "most widely used control strategy in robotics due to its "
                               "simplicity and effectiveness.\u201d"), text
    assert '"""' not in text
    checked, citations = verify_answer(text, [src], add_missing=False)
    assert len(citations) == len(lines) and all(c.verified for c in citations), checked


def test_a_docstring_is_quoted_without_its_quotes_and_still_verifies_on_the_page(
        tmp_path, embedder):
    """Physical AI: '“\"\"\"Update robot positions to maintain formation\"\"\"”' read
    badly.  When a passage holds only code, its docstrings are still quoted (never a dead
    end), without their triple quotes; the citation is checked on the real page."""
    from bookreader.core.chunking import Chunker
    from bookreader.core.pdf import PdfBook

    from pdf_factory import Line, make_pdf

    listing = ["class FormationController:",
               "def update_positions(self, dt: float = 0.1):",
               '"""Update robot positions to maintain formation"""',
               "for robot_id in self.robot_positions:",
               "self.robot_positions[robot_id] += self.velocity * dt",
               "def move_formation(self, offset):",
               '"""Move the entire formation by an offset"""',
               "self.center = self.center + offset"]
    lines = [Line("Formation Control and Task Allocation", y=80, size=14, font="hebo")]
    lines += [Line(t, y=120 + 12 * k, size=9, font="cour") for k, t in enumerate(listing)]
    path = make_pdf(tmp_path / "formation.pdf", [lines])
    chunker = Chunker(embedder.count_tokens, max_tokens=256, overlap=0.2)
    with PdfBook.open(path) as book:
        chunks = list(chunker.chunks(iter(list(book.iter_pages())), "b"))
        sources = [CitationSource.from_chunk(c) for c in chunks]
        question = "How can a group of robots keep a formation while moving?"
        text = quotes.build_quotes(question, sources, embedder, min_score=0.0,
                                   lead_extractive=True, lines_if_none=True)
        assert text is not None
        assert "\u201cUpdate robot positions to maintain formation\u201d" in text, text
        assert '"""' not in text and "'''" not in text
        checked, citations = verify_answer(text, sources, book, add_missing=False)
    assert citations and all(c.verified and c.page == 0 for c in citations), checked
    assert any(c.excerpt == "Update robot positions to maintain formation" for c in citations)


def test_an_import_line_is_not_quoted_its_passage_is_pointed_at_by_another_line(embedder):
    """Physical AI: 'import numpy as np import cv2 from collections import deque ...' was
    quoted for "What is SLAM and how does visual SLAM work?" (it was the first passage's
    best unit).  The passage is still pointed at, by a line that says something."""
    code = _source("import numpy as np\nimport cv2\nfrom collections import deque\n"
                   "import matplotlib.pyplot as plt\n\nclass FrameBuffer:\n"
                   "# Keep at most fifty recent frames in memory for the plots.\n"
                   "self.frames = deque(maxlen=50)",
                   "SLAM (Simultaneous Localization and Mapping)", "80", page=80)
    brief = _source("Objective: Implement a complete visual SLAM system for environment "
                    "mapping and robot localization. Expected Outcome: A working SLAM system "
                    "that can simultaneously localize the robot and build a map.",
                    "Practical Exercises", "84", page=84)
    question = "What is SLAM and how does visual SLAM work?"
    picked = quotes.pick_quotes(question, [code, brief], embedder, min_score=0.0,
                                lead_extractive=True)
    assert all("import" not in q.sentence for q in picked), picked
    assert [q.sentence for q in picked if q.source is code] == [
        "# Keep at most fifty recent frames in memory for the plots."], picked
    text = ExtractiveBackend(embedder).answer(build_messages(
        Mode.BOOK, question, excerpts=[Excerpt(1, code.section, "80", code.text),
                                       Excerpt(2, brief.section, "84", brief.text)]))
    assert "import numpy" not in strip_citations(text), text
    assert "(Page 80)" in text


ARRAYS = (
    "An array is a sequence of values; the values in the array are called elements. To "
    "create an array, you have to declare a variable with an array type and then create the "
    "array itself. Array types look like other Java types, except they are followed by square "
    "brackets ([]).\n\nThe first assignment makes counts refer to an array of four integers. "
    "Of course, you can also declare the variable and create the array with a single line of "
    "code:\n\nint[] counts = new int[4];\ndouble[] values = new double[size];\n\nYou can use "
    "any integer expression for the size of an array, as long as the value is nonnegative.")


def test_a_question_that_asks_for_syntax_gets_the_books_example(embedder):
    """Think Java window trial: "How do you declare an array in Java?" was answered with
    what a declaration does, not how one looks."""
    messages = build_messages(Mode.BOOK, "How do you declare an array in Java?",
                              excerpts=[Excerpt(1, "7.1. Creating Arrays", "108", ARRAYS)])
    text = ExtractiveBackend(embedder).answer(messages)
    shown = strip_citations(text)
    assert "int[] counts = new int[4];" in shown, text
    assert "with a single line of code." in shown
    # a question about what arrays are gets the prose alone
    messages = build_messages(Mode.BOOK, "What are the values in an array called?",
                              excerpts=[Excerpt(1, "7.1. Creating Arrays", "108", ARRAYS)])
    assert "new int[4]" not in ExtractiveBackend(embedder).answer(messages)


APPENDIX_D = (
    "When an exception occurs, Java displays a message that includes the name of the "
    "exception. The first step is to examine the place in the program where the error "
    "occurred and see if you can figure out what happened: NullPointerException: You tried "
    "to access an instance variable or invoke a method on an object that is currently null. "
    "You should figure out which variable is null.")
ARGUMENTS = (
    "Checking for null first prevents the NullPointerException. If str is null, the || "
    "operator will short circuit and evaluate to true immediately.")


def test_an_exceptions_entry_after_a_lead_in_is_its_definition(embedder):
    """Think Java window trial: "What is a NullPointerException?" gave the appendix's
    entry third, inside the lead-in that introduces it."""
    messages = build_messages(Mode.BOOK, "What is a NullPointerException?",
                              excerpts=[Excerpt(1, "9.6. Argument Validation", "155", ARGUMENTS),
                                        Excerpt(2, "D.2. Run-Time Errors", "333", APPENDIX_D)])
    first = ExtractiveBackend(embedder).answer(messages).splitlines()[0]
    assert first.startswith("NullPointerException: You tried to access"), first


@pytest.mark.parametrize("question", [
    "How do I write a PID controller class in Python?",
])
def test_a_code_question_keeps_the_docstring_unpenalised(question):
    assert code_penalty(PID_DOCSTRING, question) == 0


WHEELS_LISTING = (
    "class DifferentialDriveRobot:\n"
    "def __init__(self, wheel_radius: float, wheel_base: float):\n"
    '""" Initialize differential drive robot :param wheel_radius: Radius of the wheels in '
    'meters :param wheel_base: Distance between wheels in meters """\n'
    "self.wheel_radius = wheel_radius")
WHEELS_PROSE = ("Wheeled locomotion is the most common form of mobile robot movement due to its "
                "efficiency and simplicity.")


def test_the_ranked_quotes_put_prose_before_a_docstring(embedder):
    """Physical AI: "What are the advantages of different wheel configurations such as
    differential drive?" quoted two ':param wheel_radius' docstrings before the sentence
    about wheeled robots."""
    listing = _source(WHEELS_LISTING, "Locomotion Systems", "115", page=115)
    prose = _source(WHEELS_PROSE, "Wheeled Robots", "114", page=114)
    question = ("What are the advantages of different wheel configurations such as "
                "differential drive?")
    picked = quotes.pick_quotes(question, [listing, prose], embedder, min_score=0.0,
                                lead_extractive=True)
    assert [q.sentence for q in picked][:1] == [WHEELS_PROSE], picked
    assert any(q.source is listing for q in picked)  # still quoted, after it


def test_the_quotes_card_shows_the_extractive_choice_prose_first(embedder):
    """The extractive choice leads with the docstring (it holds the question's words);
    the card shows the same quotes, the sentence of prose first."""
    listing = _source(WHEELS_LISTING, "Locomotion Systems", "115", page=115)
    prose = _source(WHEELS_PROSE, "Wheeled Robots", "114", page=114)
    question = "What do the wheel radius and wheel base of a differential drive robot mean?"
    lead = quotes.extractive_quotes(question, [prose, listing], embedder)
    assert lead[0].source is listing and lead[1].sentence == WHEELS_PROSE
    picked = quotes.pick_quotes(question, [prose, listing], embedder, min_score=0.0,
                                lead_extractive=True)
    assert [q.sentence for q in picked] == [lead[1].sentence, lead[0].sentence]


def test_the_quotes_card_does_not_repeat_an_entry_inside_its_lead_in(embedder):
    arguments = _source(ARGUMENTS, "9.6. Argument Validation", "155", page=155)
    appendix = _source(APPENDIX_D, "D.2. Run-Time Errors", "333", page=333)
    picked = quotes.pick_quotes("What is a NullPointerException?", [arguments, appendix],
                                embedder, min_score=0.0, lead_extractive=True)
    assert picked[0].sentence.startswith("NullPointerException: You tried"), picked
    assert sum("You tried to access" in q.sentence for q in picked) == 1, picked


def test_a_listing_line_is_replaced_only_by_a_sentence_about_the_question(monkeypatch):
    """The passage's best quotable sentence stands for a listing line the extractive
    choice picked only when it names something the question asks about (Physical AI:
    "How does LiDAR work?" quoted "self.kf.x[3] += ay * dt # Update velocity y")."""
    from bookreader.core.llm import extractive as ex

    listing = _source("import numpy as np\nfrom lidar import Scanner\n\n"
                      "self.kf.x[3] += ay * dt # Update velocity y of the filter state now\n",
                      "Sensor Fusion", "80", 79)

    class Choice:
        def __init__(self, sentence, block):
            self.sentence, self.block, self.score = sentence, block, 0.5

    def select(self, parsed):
        return [Choice("import numpy as np from lidar import Scanner", parsed.blocks[0])]

    monkeypatch.setattr(ex.ExtractiveBackend, "select", select)
    assert quotes.extractive_quotes("How does LiDAR work?", [listing]) == []


# As the chunker writes the Physical AI book's numbered list (page 19): the first item
# runs on after the lead-in's colon, the others start a paragraph each.
SENSES_LIST = ("Humanoid robots employ multiple sensory systems to perceive their environment: "
               "1. Vision Systems: Cameras for color, depth, and motion information\n\n"
               "2. Tactile Sensing: Force/torque sensors, tactile skin for contact detection\n\n"
               "3. Proprioception: Joint encoders, IMU sensors for self-awareness")


def test_the_next_items_list_number_is_not_shown_at_a_sentences_end():
    assert without_list_number("They perceive their environment: 1.") == (
        "They perceive their environment:")
    assert without_list_number("Vision Systems: Cameras for motion information\n2.") == (
        "Vision Systems: Cameras for motion information")
    assert without_list_number("It is a reliable network for coordination. 2.") == (
        "It is a reliable network for coordination.")
    # an item whose own number went to the sentence before it (Physical AI, stop 34:
    # "... IMU data: 1." / "Model the humanoid's state (position, velocity, orientation) 2.")
    assert without_list_number("Model the state (position, velocity, orientation) 2.") == (
        "Model the state (position, velocity, orientation)")
    # a number that ends a statement, a figure or a version stays
    for kept in ("The answer is 2.", "Set x to 5.", "as shown in Figure 15.8.",
                 "Python 3.", "Steps 4 and 6."):
        assert without_list_number(kept) == kept
    assert without_list_number("2.") == "2."


def test_the_quotes_card_shows_a_list_lead_in_without_the_first_items_number():
    """Window trial on the Physical AI book (stop 21): "What sensors do humanoid robots
    use?" quoted "... perceive their environment: 1."."""
    src = _source(SENSES_LIST, "Theoretical Foundations", "19", page=19)
    picked = quotes.pick_quotes("What sensors do humanoid robots use?", [src], None,
                                min_score=0.0)
    assert picked and any(q.sentence.endswith("1.") for q in picked), picked
    text = quotes.render_quotes(picked)
    assert "environment." in text and ": 1" not in text and "\n2." not in text, text
    checked, citations = verify_answer(text, [src], add_missing=False)
    assert citations and all(c.verified for c in citations), checked


def test_a_line_that_opens_with_a_call_is_never_quoted():
    """A listing line led quotes in two books ('print(f"PID control simulation
    completed.' for how a PID controller works, "System.out.println(0.1 * 10);" for why
    adding 0.1 ten times does not give 1.0)."""
    assert not quotes.usable_sentence('print(f"PID control simulation completed.")')
    assert not quotes.usable_sentence("System.out.println(0.1 * 10);")
    assert not quotes.usable_sentence("self.controller.update(error, dt) returns the output.")
    assert quotes.usable_sentence("Proportional-Integral-Derivative (PID) control is the most "
                                  "widely used control strategy in robotics.")
