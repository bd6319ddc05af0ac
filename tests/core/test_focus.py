"""Focusing a long selection for a slow local model (core/focus.py), with the real MiniLM."""

from __future__ import annotations

import pytest

from bookreader.core.focus import GAP, focus
from bookreader.core.sentences import split_sentences

FILLER = [
    "The harbour was quiet in the early morning.",
    "Fishing boats returned with their nets folded.",
    "Gulls circled above the market where traders set out their stalls.",
    "A bell rang twice from the old church on the hill.",
    "Children ran along the sea wall towards the school.",
    "The baker opened his shutters and the smell of bread filled the street.",
    "Rain clouds gathered slowly over the western cliffs.",
    "An old ferry waited at the pier for the first passengers.",
]
ANSWER = "The lighthouse keeper, Marta Olsen, lit the lamp every evening at six o'clock."
BEFORE = "She had kept the lighthouse for thirty years."


def _selection(position: int) -> str:
    sents = [f"{s[:-1]} on day {i + 1}." for i, s in enumerate(FILLER * 2)]  # all distinct
    sents.insert(position, ANSWER)
    sents.insert(position, BEFORE)
    return " ".join(sents)


def test_a_selection_within_the_budget_is_unchanged():
    text = " ".join(FILLER[:3])
    assert focus(text, "When was the lamp lit?", 600) is text
    assert focus(_selection(10), "When was the lamp lit?", None) == _selection(10)


@pytest.mark.parametrize("position", [0, 7, 16])
@pytest.mark.parametrize("with_embedder", [False, True])
def test_the_answer_sentence_is_kept_wherever_it_is(position, with_embedder, embedder):
    text = _selection(position)
    assert len(text) > 900
    shown = focus(text, "Who lit the lamp of the lighthouse, and when?", 400,
                  embedder=embedder if with_embedder else None)
    assert len(shown) <= 400
    assert ANSWER in shown
    # Its predecessor (who "she" is) comes with it, in the original order.
    assert f"{BEFORE} {ANSWER}" in shown
    # Every sentence shown is a sentence of the selection, in the selection's order.
    kept = [s for part in shown.split(GAP.strip()) for s in split_sentences(part)]
    positions = [text.index(s) for s in kept]
    assert positions == sorted(positions) and len(kept) >= 3


def test_gaps_are_marked():
    text = _selection(8)
    shown = focus(text, "Who lit the lamp of the lighthouse?", 300)
    assert f"{GAP}{BEFORE} {ANSWER}{GAP.rstrip()}" in shown and shown.endswith("...")
    first = focus(_selection(0), "Who lit the lamp of the lighthouse?", 300)
    assert first.startswith(f"{BEFORE} {ANSWER}")  # nothing left out before it


def test_one_sentence_longer_than_the_budget_is_cut():
    long = "word " * 300
    assert focus(long.strip(), "what?", 100) == long.strip()[:100]
    text = ("Short one. " + "The answer is in this very long sentence " + "and more " * 80 + ".")
    shown = focus(text, "Where is the answer in this long sentence?", 200)
    assert len(shown) == 200 and shown.startswith("The answer is in this very long sentence")


def test_an_embedder_that_fails_falls_back_to_keywords(caplog):
    class Broken:
        def embed(self, texts):
            raise RuntimeError("no model")

    shown = focus(_selection(12), "Who lit the lamp of the lighthouse?", 300, embedder=Broken())
    assert ANSWER in shown
    assert "ranking by keywords only" in caplog.text


def test_a_code_listing_is_ranked_line_by_line():
    lines = [f"    int counter{i} = {i};" for i in range(40)]
    lines.insert(33, '    String greeting = "hello world";')
    lines.insert(34, "    System.out.println(greeting);")
    code = "public static void main(String[] args) {\n" + "\n".join(lines) + "\n}"
    assert len(code) > 1000
    shown = focus(code, "What does the program print with System.out.println?", 300)
    assert len(shown) <= 300
    assert '    String greeting = "hello world";\n    System.out.println(greeting);' in shown


# --- whole-book focus ranked by the extractive sentence score (focus_passages) ----------------
BASE_CASE = ("Recursion needs a way to stop. For example, here is a recursive method without a "
             "base case:\npublic static void forever(int n) {\nforever(n + 1); }\nWithout a "
             "base case the recursion never ends and the program crashes.")
VOCAB = ("recursive: A method that invokes itself. base case: A condition that causes a "
         "recursive method not to make another recursive call. infinite recursion: A recursive "
         "method without a base case.")
NOISE = ("5.3 Stack Diagrams\nThe stack diagram shows each frame of the program as a box "
         "with its variables and their values.")


def _shown(picked):
    return "\n".join(text for _, text in picked)


def test_answer_ranking_shows_the_definition_not_the_lead_in_to_code(embedder):
    from bookreader.core.focus import focus_passages

    question = "What is a base case?"
    texts = [BASE_CASE, VOCAB, NOISE]
    sections = ["8.2 Recursive Methods", "8.9 Vocabulary", "5.3 Stack Diagrams"]
    kwargs = dict(embedder=embedder, sections=sections, passage_cost=40)
    # Ranked by keywords and similarity alone, the lead-in fills room a claim could use.
    assert "here is a recursive method" in _shown(focus_passages(texts, question, 450, **kwargs))
    picked = focus_passages(texts, question, 450, ranking="answer_split", **kwargs)
    shown = _shown(picked)
    assert "base case: A condition that causes a recursive method" in shown
    # A lead-in to a listing and a heading say nothing; they are never shown for themselves.
    assert "here is a recursive method without a base case:" not in shown
    assert "5.3 Stack Diagrams" not in shown
    for _, text in picked:  # every line is the book's own text
        for line in text.split("\n"):
            assert any(" ".join(line.split()) in " ".join(t.split()) for t in texts), line


def test_focus_order_puts_the_best_passage_last_or_first(embedder):
    from bookreader.core.focus import focus_passages

    question = "What is a base case?"
    texts = [NOISE, VOCAB]
    kwargs = dict(embedder=embedder, ranking="answer_split", passage_cost=0)
    in_text = focus_passages(texts, question, 200, **kwargs)
    assert [k for k, _ in in_text] == sorted(k for k, _ in in_text)
    last = focus_passages(texts, question, 200, order="best_last", **kwargs)
    first = focus_passages(texts, question, 200, order="best_first", **kwargs)
    assert last[-1][0] == 1 and "base case: A condition" in last[-1][1]
    assert first[0][0] == 1 and [k for k, _ in first] == [k for k, _ in reversed(last)]


def test_a_unit_two_passages_share_is_shown_once(embedder):
    from bookreader.core.focus import focus_passages, unique_sentences

    lead = "Integer division in Python 2 would divide two integers and truncate the result:"
    texts = [f"{lead} >>> 7/2 3 The remainder of dividing two integers comes from the % operator.",
             f"Older code relied on it. {lead}\n>>> minute/60 0 Some filler about printing values.",
             "Unrelated filler about strings and lists that says nothing of division at all."]
    question = "How do I get the remainder when dividing two integers?"
    texts = unique_sentences(texts)
    assert sum(lead in t for t in texts) == 2  # split differently: both kept by sentence
    picked = focus_passages(texts, question, 260, embedder=embedder, ranking="answer_split",
                            passage_cost=0)
    shown = _shown(picked)
    assert "% operator" in shown and shown.count("truncate the result") <= 1


# As the chunker writes the Physical AI book's set-up section (page 11) and a numbered list
# whose numbers the sentence splitter leaves on their own.
VENV = ("1.4 Setting up Python Environment\n\nTo work with Physical AI systems, you'll need to "
        "set up a proper development environment:\n\n# Create virtual environment\n"
        "python -m venv physical_ai_env\n\n# Activate virtual environment\n"
        "source physical_ai_env/bin/activate # On Linux/Mac\n\n# Install essential packages\n"
        "pip install numpy scipy matplotlib\npip install rclpy # For ROS2 integration")
PREREQUISITES = ("Before diving into this textbook, you should have: 1. Basic programming in "
                 "Python\n\n2. Linear algebra\n\n3. Calculus\n\n4. Physics\n\n5. Robotics "
                 "interest\n\n6. Patience\n\n7. A computer\n\n8. Time")


def test_a_short_line_of_a_listing_is_shown_as_code_not_dropped_as_a_heading(embedder):
    """Physical AI, "How do I set up a Python virtual environment ...?": the command that
    creates it ("python -m venv physical_ai_env") and its comment are short lines without
    a full stop, and were dropped as headings; the model read the lead-in and pip lines
    and answered "you'll need to install pip"."""
    from bookreader.core.focus import focus_passages

    question = "How do I set up a Python virtual environment for the robotics examples?"
    picked = focus_passages([VENV, PREREQUISITES], question, 400, embedder=embedder,
                            sections=["1.4 Setting up Python Environment", "Prerequisites"],
                            ranking="answer_split", passage_cost=40)
    shown = _shown(picked)
    assert "python -m venv physical_ai_env" in shown, shown
    assert "1.4 Setting up Python Environment" not in shown  # a real heading still is not
    # a list number on its own says nothing: never shown for itself
    assert not any(line.strip() in {f"{n}." for n in range(1, 9)}
                   for _, text in picked for line in text.split("\n")), shown


# Listings that carry the question's words only in their comments and docstrings, as the
# Physical AI book's other passages retrieved for the set-up question do.
DOCSTRINGS = ('def _simulate_robot_response(self, command: str):\n    """Simulate robot '
              'response to command"""\n    import random\n    responses = {}',
              'def create_ar_overlay(self, robot_id):\n    """Create AR overlay for robot"""\n'
              '    overlay_id = f"overlay_{robot_id}"\n    return overlay_id\n'
              'def map_virtual_to_physical(self, virtual_pos, physical_pos):\n'
              '    """Map virtual AR objects to physical space"""\n    return True')


def test_a_kept_comment_brings_the_line_of_code_it_describes(embedder):
    """Physical AI, "How do I set up a Python virtual environment ...?" with all five
    retrieved passages: the comments ("# Create virtual environment") ranked high and
    were shown, the commands under them ranked as code and lost their room to docstrings
    of other listings; the model read what to do but not how, and made up a name for
    the environment.  A kept comment now brings the line after it, on a line of its own."""
    from bookreader.core.focus import focus_passages

    question = "How do I set up a Python virtual environment for the robotics examples?"
    texts = [VENV, *DOCSTRINGS]
    kwargs = dict(embedder=embedder, sections=["1.4 Setting up Python Environment",
                                               "User Interface Design", "Convergence"],
                  ranking="answer_split", passage_cost=40)
    shown = _shown(focus_passages(texts, question, 330, **kwargs))
    assert "# Create virtual environment\npython -m venv physical_ai_env" in shown, shown


# The Physical AI book's chapter 15 as retrieved for "How can a robot make ethical
# decisions?": the assessment questions' heading runs into its first number.
ASSESSMENT = ("Assessment Questions\n\nAssessment Questions 1. Design a safety system for a "
              "collaborative robot. 2. Analyze the ethical implications of autonomous weapons.")
ETHICS = ("Ethical Frameworks: Development of ethical decision-making systems based on "
          "established moral principles and frameworks. Robots choose an action by weighing "
          "its consequences for everyone affected against rules such as do no harm.")
CUT_CODE = ('def gaussian_blur(self, image):\n"""Apply Gaussian blur to reduce noise"""\n'
            'return cv2.GaussianBlur(image, (5, 5), 1.0)\n\nSteps: 1. Load the image')


def test_stubs_are_never_shown_for_themselves(embedder):
    """A heading or lead-in holding only the next item's number ("Assessment Questions
    1.") and a line of code cut at a dotted name ("return cv2.") took a whole excerpt of
    the small tier's 600 characters: the model read them instead of an answer."""
    from bookreader.core.focus import focus_passages
    from bookreader.core.focus_ranking import is_stub

    for stub in ("Assessment Questions 1.", "Steps: 1.", "We covered: 1.", "return cv2.",
                 "stereo = cv2."):
        assert is_stub(stub), stub
    for statement in ("The answer is 2.", "So fruit.indexOf('a', 5) returns 5.",
                      "But instead it gets the value 0.0.", "The robot moves."):
        assert not is_stub(statement), statement
    picked = focus_passages([ASSESSMENT, ETHICS, CUT_CODE], "How can a robot make ethical "
                            "decisions?", 330, embedder=embedder, ranking="answer_split",
                            passage_cost=40)
    lines = [line.strip() for _, text in picked for line in text.split("\n")]
    assert "Assessment Questions 1." not in lines and "return cv2." not in lines, lines
    assert any("weighing its consequences" in line for line in lines), lines


def test_the_next_items_number_is_not_shown_to_the_model(embedder):
    """Physical AI, "What principles make a good social interface for a robot?": the
    prompt showed "This chapter covered the essential principles of human-robot
    interaction: 1." and the small tier wrote "The principles ... are 1.", which ended its
    answer.  The lead-in is shown without the stray number."""
    from bookreader.core.focus import focus_passages

    summary = ("This chapter covered the essential principles of human-robot interaction: 1. "
               "User Interface Design: Creating social interfaces that facilitate natural "
               "and intuitive interaction between humans and robots.")
    from bookreader.core.focus_ranking import is_stub

    assert not is_stub("This chapter covered the essential principles of human-robot "
                       "interaction: 1.")  # a lead-in that says something
    filler = "Battery packs are charged overnight in the lab, and the chassis is aluminium."
    picked = focus_passages([summary, filler], "What are the essential principles of "
                            "human-robot interaction?", 230, embedder=embedder,
                            ranking="answer_split", passage_cost=0)
    shown = "\n".join(text for _, text in picked)
    assert "human-robot interaction:" in shown and "interaction: 1." not in shown, shown
    assert "User Interface Design: Creating social interfaces" in shown, shown
