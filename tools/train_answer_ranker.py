"""Train the extractive answer ranker: a pairwise logistic regression over the named
features of :mod:`bookreader.core.llm.answer_features`.

Usage::

    python tools/answer_ranker_data.py --split tune        # the candidates, once
    python tools/train_answer_ranker.py [--dumps build/answer_ranker] [--out FILE]
        [--hold-out BOOK ...]

Within each tune-book question, every pair of candidates whose labels (the gold answer's
share in the candidate read with the sentence after it) differ by at least ``--margin``
is one example: the feature difference, labelled by which of the two is better.  The
weights are fitted on standardised differences with no intercept, so a candidate's score
is a weighted sum of its features and only the order within a question means anything.
``--hold-out`` leaves books out (to measure a book the ranker never saw).  Deterministic:
the same dumps give the same file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import books  # noqa: E402

from bookreader.core.llm.answer_features import FEATURES  # noqa: E402

DEFAULT_OUT = ROOT / "src" / "bookreader" / "resources" / "answer_ranker.npz"


def pair_examples(questions: list[dict], margin: float) -> np.ndarray:
    """The feature differences (better minus worse) of every ordered pair of candidates of
    a question whose labels differ by at least ``margin``."""
    out = []
    for q in questions:
        cs = [c for c in q["candidates"] if c.get("matches", True)]
        fs = [np.asarray(c["features"], dtype=np.float64) for c in cs]
        for i, a in enumerate(cs):
            for j, b in enumerate(cs):
                if a["label"] - b["label"] >= margin:
                    out.append(fs[i] - fs[j])
    return np.asarray(out).reshape(-1, len(FEATURES))


def train(questions: list[dict], margin: float = 0.15, c: float = 1.0
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, scale, weights) of the ranker fitted on ``questions``' candidates."""
    feats = np.asarray([x["features"] for q in questions for x in q["candidates"]],
                       dtype=np.float64)
    mean, scale = feats.mean(axis=0), feats.std(axis=0)
    scale[scale == 0] = 1.0
    diffs = pair_examples(questions, margin) / scale
    x = np.vstack([diffs, -diffs])
    y = np.r_[np.ones(len(diffs)), np.zeros(len(diffs))]
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=5000).fit(x, y)
    return mean, scale, model.coef_[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dumps", type=Path, default=ROOT / "build" / "answer_ranker")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--hold-out", nargs="*", default=[])
    ap.add_argument("--margin", type=float, default=0.15)
    ap.add_argument("--c", type=float, default=1.0)
    args = ap.parse_args(argv)
    questions = []
    for stem in books.TUNE:
        if stem in args.hold_out:
            continue
        path = args.dumps / f"{stem}.jsonl"
        if not path.exists():
            print(f"{path} is missing: run tools/answer_ranker_data.py --split tune",
                  file=sys.stderr)
            return 1
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        if any(len(c["features"]) != len(FEATURES) for q in rows for c in q["candidates"]):
            print(f"{path} was dumped with other features: dump it again", file=sys.stderr)
            return 1
        questions += rows
    mean, scale, weights = train(questions, args.margin, args.c)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("wb") as f:
        np.savez(f, features=np.asarray(FEATURES), mean=mean, scale=scale, weights=weights,
                 bias=np.float64(0.0), threshold=np.float64(0.0))
    for name, w in sorted(zip(FEATURES, weights), key=lambda x: -abs(x[1])):
        print(f"{name:15s} {w:+.3f}")
    print(f"{len(questions)} questions -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
