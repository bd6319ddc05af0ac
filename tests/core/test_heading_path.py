"""A chunk's vector carries its chapter and section titles (``chunking.embedding_text``).

Only a section's first chunk holds its heading line; the chunks after it used to be
matched by their text alone, so a question in the words of the section's title found the
first chunk and nothing else of the section.  The book below has three sections of three
pages each whose text is the same kind of topic-mixed filler: only the titles tell the
sections apart, so only vectors that carry them can find a section's later chunks.
"""

from __future__ import annotations

import pytest

from bookreader.core.chunking import embedding_text, heading_path
from bookreader.core.types import Chunk
from bookreader.library import Library
from pdf_factory import filler, make_pdf

SECTIONS = {
    "Cryptographic hash functions": "How do cryptographic hash functions work?",
    "Protein folding": "Why do proteins fold into a shape?",
    "Jazz improvisation": "How do jazz musicians improvise a solo?",
}
PAGES_PER_SECTION = 3


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    from bookreader.config import Settings

    root = tmp_path_factory.mktemp("heading-path")
    pages, toc = [], []
    for n, title in enumerate(SECTIONS):
        toc.append((1, f"{n + 1} Part {n + 1}", len(pages)))
        toc.append((2, f"{n + 1}.1 {title}", len(pages)))
        for k in range(PAGES_PER_SECTION):
            body = filler(14, seed=10 * n + k)
            pages.append(f"{n + 1}.1 {title}\n\n{body}" if k == 0 else body)
    pdf = make_pdf(root / "sections.pdf", pages, toc=toc, metadata={"title": "Sections"})
    settings = Settings(data_dir=root / "data")
    settings.ensure_dirs()
    lib = Library(settings, embedder=embedder)
    info = lib.ingest(pdf)
    yield lib, info
    lib.close()


def _section_of(chunk: Chunk) -> str:
    return next(t for t in SECTIONS if t in chunk.section)


def test_heading_path_leaves_out_numbering_and_repeats():
    def chunk(chapter: str, section: str) -> Chunk:
        return Chunk("", "", 0, "Some text.", 0, 0, "", "", chapter, section, 0, 0)

    assert heading_path(chunk("3. Input and Output", "3.10. The Scanner Bug")) == \
        "Input and Output > The Scanner Bug"
    assert heading_path(chunk("Chapter 6: Robot Control", "Force Sensing")) == \
        "Robot Control > Force Sensing"
    assert heading_path(chunk("Graphs", "Graphs")) == "Graphs"
    assert heading_path(chunk("", "")) == ""
    assert embedding_text(chunk("", "")) == "Some text."
    assert embedding_text(chunk("Graphs", "Paths")) == "Graphs > Paths\nSome text."


def test_every_chunk_of_a_section_is_found_by_its_title(library, embedder):
    lib, info = library
    retriever = lib.retriever(info.book_id)
    chunks = retriever.lexical.chunks
    for title in SECTIONS:
        own = {c.chunk_id for c in chunks if _section_of(c) == title}
        assert len(own) >= 2, "each section must span several chunks"
        hits = retriever.store.search(embedder.embed([title])[0], len(own))
        assert {c.chunk_id for c, _ in hits} == own, title


def test_a_question_in_other_words_than_the_title_ranks_its_section_first(library):
    lib, info = library
    retriever = lib.retriever(info.book_id)
    for title, question in SECTIONS.items():
        own = sum(_section_of(c) == title for c in retriever.lexical.chunks)
        top = retriever.search(question, top_k=own).passages
        assert [_section_of(p.chunk) for p in top] == [title] * own, question
