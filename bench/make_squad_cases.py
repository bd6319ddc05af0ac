"""Build the selected-text answer cases from SQuAD 2.0, on demand.

Usage::

    python bench/make_squad_cases.py [--n 200] [--seed 13] [--out bench/results/squad_cases.jsonl]

Reads ``../shared/eval/qa/squad2_dev_half.json`` in place and writes a seeded sample of
``n`` cases, half answerable and half unanswerable, one JSON object a line::

    {"id", "selection" (the paragraph), "question", "answerable": bool,
     "gold_answer": str or null, "gold_answers": [str, ...]}

The output goes to ``bench/results/`` (ignored by git): SQuAD is CC BY-SA evaluation data
and is never committed to the repository, only regenerated from ``../shared/eval``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
SQUAD = BENCH_DIR.parent.parent / "shared" / "eval" / "qa" / "squad2_dev_half.json"
DEFAULT_OUT = BENCH_DIR / "results" / "squad_cases.jsonl"


def make_cases(squad_path: Path = SQUAD, n: int = 200, seed: int = 13) -> list[dict]:
    """``n`` cases (half unanswerable), at most one question per paragraph and kind."""
    data = json.loads(squad_path.read_text(encoding="utf-8"))
    answerable: list[dict] = []
    unanswerable: list[dict] = []
    rng = random.Random(seed)
    for article in data["data"]:
        for para in article["paragraphs"]:
            qas = list(para["qas"])
            rng.shuffle(qas)
            got = {True: False, False: False}
            for qa in qas:
                ok = not qa.get("is_impossible", False)
                if got[ok]:
                    continue
                got[ok] = True
                golds = list(dict.fromkeys(a["text"] for a in qa.get("answers", [])))
                case = {
                    "id": qa["id"],
                    "selection": para["context"],
                    "question": qa["question"],
                    "answerable": ok,
                    "gold_answer": golds[0] if golds else None,
                    "gold_answers": golds,
                }
                (answerable if ok else unanswerable).append(case)
    rng.shuffle(answerable)
    rng.shuffle(unanswerable)
    cases = answerable[: n // 2] + unanswerable[: n - n // 2]
    rng.shuffle(cases)
    return cases


def write_cases(out: Path = DEFAULT_OUT, n: int = 200, seed: int = 13) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    cases = make_cases(SQUAD, n, seed)
    out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not SQUAD.exists():
        print(f"SQuAD not found at {SQUAD} (is ../shared/eval present?)", file=sys.stderr)
        return 2
    path = write_cases(args.out, args.n, args.seed)
    print(f"wrote {args.n} cases to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
