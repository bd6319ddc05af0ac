"""A card's subject must be a term, not the name of an individual in an example.

Judged by how the book writes the word inside its prose (and whether its outline names
it), tested on sentences and chapters of books of three fields.
"""

from __future__ import annotations

from bookreader.core.pdf import PdfBook
from bookreader.core.study import chapter_scope, generate
from bookreader.core.study.cards import candidates
from bookreader.core.study.names import NameEvidence
from bookreader.core.study.source import StudySentence

# A logic book's example: "Billy" is a person the example talks about; "surgeon" and
# "logic" are words the book writes in lower case.
LOGIC = [
    "Billy is a surgeon, but is not skilled.",
    "Therefore, Billy is greedy, but the hospital will not hire him.",
    "As the argument about Billy shows, sometimes we only need to talk about one kind of "
    "skill.",
    "Logic is the business of evaluating arguments, sorting good ones from bad ones.",
    "An argument in logic is a series of sentences.",
    "Bruce Wayne is the secret identity of the Batman in the comic books.",
    "We want Mx to mean that x lives in Wayne Manor.",
]
# A robotics book: a named tool that its outline names, an acronym, and a named method
# whose head is a common noun.
ROBOTICS = [
    "Gazebo is a powerful open-source robotics simulator that provides realistic physics.",
    "Physics simulation in Gazebo is controlled by several key parameters.",
    "URDF is an XML format used in ROS to describe robot models.",
    "Robots load models written in URDF files.",
    "Kalman Filtering is optimal estimation for linear systems with Gaussian noise.",
    "Sensor fusion with a Kalman filter combines noisy readings.",
    "Both kinds of filtering estimate the state of a moving robot.",
]


def _sentences(texts: list[str]) -> list[StudySentence]:
    return [StudySentence(text=t, page=0, label="1", chapter="", section="", offset=0,
                          position=i) for i, t in enumerate(texts)]


def test_a_person_in_an_example_is_an_individual_and_a_field_word_is_not():
    names = NameEvidence(LOGIC)
    assert names.individual("Billy")
    assert names.individual("Bruce Wayne")  # its head is written capitalised in prose
    assert not names.individual("Logic")  # the book writes "logic"
    assert not names.individual("surgeon")


def test_a_named_tool_the_outline_names_an_acronym_and_a_named_method_are_terms():
    names = NameEvidence(ROBOTICS, headings=["Chapter 4: Gazebo Simulation Basics"])
    assert not names.individual("Gazebo")  # a topic of the book: its outline names it
    assert NameEvidence(ROBOTICS).individual("Gazebo")  # the same name without it
    assert not names.individual("URDF")  # coined: several capitals
    assert not names.individual("Kalman Filtering")  # its head is written in lower case


def test_a_name_written_only_after_a_comma_or_inside_a_name_is_still_a_name():
    # an author's biography in a mathematics book's front matter
    names = NameEvidence([
        "Sheldon Axler received his undergraduate degree from Princeton University.",
        "As a postdoctoral Moore Instructor at MIT, Axler received a teaching award.",
        "Axler is a Fellow of the American Mathematical Society.",
        "A monic polynomial is a polynomial whose highest-degree coefficient equals 1.",
    ])
    assert names.individual("Axler")
    assert names.individual("Princeton University")  # a name run that prose opened
    assert not names.individual("monic polynomial")


def test_words_the_book_never_writes_inside_a_sentence_give_no_evidence():
    names = NameEvidence(["Proprioception: Joint encoders and IMU sensors for "
                          "self-awareness."])
    assert not names.individual("Proprioception")


def test_example_sentences_about_individuals_make_no_candidates():
    fronts = {c.front for c in candidates(_sentences(LOGIC))}
    assert "Logic" in fronts
    assert "Billy" not in fronts
    assert "Bruce Wayne" not in fronts


def test_individuals_make_no_cards_on_a_logic_book_and_a_tool_stays_on_a_robotics_book(
        eval_dir):
    books = eval_dir / "books"
    with PdfBook.open(books / "philosophy_forallx.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), "Quantified logic", pdf.page_count)
        fronts = {c.front for c in generate(pdf, pdf.book_id, "cards", scope).cards}
    assert not fronts & {"Billy", "Carol"}
    assert {"predicate", "proper name"} <= fronts  # the chapter's terms stay
    with PdfBook.open(books / "physical_ai_textbook.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), "Chapter 4: Gazebo Simulation Basics",
                              pdf.page_count)
        fronts = {c.front for c in generate(pdf, pdf.book_id, "cards", scope).cards}
    assert {"Gazebo", "URDF"} <= fronts
    with PdfBook.open(books / "thinkjava2.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), "1. Computer Programming", pdf.page_count)
        fronts = {c.front for c in generate(pdf, pdf.book_id, "cards", scope).cards}
    assert "What does the JVM enable?" in fronts
