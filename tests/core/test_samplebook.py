"""The bundled sample book: deterministic, a real book (outline, labels, headers), and
consistent with what it says about itself."""

from __future__ import annotations

import re

import fitz
import pytest

from bookreader.core import samplebook
from bookreader.core.pdf import PdfBook, file_book_id
from bookreader.core.samplebook import build_sample_book, parse_guide, sample_book_path


@pytest.fixture(scope="module")
def guide():
    return parse_guide()


@pytest.fixture(scope="module")
def book(sample_pdf):
    with PdfBook.open(sample_pdf) as b:
        yield b


def test_the_text_ships_inside_the_package(guide):
    folder = samplebook.guide_dir()
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".md"))
    assert names[0] == "00-front.md" and len(names) == 6
    assert [c.title for c in guide.chapters] == [
        "Reading a Book", "Asking Questions", "Selecting Text", "Instructors' Exports", "Settings"]
    for ch in guide.chapters:
        assert len(ch.sections) >= 5, ch.title
        assert all(s.number.startswith(f"{ch.number}.") for s in ch.sections)
    words = sum(len(str(c).split()) for ch in guide.chapters for s in ch.sections
                for _, c in s.blocks)
    assert words > 3500


def test_build_is_deterministic(sample_pdf, tmp_path):
    again = build_sample_book(tmp_path / "again.pdf")
    assert again.read_bytes() == sample_pdf.read_bytes()
    assert file_book_id(again) == file_book_id(sample_pdf)


def test_it_is_laid_out_like_a_real_book(book, guide):
    assert book.title == "BookReader User Guide"
    printed = book.page_count - 2
    assert 12 <= printed <= 20
    assert [book.label(i) for i in range(3)] == ["i", "ii", "1"]
    assert book.label(book.page_count - 1) == str(printed)
    assert book.find_label("1") == 2
    chapters = [e for e in book.toc if e.level == 1]
    sections = [e for e in book.toc if e.level == 2]
    assert [e.title for e in chapters] == ["Contents"] + [c.heading for c in guide.chapters]
    assert [e.title for e in sections] == [s.heading for c in guide.chapters for s in c.sections]
    for ch in guide.chapters:
        entry = next(e for e in chapters if e.title == ch.heading)
        page = book.page(entry.page)
        assert page.chapter == ch.heading
        assert page.text.startswith(f"Chapter {ch.number}\n{ch.title}")


def test_every_section_heading_is_where_the_outline_says(book):
    for e in (e for e in book.toc if e.level == 2):
        page = book.page(e.page)
        starts = [s for s in page.section_starts if s[2] == e.title]
        if starts:
            assert page.text[starts[0][0]:].startswith(e.title)
        else:  # the section begins at the very top of its page
            assert page.section == e.title and page.text.startswith(e.title)


def test_running_headers_and_page_numbers_are_cleaned_away(book, sample_pdf):
    with fitz.open(sample_pdf) as raw:
        body = range(2, book.page_count)
        with_header = [i for i in body if "BookReader User Guide" in raw[i].get_text()]
        assert len(with_header) >= 4
        for i in body:
            text = book.page(i).text
            assert "BookReader User Guide" not in text
            last = text.rstrip().splitlines()[-1]
            assert last != book.label(i), f"page number left at the end of page {i}"
            assert not re.match(r"^\d+$", text.splitlines()[0])


def test_its_own_citation_example_is_true(book):
    """Section 2.4 quotes itself with a page label: that label and excerpt must be right."""
    entry = next(e for e in book.toc if e.title == "2.4 Citations")
    text = " ".join(book.page(entry.page).text.split())
    m = re.search(r'\[Source: 2\.4 Citations \(Page (\w+)\) - "([^"]+)"\]', "\n".join(
        " ".join(book.page(i).text.split()) for i in range(book.page_count)))
    assert m, "the example citation is missing"
    label, excerpt = m.groups()
    assert book.find_label(label) == entry.page
    assert excerpt in text
    assert book.search_rects(entry.page, excerpt)


def test_facts_that_questions_ask_about_are_there(book):
    full = " ".join(" ".join(p.text.split()) for p in book.iter_pages())
    for fact in [
        "This question is not covered in the book.",
        "The selected text does not contain the answer.",
        "0.60 by default",
        "5 seconds for the bundled model",
        "first 500 characters",
        "Records are kept for 365 days by default",
        "SmolLM2-135M-Instruct",
        "BOOKREADER_DATA_DIR",
        "bookreader audit verify",
        "--format",
        "at most 256 word pieces",
    ]:
        assert fact in full, fact


def test_sample_book_path_builds_once_and_reuses(tmp_path, monkeypatch):
    path = sample_book_path(tmp_path)
    assert path == tmp_path / "sample" / samplebook.SAMPLE_FILE_NAME
    first_id = file_book_id(path)
    mtime = path.stat().st_mtime_ns

    def fail(*_a, **_k):
        raise AssertionError("rebuilt although nothing changed")

    monkeypatch.setattr(samplebook, "build_sample_book", fail)
    assert sample_book_path(tmp_path) == path
    assert path.stat().st_mtime_ns == mtime
    monkeypatch.undo()
    # A stale stamp (the guide changed since) makes it build again, to the same content.
    (path.parent / (samplebook.SAMPLE_FILE_NAME + ".source")).write_text("old\n")
    assert file_book_id(sample_book_path(tmp_path)) == first_id
