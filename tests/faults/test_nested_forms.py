"""A page whose form XObjects draw each other 10^9 times keeps its real text.

Before, the sandbox's extraction child ran such a page for its whole wall-clock budget
(60 s, reaching 2 GB) and the page was skipped with its text lost.  Now the drawing is
counted before MuPDF runs it and the repeated drawing past the cap is left out, so the
page reads in seconds and its text is indexed.
"""

from __future__ import annotations

import fitz
import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.pdf_forms import MAX_PAGE_OPERATIONS, page_operations
from bookreader.core.sandbox import Extraction, SandboxLimits, extract_pages, scan_pdf

BEFORE = "Recursion needs a base case that stops it."
AFTER = "A stack frame holds the local variables of one call."


def nested_forms_pdf(path, depth: int = 9, fan: int = 10):
    """Page 1: text, a form drawing a form ... ``depth`` levels, each ``fan`` times (the
    leaf draws a letter), then more text; page 2: plain text."""
    doc = fitz.open()
    page = doc.new_page()
    page.insert_text((72, 72), BEFORE, fontsize=11)
    font = "<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"
    child = None
    for _level in range(depth + 1):
        xref = doc.get_new_xref()
        if child is None:
            body, resources = b"BT /F1 1 Tf 0 0 Td (y) Tj ET", font
        else:
            body, resources = b" ".join([b"/C Do"] * fan), f"<< /XObject << /C {child} 0 R >> >>"
        doc.update_object(xref, "<< /Type /XObject /Subtype /Form /BBox [0 0 600 800] "
                                f"/Resources {resources} >>")
        doc.update_stream(xref, body)
        child = xref
    res = int(doc.xref_get_key(page.xref, "Resources")[1].split()[0])
    doc.xref_set_key(res, "XObject", f"<< /B {child} 0 R >>")
    contents = page.get_contents()[0]
    doc.update_stream(contents, doc.xref_stream(contents) + b"\nq /B Do Q\n")
    page.insert_text((72, 120), AFTER, fontsize=11)
    doc.new_page().insert_text((72, 72), "The second page is plain.", fontsize=11)
    doc.save(path)
    doc.close()
    return path


@pytest.fixture
def bomb(tmp_path):
    return nested_forms_pdf(tmp_path / "forms.pdf")


def test_the_drawing_of_nested_forms_is_counted_without_running_it(bomb):
    with fitz.open(bomb) as doc:
        assert page_operations(doc, 0) > 10**9 > MAX_PAGE_OPERATIONS
        assert page_operations(doc, 1) == 0  # no forms: nothing to count


def test_the_page_keeps_its_text_in_the_sandbox(bomb):
    limits = SandboxLimits(wall_seconds=30, cpu_seconds=30)  # old code: killed at 30 s
    scan = scan_pdf(bomb, limits=limits)
    out = Extraction()
    pages = list(extract_pages(bomb, None, scan.flagged, scan.page_count, limits=limits,
                               into=out))
    assert not out.flagged, out.flagged
    assert BEFORE in pages[0].text and AFTER in pages[0].text
    assert pages[1].text == "The second page is plain."
    assert any("Page 1: its drawing repeats itself" in n for n in out.notes), out.notes
    assert out.peak_rss_mb < 1024


def test_the_page_draws_in_the_reader_too(bomb):
    with PdfBook.open(bomb) as book:
        samples, width, height, _stride = book.render(0, 0.5)
        assert width > 0 and len(samples) >= width * height * 3
        assert BEFORE in book.page(0).text
