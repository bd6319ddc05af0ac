"""Sentence vectors stored with a book, so focusing passages does not embed them per question.

A local tier's prompt carries the sentences of the retrieved passages that bear most on
the question (:mod:`bookreader.core.focus`), ranked partly by MiniLM similarity.  Embedding
the 40-60 sentences of five passages took 0.35-1.6 s per question on two cores, before
the model could start reading.  Ingest now embeds every sentence of every chunk once
(and the lines of multi-line ones, which focus ranks separately under a small budget) with
the same int8 MiniLM that focus and the grounding check use, and keeps them beside the
index in ``sentences.npz``: 64-bit text keys (:func:`~bookreader.core.embedding.text_key`)
and float32 vectors.  Opening the book hands them to that embedder, which returns a
stored vector instead of running the model; a text without one is embedded as before.

A book indexed before this file existed (or whose file is missing, unreadable or made
by other weights) still works: its sentences are embedded on first use, as before, and
the next ingest of the book adds the file.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

import numpy as np

from bookreader.core.embedding import text_key
from bookreader.core.focus import candidate_units

log = logging.getLogger(__name__)

FILE = "sentences.npz"
#: Texts per model call at ingest, in the chunks' order (progress and cancel are
#: checked between calls).  Not sorted by length, although that pads less (2.5-2.9 times
#: less CPU on Think Java): the int8 model quantizes each batch's activations with one
#: scale, so a vector depends on the texts batched with it, and batches of sentences of
#: like length moved vectors to cosine 0.97 of those focus computes on the fly (from the
#: sentences of a few passages, mixed lengths), enough to change which sentences it
#: picks.  Batches of consecutive sentences of the chunks stay within cosine 0.999.
CALL = 64
BATCH = 64


def units(texts: Iterable[str]) -> list[str]:
    """The distinct focus units of the chunk texts, in order."""
    seen: dict[str, None] = {}
    for text in texts:
        for unit in candidate_units(text):
            seen.setdefault(unit, None)
    return list(seen)


def build(path: Path, texts: Iterable[str], embedder: Any, *,
          check: Callable[[], None] = lambda: None,
          progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    """Embed the focus units of ``texts`` with ``embedder`` and write them to ``path``.

    ``check`` runs between batches (it raises to cancel; nothing is written then).
    Returns the number of vectors written.
    """
    todo = units(texts)
    keys = np.fromiter((text_key(t) for t in todo), dtype=np.uint64, count=len(todo))
    vectors = np.zeros((len(todo), int(embedder.dimension)), dtype=np.float32)
    progress(0, len(todo))
    for i in range(0, len(todo), CALL):
        check()
        vectors[i: i + CALL] = embedder.embed(todo[i: i + CALL], batch_size=BATCH, cache=False)
        progress(min(i + CALL, len(todo)), len(todo))
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, keys=keys, vectors=vectors, model=np.array(embedder.model_tag))
    os.replace(tmp, path)
    log.info("Stored %d sentence vectors in %s", len(todo), path)
    return len(todo)


def load(path: Path, model_tag: str) -> Optional[dict[int, np.ndarray]]:
    """The stored vectors by text key, or None (no file, another model, unreadable)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["model"]) != model_tag:
                log.info("%s was made by %s, not %s: not used", path, data["model"], model_tag)
                return None
            keys = data["keys"]
            vectors = data["vectors"]
    except (OSError, ValueError, KeyError) as exc:
        log.warning("Cannot read the sentence vectors %s (%s); sentences are embedded "
                    "when needed", path, exc)
        return None
    if len(keys) != len(vectors):
        log.warning("%s is inconsistent; sentences are embedded when needed", path)
        return None
    return dict(zip(keys.tolist(), vectors))
