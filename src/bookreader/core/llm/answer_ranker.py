"""The learned order of extractive answer candidates (``resources/answer_ranker.npz``).

A linear ranker over :data:`~bookreader.core.llm.answer_features.FEATURES`, trained
pairwise on the tune books' questions by ``make train-answer-ranker``: within a question,
the candidate whose sentence (with the one after it) holds more of a teacher's answer
should rank above the other.  It orders the candidates; the hand-weighted score stays what
the bars to answer and to join an answer are measured against.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Optional

from bookreader.core.llm.answer_features import FEATURES
from bookreader.core.logistic import LogisticWeights, load_weights, parse_weights

RESOURCE = "answer_ranker.npz"
#: The SHA-256 of the shipped weights (``make train-answer-ranker`` prints it).
WEIGHTS_SHA256 = ""
_WHAT = "The answer ranker"
_REMEDY = "make train-answer-ranker"
#: A weights file measured in place of the shipped one (``bench/answer_quality.py
#: --answer-ranker``; a book left out of its training).
OVERRIDE_ENV = "BOOKREADER_ANSWER_RANKER"


@lru_cache(maxsize=4)
def _load(path: str) -> Optional[LogisticWeights]:
    if path == "off":
        return None
    if path:
        return load_weights(Path(path), FEATURES, what=_WHAT, remedy=_REMEDY)
    source = resources.files("bookreader") / "resources" / RESOURCE
    if not source.is_file():
        return None  # not shipped: the hand-weighted order stands
    blob = source.read_bytes()
    return parse_weights(blob, FEATURES, what=_WHAT, where=RESOURCE, remedy=_REMEDY,
                         expected_sha256=WEIGHTS_SHA256)


def ranker() -> Optional[LogisticWeights]:
    """The ranker in use (None when switched off with ``BOOKREADER_ANSWER_RANKER=off``)."""
    return _load(os.environ.get(OVERRIDE_ENV, ""))


def order_score(model: LogisticWeights, features: list[float]) -> float:
    """The candidate's place in the learned order (higher first)."""
    return float(((features - model.mean) / model.scale) @ model.weights)
