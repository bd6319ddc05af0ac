"""Sentence vectors stored at ingest: focus reads them instead of embedding the retrieved
passages' sentences per question; books indexed without them still work."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from pdf_factory import planted_fact_pdf

from bookreader.config import Settings
from bookreader.core import sentence_vectors
from bookreader.core.embedding import MiniLMEmbedder, text_key
from bookreader.core.focus import candidate_units, focus_passages
from bookreader.library import Library

FACT = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."
QUESTION = "How many gulls did the lighthouse keeper count?"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    return planted_fact_pdf(tmp_path_factory.mktemp("sv") / "fact.pdf", FACT, fact_page=3)


def _chunk_texts(library, book_id):
    return [c.text for c in library.retriever(book_id).store.chunks()]


def test_ingest_stores_a_vector_for_every_focus_unit(tmp_path, book, embedder):
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        info = library.ingest(book)
        path = library._book_dir(info.book_id) / sentence_vectors.FILE
        focus_embedder = embedder.quantized_copy()
        table = sentence_vectors.load(path, focus_embedder.model_tag)
        assert table is not None
        units = sentence_vectors.units(_chunk_texts(library, info.book_id))
        assert units and all(text_key(u) in table for u in units)
        # The stored vectors are the int8 model's own (batching moves them by rounding).
        fresh = MiniLMEmbedder(quantized=True).embed(units[:20], cache=False)
        stored = np.stack([table[text_key(u)] for u in units[:20]])
        assert (fresh * stored).sum(axis=1).min() > 0.999
        # Asking about the book uses them: the passages' sentences are not embedded again.
        misses = focus_embedder.cache_misses
        vectors = focus_embedder.embed(units[:20])
        assert focus_embedder.cache_misses == misses
        assert np.array_equal(vectors, stored)


def test_focus_picks_the_same_sentences_with_stored_vectors(tmp_path, book, embedder):
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        info = library.ingest(book)
        texts = _chunk_texts(library, info.book_id)[:5]
        with_stored = focus_passages(texts, QUESTION, 600, embedder=embedder.quantized_copy())
    computed = focus_passages(texts, QUESTION, 600, embedder=MiniLMEmbedder(quantized=True))
    assert with_stored == computed
    assert any(FACT in shown for _, shown in with_stored)


def test_a_book_indexed_without_sentence_vectors_still_answers_and_gets_them(
        tmp_path, book, embedder, caplog):
    data = tmp_path / "data"
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        info = library.ingest(book)
        path = library._book_dir(info.book_id) / sentence_vectors.FILE
    path.unlink()  # as an older version left it
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        library.retriever(info.book_id)  # opens without the file
        texts = _chunk_texts(library, info.book_id)[:3]
        shown = focus_passages(texts, QUESTION, 600, embedder=embedder.quantized_copy())
        assert shown  # focus embeds the sentences itself
        assert not path.exists()
        library.ingest(book)  # the next ingest adds them
        assert path.is_file()
    # A file from other weights, or a damaged one, is not used (and says why).
    np.savez(path.with_name("x.npz"), keys=np.zeros(1, dtype=np.uint64),
             vectors=np.zeros((1, 384), dtype=np.float32), model=np.array("other-model"))
    path.with_name("x.npz").replace(path)
    assert sentence_vectors.load(path, embedder.quantized_copy().model_tag) is None
    path.write_bytes(b"not a numpy file")
    caplog.set_level(logging.WARNING, logger="bookreader.core.sentence_vectors")
    assert sentence_vectors.load(path, embedder.quantized_copy().model_tag) is None
    assert "Cannot read the sentence vectors" in caplog.text


def test_candidate_units_cover_the_lines_of_a_long_listing():
    code = "Here is the loop:\nfor (int i = 0; i < n; i++) {\n    total += i;\n}\nIt adds."
    units = candidate_units(code)
    assert "    total += i;" in units
    assert any(u.startswith("Here is the loop") for u in units)
