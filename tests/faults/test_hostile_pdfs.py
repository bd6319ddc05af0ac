"""Hostile PDFs end in success or a clear BookReaderError, the test process stays alive,
and the child that reads them stays within its memory cap.

The files are built here (``hostile_pdfs.py``): an outline nested 60,000 levels deep
(MuPDF crashes on it), the same at 5,000 levels (fine), a decompression bomb, a shared
stream bomb, a truncated file and a PNG renamed ``.pdf``.  Sizes are smaller than the
issue's (the 300 MB bomb is in ``bench/robustness.py``) but cross the same limits.
"""

from __future__ import annotations

import os

import pytest
from hostile_pdfs import (
    bomb_pdf,
    deep_outline_pdf,
    png_as_pdf,
    shared_stream_bomb_pdf,
    truncated_hostile_pdf,
)

from bookreader.core import sandbox
from bookreader.core.pdf import PdfBook
from bookreader.errors import PdfError
from bookreader.library import Library

MB = 1 << 20


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    return {
        "deep": deep_outline_pdf(folder / "deep-outline.pdf", 60_000),
        "deep_ok": deep_outline_pdf(folder / "deep-5000.pdf", 5_000),
        "bomb": bomb_pdf(folder / "bomb.pdf", 100),
        "shared": shared_stream_bomb_pdf(folder / "shared.pdf", pages=20, mb=70),
        "truncated": truncated_hostile_pdf(folder / "truncated.pdf"),
        "png": png_as_pdf(folder / "picture.pdf"),
    }


@pytest.fixture
def library(settings, embedder):
    lib = Library(settings, embedder=embedder)
    yield lib
    lib.close()


def _failed(lib: Library, name: str):
    return [b for b in lib.books() if b.path.endswith(name) and b.state == "failed"]


def test_deep_outline_is_refused_clearly_and_marked_failed(files, library):
    pid = os.getpid()
    with pytest.raises(PdfError) as err:
        library.ingest(files["deep"])
    message = err.value.user_message
    assert "could not be read safely" in message and "outline is nested too deeply" in message
    assert "deep-outline.pdf" in message
    assert os.getpid() == pid  # still the same, living process
    [book] = _failed(library, "deep-outline.pdf")
    assert "nested too deeply" in book.message


def test_outline_5000_levels_deep_is_fine(files, library):
    info = library.ingest(files["deep_ok"])
    assert info.state == "ready" and info.chunk_count == 1
    assert library.search(info.book_id, "page reads normally").passages


def test_decompression_bomb_page_is_flagged_not_parsed(files, library):
    info = library.ingest(files["bomb"])
    assert info.state == "ready" and info.chunk_count == 0
    assert "Page 1 is shown as a placeholder" in info.message
    assert "decompression bomb" in info.message
    pdf = library.open_pdf(info.book_id)
    assert 0 in pdf.blocked
    with pytest.raises(PdfError, match="is not shown: its drawing instructions expand"):
        pdf.render(0, 1.0)


def test_bomb_that_passes_the_size_check_hits_the_memory_cap(files):
    limits = sandbox.SandboxLimits(memory_bytes=384 * MB, page_content_bytes=4096 * MB)
    scan = sandbox.scan_pdf(files["bomb"], limits=limits)
    assert scan.flagged == {}
    got = sandbox.Extraction()
    pages = list(sandbox.extract_pages(files["bomb"], None, {}, scan.page_count,
                                       limits=limits, into=got))
    assert len(pages) == 1 and pages[0].text == ""
    assert got.flagged == {0: "it expands beyond the 384 MB memory limit"}
    assert got.peak_rss_mb <= 384


def test_shared_stream_bomb_flags_every_page_quickly(files, library):
    info = library.ingest(files["shared"])
    assert info.state == "ready" and info.page_count == 20
    assert "Pages 1-20 are shown as placeholders" in info.message


def test_truncated_file_fails_clearly(files, library):
    with pytest.raises(PdfError, match="truncated.pdf"):
        library.ingest(files["truncated"])
    assert _failed(library, "truncated.pdf")


def test_png_renamed_pdf_is_named_for_what_it_is(files, library):
    with pytest.raises(PdfError, match="is not a PDF file \\(it is a PNG image\\)"):
        library.ingest(files["png"])
    [book] = _failed(library, "picture.pdf")
    assert book.chunk_count == 0
    with pytest.raises(PdfError, match="PNG image"):
        PdfBook.open(files["png"])


def test_a_page_over_the_character_limit_is_cut_with_a_note(tmp_path):
    import fitz

    path = tmp_path / "long.pdf"
    doc = fitz.open()
    page = doc.new_page()
    for row in range(60):
        page.insert_text((20, 20 + row * 12), "word " * 20, fontsize=8)
    doc.save(str(path))
    limits = sandbox.SandboxLimits(max_page_chars=500)
    got = sandbox.Extraction()
    [cut] = list(sandbox.extract_pages(path, None, {}, 1, limits=limits, into=got))
    assert 0 < len(cut.text) <= 500
    assert got.notes and "text cut at 500 characters" in got.notes[0]
    with PdfBook.open(path) as whole:
        assert len(whole.page(0).text) > 5000


def test_describe_flagged_groups_pages_by_reason():
    lines = sandbox.describe_flagged({0: "x", 1: "x", 2: "x", 5: "x", 7: "y"})
    assert lines == ["Pages 1-3, 6 are shown as placeholders and not searched: x.",
                     "Page 8 is shown as a placeholder and not searched: y."]
