"""Calibrate the retrieval confidence: where should "not covered in this book" start?

Usage::

    python bench/calibrate_confidence.py [--data-dir DIR] [--books thinkjava2 py4e ...] [--json]

For every shared book (``../shared/eval/books/<name>.pdf``) with a question file
(``bench/questions/<name>.jsonl``: ``{"question", "gold_pages"}``, empty gold = out of
scope), the book is ingested (or reused from ``--data-dir``) and every question searched.
Two more kinds of out-of-scope question are added: the out-of-scope lines of every file,
and the in-scope questions of a book on another subject (the Physical AI textbook's
questions asked of the programming books and the reverse).

For each search the script records the features the confidence is made of (the best raw
cosine among the top three passages, and the share of question terms found in them),
then grid-searches the constants of :func:`bookreader.core.retrieval.retrieval_confidence`
for the best balanced accuracy (in-scope kept, out-of-scope declined) at the fixed
threshold of 0.60, and prints both the current constants' figures and the best found.
Results go to ``bench/results/confidence_calibration.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH = Path(__file__).resolve().parent
EVAL_BOOKS = BENCH.parent.parent / "shared" / "eval" / "books"
QUESTIONS = BENCH / "questions"
RESULTS = BENCH / "results"
BOOKS = ("thinkjava2", "py4e", "physical_ai_textbook")
#: Books on another subject: their in-scope questions are out of scope for each other.
OTHER_SUBJECT = {
    "thinkjava2": ("physical_ai_textbook",),
    "py4e": ("physical_ai_textbook",),
    "physical_ai_textbook": ("thinkjava2", "py4e"),
}
THRESHOLD = 0.60


def load_questions(name: str) -> list[dict]:
    path = QUESTIONS / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def features(lib, book_id: str, question: str) -> tuple[float, float]:
    """(best raw cosine of the top passages, query-term coverage of the top passages)."""
    _, feats = lib.retriever(book_id).explain(question, top_k=5)
    return feats["top_cos"], feats["coverage"]


def evaluate(rows: list[dict], mid: float, slope: float, cov_slope: float) -> dict:
    def conf(row):
        z = slope * (row["cos"] - mid) + cov_slope * (row["coverage"] - 0.5)
        return 1.0 / (1.0 + math.exp(-z))

    ins = [r for r in rows if r["in_scope"]]
    outs = [r for r in rows if not r["in_scope"]]
    own = [r for r in outs if r["origin"] == "own"]
    other = [r for r in outs if r["origin"] != "own"]

    def share(group, keep):
        return round(sum((conf(r) >= THRESHOLD) == keep for r in group) / max(1, len(group)), 4)

    kept, declined = share(ins, True), share(outs, False)
    return {"in_scope_kept": kept, "out_of_scope_declined": declined,
            "own_out_of_scope_declined": share(own, False),
            "other_subject_declined": share(other, False),
            "balanced_accuracy": round((kept + declined) / 2, 4)}


def main(argv=None) -> int:
    from bookreader.config import Settings
    from bookreader.core import retrieval
    from bookreader.library import Library

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=str(RESULTS / "cache"))
    ap.add_argument("--books", nargs="*", default=list(BOOKS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    settings = Settings(data_dir=Path(args.data_dir))
    rows: list[dict] = []
    with Library(settings) as lib:
        ids = {}
        for name in args.books:
            pdf = EVAL_BOOKS / f"{name}.pdf"
            if not pdf.exists():
                print(f"skipping {name}: {pdf} not found", file=sys.stderr)
                continue
            ids[name] = lib.ingest(pdf).book_id
        for name, book_id in ids.items():
            asked = [(q["question"], bool(q["gold_pages"]), "own") for q in load_questions(name)]
            for other in OTHER_SUBJECT.get(name, ()):
                asked += [(q["question"], False, f"from {other}")
                          for q in load_questions(other) if q["gold_pages"]]
            for question, in_scope, origin in asked:
                cos, cov = features(lib, book_id, question)
                rows.append({"book": name, "question": question, "in_scope": in_scope,
                             "origin": origin, "cos": round(cos, 4), "coverage": round(cov, 4)})

    current = evaluate(rows, retrieval.COS_MID, retrieval.COS_SLOPE, retrieval.COVERAGE_SLOPE)
    best = None
    for mid, slope, cov_slope in itertools.product(
        [x / 100 for x in range(25, 61, 1)], [6.0, 8.0, 10.0, 12.0, 16.0, 20.0],
        [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0],
    ):
        result = evaluate(rows, mid, slope, cov_slope)
        key = (result["balanced_accuracy"], result["in_scope_kept"])
        if best is None or key > best[0]:
            best = (key, {"cos_mid": mid, "cos_slope": slope, "coverage_slope": cov_slope, **result})
    per_book = {
        name: evaluate([r for r in rows if r["book"] == name], retrieval.COS_MID,
                       retrieval.COS_SLOPE, retrieval.COVERAGE_SLOPE)
        for name in {r["book"] for r in rows}
    }
    out = {
        "threshold": THRESHOLD,
        "n_in_scope": sum(r["in_scope"] for r in rows),
        "n_out_of_scope": sum(not r["in_scope"] for r in rows),
        "current": {"cos_mid": retrieval.COS_MID, "cos_slope": retrieval.COS_SLOPE,
                    "coverage_slope": retrieval.COVERAGE_SLOPE, **current},
        "per_book_current": per_book,
        "best": best[1] if best else None,
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "confidence_calibration.json").write_text(json.dumps(out, indent=2))
    if args.json:
        print(json.dumps({k: v for k, v in out.items() if k != "rows"}, indent=2))
        return 0
    print(f"{out['n_in_scope']} in-scope and {out['n_out_of_scope']} out-of-scope questions, "
          f"threshold {THRESHOLD}")
    print(f"{'constants':<40} {'kept':>6} {'declined':>9} {'own':>6} {'other':>6} {'bal.acc':>8}")

    def line(label, res):
        print(f"{label:<40} {res['in_scope_kept']:>6.3f} {res['out_of_scope_declined']:>9.3f} "
              f"{res['own_out_of_scope_declined']:>6.3f} {res['other_subject_declined']:>6.3f} "
              f"{res['balanced_accuracy']:>8.3f}")

    for label, res in (("current", out["current"]), ("best of grid", out["best"])):
        line(f"{label}: mid={res['cos_mid']} slope={res['cos_slope']} "
             f"cov={res['coverage_slope']}", res)
    for name, res in sorted(per_book.items()):
        line(f"  {name} (current)", res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
