"""Formulas as answers (issue 11): "How do I compute the Zero Moment Point ...?".

Physical AI, stop 27: the small tier wrote the book's two ZMP equations as a numbered list
after a lead-in.  The list numbers used up the claim cap (the second equation was cut),
the lead-in did not pass the check, what was left was "only code" and the answer became
quotes; the quote of the docstring beside it failed the check (the quote ran the summary
and the first field together, the check reads them apart).  Real PDF, MiniLM, grounding and
citations; the model's answer comes from the fake Claude server on 127.0.0.1.
"""

from __future__ import annotations

import dataclasses

import pytest

from bookreader.core import generation
from bookreader.core.answer_quotes import defines_another_term, with_best_quote
from bookreader.core.citations import CitationSource, verify_answer
from bookreader.core.llm.extractive_context import split_sentences
from bookreader.core.sentences import content_terms
from bookreader.core.types import Mode, Outcome

from fakes.claude_server import Behaviour

QUESTION = "How do I compute the Zero Moment Point of a biped robot from its center of mass?"
PROSE = "A biped stays balanced while its Zero Moment Point lies inside the support polygon."
LISTING = [
    "Example 1: ZMP (Zero Moment Point) Calculation",
    "import numpy as np",
    "def calculate_zmp(com_pos, com_vel, com_acc, gravity=9.81, height=0.8):",
    '"""',
    "Calculate Zero Moment Point for bipedal robot",
    "com_pos: Center of mass position [x, y, z]",
    "com_vel: Center of mass velocity [vx, vy, vz]",
    "com_acc: Center of mass acceleration [ax, ay, az]",
    '"""',
    "x, y, z = com_pos",
    "vx, vy, vz = com_vel",
    "ax, ay, az = com_acc",
    "# ZMP equations (simplified for horizontal movement)",
    "zmp_x = x - height * ax / (gravity + az)",
    "zmp_y = y - height * ay / (gravity + az)",
    "return zmp_x, zmp_y",
]
#: What the 0.5B wrote (stop 26, Physical AI): a lead-in, then the equations as a list.
RAW = ("To compute the Zero Moment Point of a biped robot from its center of mass, you can "
       "use the following equations:\n\n1. ZMP_x = x - height * ax / (gravity + az)\n"
       "2. ZMP_y = y - height * ay / (gravity + az)")


def test_a_list_number_is_not_a_claim_so_the_cap_keeps_the_second_equation():
    assert not generation.is_claim("1.") and not generation.is_claim("2.")
    assert generation.is_claim("zmp_x = x - height * ax / (gravity + az)")
    cut = generation.first_claims(RAW, 3)
    assert "ZMP_y = y - height * ay / (gravity + az)" in cut, cut
    # three claims (lead-in and two equations) are not yet "enough" for a cap of three
    assert not generation.enough_sentences([RAW], 3)
    assert generation.enough_sentences([RAW + "\n\nThe robot stays balanced."], 3)


def test_a_glossary_entry_of_another_term_is_flagged_a_code_names_too():
    asked = set(content_terms(QUESTION))
    assert defines_another_term("lidar_ranges: LiDAR range measurements", asked)
    assert defines_another_term("sprite: A computer graphic that may be moved.", asked)


def test_a_described_field_is_a_unit_of_its_own_a_signatures_argument_is_not():
    text = "\n".join(LISTING[2:9]) + (
        "\ndef map_virtual_to_physical(self, virtual_pos: Tuple[float, float, float],\n"
        "physical_pos: Tuple[float, float]):\n"
        '"""\nInitialize differential drive robot\n'
        ":param wheel_radius: Radius of the wheels in meters\n\"\"\"")
    units = split_sentences(text)
    assert "Calculate Zero Moment Point for bipedal robot" in units, units
    assert "com_pos: Center of mass position [x, y, z]" in units
    assert "com_acc: Center of mass acceleration [ax, ay, az]" in units
    assert any(u.startswith("def map_virtual_to_physical(") and u.endswith("float]):")
               for u in units), units
    assert ("Initialize differential drive robot :param wheel_radius: Radius of the wheels "
            "in meters") in units


@pytest.fixture(scope="module")
def zmp_pdf(tmp_path_factory):
    from pdf_factory import Line, make_pdf

    # As in the book, the docstring runs over a page break (pages 5-6 of Physical AI):
    # the chunk keeps its lines apart.
    first = [Line("Practical Examples", y=80, size=14, font="hebo"),
             Line(PROSE, y=110, size=10, font="helv")]
    first += [Line(t, y=150 + 13 * k, size=9, font="cour") for k, t in enumerate(LISTING[:6])]
    second = [Line(t, y=80 + 13 * k, size=9, font="cour") for k, t in enumerate(LISTING[6:])]
    return make_pdf(tmp_path_factory.mktemp("zmp") / "zmp.pdf", [first, second])


def test_a_quote_is_added_beside_the_equations(zmp_pdf, embedder,
                                                              validator):
    from bookreader.core.chunking import Chunker
    from bookreader.core.pdf import PdfBook

    chunker = Chunker(embedder.count_tokens, max_tokens=256, overlap=0.2)
    with PdfBook.open(zmp_pdf) as book:
        chunks = list(chunker.chunks(iter(list(book.iter_pages())), "b"))
        sources = [CitationSource.from_chunk(c) for c in chunks]
        answer = ('zmp_x = x - height * ax / (gravity + az) [Source: Practical Examples '
                  '(Page 2) - "zmp_x = x - height * ax / (gravity + az)"]')
        text, citations = verify_answer(answer, sources, book, add_missing=False)
        assert citations and citations[0].verified
        context = "\n\n".join(s.text for s in sources)
        shown, cited = with_best_quote(QUESTION, text, citations, sources, context,
                                       validator, book, embedder=embedder)
    assert shown.startswith(text) and "\n\u201c" in shown, shown
    assert len(cited) > len(citations) and all(c.verified for c in cited)
    assert validator.validate(shown, context).passed


@pytest.fixture
def zmp_book(zmp_pdf, tmp_path, embedder, claude_server, claude_answerer, monkeypatch):
    """``(server, answerer, retriever, pdf)`` over the ZMP listing, the Claude backend
    answering the small tier's way: three claims at most, the book's sentences quoted
    beside."""
    from bookreader.core.answer import run as answering_module
    from bookreader.core.llm.specs import spec_for
    from bookreader.library import Library

    spec = dataclasses.replace(spec_for("claude"), answer_quote=True, max_claims=3)
    monkeypatch.setattr(answering_module, "spec_for", lambda name: spec)
    settings = claude_answerer.settings.updated(data_dir=tmp_path / "library")
    settings.ensure_dirs()
    lib = Library(settings, embedder=embedder)
    try:
        info = lib.ingest(zmp_pdf)
        yield (claude_server, claude_answerer, lib.retriever(info.book_id),
               lib.open_pdf(info.book_id))
    finally:
        lib.close()


def test_the_equations_are_the_answer_to_how_do_i_compute(zmp_book):
    server, answerer, retriever, pdf = zmp_book
    server.queue(Behaviour.normal(RAW + "\nConfidence: 0.9"))
    a = answerer.ask(QUESTION, mode=Mode.BOOK, retriever=retriever, pages=pdf,
                     backend="claude")
    assert a.outcome is Outcome.ANSWER and not a.fallback, a.text
    assert "ZMP_x = x - height * ax / (gravity + az)" in a.text
    assert "ZMP_y = y - height * ay / (gravity + az)" in a.text, a.text
    assert a.citations and all(c.verified for c in a.citations)
    # The same lines for a question that asks for no computation are no answer.
    server.queue(Behaviour.normal(
        "zmp_x = x - height * ax / (gravity + az)\nConfidence: 0.9"))
    b = answerer.ask("Why does a biped robot need the Zero Moment Point?",
                     mode=Mode.BOOK, retriever=retriever, pages=pdf, backend="claude")
    assert b.outcome is not Outcome.ANSWER, b.text


def test_the_next_items_number_is_no_word_of_the_claim():
    from bookreader.core.claim_text import claim_terms

    assert claim_terms("zmp_x = x - height * ax / (gravity + az)\n2.") == claim_terms(
        "zmp_x = x - height * ax / (gravity + az)")
    assert "2" in claim_terms("The loop runs 2.")  # a number the claim states stays


IDENTITY = ("Python provides an operator called is that checks whether two variables refer "
            "to the same object. When two variables refer to the same object, they are "
            "aliases, and a change made through one of them is seen through the other. "
            "Lists are mutable, so aliasing a list needs care.")


def test_a_quote_the_check_refuses_does_not_keep_the_others_out(tmp_path, embedder,
                                                                validator):
    """"... an operator called is that ..." reads to the check as a name left out (a small
    model's garbled "an array called are Strings"), so that sentence of the book cannot be
    quoted; the next one still is."""
    from bookreader.core.chunking import Chunker
    from bookreader.core.pdf import PdfBook

    from pdf_factory import book_pdf

    spec = book_pdf(tmp_path / "identity.pdf", [("10 Lists", [("10.1 Aliasing", IDENTITY)])],
                    running_header=False)
    question = "How can I check whether two variables refer to the same object?"
    chunker = Chunker(embedder.count_tokens, max_tokens=256, overlap=0.2)
    with PdfBook.open(spec.path) as book:
        chunks = list(chunker.chunks(iter(list(book.iter_pages())), "b"))
        sources = [CitationSource.from_chunk(c) for c in chunks]
        context = "\n\n".join(s.text for s in sources)
        assert not validator.validate(IDENTITY.split(". ")[0] + ".", context).passed
        answer = ('Lists are mutable. [Source: 10.1 Aliasing (Page 1) - "Lists are '
                  'mutable"]')
        text, citations = verify_answer(answer, sources, book, add_missing=False)
        assert citations and citations[0].verified
        shown, cited = with_best_quote(question, text, citations, sources, context,
                                       validator, book, embedder=embedder)
    assert "they are aliases" in shown, shown
    assert "operator called is" not in shown
    assert len(cited) > len(citations) and all(c.verified for c in cited)
