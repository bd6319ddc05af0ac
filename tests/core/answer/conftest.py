"""Fixtures for the answering stages (src/bookreader/core/answer/), each tested alone.

Everything is real: a PDF made by tests/pdf_factory.py, ingested into Qdrant Edge with
the bundled MiniLM, the grounding validator, and the extractive backend.  ``make_run``
builds the typed :class:`~bookreader.core.answer.run.Run` a stage takes, as
``Answerer.ask`` would.
"""

from __future__ import annotations

import time

import pytest

from bookreader.config import Settings
from bookreader.core.answer.run import Run, backend_spec
from bookreader.core.answering import Answerer
from bookreader.core.types import Mode

from biology_text import MITO, PHOTO, ROOTS
from pdf_factory import book_pdf

CHAPTERS = [
    ("1 Cells", [("1.1 Mitochondria", MITO)]),
    ("2 Plants", [("2.1 Photosynthesis", PHOTO), ("2.2 Roots", ROOTS)]),
]


@pytest.fixture(scope="session")
def stage_book(tmp_path_factory, embedder):
    """``(settings, retriever, pdf)`` of a three-section biology book."""
    from bookreader.library import Library

    root = tmp_path_factory.mktemp("stages")
    settings = Settings(data_dir=root / "data").updated(max_new_tokens=80)
    settings.ensure_dirs()
    spec = book_pdf(root / "biology.pdf", CHAPTERS, lines_per_page=9, running_header=False)
    lib = Library(settings, embedder=embedder)
    info = lib.ingest(spec.path)
    yield settings, lib.retriever(info.book_id), lib.open_pdf(info.book_id)
    lib.close()


@pytest.fixture(scope="session")
def stage_answerer(stage_book, embedder):
    return Answerer(stage_book[0], embedder=embedder, budget_fn=lambda name: 120.0)


@pytest.fixture
def make_run(stage_answerer, stage_book):
    """``make_run(question, mode=..., backend=..., selection=..., page_range=...)``."""

    def make(question: str, *, mode: Mode = Mode.BOOK, backend: str = "extractive",
             selection: str = "", page_range=None, with_pdf: bool = True, **kw) -> Run:
        settings = stage_answerer.settings
        return Run(stage_answerer.parts, question, question, mode, backend,
                   backend_spec(backend, settings), time.perf_counter(), selection=selection,
                   page_range=page_range, pages=stage_book[2] if with_pdf else None, **kw)

    return make


@pytest.fixture(scope="session")
def page_of(stage_book):
    """``page_of(needle)``: the 0-based page of the stage book that holds ``needle``."""
    pdf = stage_book[2]
    return lambda needle: next(i for i in range(pdf.page_count) if needle in pdf.page(i).text)
