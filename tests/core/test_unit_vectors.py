"""Unit vectors computed ahead: built after ingest, saved beside the index, reloaded by a
new library, used by the focus step instead of the model, rebuilt when their version
changes, and a partial or corrupt file is ignored with a log line (real PDF, real
int8 MiniLM, real Qdrant Edge)."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest
from pdf_factory import book_pdf, filler

from bookreader.config import Settings
from bookreader.core import unit_vectors
from bookreader.core.focus import _units, focus_passages, unique_sentences
from bookreader.core.focus_ranking import answer_units
from bookreader.core.unit_vectors import UNIT_VECTORS_FILE, book_units
from bookreader.errors import Cancelled
from bookreader.library import Library

QUESTION = "What does a while loop do?"
BUDGET = 600


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uv-pdf")
    return book_pdf(folder / "loops.pdf", [
        ("Chapter 1 Loops", [
            ("1.1 While", "A while loop repeats its body while the condition is true. "
             + filler(30, 11)),
            ("1.2 For", "A for loop counts through a range of values. " + filler(30, 12)),
        ]),
        ("Chapter 2 Arrays", [("2.1 Indexes", "The first index of an array is zero. "
                               + filler(30, 13))]),
    ]).path


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("uv-library")


def _library(data_dir, embedder) -> Library:
    library = Library(Settings(data_dir=data_dir), embedder=embedder)
    library.background_unit_vectors = False
    return library


@pytest.fixture(scope="module")
def built(data_dir, embedder, pdf):
    """A book ingested, then its unit vectors built; (library, book id)."""
    library = _library(data_dir, embedder)
    info = library.ingest(pdf)
    assert not (library.settings.books_dir / info.book_id / UNIT_VECTORS_FILE).exists()
    assert library.build_unit_vectors(info.book_id)
    yield library, info.book_id
    library.close()


def _focus_units(library, book_id, question=QUESTION):
    passages = library.search(book_id, question).passages
    texts = unique_sentences([p.chunk.text for p in passages])
    units = []
    for text in texts:
        u, j = _units(text, BUDGET)
        units.extend(answer_units(u, j)[0])
    return texts, units


def _focus(embedder, texts):
    return focus_passages(texts, QUESTION, BUDGET, embedder=embedder, ranking="answer_split")


def test_the_vectors_are_built_and_saved_beside_the_index(built):
    library, book_id = built
    path = library.settings.books_dir / book_id / UNIT_VECTORS_FILE
    chunks = library.retriever(book_id).lexical.chunks
    expected = book_units([c.text for c in chunks], library._unit_budgets())
    embedder = library.answerer.validator.embedder
    table = unit_vectors.load(path, library._unit_fingerprint(embedder))
    assert table is not None and len(table) == len(expected) > 0
    assert path.stat().st_size == (unit_vectors.HEADER_BYTES
                                   + len(expected) * (8 + 4 * embedder.dimension))
    assert not list(path.parent.glob(f"{UNIT_VECTORS_FILE}.tmp*"))


def test_every_unit_the_focus_step_ranks_is_in_the_table_even_after_an_overlapping_chunk(built):
    library, book_id = built
    chunks = library.retriever(book_id).lexical.chunks
    units = set(book_units([c.text for c in chunks], library._unit_budgets()))
    for a, b in zip(chunks, chunks[1:]):
        for texts in ([a.text, b.text], [b.text, a.text]):  # either retrieved first
            for text in unique_sentences(texts):
                for budget in library._unit_budgets():
                    u, j = _units(text, budget)
                    assert set(answer_units(u, j)[0]) <= units


def test_a_new_library_reloads_the_table_and_the_focus_step_runs_no_model(built, data_dir,
                                                                         embedder):
    _, book_id = built
    library = _library(data_dir, embedder)  # as after a restart: the saved file is read
    try:
        library.warm_up(book_id, backend="extractive")
        focus_embedder = library.answerer.validator.embedder
        assert focus_embedder.has_vectors(book_id)
        texts, units = _focus_units(library, book_id)
        assert len(units) > 3
        focus_embedder._cache.clear()
        misses, hits = focus_embedder.cache_misses, focus_embedder.table_hits
        with_table = _focus(focus_embedder, texts)
        assert focus_embedder.cache_misses - misses == 1  # the question alone
        assert focus_embedder.table_hits - hits == len(units)

        # the same vectors, so the same excerpts, as when the model embeds them
        table = focus_embedder._tables[book_id]
        focus_embedder.detach_vectors(book_id)
        focus_embedder._cache.clear()
        fresh = focus_embedder.embed(units)
        assert focus_embedder.cache_misses - misses == 1 + len(set(units))
        assert np.allclose(fresh, np.stack([table.get(u) for u in units]), atol=1e-6)
        focus_embedder._cache.clear()
        assert _focus(focus_embedder, texts) == with_table
    finally:
        library.close()


def test_a_version_change_rebuilds_the_table(built, data_dir, embedder, monkeypatch, caplog):
    _, book_id = built
    library = _library(data_dir, embedder)
    try:
        monkeypatch.setattr(unit_vectors, "UNIT_RULES_VERSION", unit_vectors.UNIT_RULES_VERSION + 1)
        with caplog.at_level(logging.INFO, logger="bookreader.core.unit_vectors"):
            assert not library._load_unit_vectors(book_id)
        assert "built by another version" in caplog.text
        path = library.settings.books_dir / book_id / UNIT_VECTORS_FILE
        stale = path.with_name(f"{UNIT_VECTORS_FILE}.tmp-999999999")  # a killed build's
        stale.write_bytes(b"half a table")
        assert library.build_unit_vectors(book_id)
        assert not stale.exists()
        assert library.answerer.validator.embedder.has_vectors(book_id)
    finally:
        library.close()
    # the rebuilt table is the current one; the old version's is not read any more
    monkeypatch.undo()
    library = _library(data_dir, embedder)
    try:
        assert not library._load_unit_vectors(book_id)
        assert library.build_unit_vectors(book_id)
    finally:
        library.close()


def _damage(path, how):
    raw = path.read_bytes()
    if how == "partial":
        path.write_bytes(raw[: len(raw) - 1000])
    elif how == "corrupt":
        body = bytearray(raw)
        body[-10] ^= 0xFF
        path.write_bytes(bytes(body))
    else:
        path.write_bytes(b"\x00garbage" + raw[8:])
    return raw


@pytest.mark.parametrize("how,said", [("partial", "incomplete"), ("corrupt", "corrupt"),
                                      ("header", "unreadable")])
def test_a_partial_or_corrupt_file_is_ignored_with_a_log_line(built, data_dir, embedder,
                                                               how, said, caplog):
    library, book_id = built
    path = library.settings.books_dir / book_id / UNIT_VECTORS_FILE
    raw = _damage(path, how)
    fresh = _library(data_dir, embedder)
    try:
        with caplog.at_level(logging.WARNING, logger="bookreader.core.unit_vectors"):
            fresh.prepare_unit_vectors(book_id)  # never raises
            assert not fresh.answerer.validator.embedder.has_vectors(book_id)
            # a question still works, embedding on the fly
            texts, _ = _focus_units(fresh, book_id)
            assert _focus(fresh.answerer.validator.embedder, texts)
        assert said in caplog.text and str(path) in caplog.text
        caplog.clear()  # the same bad file is not read (nor logged) again for each question
        with caplog.at_level(logging.WARNING, logger="bookreader.core.unit_vectors"):
            assert not fresh._load_unit_vectors(book_id)
        assert not caplog.text
    finally:
        fresh.close()
        path.write_bytes(raw)


@pytest.fixture
def without_table(built):
    """The book's table moved aside for a test that builds it again, put back afterwards
    (the module's other tests read it as built)."""
    library, book_id = built
    path = library.settings.books_dir / book_id / UNIT_VECTORS_FILE
    raw = path.read_bytes()
    path.unlink()
    yield book_id, path
    path.write_bytes(raw)


def test_an_interrupted_build_writes_nothing(without_table, data_dir, embedder):
    book_id, path = without_table
    library = _library(data_dir, embedder)
    steps: list[int] = []
    try:
        with pytest.raises(Cancelled):
            library.build_unit_vectors(book_id, cancel=lambda: len(steps) > 1,
                                       progress=lambda d, t, m: steps.append(d))
        assert not path.exists() and not list(path.parent.glob(f"{UNIT_VECTORS_FILE}*"))
    finally:
        library.close()


def test_the_background_build_waits_while_a_question_is_answered(without_table, data_dir,
                                                                 embedder):
    book_id, path = without_table
    library = Library(Settings(data_dir=data_dir), embedder=embedder)
    focus_embedder = library.answerer.validator.embedder
    real_embed = focus_embedder.embed
    answering: list[int] = []  # questions being answered at each step of the build

    def embed(texts, batch_size=32, *, cache=True):
        if not cache:
            answering.append(library._answering)
        return real_embed(texts, batch_size, cache=cache)

    focus_embedder.embed = embed
    try:
        library._question_started()
        library.prepare_unit_vectors(book_id)
        thread = library._vector_threads[book_id]
        thread.join(0.5)
        assert thread.is_alive() and not path.exists()  # still waiting for the question
        library._question_finished()
        thread.join(120)
        assert not thread.is_alive() and path.exists()
        assert answering and set(answering) == {0}
        assert focus_embedder.has_vectors(book_id)
    finally:
        library.close()


def test_closing_the_library_stops_a_waiting_build(without_table, data_dir, embedder):
    book_id, path = without_table
    library = Library(Settings(data_dir=data_dir), embedder=embedder)
    library._question_started()
    library.prepare_unit_vectors(book_id)
    thread = library._vector_threads[book_id]
    done = threading.Event()
    closer = threading.Thread(target=lambda: (library.close(), done.set()))
    closer.start()
    closer.join(60)
    assert done.is_set() and not thread.is_alive() and not path.exists()


def test_removing_the_book_deletes_its_table(built):
    library, book_id = built
    path = library.settings.books_dir / book_id / UNIT_VECTORS_FILE
    assert path.exists()
    library.remove(book_id)
    assert not path.exists()
    assert not library.answerer.validator.embedder.has_vectors(book_id)
