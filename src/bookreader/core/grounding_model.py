"""The learned support decision of the grounding validator.

The validator's window checks (:mod:`bookreader.core.grounding_windows`) measure, for one
answer sentence, how close it is to its best support window (MiniLM cosine), how many
of its words the window and the context hold, whether a negation, a number or a term of
the window is turned around, and so on.  Fixed thresholds on those signals accept only
near-copies: a correct paraphrase or a sentence that joins two sentences of the passage
rarely reaches them.  This module weighs the same signals, plus the cosine of the
sentence to the passage's neighbouring sentences read together (a synthesis is close to
the two or three sentences it joins, not to any one of them) and how much the sentence
that would support it reads as an instruction to the assistant, with a logistic
regression trained by ``tools/train_verifier.py`` (``make train-verifier``) on pairs the
project may tune on.

Status: an experiment, off by default.  Measured (``bench/verifier.py``), these signals
do not separate a correct paraphrase from a swapped term or a negation any better than
the window rules' thresholds do (on the tune pairs, out of fold, the model's balanced
accuracy stayed at or below the rules'), so the app does not load a model and
:class:`~bookreader.core.grounding.GroundingValidator` computes no features unless it is
given one (``model=load_weights(path)``).

Inference is a dot product (numpy only); the extra cost is the embedding of at most a
few joined windows a sentence, cached like every other vector of the validator.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, TypeAlias

from bookreader.core import injection, logistic
from bookreader.core.logistic import LogisticWeights

if TYPE_CHECKING:
    from bookreader.core.grounding import GroundingValidator
    from bookreader.core.grounding_context import Context
    from bookreader.core.grounding_verdict import SentenceScore
    from bookreader.core.grounding_windows import WindowScore

#: Best single sentences around which joined windows (2 and 3 neighbours) are embedded.
JOINED_AROUND = 2
#: Feature names, in the order of the vector (the weights file repeats them).
FEATURES = (
    "rule_ok", "similarity", "joined_similarity", "overlap", "local_overlap",
    "new_coverage", "closest_polarity_ok", "closest_denies", "aligned_swapped",
    "exact_ok", "relation_unstated", "log_terms", "unmatched_terms",
    "support_instruction", "joined_x_overlap", "clauses",
)


#: The learned decision's weights (:class:`~bookreader.core.logistic.LogisticWeights`).
VerifierWeights: TypeAlias = LogisticWeights


def load_weights(path: Path, expected_sha256: str = "") -> VerifierWeights:
    """The weights in the ``.npz`` at ``path`` (checked against ``expected_sha256`` when
    given).

    Raises:
        ModelError: the file is missing, unreadable, not the expected one, or made for
            other features.
    """
    return logistic.load_weights(path, FEATURES, what="The grounding verifier",
                                 remedy="make train-verifier",
                                 expected_sha256=expected_sha256)


def _best(ws: Sequence["WindowScore"], key) -> float:
    return max((key(w) for w in ws), default=0.0)


def joined_similarity(v: "GroundingValidator", sentence: str, ctx: "Context",
                      clauses: Sequence[Sequence["WindowScore"]]) -> float:
    """The best cosine of ``sentence`` to a run of two or three neighbouring support
    sentences around its closest single sentences (or to a single one)."""
    singles = sorted({w.sentences[0] for ws in clauses for w in ws if len(w.sentences) == 1},
                     key=lambda i: -max(w.similarity for ws in clauses for w in ws
                                        if w.sentences == (i,)))[:JOINED_AROUND]
    n = len(ctx.windows)
    runs = set()
    for i in singles:
        for lo, hi in ((i - 1, i + 1), (i, i + 2), (i - 1, i + 2)):
            if lo >= 0 and hi <= n:
                runs.add((lo, hi))
    texts = [" ".join(ctx.windows[lo:hi]) for lo, hi in sorted(runs)]
    best = _best([w for ws in clauses for w in ws if len(w.sentences) == 1],
                 lambda w: w.similarity)
    if not texts:
        return best
    v._embed([sentence] + texts)
    vec = v._vectors[sentence]
    return max([best] + [float(vec @ v._vectors[t]) for t in texts])


def features(v: "GroundingValidator", sentence: str, ctx: "Context", s: "SentenceScore",
             rule_ok: bool) -> tuple[float, ...]:
    """The feature vector (:data:`FEATURES`) of one scored answer sentence."""
    parts = [ws for ws in s.clauses if ws] or [()]
    joined = joined_similarity(v, sentence, ctx, s.clauses) if s.clauses else s.similarity
    new_cov = min(_best(ws, lambda w: w.new_coverage) for ws in parts)
    polarity_ok, denies, swapped, exact_ok, instr = 1.0, 0.0, 0.0, 1.0, 0.0
    model = injection.shipped_weights()
    for ws in parts:
        singles = [w for w in ws if len(w.sentences) == 1]
        if not singles:
            continue
        closest = max(singles, key=lambda w: w.similarity)
        aligned = max(singles, key=lambda w: w.coverage + w.similarity)
        polarity_ok = min(polarity_ok, float(closest.polarity_ok))
        denies = max(denies, float(closest.denies or (not closest.polarity_ok
                                                      and closest.negated)))
        swapped = max(swapped, float(aligned.swapped))
        exact_ok = min(exact_ok, float(aligned.exact_ok))
        instr = max(instr, injection.score(ctx.windows[closest.sentences[0]], model),
                    injection.score(ctx.windows[aligned.sentences[0]], model))
    unmatched = s.n_terms * (1.0 - s.overlap)
    return (float(rule_ok), s.similarity, joined, s.overlap, s.local_overlap, new_cov,
            polarity_ok, denies, swapped, exact_ok, float(s.relation_unstated),
            math.log1p(s.n_terms), min(unmatched, 6.0), instr, joined * s.overlap,
            float(len(s.clauses)))
