"""Train the grounding validator's learned support decision (build/verifier_model.npz).

Usage (``make train-verifier``)::

    PYTHONPATH=src python tools/train_verifier.py [--out FILE] [--features-cache FILE]

Training pairs, all from material the project may tune on (never a report book):

* ``bench/grounding_textbook.jsonl``: hand-written pairs over three tune books;
* the tune books' pairs of ``bench/verifier_pairs.jsonl`` (``bench/books.py`` TUNE);
* the tune half (first half) of ``../shared/eval/grounding/halueval_qa.jsonl``.

Each answer sentence is scored by the validator's window checks with the model off
(:class:`~bookreader.core.grounding.GroundingValidator` without a model) and turned
into :data:`~bookreader.core.grounding_model.FEATURES`.  A supported answer gives every
sentence a positive label; an unsupported answer of one sentence a negative one (which
sentence of a longer unsupported answer is wrong is not known, so those are left out).

A logistic regression (standardised features, L2, full-batch gradient descent from
zero, so the result is fixed) is fitted with the three sources weighted equally and
the classes balanced in each.  Sentences the hard checks reject (an obeyed instruction,
a tautology, a number, name or code term the context lacks) are left out of the fit and
counted as rejected in the figures.  The threshold is chosen on out-of-fold probabilities
(5 folds, fixed assignment): the highest mean balanced accuracy of the two textbook
sources whose false accepts stay at most ``--max-false-accept`` on each source.  Prints
the out-of-fold figures, the weights and the file's SHA-256.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

OUT = ROOT / "build" / "verifier_model.npz"
L2 = 1e-2
STEPS = 3000
RATE = 0.5


def training_pairs() -> dict[str, list]:
    import grounding as gb
    import verifier as vb

    return {
        "textbook": gb.load_textbook(gb.TEXTBOOK_PAIRS, "all"),
        "verifier_tune": vb.load_pairs(vb.PAIRS, "tune"),
        "halueval_tune": gb.load_pairs(gb.DEFAULT_PAIRS, "tune"),
    }


def featurise(sets: dict[str, list]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.grounding import GroundingValidator
    from bookreader.core.grounding_model import FEATURES

    v = GroundingValidator(MiniLMEmbedder().quantized_copy())
    v.want_features = True
    X, y, src = [], [], []
    for k, (name, pairs) in enumerate(sets.items()):
        for p in pairs:
            sents = v.answer_sentences(p.answer)
            if not sents or (not p.supported and len(sents) > 1):
                continue
            for s in v.score_sentences(sents, p.context, p.question):
                vetoed = (not s.features or s.obeys_instruction or s.tautology or s.garbled
                          or s.swapped_definition or bool(s.missing))
                # decided by the hard checks, not by the model: kept (as rejected) for the
                # threshold's false-accept figures, left out of the fit
                X.append(s.features if s.features else (0.0,) * len(FEATURES))
                y.append(1.0 if p.supported else 0.0)
                src.append(k + (10 if vetoed else 0))
        print(f"{name}: {sum(1 for s in src if s % 10 == k)} sentences", file=sys.stderr)
    return np.array(X), np.array(y), np.array(src)


def sample_weights(y: np.ndarray, src: np.ndarray) -> np.ndarray:
    w = np.zeros_like(y)
    for k in np.unique(src):
        for c in (0.0, 1.0):
            m = (src == k) & (y == c)
            if m.any():
                w[m] = 1.0 / m.sum()
    return w / w.sum() * len(y)


def fit(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray, float]:
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale
    beta = np.zeros(Z.shape[1])
    b = 0.0
    n = w.sum()
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(Z @ beta + b)))
        g = w * (p - y)
        beta -= RATE * (Z.T @ g / n + L2 * beta)
        b -= RATE * g.sum() / n
    return mean, scale, beta, b


def prob(model, X: np.ndarray) -> np.ndarray:
    mean, scale, beta, b = model
    return 1.0 / (1.0 + np.exp(-(((X - mean) / scale) @ beta + b)))


def rates(p: np.ndarray, y: np.ndarray, t: float) -> tuple[float, float]:
    acc = p >= t
    tpr = acc[y == 1].mean() if (y == 1).any() else 0.0
    fa = acc[y == 0].mean() if (y == 0).any() else 0.0
    return (tpr + 1 - fa) / 2, fa


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--features-cache", type=Path, default=None,
                    help="read/write the feature matrix here (re-fitting without re-scoring)")
    ap.add_argument("--max-false-accept", type=float, default=0.05)
    args = ap.parse_args(argv)
    from bookreader.core.grounding_model import FEATURES

    if args.features_cache and args.features_cache.exists():
        d = np.load(args.features_cache)
        X, y, src = d["X"], d["y"], d["src"]
    else:
        X, y, src = featurise(training_pairs())
        if args.features_cache:
            np.savez(args.features_cache, X=X, y=y, src=src)
    vetoed = src >= 10
    src = src % 10
    w = sample_weights(y[~vetoed], src[~vetoed])
    Xf, yf = X[~vetoed], y[~vetoed]
    folds = np.arange(len(yf)) % 5
    oof = np.zeros(len(y))  # the vetoed sentences stay at 0: rejected
    part = np.zeros(len(yf))
    for f in range(5):
        m = fit(Xf[folds != f], yf[folds != f], w[folds != f])
        part[folds == f] = prob(m, Xf[folds == f])
    oof[~vetoed] = part
    best = (-1.0, 0.5)
    for t in np.linspace(0.05, 0.95, 91):
        per = [rates(oof[src == k], y[src == k], t) for k in (0, 1)]
        if all(fa <= args.max_false_accept for _, fa in per):
            score = float(np.mean([ba for ba, _ in per]))
            if score > best[0]:
                best = (score, float(t))
    threshold = best[1]
    for k, name in enumerate(("textbook", "verifier_tune", "halueval_tune")):
        ba, fa = rates(oof[src == k], y[src == k], threshold)
        print(f"out-of-fold {name}: balanced accuracy {ba:.3f}, false accepts {fa:.3f}")
    mean, scale, beta, b = fit(Xf, yf, w)
    for name, coef in zip(FEATURES, beta):
        print(f"  {name:20s} {coef:+.3f}")
    buf = io.BytesIO()
    np.savez(buf, features=np.array(FEATURES), mean=mean, scale=scale, weights=beta,
             bias=np.float64(b), threshold=np.float64(threshold))
    blob = buf.getvalue()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    print(f"threshold {threshold:.2f}; wrote {args.out}; SHA-256 {hashlib.sha256(blob).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
