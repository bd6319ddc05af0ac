"""The grounding validator's optional learned decision (core/grounding_model.py)."""

from __future__ import annotations

import numpy as np
import pytest

from bookreader.core.grounding import GroundingValidator
from bookreader.core.grounding_model import FEATURES, load_weights
from bookreader.errors import ModelError

CONTEXT = ("A tuple is a sequence of values much like a list. The values stored in a tuple "
           "can be any type, and they are indexed by integers. The important difference "
           "is that tuples are immutable.")


def _write(path, weights, bias, threshold, names=FEATURES):
    n = len(names)
    np.savez(path, features=np.array(names), mean=np.zeros(n), scale=np.ones(n),
             weights=np.asarray(weights, dtype=float), bias=np.float64(bias),
             threshold=np.float64(threshold))
    return path


def test_without_a_model_no_features_are_computed(embedder):
    v = GroundingValidator(embedder)
    [s] = v.score_sentences(["Tuples are immutable."], CONTEXT)
    assert s.features == () and s.supported and s.rule_ok


def test_the_model_decides_where_the_hard_checks_do_not(embedder, tmp_path):
    # A model that accepts everything (large bias) still cannot pass a number the
    # context lacks; one that rejects everything rejects even a copied sentence.
    accept = load_weights(_write(tmp_path / "a.npz", np.zeros(len(FEATURES)), 10.0, 0.5))
    reject = load_weights(_write(tmp_path / "r.npz", np.zeros(len(FEATURES)), -10.0, 0.5))
    v = GroundingValidator(embedder, model=accept)
    assert not GroundingValidator(embedder).validate("Tuples are made of wood.", CONTEXT).passed
    assert v.validate("Tuples are made of wood.", CONTEXT).passed
    assert not v.validate("Tuples hold at most 12 values.", CONTEXT).passed  # 12: missing
    [s] = v.score_sentences(["Tuples are immutable."], CONTEXT)
    assert len(s.features) == len(FEATURES)
    assert not GroundingValidator(embedder, model=reject).validate(
        "The important difference is that tuples are immutable.", CONTEXT).passed


def test_weights_for_other_features_are_refused(tmp_path):
    path = _write(tmp_path / "old.npz", [0.0, 0.0], 0.0, 0.5, names=("a", "b"))
    with pytest.raises(ModelError, match="other features"):
        load_weights(path)
    with pytest.raises(ModelError, match="cannot be read"):
        load_weights(tmp_path / "missing.npz")
    good = _write(tmp_path / "g.npz", np.zeros(len(FEATURES)), 0.0, 0.5)
    with pytest.raises(ModelError, match="SHA-256"):
        load_weights(good, expected_sha256="0" * 64)
