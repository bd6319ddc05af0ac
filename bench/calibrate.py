"""Calibrate the retrieval confidence threshold on the shared books' question files.

Usage::

    python bench/calibrate.py [--json] [--data-dir DIR] [--book PDF --questions FILE ...]

By default it runs the three shared books (Think Java, Python for Everybody, the Physical
AI textbook) with ``bench/questions/<book>.jsonl`` (in-scope questions and "far"
out-of-scope ones about other subjects) and, when present, ``bench/questions/near/<book>.jsonl``
("near" out-of-scope questions: the book's own field, topics it does not cover, checked
by the absence of their key terms from the whole book).  For every question it records the
hybrid retrieval's ``confidence`` (the formula in ``core/retrieval.py``) and raw evidence
the formula could use:

* ``top_cos``: the best raw cosine between the question and a chunk (dense pool);
* ``top3_cos``: the best raw cosine among the top three hybrid passages (what the current
  formula uses);
* ``coverage``: share of the question's BM25 terms found in the top three passages;
* ``book_idf_coverage``: IDF-weighted share of the question's terms that occur anywhere
  in the book (a term the book never uses is strong evidence the question is elsewhere);
* ``top_bm25``: the best raw BM25 score.

It then sweeps the threshold from 0 to 1 and prints, per book and pooled, the share of
in-scope questions accepted and of out-of-scope questions declined, the ROC AUC of each
feature, and a recommended threshold: pooled over the books, the one that declines the
most out-of-scope questions while accepting at least 95% of the in-scope ones (ties go to
the threshold nearest the design's 0.60); the threshold with the best balanced accuracy
(mean of the two shares) is reported too.

It also fits a prototype alternative (logistic regression on ``top3_cos``, ``coverage`` and
``book_idf_coverage``) with leave-one-book-out cross-validation, so the figures reported
for it are for books it was not fitted on.

Results: a table (or JSON with ``--json``), ``bench/results/calibration.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval as bench_retrieval  # noqa: E402  (bench/retrieval.py)

BENCH_DIR = Path(__file__).resolve().parent
EVAL_BOOKS = BENCH_DIR.parent.parent / "shared" / "eval" / "books"
DEFAULT_BOOKS = ("thinkjava2", "py4e", "physical_ai_textbook")
QUESTIONS_DIR = BENCH_DIR / "questions"
THRESHOLDS = [round(t * 0.05, 2) for t in range(21)]
FEATURES = ("confidence", "top_cos", "top3_cos", "coverage", "book_idf_coverage", "top_bm25")
MODEL_FEATURES = ("top3_cos", "coverage", "book_idf_coverage")
DESIGN_THRESHOLD = 0.60
#: Share of in-scope questions the recommended threshold must still accept.
MIN_ACCEPT = 0.95


@dataclass
class Sample:
    book: str
    question: str
    in_scope: bool
    kind: str  # "in", "far" (another subject) or "near" (same field, not in the book)
    confidence: float
    top_cos: float
    top3_cos: float
    coverage: float
    book_idf_coverage: float
    top_bm25: float
    hit_at_5: bool


# --- features --------------------------------------------------------------------------------
class BookVocabulary:
    """Document frequencies of the book's BM25 terms, for IDF-weighted coverage."""

    def __init__(self, texts: Sequence[str]) -> None:
        from bookreader.core.lexical import tokenize

        self.n_docs = max(1, len(texts))
        self.df: dict[str, int] = {}
        for text in texts:
            for term in set(tokenize(text)):
                self.df[term] = self.df.get(term, 0) + 1

    def idf(self, term: str) -> float:
        """Smoothed IDF; a term absent from the book gets the largest value."""
        return math.log((self.n_docs + 1) / (self.df.get(term, 0) + 0.5))

    def coverage(self, query: str) -> float:
        """IDF mass of the query's terms found in the book / IDF mass of all its terms."""
        from bookreader.core.lexical import tokenize

        terms = set(tokenize(query))
        if not terms:
            return 0.0
        total = sum(self.idf(t) for t in terms)
        found = sum(self.idf(t) for t in terms if t in self.df)
        return found / total if total > 0 else 0.0


def collect(
    book: Path, questions_path: Path, data_dir: Path, near_path: Optional[Path] = None
) -> list[Sample]:
    """Run one book's questions (and near-domain ones) and record confidence and features."""
    from bookreader.core.retrieval import COVERAGE_DEPTH
    from bookreader.core.retrieval_terms import term_coverage

    questions = [(q, "in" if q.in_scope else "far")
                 for q in bench_retrieval.load_questions(questions_path)]
    if near_path is not None and near_path.is_file():
        questions += [(q, "near") for q in bench_retrieval.load_questions(near_path)
                      if not q.in_scope]
    library, info, _ = bench_retrieval.open_library(book, data_dir)
    samples = []
    try:
        retriever = library.retriever(info.book_id)
        vocab = BookVocabulary([c.text for c in retriever.lexical.chunks])
        for q, kind in questions:
            r = library.search(info.book_id, q.question, top_k=5)
            qvec = retriever.embedder.embed([q.question])[0]
            dense = retriever.store.search(qvec, 50, None)
            cos = {c.chunk_id: float(s) for c, s in dense}
            top3 = r.passages[:COVERAGE_DEPTH]
            bm25 = retriever.lexical.scores(q.question, None, top_k=1)
            spans = [(p.chunk.page_start, p.chunk.page_end) for p in r.passages]
            samples.append(Sample(
                book=book.stem,
                question=q.question,
                in_scope=q.in_scope,
                kind=kind,
                confidence=r.confidence,
                top_cos=max(cos.values(), default=0.0),
                top3_cos=max((cos.get(p.chunk.chunk_id, 0.0) for p in top3), default=0.0),
                coverage=term_coverage(q.question, [p.chunk.text for p in top3]),
                book_idf_coverage=vocab.coverage(q.question),
                top_bm25=bm25[0][1] if bm25 else 0.0,
                hit_at_5=q.in_scope and bench_retrieval.first_hit_rank(spans, q.gold_pages) is not None,
            ))
    finally:
        library.close()
    return samples


# --- curves and scores ------------------------------------------------------------------------
def sweep(scores_in: Sequence[float], scores_out: Sequence[float]) -> list[dict]:
    """For each threshold: share of in-scope accepted (>= t) and out-of-scope declined (< t)."""
    rows = []
    for t in THRESHOLDS:
        acc = sum(s >= t for s in scores_in) / len(scores_in) if scores_in else 0.0
        dec = sum(s < t for s in scores_out) / len(scores_out) if scores_out else 0.0
        rows.append({"threshold": t, "in_scope_accepted": round(acc, 4),
                     "out_of_scope_declined": round(dec, 4),
                     "balanced": round((acc + dec) / 2, 4)})
    return rows


def recommend(rows: list[dict], min_accept: float = None) -> dict:
    """The threshold that declines the most out-of-scope questions while still accepting
    at least ``min_accept`` of the in-scope ones (a wrongly declined question is what a
    student notices first; a wrongly accepted one still meets the grounding validator).
    Ties go to the threshold nearest 0.60; when no threshold keeps ``min_accept``, the one
    with the best balanced accuracy."""
    min_accept = MIN_ACCEPT if min_accept is None else min_accept
    ok = [r for r in rows if r["in_scope_accepted"] >= min_accept and r["threshold"] > 0]
    if ok:
        return max(ok, key=lambda r: (r["out_of_scope_declined"],
                                      -abs(r["threshold"] - DESIGN_THRESHOLD)))
    return best_balanced(rows)


def best_balanced(rows: list[dict]) -> dict:
    """The row with the best balanced accuracy; ties go to the threshold nearest 0.60."""
    return max(rows, key=lambda r: (r["balanced"], -abs(r["threshold"] - DESIGN_THRESHOLD)))


def roc_auc(scores_in: Sequence[float], scores_out: Sequence[float]) -> float:
    """Probability that a random in-scope question scores above a random out-of-scope one."""
    if not scores_in or not scores_out:
        return float("nan")
    wins = 0.0
    for a in scores_in:
        for b in scores_out:
            wins += 1.0 if a > b else 0.5 if a == b else 0.0
    return wins / (len(scores_in) * len(scores_out))


# --- prototype formula ------------------------------------------------------------------------
def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 4000) -> np.ndarray:
    """Weights (bias last) of an L2-regularised logistic regression, by gradient descent.

    Classes are weighted equally, whatever their sizes, so the fitted 0.5 point balances
    accepting in-scope and declining out-of-scope questions.
    """
    xb = np.hstack([x, np.ones((len(x), 1))])
    pos = max(1, int(y.sum()))
    neg = max(1, int(len(y) - y.sum()))
    sample_w = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * neg))
    w = np.zeros(xb.shape[1])
    lr = 0.5
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (sample_w * (p - y)) / len(y) + l2 * np.r_[w[:-1], 0.0]
        w -= lr * grad
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    xb = np.hstack([x, np.ones((len(x), 1))])
    return 1.0 / (1.0 + np.exp(-(xb @ w)))


def features_matrix(samples: Sequence[Sample]) -> np.ndarray:
    return np.array([[getattr(s, f) for f in MODEL_FEATURES] for s in samples], dtype=float)


def prototype(samples: list[Sample]) -> dict:
    """Leave-one-book-out scores of the prototype, and its weights fitted on all books."""
    books = sorted({s.book for s in samples})
    held_out: dict[int, float] = {}
    for b in books:
        train = [s for s in samples if s.book != b]
        if len({s.in_scope for s in train}) < 2:
            continue
        w = fit_logistic(features_matrix(train), np.array([s.in_scope for s in train], float))
        test_idx = [i for i, s in enumerate(samples) if s.book == b]
        probs = predict(w, features_matrix([samples[i] for i in test_idx]))
        held_out.update({i: float(p) for i, p in zip(test_idx, probs)})
    w_all = fit_logistic(features_matrix(samples), np.array([s.in_scope for s in samples], float))
    return {
        "features": list(MODEL_FEATURES),
        "weights": [round(float(v), 3) for v in w_all[:-1]],
        "bias": round(float(w_all[-1]), 3),
        "held_out_scores": held_out,
    }


# --- report ------------------------------------------------------------------------------------
def analyse(samples: list[Sample]) -> dict:
    """Curves, AUCs and recommendations for the current formula and the prototype.

    Out-of-scope questions are split into "far" (other subjects) and "near" (the book's
    field, not covered); curves and AUCs are given against each and against both ("all"),
    and the recommendation uses "all" pooled over the books.
    """
    proto = prototype(samples)
    held = proto.pop("held_out_scores")
    report: dict = {"books": {}, "prototype": proto}
    groups = {b: [i for i, s in enumerate(samples) if s.book == b]
              for b in sorted({s.book for s in samples})}
    groups["pooled"] = list(range(len(samples)))
    for name, idx in groups.items():
        ins = [i for i in idx if samples[i].in_scope]
        entry: dict = {"in_scope": len(ins)}
        for label, kinds in (("far", ("far",)), ("near", ("near",)), ("all", ("far", "near"))):
            outs = [i for i in idx if samples[i].kind in kinds]
            entry[f"out_of_scope_{label}"] = len(outs)
            if not outs:
                continue
            auc = {f: round(roc_auc([getattr(samples[i], f) for i in ins],
                                    [getattr(samples[i], f) for i in outs]), 4) for f in FEATURES}
            auc["prototype_held_out"] = round(roc_auc(
                [held[i] for i in ins if i in held], [held[i] for i in outs if i in held]), 4)
            cur = sweep([samples[i].confidence for i in ins], [samples[i].confidence for i in outs])
            pro = sweep([held[i] for i in ins if i in held], [held[i] for i in outs if i in held])
            entry[label] = {
                "auc": auc,
                "current_curve": cur,
                "prototype_curve": pro,
                "current_recommended": recommend(cur),
                "current_best_balanced": best_balanced(cur),
                "prototype_recommended": recommend(pro),
                "current_at_design": next(r for r in cur if r["threshold"] == DESIGN_THRESHOLD),
            }
        # Of the in-scope questions whose passages were right (hit@5), the share accepted
        # at the recommended threshold: declining those throws a good answer away.
        if "all" in entry:
            t = entry["all"]["current_recommended"]["threshold"]
            hits = [samples[i] for i in ins if samples[i].hit_at_5]
            entry["hit5_in_scope"] = len(hits)
            entry["hit5_accepted_at_recommended"] = (
                round(sum(s.confidence >= t for s in hits) / len(hits), 4) if hits else None)
        report["books"][name] = entry
    pooled = report["books"]["pooled"]
    report["recommended_threshold"] = pooled["all"]["current_recommended"]["threshold"]
    report["prototype_recommended_threshold"] = pooled["all"]["prototype_recommended"]["threshold"]
    return report


def _curve_rows(label: str, curve: list[dict]) -> list[str]:
    return [
        f"| {label} accepted | " + " | ".join(f"{r['in_scope_accepted']:.2f}" for r in curve) + " |",
        f"| {label} declined | " + " | ".join(f"{r['out_of_scope_declined']:.2f}" for r in curve) + " |",
    ]


def format_report(report: dict) -> str:
    lines = ["### Confidence calibration", "",
             "AUC: chance that an in-scope question scores above an out-of-scope one "
             "(far = other subjects, near = the book's field but not in the book).", "",
             "| book | in | far | near | AUC conf far | AUC conf near | AUC top_cos near "
             "| AUC coverage near | AUC prototype near (held out) | recommended t "
             "| accepted | declined far / near | at 0.60: accepted, declined far / near |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, e in report["books"].items():
        far, near, both = e.get("far"), e.get("near"), e.get("all")
        if not both:
            continue
        t = both["current_recommended"]["threshold"]

        def declined_at(part, thr):
            if not part:
                return float("nan")
            return next(r for r in part["current_curve"] if r["threshold"] == thr)[
                "out_of_scope_declined"]

        acc_t = both["current_recommended"]["in_scope_accepted"]
        acc_d = both["current_at_design"]["in_scope_accepted"]
        na = near["auc"] if near else {k: float("nan") for k in far["auc"]}
        lines.append(
            f"| {name} | {e['in_scope']} | {e['out_of_scope_far']} | {e['out_of_scope_near']} "
            f"| {far['auc']['confidence']:.3f} | {na['confidence']:.3f} | {na['top_cos']:.3f} "
            f"| {na['coverage']:.3f} | {na['prototype_held_out']:.3f} | {t:.2f} | {acc_t:.1%} "
            f"| {declined_at(far, t):.1%} / {declined_at(near, t):.1%} "
            f"| {acc_d:.1%}, {declined_at(far, DESIGN_THRESHOLD):.1%} / "
            f"{declined_at(near, DESIGN_THRESHOLD):.1%} |")
    pooled = report["books"]["pooled"]
    ts = [r["threshold"] for r in pooled["all"]["current_curve"]]
    lines += ["", "Pooled trade-off by threshold (in-scope accepted / out-of-scope declined):", "",
              "| t | " + " | ".join(f"{t:.2f}" for t in ts) + " |",
              "|---|" + "---|" * len(ts)]
    for label in ("far", "near"):
        if label in pooled:
            lines += _curve_rows(f"current vs {label}", pooled[label]["current_curve"])
    if "near" in pooled:
        lines += _curve_rows("prototype vs near", pooled["near"]["prototype_curve"])
    p = report["prototype"]
    terms = " ".join(f"{w:+.2f}*{f}" for w, f in zip(p["weights"], p["features"]))
    bb = pooled["all"]["current_best_balanced"]
    lines += ["", f"Recommended threshold (current formula, pooled, far + near, keeping >= "
              f"{MIN_ACCEPT:.0%} of in-scope): **{report['recommended_threshold']:.2f}**; "
              f"best balanced accuracy at {bb['threshold']:.2f} ({bb['in_scope_accepted']:.1%} "
              f"accepted, {bb['out_of_scope_declined']:.1%} declined)",
              f"Prototype (leave-one-book-out): sigmoid({terms} {p['bias']:+.2f}); "
              f"best pooled threshold {report['prototype_recommended_threshold']:.2f}"]
    return "\n".join(lines)


def default_pairs() -> list[tuple[Path, Path]]:
    pairs = []
    for stem in DEFAULT_BOOKS:
        book = EVAL_BOOKS / f"{stem}.pdf"
        questions = QUESTIONS_DIR / f"{stem}.jsonl"
        if book.is_file() and questions.is_file():
            pairs.append((book, questions))
        else:
            print(f"Skipping {stem}: {book} or {questions} is missing.", file=sys.stderr)
    return pairs


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Sweep the retrieval confidence threshold.")
    ap.add_argument("--book", type=Path, action="append", default=[], help="a PDF (repeatable)")
    ap.add_argument("--questions", type=Path, action="append", default=[],
                    help="its question file (repeatable, same order as --book)")
    ap.add_argument("--data-dir", type=Path, default=bench_retrieval.DEFAULT_CACHE)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=bench_retrieval.RESULTS_DIR / "calibration.json")
    args = ap.parse_args(argv)

    if len(args.book) != len(args.questions):
        print("Give one --questions file for every --book.", file=sys.stderr)
        return 2
    pairs = list(zip(args.book, args.questions)) or default_pairs()
    if not pairs:
        print("No book with a question file to calibrate on.", file=sys.stderr)
        return 2
    samples: list[Sample] = []
    for book, questions in pairs:
        near = QUESTIONS_DIR / "near" / questions.name
        samples += collect(book, questions, args.data_dir, near)
    report = analyse(samples)
    report["samples"] = [asdict(s) for s in samples]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=2))
    else:
        print(format_report(report))
        print(f"\n(written to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
