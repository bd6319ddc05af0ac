"""Code listings in chunks (chunker 4): a listing keeps its line breaks, prose does not.

Before, a listing's lines were collapsed into one long "sentence" of the chunk, so a
section that is only a heading over a listing had nothing an answer could quote: the
answer cited a prose sentence of another page (the Physical AI book's "Real-time Control
Architecture", "Brain-Computer Interfaces and Neural Integration").
"""

from __future__ import annotations

import pytest

from bookreader.core.chunking import Chunker, SentenceSplitter, join_segments
from bookreader.core.code_text import is_code_line, is_code_paragraph

PROSE = ("A real-time controller runs its control loop at a fixed rate. The loop reads the "
         "sensors, computes the command and sends it to the motors before the next tick.")
LISTING = [
    "import time",
    "import threading",
    "class RealTimeController:",
    "def __init__(self, control_frequency: float = 100.0):",
    '"""Real-time controller with timing guarantees"""',
    "self.dt = 1.0 / control_frequency",
    "self.running = False",
    "def start(self):",
    "# Start the control thread",
    "self.thread = threading.Thread(target=self._loop)",
]


@pytest.fixture(scope="module")
def chunker(embedder):
    return Chunker(embedder.count_tokens, max_tokens=256, overlap=0.2)


def _listing_pdf(tmp_path):
    """A real PDF: a heading, a prose paragraph, a listing in Courier, prose again."""
    from pdf_factory import Line, lines_for, make_pdf

    lines = [Line("Real-time Control Architecture", y=80, size=14, font="hebo")]
    lines += lines_for(PROSE, top=110)
    y = 110 + 15 * len(lines) + 20
    for k, text in enumerate(LISTING):
        lines.append(Line(text, y=y + 12 * k, size=9, font="cour"))
    lines += lines_for("That is all the controller needs to keep its timing.",
                       top=y + 12 * len(LISTING) + 24)
    return make_pdf(tmp_path / "listing.pdf", [lines])


def test_a_listing_keeps_its_lines_in_the_chunk_text_and_prose_does_not(tmp_path, chunker):
    from bookreader.core.pdf import PdfBook

    with PdfBook.open(_listing_pdf(tmp_path)) as book:
        pages = list(book.iter_pages())
    chunks = list(chunker.chunks(iter(pages), "b"))
    assert len(chunks) == 1
    text = chunks[0].text
    # the listing's lines, one a line, in order, set apart from the prose by blank lines
    block = "\n".join(LISTING)
    assert "\n\n" + block + "\n\n" in text, text
    # prose is still one line per paragraph: a wrapped line is not kept
    assert " ".join(PROSE.split()) in text
    assert "\n" not in text.split("\n\n")[1]  # the prose paragraph (after the heading)
    assert text.startswith("Real-time Control Architecture\n\n")


def test_the_extractive_backend_can_quote_a_line_of_a_listing(tmp_path, chunker):
    """The docstring line is a unit of its own, so an answer can cite the listing's page."""
    from bookreader.core.llm.extractive import split_sentences

    from bookreader.core.pdf import PdfBook

    with PdfBook.open(_listing_pdf(tmp_path)) as book:
        chunks = list(chunker.chunks(book.iter_pages(), "b"))
    units = split_sentences(chunks[0].text)
    assert '"""Real-time controller with timing guarantees"""' in units
    assert "# Start the control thread" in units
    # the other lines of a run stay together (a statement with its neighbours)
    assert "self.dt = 1.0 / control_frequency self.running = False def start(self):" in units
    assert any(u.startswith("import time import threading class RealTimeController:")
               for u in units), units
    # prose sentences are split as before
    assert "A real-time controller runs its control loop at a fixed rate." in units


def test_selection_prose_with_line_breaks_is_not_split_into_lines():
    """Selected text keeps the page's line breaks; wrapped prose must stay whole sentences."""
    from bookreader.core.llm.extractive import split_sentences

    text = ("Most list methods are void; they modify the list and return None. If you\n"
            "accidentally write t = t.sort(), you will be disappointed with the result.")
    assert split_sentences(text) == [
        "Most list methods are void; they modify the list and return None.",
        "If you accidentally write t = t.sort(), you will be disappointed with the result.",
    ]


def test_listing_units_keep_comments_and_docstrings_apart():
    from bookreader.core.code_text import listing_units

    assert listing_units([">>> int('32')", "32", "# Job displacement (simplified)", "x = 1",
                          "y = 2", '"""Set the control function"""', "#!/usr/bin/env python3"]) == [
        ">>> int('32') 32", "# Job displacement (simplified)", "x = 1 y = 2",
        '"""Set the control function"""', "#!/usr/bin/env python3"]


@pytest.mark.parametrize("line", [
    "import numpy as np", "def start(self):", "# Start the control thread", ">>> print(x)",
    "self.running = False", "public static void main(String[] args) {", "}", "exit()",
    "for friend in friends:", '"""Real-time controller with timing guarantees"""',
    "u_total = u_adaptive + u_robust", "'action': action,",
])
def test_code_lines(line):
    assert is_code_line(line)


@pytest.mark.parametrize("line", [
    "A real-time controller runs its control loop at a fixed rate.",
    "accidentally write t = t.sort(), you will be disappointed with the result.",
    "class variable: A variable declared within a class as static. There is only",
    "stores an individual character (as opposed to strings of them):",
    "Real-time Control Architecture", "",
])
def test_prose_lines(line):
    assert not is_code_line(line)


def test_code_paragraphs():
    assert is_code_paragraph(LISTING)
    assert is_code_paragraph(["if __name__ == '__main__':", "main()"])
    assert is_code_paragraph(["import numpy as np"])
    # prose about code: its last line ends a sentence and is not code
    assert not is_code_paragraph([
        "So factorial(3) is 3 * factorial(2); factorial(2) is 2 * factorial(1);",
        "factorial(1) is 1 * factorial(0); and factorial(0) is 1. Putting it all",
        "together, we get 3 * 2 * 1 * 1, which is 6."])
    assert not is_code_paragraph(
        ["The == operator is one of the comparison operators; the others are:"])
    assert not is_code_paragraph(["Write x = 5."])
    assert not is_code_paragraph([PROSE[:80], PROSE[80:]])


def test_splitter_gives_one_unit_per_code_line_with_its_kind():
    text = PROSE + "\n\n" + "\n".join(LISTING) + "\n\nThe end of it."
    units = SentenceSplitter().units(text)
    kinds = [k for _s, _e, k in units]
    assert kinds == [0, 0, 2] + [1] * (len(LISTING) - 1) + [0]
    assert [text[s:e] for s, e, k in units if k] == LISTING
    # spans() is units() without the kinds
    assert SentenceSplitter().spans(text) == [(s, e) for s, e, _k in units]


def test_join_segments_sets_a_listing_apart():
    texts = ["Here is the loop.", "while True:", "step()", "It never ends."]
    assert join_segments(texts, [0, 2, 1, 0]) == (
        "Here is the loop.\n\nwhile True:\nstep()\n\nIt never ends.")
    # two listings' paragraphs are separate paragraphs of the chunk too
    assert join_segments(["a = 1", "b = 2"], [2, 2]) == "a = 1\n\nb = 2"
    # without kinds, the prose rule of chunker 3
    assert join_segments(["One.", "Two"]) == "One. Two"


def test_a_listing_line_at_the_foot_of_a_page_is_not_joined_to_the_next_page(chunker):
    from bookreader.core.types import Page

    pages = [Page(0, "1", PROSE + "\n\n" + "\n".join(LISTING[:4]), "C", "S"),
             Page(1, "2", "\n".join(LISTING[4:]) + "\n\nThe end of it.", "C", "S")]
    chunks = list(chunker.chunks(iter(pages), "b"))
    text = "\n".join(c.text for c in chunks)
    assert "\n".join(LISTING[:4]) in text
    # the next page's listing goes on as a paragraph of its own, not as the rest of a line
    assert LISTING[3] + "\n\n" + "\n".join(LISTING[4:]) in text
