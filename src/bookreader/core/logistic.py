"""A standardised logistic regression read from an ``.npz``: the one form of the project's
small learned decisions over named features (the grounding check's experiment,
:mod:`bookreader.core.grounding_model`, and the flashcard model,
:mod:`bookreader.core.study.card_model`).

The file holds ``features`` (the names, in vector order), ``mean`` and ``scale`` (the
standardisation), ``weights``, ``bias`` and ``threshold``.  A file that is missing,
altered (its SHA-256 is not the one expected), unreadable or made for other features is a
:class:`~bookreader.errors.ModelError` that names the model and how to remake it.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from bookreader.errors import ModelError


@dataclass(frozen=True)
class LogisticWeights:
    """A logistic regression over standardised features and its decision threshold."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float

    def probability(self, features: Sequence[float]) -> float:
        x = (np.asarray(features, dtype=np.float64) - self.mean) / self.scale
        z = float(x @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def parse_weights(blob: bytes, features: Sequence[str], *, what: str, where: str,
                  remedy: str, expected_sha256: str = "") -> LogisticWeights:
    """The weights in an ``.npz`` ``blob``, checked against ``expected_sha256`` (when not
    empty) and against ``features``.

    Args:
        what: The model's name in messages ("The flashcard model").
        where: Where the blob came from (a path).
        remedy: The command that remakes the file ("make train-card-model").

    Raises:
        ModelError: the blob is not the expected one, unreadable, or made for other
            features.
    """
    digest = hashlib.sha256(blob).hexdigest()
    if expected_sha256 and digest != expected_sha256:
        raise ModelError(f"{what}'s weights ({where}) have SHA-256 {digest[:16]}..., not "
                         f"the expected {expected_sha256[:16]}...: the file was altered. "
                         f"Run {remedy}.")
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as data:
            names = tuple(str(n) for n in data["features"])
            out = LogisticWeights(np.asarray(data["mean"], dtype=np.float64),
                                  np.asarray(data["scale"], dtype=np.float64),
                                  np.asarray(data["weights"], dtype=np.float64),
                                  float(data["bias"]), float(data["threshold"]))
    except (OSError, KeyError, ValueError, EOFError) as exc:
        raise ModelError(f"{what}'s weights ({where}) cannot be read ({exc}). "
                         f"Run {remedy}.") from exc
    if names != tuple(features) or out.weights.shape != (len(features),):
        raise ModelError(f"{what}'s weights ({where}) were trained on other features than "
                         f"this version computes. Run {remedy}.")
    return out


def load_weights(path: Path, features: Sequence[str], *, what: str, remedy: str,
                 expected_sha256: str = "") -> LogisticWeights:
    """:func:`parse_weights` of the file at ``path`` (a missing file is a ModelError)."""
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"{what}'s weights ({path}) cannot be read ({exc}). "
                         f"Run {remedy}.") from exc
    return parse_weights(blob, features, what=what, where=str(path), remedy=remedy,
                         expected_sha256=expected_sha256)
