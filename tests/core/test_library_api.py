"""The library's typed surface: Library implements LibraryApi, every command reaches its
method, the grounding thresholds of the settings reach the validator that answers, and a
conversation exports as Markdown with its citations."""

from __future__ import annotations

import pytest

from bookreader.api import Command, LibraryApi, run_command
from bookreader.config import Settings
from bookreader.core.types import Mode
from bookreader.library import Library

SELECTION = ("Mitochondria produce most of the ATP that a cell needs. They take in oxygen "
             "and give off carbon dioxide.")


def test_library_implements_the_api_and_every_command(tmp_path):
    lib = Library(Settings(data_dir=tmp_path))
    assert isinstance(lib, LibraryApi)
    for command in Command:
        assert callable(getattr(lib, command.value)), command
    assert run_command(lib, Command.BOOKS, (), {}) == []
    text, warning = run_command(lib, Command.CHECK_SELECTION, ("x " * 3000,), {})
    assert warning and len(text) < 6000
    with pytest.raises(ValueError):
        run_command(lib, "audit.export", (), {})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        run_command(lib, "bookreader.core.answering:clean_selection", (), {})  # type: ignore[arg-type]
    lib.close()


def test_grounding_thresholds_in_settings_decide_the_answer(tmp_path, embedder):
    """Through the real path: Settings -> Library -> Answerer -> GroundingValidator."""
    question = "What do mitochondria produce?"
    normal = Library(Settings(data_dir=tmp_path / "a"), embedder=embedder)
    strict = Library(Settings(data_dir=tmp_path / "b", grounding_similarity_threshold=0.99,
                              grounding_overlap_threshold=1.01), embedder=embedder)
    try:
        assert normal.answerer.validator.similarity_threshold == 0.7
        assert strict.answerer.validator.similarity_threshold == 0.99
        assert strict.answerer.validator.overlap_threshold == 1.01
        ok = normal.ask(question, mode=Mode.SELECTED, selection=SELECTION, backend="extractive")
        assert not ok.fallback and "ATP" in ok.text
        refused = strict.ask(question, mode=Mode.SELECTED, selection=SELECTION,
                             backend="extractive")
        assert refused.fallback and refused.validation is not None
        assert not refused.validation.passed
    finally:
        normal.close()
        strict.close()


def test_conversation_exports_as_markdown(tmp_path, embedder):
    from pdf_factory import planted_fact_pdf

    fact = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."
    pdf = planted_fact_pdf(tmp_path / "fact.pdf", fact, fact_page=5)
    lib = Library(Settings(data_dir=tmp_path / "data"), embedder=embedder)
    try:
        info = lib.ingest(pdf)
        answer = lib.ask("How many gulls were counted?", mode=Mode.BOOK, book=info.book_id,
                         backend="extractive")
        out = lib.export_conversation(info.book_id, tmp_path / "out" / "talk.md")
        text = out.read_text(encoding="utf-8")
    finally:
        lib.close()
    assert text.startswith(f"# Questions about *{info.title}*")
    assert "## 1. How many gulls were counted?" in text
    assert "4127" in text
    assert answer.citations
    label = answer.citations[0].page_label
    assert f"page {label}" in text and "Sources:" in text


def test_reading_works_beside_a_window_that_holds_the_book(tmp_path, embedder, monkeypatch):
    """A window's library process keeps the book's store open; `bookreader ask/search`
    (another Library on the same data folder) read a private copy, and a write says truly
    who holds the book."""
    import multiprocessing

    from pdf_factory import planted_fact_pdf

    from bookreader.errors import BookLocked

    fact = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."
    pdf = planted_fact_pdf(tmp_path / "fact.pdf", fact, fact_page=5)
    settings = Settings(data_dir=tmp_path / "data")
    monkeypatch.setattr(multiprocessing.current_process(), "name", "library")
    window = Library(settings, embedder=embedder)
    info = window.ingest(pdf)  # holds the store (and its lock) from now on
    monkeypatch.setattr(multiprocessing.current_process(), "name", "cli")
    cli = Library(settings, embedder=embedder)
    try:
        hits = cli.search(info.book_id, "How many gulls were counted?", top_k=3)
        assert any("4127" in p.chunk.text for p in hits.passages)
        answer = cli.ask("How many gulls were counted?", book=info.book_id,
                         backend="extractive")
        assert "4127" in answer.text and not answer.error
        with pytest.raises(BookLocked) as err:
            cli.remove(info.book_id)
        message = err.value.user_message
        assert "an open BookReader window" in message and "close that window" in message
        assert "finish indexing" not in message
        copy = cli._copies[info.book_id][1]
        assert copy.is_dir()
    finally:
        cli.close()
        window.close()
    assert not copy.exists()  # the private copy goes with the command
