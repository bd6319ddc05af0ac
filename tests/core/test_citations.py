"""Citations: parsing, formatting, verification against real PDF pages, repair, drop."""

from __future__ import annotations

import pytest

from bookreader.core.citations import (
    CitationChecker,
    CitationSource,
    RawCitation,
    claim_units,
    format_citation,
    parse_citations,
    strip_citations,
    verify_answer,
)
from bookreader.core.pdf import PdfBook
from bookreader.core.sentences import match_key
from bookreader.core.types import Chunk

from pdf_factory import COMPOUND_LINES, Line, MARGIN, compound_hyphen_pdf, ligature_pdf, make_pdf

P0 = ("Photosynthesis turns light into chemical energy. Chlorophyll absorbs mostly red and "
      "blue light. The oxygen we breathe is a by-product of splitting water.")
P1 = ("Cellular respiration releases the energy stored in glucose. It happens in the "
      "mitochondria of every cell. Its waste products are carbon dioxide and water.")


def _chunk(text: str, page: int, label: str, section: str, pos: int = 0) -> Chunk:
    return Chunk(f"c{pos}", "book", pos, text, page, page, label, label, "Biology", section,
                 0, len(text))


@pytest.fixture(scope="module")
def bio_pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("cite") / "bio.pdf"
    make_pdf(path, [P0, P1], page_labels=[{"startpage": 0, "style": "D", "firstpagenum": 41}])
    book = PdfBook.open(path)
    yield book
    book.close()


@pytest.fixture
def sources():
    return [CitationSource.from_chunk(_chunk(P0, 0, "41", "Light", 0)),
            CitationSource.from_chunk(_chunk(P1, 1, "42", "Respiration", 1))]


def test_parse_the_documented_form_and_common_variants():
    text = (
        'Light is absorbed by chlorophyll [Source: Light (Page 41) - "Chlorophyll absorbs '
        'mostly red and blue light."]. Respiration happens in mitochondria '
        '[source: Respiration (p. 42) – \u201cIt happens in the mitochondria of every cell\u201d] '
        '[Source: Respiration, Page 42 - "Its waste products"] [Source: Light (Page 41)]'
    )
    cites = parse_citations(text)
    assert [(c.section, c.page_label) for c in cites] == [
        ("Light", "41"), ("Respiration", "42"), ("Respiration", "42"), ("Light", "41")]
    assert cites[0].excerpt == "Chlorophyll absorbs mostly red and blue light."
    assert cites[1].excerpt == "It happens in the mitochondria of every cell"
    assert cites[3].excerpt == ""
    assert cites[0].claim == "Light is absorbed by chlorophyll"
    assert strip_citations(text) == "Light is absorbed by chlorophyll. Respiration happens in mitochondria"


def test_format_round_trips():
    s = format_citation("2.1 Loops", "37", 'A "loop" repeats.')
    assert s == "[Source: 2.1 Loops (Page 37) - \"A 'loop' repeats.\"]"
    (c,) = parse_citations(s)
    assert (c.section, c.page_label, c.excerpt) == ("2.1 Loops", "37", "A 'loop' repeats.")
    assert format_citation("Selected text", "", "x") == '[Source: Selected text - "x"]'


def test_claim_units_keep_citations_with_their_sentence():
    text = 'One fact [Source: A (Page 1) - "one fact. Really"]. Two. Three [Source: B - "t"]'
    units = claim_units(text)
    assert [u[0] for u in units] == ["One fact", "Two.", "Three"]
    assert units[0][1].endswith('"one fact. Really"].')
    assert units[2][1].endswith('[Source: B - "t"]')


def test_verbatim_citation_is_verified_on_the_real_page_with_rects(bio_pdf, sources):
    text = 'Chlorophyll takes red and blue light [Source: Light (Page 41) - "Chlorophyll absorbs mostly red and blue light"].'
    out, cites = verify_answer(text, sources, bio_pdf)
    (c,) = cites
    assert c.verified and not c.repaired
    assert (c.page, c.page_label, c.section) == (0, "41", "Light")
    assert c.excerpt == "Chlorophyll absorbs mostly red and blue light"
    assert c.rects, "the reader needs rectangles to highlight"
    x0, y0, x1, y1 = c.rects[0]
    assert 0 <= x0 < x1 <= bio_pdf.page(0).width and 0 <= y0 < y1
    assert format_citation("Light", "41", c.excerpt) in out


def test_normalisation_survives_quotes_whitespace_case_and_hyphenation(sources):
    raw = RawCitation("Respiration", "42", "cellular  respi-\nration RELEASES the \u2018energy\u2019 stored",
                      0, 0, "")
    c = CitationChecker(sources).check(raw)
    assert c is not None and c.verified and not c.repaired and c.page == 1


@pytest.mark.parametrize("excerpt", [
    "Robots that work beside people need safe human-robot interaction",
    "Robots that work beside people need safe humanrobot interaction",  # an index before the fix
])
def test_a_quoted_compound_split_at_a_line_end_verifies_and_is_highlighted(tmp_path, excerpt):
    book = PdfBook.open(compound_hyphen_pdf(tmp_path / "compound.pdf"))
    try:
        text = book.page(0).text
        assert "safe human-robot\ninteraction" in text
        src = CitationSource.from_chunk(_chunk(text, 0, book.page(0).label, "Robots"))
        c = CitationChecker([src], book).check(RawCitation("Robots", "1", excerpt, 0, 0, ""))
        assert c is not None and c.verified and not c.repaired
        first, second = (Line(t, MARGIN, 100 + 15 * k) for k, t in enumerate(COMPOUND_LINES[:2]))
        human, robot = first.word_rects()["human-"], second.word_rects()["robot"]
        assert any(abs(r[2] - human[2]) < 1.5 and r[1] < human[3] < r[3] + 1.5 for r in c.rects)
        assert any(abs(r[0] - robot[0]) < 1.5 and abs(r[1] - robot[1]) < 1.5 for r in c.rects)
    finally:
        book.close()


def test_ligatures_on_the_page_match_plain_excerpts(tmp_path):
    book = PdfBook.open(ligature_pdf(tmp_path / "lig.pdf"))
    try:
        text = book.page(0).text
        src = CitationSource.from_chunk(_chunk(text, 0, book.page(0).label, "L"))
        c = CitationChecker([src], book).check(
            RawCitation("L", "1", "The first effect of the workflow is an office efflux", 0, 0, ""))
        assert c is not None and c.verified and not c.repaired
        assert c.rects
    finally:
        book.close()
    assert match_key("e\ufb03cient")[0] == "efficient"


def test_wrong_page_is_corrected_and_marked_repaired(bio_pdf, sources):
    raw = RawCitation("Light", "41", "It happens in the mitochondria of every cell", 0, 0, "")
    c = CitationChecker(sources, bio_pdf).check(raw)
    assert c is not None and c.verified and c.repaired
    assert (c.page, c.page_label, c.section) == (1, "42", "Respiration")


def test_paraphrased_excerpt_is_repaired_with_the_best_sentence_of_the_cited_chunk(bio_pdf, sources):
    raw = RawCitation("Respiration", "42",
                      "waste products of respiration are water and carbon dioxide", 0, 0, "")
    c = CitationChecker(sources, bio_pdf).check(raw)
    assert c is not None and c.repaired and c.verified
    assert c.excerpt == "Its waste products are carbon dioxide and water."
    assert c.page == 1 and c.rects


def test_invented_excerpt_is_dropped(bio_pdf, sources):
    text = ('Plants dream at night [Source: Light (Page 41) - "Plants dream of electric sheep '
            'every night"]. Mitochondria are in every cell [Source: Respiration (Page 42) - '
            '"It happens in the mitochondria of every cell"].')
    out, cites = verify_answer(text, sources, bio_pdf)
    assert len(cites) == 1 and cites[0].page == 1
    assert "electric sheep" not in out
    assert "Plants dream at night" in out  # the claim stays; grounding judges it


def test_uncited_answer_gets_its_supporting_sentence_when_asked(sources):
    out, cites = verify_answer(
        "The mitochondria of every cell host respiration. Chlorophyll absorbs blue light.",
        sources, add_missing=True)
    assert len(cites) == 2 and all(c.repaired for c in cites)
    assert cites[0].excerpt == "It happens in the mitochondria of every cell."
    assert cites[1].excerpt == "Chlorophyll absorbs mostly red and blue light."
    first = format_citation("Respiration", "42", cites[0].excerpt)
    assert out.startswith(f"The mitochondria of every cell host respiration. {first} Chloro")
    out2, none = verify_answer("Unrelated words entirely.", sources, add_missing=True)
    assert none == () and out2 == "Unrelated words entirely."


def test_citations_are_listed_in_the_order_the_answer_cites_them(sources):
    """A citation added to an uncited first sentence comes first, so the window's markers
    read [1] then [2] (it came after the second sentence's own, and the answer read
    "... value. [2] If you try ... None. [1]")."""
    own = '[Source: Light (Page 41) - "Chlorophyll absorbs mostly red and blue light"]'
    out, cites = verify_answer(
        f"The mitochondria of every cell host respiration. Chlorophyll absorbs blue light {own}.",
        sources, add_missing=True)
    assert [c.excerpt for c in cites] == ["It happens in the mitochondria of every cell.",
                                          "Chlorophyll absorbs mostly red and blue light"]
    assert out.index(cites[0].excerpt) < out.index(cites[1].excerpt)


def test_duplicates_are_merged(sources):
    c = '[Source: Light (Page 41) - "The oxygen we breathe is a by-product of splitting water"]'
    out, cites = verify_answer(f"Oxygen comes from water {c}. Yes, from water {c}.", sources)
    assert len(cites) == 1
    assert out.count("[Source:") == 2


def test_selection_citations_refer_to_the_selection(tmp_path):
    sel = "The treaty was signed in 1648. It ended thirty years of war."
    # Unknown page: -1.
    src = CitationSource.for_selection(sel)
    c = CitationChecker([src]).check(RawCitation("Selected text", "", "signed in 1648", 0, 0, ""))
    assert c is not None and c.verified and c.page == -1 and c.section == "Selected text"
    # Known pages: the page where the excerpt is, with rectangles.
    pdf = make_pdf(tmp_path / "sel.pdf", ["Intro page.", sel])
    book = PdfBook.open(pdf)
    try:
        src = CitationSource.for_selection(sel, (0, 1), book)
        c = CitationChecker([src], book).check(
            RawCitation("Selected text", "", "It ended thirty years of war", 0, 0, ""))
        assert c is not None and c.page == 1 and c.page_label == "2" and c.rects
    finally:
        book.close()


def test_nothing_to_check_against_drops_everything():
    out, cites = verify_answer('A [Source: X (Page 1) - "abc def ghi jkl"]', [])
    assert cites == () and "[Source" not in out


def test_short_excerpt_alone_proves_nothing(sources):
    raw = RawCitation("Light", "41", "the", 0, 0, "Zebras run fast on the savannah.")
    assert CitationChecker(sources).check(raw) is None


def test_citation_names_the_section_its_excerpt_is_in(sample_pdf):
    """A chunk is named after its first section; a citation of a later sentence in it is
    named after the section that sentence is really in (from the page's section starts)."""
    book = PdfBook.open(sample_pdf)
    index = next(i for i in range(book.page_count)
                 if "Records are kept for 365 days" in book.page(i).text)
    page = book.page(index)
    at = page.text.index("Records are kept for 365 days")
    chunk_start = max(0, at - 400)
    chapter, earlier = page.section_at(chunk_start)
    assert earlier != page.section_at(at)[1]  # the chunk starts in the section before
    chunk = Chunk("c1", "b", 0, " ".join(page.text[chunk_start:at + 120].split()), index, index,
                  page.label, page.label, chapter, earlier, chunk_start, at + 120)
    answer = ('Records are kept a year. [Source: %s (Page %s) - "Records are kept for 365 days '
              'by default"]' % (earlier, page.label))
    _, citations = verify_answer(answer, [CitationSource.from_chunk(chunk)], book)
    (cite,) = citations
    assert cite.verified and cite.page == index
    assert cite.section == page.section_at(at)[1] == "4.6 Retention and archiving"


def test_an_excerpt_with_brackets_stays_one_parsable_citation():
    """Found in the Think Java trial: "followed by square brackets ([])." broke the marker,
    leaving stray text in the card and a quote without its chip."""
    from bookreader.core.citations import format_citation, parse_citations

    marker = format_citation("7.1. Creating Arrays", "108",
                             "Array types look like other Java types, except they are "
                             "followed by square brackets ([]).")
    found = parse_citations(f"Quote. {marker} Next.")
    assert len(found) == 1 and found[0].page_label == "108"
    assert found[0].excerpt.startswith("Array types look like other Java types")
    assert "[" not in found[0].excerpt and "]" not in marker[:-1]
