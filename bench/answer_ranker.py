"""How often the top-ranked sentence states the answer, by the hand score and the learned ranker.

Usage::

    python bench/answer_ranker.py [--split report|tune] [--dumps build/answer_ranker]
        [--weights 0,0.25,0.5,1,2] [--model PATH]

Reads the candidates dumped by ``tools/answer_ranker_data.py`` (the sentences the extractive
answer ranked for each in-scope bench question, with their hand-weighted score), scores
them with the learned ranker (:mod:`bookreader.core.llm.answer_ranker`; ``--model`` for a
file other than the shipped one) and prints per book and pooled, for the hand score plus
each weight times the ranker's probability (``learned`` alone last):

* ``states``: questions whose top sentence holds at least 0.4 of the gold answer's content
  words beyond the question's own (``tools/train_answer_ranker.py``: ``novel_share``);
* ``share``: the mean gold share (``bench/answer_quality.py``'s rule) of the top sentence
  with the sentence after it.

``--model 'build/cv_{book}.safetensors'`` measures leave-one-book-out models, each on
the book it was trained without.  A proxy for the answers (the full answer adds continuations and other sentences); the
figures of record are ``bench/answer_quality.py``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(BENCH))

import books  # noqa: E402


def ceiling(args, gold_share, novel_share, positive: float) -> int:
    """Per book and pooled: questions with candidates; those whose top-ranked (hand score)
    sentence states the answer; those where some candidate does; those where some candidate
    with the sentence after it holds half the gold answer's words; the answers shown correct."""
    pooled = [0] * 5
    for stem in books.SPLITS[args.split]:
        path = args.dumps / f"{stem}.jsonl"
        if not path.is_file():
            print(f"skipping {stem}: no dump {path}", file=sys.stderr)
            continue
        k = [0] * 5
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            cands = row["candidates"]
            k[4] += row["outcome"] == "answer" and row["share"] >= 0.5
            if not cands or not row["gold"]:
                continue
            k[0] += 1
            states = [novel_share(c["sentence"], row["question"], row["gold"]) >= positive
                      for c in cands]
            k[1] += states[max(range(len(cands)), key=lambda i: cands[i]["score"])]
            k[2] += any(states)
            k[3] += any(gold_share(" ".join([c["sentence"], *c["next"][:1]]), row["gold"])
                        >= 0.5 for c in cands)
        pooled = [a + b for a, b in zip(pooled, k)]
        print(f"{stem:36s} with candidates {k[0]:3d}  top states {k[1]:3d}  "
              f"some states {k[2]:3d}  some + next holds half {k[3]:3d}  shown correct {k[4]:3d}")
    print(f"{'POOLED':36s} with candidates {pooled[0]:3d}  top states {pooled[1]:3d}  "
          f"some states {pooled[2]:3d}  some + next holds half {pooled[3]:3d}  "
          f"shown correct {pooled[4]:3d}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--split", choices=sorted(books.SPLITS), default="report")
    ap.add_argument("--dumps", type=Path, default=ROOT / "build" / "answer_ranker")
    ap.add_argument("--weights", default="0,0.25,0.5,1,2")
    ap.add_argument("--ceiling", action="store_true",
                    help="print only what the best candidate reaches (no model needed)")
    ap.add_argument("--model", default=None,
                    help="weights file other than the shipped one; a {book} in it is "
                         "replaced by each book's name (models trained without that book)")
    args = ap.parse_args(argv)
    from answer_quality import gold_share
    from train_answer_ranker import POSITIVE_SHARE, novel_share

    from bookreader.core.llm.answer_ranker import AnswerRanker

    if args.ceiling:
        return ceiling(args, gold_share, novel_share, POSITIVE_SHARE)
    shipped = None if args.model else AnswerRanker()
    weights = [float(w) for w in args.weights.split(",")]
    methods = [f"hand+{w:g}" for w in weights] + ["learned"]
    pooled = {m: [0, 0.0] for m in methods}
    total = 0
    print(f"{'book':36s} " + " ".join(f"{m:>16s}" for m in methods))
    for stem in books.SPLITS[args.split]:
        path = args.dumps / f"{stem}.jsonl"
        if not path.is_file():
            print(f"skipping {stem}: no dump {path} (tools/answer_ranker_data.py)",
                  file=sys.stderr)
            continue
        ranker = shipped or AnswerRanker(Path(args.model.replace("{book}", stem)))
        per = {m: [0, 0.0] for m in methods}
        n = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            cands = row["candidates"]
            if not cands or not row["gold"]:
                continue
            n += 1
            probs = ranker.probabilities(row["question"],
                                         [(c["sentence"], c["heading"]) for c in cands])
            for m in methods:
                if m == "learned":
                    key = probs
                else:
                    w = float(m.split("+")[1])
                    key = [c["score"] + w * p for c, p in zip(cands, probs)]
                top = cands[max(range(len(cands)), key=lambda i: key[i])]
                per[m][0] += novel_share(top["sentence"], row["question"],
                                         row["gold"]) >= POSITIVE_SHARE
                per[m][1] += gold_share(" ".join([top["sentence"], *top["next"][:1]]),
                                        row["gold"])
        total += n
        for m in methods:
            pooled[m][0] += per[m][0]
            pooled[m][1] += per[m][1]
        print(f"{stem:36s} " + " ".join(
            f"{per[m][0]:3d}/{n:<3d} {per[m][1] / max(1, n):.2f}".rjust(16) for m in methods),
            flush=True)
    print(f"{'POOLED':36s} " + " ".join(
        f"{pooled[m][0]:3d}/{total:<3d} {pooled[m][1] / max(1, total):.2f}".rjust(16)
        for m in methods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
