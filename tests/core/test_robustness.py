"""Every PDF of the shared robustness corpus opens and reads, or fails with a clear
BookReaderError, within 30 s, and never crashes or hangs the reader.

Each file is read in a child process (as bench/robustness.py does), so a crash or a hang
inside MuPDF would show up as an outcome instead of taking the test run down.  Skips when
``../shared/eval`` is absent.  The whole corpus takes about 15 s, so it is not marked slow.
"""

from __future__ import annotations

import csv

import pytest

import bookreader.core.pdf  # noqa: F401  (imported before forking: children start warm)
from bookreader.core.pdf_probe import probe_pdf

TIME_LIMIT_S = 30.0


def probe(path, password=None):
    return probe_pdf(path, password, timeout=TIME_LIMIT_S, start_method="fork")


@pytest.fixture(scope="module")
def corpus(eval_dir):
    pdf_dir = eval_dir / "pdfs"
    with open(pdf_dir / "INDEX.csv", newline="", encoding="utf-8") as fh:
        rows = {row["file"]: row for row in csv.DictReader(fh)}
    return pdf_dir, rows


def test_representative_damage_ends_as_expected(corpus):
    pdf_dir, rows = corpus
    expect_error = {
        "qpdf__bad1.pdf": "not a PDF",
        "qpdf__empty.pdf": "has no pages",
        "pdfjs__poppler-67295-0.pdf": "impossible number of pages",
        "pdfjs__bug1020226.pdf": "has no pages",
    }
    for name, words in expect_error.items():
        r = probe(pdf_dir / name)
        assert r.outcome == "error" and r.error_type == "PdfError", (name, r)
        assert words in r.message and name in r.message
    expect_ok = {
        "qpdf__pages-loop.pdf": 1,  # loop in the page tree
        "qpdf__outlines-with-loop.pdf": 30,  # loop in the outline
        "qpdf__bad3.pdf": 1,  # bad xref offset, repaired
        "pdfjs__Pages-tree-refs.pdf": 2,  # circular page reference: page 2 is damaged
        "pdfjs__freeculture.pdf": 352,  # a real book
    }
    for name, pages in expect_ok.items():
        r = probe(pdf_dir / name)
        assert r.outcome == "ok" and r.pages == pages, (name, r)
        if name == "pdfjs__freeculture.pdf":
            assert r.toc_entries > 10 and r.chars > 500_000


def test_scanned_pages_are_named_and_ocr_is_explained(corpus):
    pdf_dir, _ = corpus
    r = probe(pdf_dir / "pymupdf__test_3863.pdf")
    assert r.outcome == "ok" and r.pages == 8
    assert r.pages_without_text == list(range(8))
    assert "scanned" in r.message and "OCR" in r.message


def test_passwords_from_the_corpus_index(corpus):
    pdf_dir, rows = corpus
    encrypted = [name for name, row in rows.items() if row["password"]]
    assert len(encrypted) >= 6
    for name in encrypted:
        without = probe(pdf_dir / name)
        assert without.error_type == "PasswordRequired", (name, without)
        assert name in without.message
        wrong = probe(pdf_dir / name, "definitely-not-it")
        assert wrong.error_type == "PasswordRequired" and "wrong" in wrong.message, name
        right = probe(pdf_dir / name, rows[name]["password"])
        assert right.outcome == "ok" and right.pages >= 1, (name, right)


def test_every_file_ends_clearly_within_the_time_limit(corpus):
    pdf_dir, rows = corpus
    files = sorted(p.name for p in pdf_dir.glob("*.pdf"))
    assert len(files) == 60
    failures = []
    outcomes = {}
    for name in files:
        r = probe(pdf_dir / name, rows.get(name, {}).get("password") or None)
        outcomes[r.outcome] = outcomes.get(r.outcome, 0) + 1
        if not r.clear:
            failures.append((name, r.outcome, r.message))
        elif r.outcome == "error":
            # A clear error says what is wrong with which file.
            assert name in r.message and len(r.message) > 40, (name, r.message)
    assert failures == []
    assert outcomes.get("ok", 0) >= 45
