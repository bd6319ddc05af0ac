"""How well the grounding validator tells supported answers from invented ones.

Usage::

    python bench/grounding.py [--pairs FILE.jsonl] [--split all|tune|test] [--json]
    python bench/grounding.py --tune            # grid search on the tuning half

``--pairs`` lines are ``{"context", "answer", "supported": bool}`` (other fields ignored).
Two evaluation formats are converted on the fly:

* HaluEval QA (``knowledge``, ``right_answer``, ``hallucinated_answer``; the default,
  ``../shared/eval/grounding/halueval_qa.jsonl``): the right answer is supported by the
  knowledge, the hallucinated one is not.  ``--split tune`` takes the first half of the
  items (used to choose the thresholds), ``--split test`` the second half.
* RGB (``positive``, ``positive_wrong``, ``answer``, ``fakeanswer``): four pairs per item,
  grounding meaning "said by the context", not "true": the positive passages support the
  answer and not the fake answer; the passages with the planted false answer support the
  fake answer and not the real one.

Metrics: ``balanced_accuracy`` (mean of the true-accept and true-reject rates),
``false_accept_rate`` (unsupported answers that pass), ``false_reject_rate`` (supported
answers that fail), ``ms_per_answer`` (validate() wall time after a warm-up, the context's
embeddings cached across the two answers of an item as in the answerer) and ``n``.
Prints a table, or JSON with ``--json``; writes ``bench/results/grounding_<name>.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Iterable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
EVAL_DIR = BENCH_DIR.parent.parent / "shared" / "eval"
DEFAULT_PAIRS = EVAL_DIR / "grounding" / "halueval_qa.jsonl"

Pair = tuple[str, str, bool]  # context, answer, supported


def _first(value) -> str:
    while isinstance(value, list):
        value = value[0] if value else ""
    return str(value)


def convert(row: dict) -> list[Pair]:
    """The pairs of one input line, whichever of the three formats it is in."""
    if "knowledge" in row and "right_answer" in row:
        return [
            (row["knowledge"], row["right_answer"], True),
            (row["knowledge"], row["hallucinated_answer"], False),
        ]
    if "positive" in row and "fakeanswer" in row:
        pos = " ".join(row["positive"])
        wrong = " ".join(row.get("positive_wrong") or [])
        answer, fake = _first(row["answer"]), _first(row["fakeanswer"])
        pairs = [(pos, answer, True), (pos, fake, False)]
        if wrong:
            pairs += [(wrong, fake, True), (wrong, answer, False)]
        return pairs
    return [(row["context"], row["answer"], bool(row["supported"]))]


def load_pairs(path: Path, split: str = "all") -> list[Pair]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    half = len(rows) // 2
    if split == "tune":
        rows = rows[:half]
    elif split == "test":
        rows = rows[half:]
    return [p for row in rows for p in convert(row)]


def metrics(labels: Iterable[bool], verdicts: Iterable[bool]) -> dict:
    tp = fn = tn = fp = 0
    for gold, ok in zip(labels, verdicts):
        if gold and ok:
            tp += 1
        elif gold:
            fn += 1
        elif ok:
            fp += 1
        else:
            tn += 1
    pos, neg = tp + fn, tn + fp
    tpr = tp / pos if pos else 0.0
    tnr = tn / neg if neg else 0.0
    return {
        "balanced_accuracy": round((tpr + tnr) / 2, 4),
        "false_accept_rate": round(fp / neg if neg else 0.0, 4),
        "false_reject_rate": round(fn / pos if pos else 0.0, 4),
        "n": pos + neg,
    }


def run(pairs: list[Pair], validator) -> dict:
    validator.validate("warm up", "Warm up the model.")
    verdicts, total_ms = [], 0.0
    for context, answer, _ in pairs:
        t0 = time.perf_counter()
        v = validator.validate(answer, context)
        total_ms += (time.perf_counter() - t0) * 1000.0
        verdicts.append(v.passed)
    out = metrics([p[2] for p in pairs], verdicts)
    out["ms_per_answer"] = round(total_ms / max(1, len(pairs)), 2)
    return out


def tune(pairs: list[Pair], validator) -> list[dict]:
    """Grid search over the thresholds, on sentence scores computed once."""
    scored = [
        (validator.score_sentences(validator.answer_sentences(a), c), gold) for c, a, gold in pairs
    ]
    results = []
    for local_t, para_sim, para_ov in itertools.product(
        (0.6, 0.7, 0.75, 0.8, 0.9, 1.0),
        (0.8, 0.85, 0.9, 0.95, 1.01),
        (0.0, 0.5, 0.75),
    ):
        validator.local_overlap_threshold = local_t
        validator.paraphrase_similarity = para_sim
        validator.paraphrase_min_overlap = para_ov
        verdicts = [
            bool(sents)
            and all(
                validator.is_supported(
                    s.similarity, s.overlap, s.missing, s.n_terms, s.local_overlap,
                    relation_unstated=s.relation_unstated,
                )
                for s in sents
            )
            for sents, _ in scored
        ]
        m = metrics([g for _, g in scored], verdicts)
        m.update(local_overlap=local_t, paraphrase_similarity=para_sim,
                 paraphrase_min_overlap=para_ov)
        results.append(m)
    results.sort(key=lambda m: (-m["balanced_accuracy"], m["false_accept_rate"]))
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    ap.add_argument("--split", choices=("all", "tune", "test"), default="all")
    ap.add_argument("--limit", type=int, default=0, help="only the first N pairs")
    ap.add_argument("--similarity", type=float, default=None)
    ap.add_argument("--overlap", type=float, default=None)
    ap.add_argument("--tune", action="store_true", help="grid search (default split: tune)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.pairs.exists():
        print(f"No pairs file at {args.pairs} (is ../shared/eval present?)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(BENCH_DIR.parent / "src"))
    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.grounding import GroundingValidator

    split = "tune" if args.tune and args.split == "all" else args.split
    pairs = load_pairs(args.pairs, split)
    if args.limit:
        pairs = pairs[: args.limit]
    kw = {}
    if args.similarity is not None:
        kw["similarity_threshold"] = args.similarity
    if args.overlap is not None:
        kw["overlap_threshold"] = args.overlap
    # The validator's own int8 copy of MiniLM, as the app uses (see MiniLMEmbedder.quantized_copy).
    validator = GroundingValidator(MiniLMEmbedder().quantized_copy(), **kw)
    name = f"{args.pairs.stem}_{split}"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    if args.tune:
        results = tune(pairs, validator)
        (RESULTS_DIR / f"grounding_tune_{name}.json").write_text(json.dumps(results, indent=1))
        if args.json:
            print(json.dumps(results[:20], indent=1))
        else:
            print("| local overlap | para. similarity | para. overlap | balanced acc. "
                  "| false accept | false reject |")
            print("|---|---|---|---|---|---|")
            for m in results[:15]:
                print(
                    f"| {m['local_overlap']} | {m['paraphrase_similarity']} | "
                    f"{m['paraphrase_min_overlap']} | "
                    f"{m['balanced_accuracy']:.3f} | {m['false_accept_rate']:.3f} | "
                    f"{m['false_reject_rate']:.3f} |"
                )
        return 0
    result = run(pairs, validator)
    result.update(
        pairs=str(args.pairs), split=split,
        similarity_threshold=validator.similarity_threshold,
        overlap_threshold=validator.overlap_threshold,
    )
    (RESULTS_DIR / f"grounding_{name}.json").write_text(json.dumps(result, indent=1))
    if args.json:
        print(json.dumps(result))
    else:
        print("| pairs | split | n | balanced acc. | false accept | false reject | ms/answer |")
        print("|---|---|---|---|---|---|---|")
        print(
            f"| {args.pairs.name} | {split} | {result['n']} | {result['balanced_accuracy']:.3f} | "
            f"{result['false_accept_rate']:.3f} | {result['false_reject_rate']:.3f} | "
            f"{result['ms_per_answer']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
