"""Retrieval quality and speed on one book: dense only, BM25 only and hybrid.

Usage::

    python bench/retrieval.py --book ../shared/eval/books/thinkjava2.pdf \
        --questions bench/questions/thinkjava2.jsonl [--json] [--data-dir DIR]

The question file has one JSON object a line: ``{"question": str, "gold_pages": [0-based
physical pages]}``; an empty ``gold_pages`` marks a question the book does not cover
(out of scope).  Other fields are ignored.

Metrics (in-scope questions only):

* ``recall@k``: share of questions for which one of the top ``k`` chunks' page spans
  ``[page_start, page_end]`` meets the gold pages;
* ``mrr@10``: mean of 1/rank of the first such chunk in the top 10 (0 when none).

The hybrid ranking's figures are also given for the tune and held-out halves of the
in-scope questions (``hybrid_tune``: even positions, ``hybrid_test``: odd positions, the
split of ``bench/answer_quality.py``): tune a ranking rule on one, confirm on the other.

They are computed for three rankings of the same index: hybrid (the settings' dense
weight, 0.85 by default), dense only (dense weight 1.0) and BM25 only (dense weight 0.0),
all through :class:`bookreader.core.retrieval.HybridRetriever`.

Out-of-scope handling: ``out_of_scope_declined`` is the share of out-of-scope questions
whose hybrid retrieval confidence is below the threshold (``--threshold``, default the
settings' ``confidence_threshold``), and ``in_scope_declined`` the share of in-scope
questions wrongly declined.  ``search_ms_p50``/``p95`` time :meth:`Library.search` (the
hybrid search a user runs, query embedding included) after a warm-up.

The index lives in ``--data-dir`` (default ``bench/results/cache``) and is reused when
the book is already ingested there, so reruns are quick.  Results are printed as a table
(or JSON with ``--json``) and written to ``bench/results/retrieval_<book>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
DEFAULT_CACHE = RESULTS_DIR / "cache"
RANK_DEPTH = 10  # passages retrieved per question (MRR@10 needs ten)
WARMUP_QUERIES = 5
BENCH_TIMEOUT_S = 120.0
RETRIEVERS = ("hybrid", "dense", "bm25")

Span = tuple[int, int]


# --- metric functions (pure; tested in tests/core/test_bench_harness.py) -------------------
def span_hits(span: Span, gold: Iterable[int]) -> bool:
    """True when the inclusive page span ``(start, end)`` contains one of the gold pages."""
    start, end = span
    return any(start <= g <= end for g in gold)


def first_hit_rank(ranking: Sequence[Span], gold: Iterable[int]) -> Optional[int]:
    """1-based rank of the first span that meets the gold pages, or None."""
    gold = list(gold)
    for rank, span in enumerate(ranking, 1):
        if span_hits(span, gold):
            return rank
    return None


def recall_at_k(rankings: Sequence[Sequence[Span]], golds: Sequence[Iterable[int]], k: int) -> float:
    """Share of questions with a hit in the top ``k`` (0.0 for no questions)."""
    if not rankings:
        return 0.0
    hits = 0
    for ranking, gold in zip(rankings, golds):
        rank = first_hit_rank(ranking[:k], gold)
        hits += rank is not None
    return hits / len(rankings)


def mrr_at_k(rankings: Sequence[Sequence[Span]], golds: Sequence[Iterable[int]], k: int = 10) -> float:
    """Mean reciprocal rank of the first hit within the top ``k`` (0 when none)."""
    if not rankings:
        return 0.0
    total = 0.0
    for ranking, gold in zip(rankings, golds):
        rank = first_hit_rank(ranking[:k], gold)
        total += 1.0 / rank if rank else 0.0
    return total / len(rankings)


def retrieval_metrics(rankings: Sequence[Sequence[Span]], golds: Sequence[Iterable[int]]) -> dict:
    """``{"recall@1", "recall@5", "mrr@10"}`` for one retriever."""
    return {
        "recall@1": round(recall_at_k(rankings, golds, 1), 4),
        "recall@5": round(recall_at_k(rankings, golds, 5), 4),
        "mrr@10": round(mrr_at_k(rankings, golds, 10), 4),
    }


def declined_share(confidences: Sequence[float], threshold: float) -> float:
    """Share of confidences below ``threshold`` (0.0 for none)."""
    if not confidences:
        return 0.0
    return sum(1 for c in confidences if c < threshold) / len(confidences)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# --- questions ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    question: str
    gold_pages: tuple[int, ...]

    @property
    def in_scope(self) -> bool:
        return bool(self.gold_pages)


def load_questions(path: Path) -> list[Question]:
    """Read a question file (JSON lines); raises ValueError naming the bad line."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            out.append(Question(str(item["question"]), tuple(int(p) for p in item["gold_pages"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {n}: not a question record ({exc})") from exc
    return out


# --- running --------------------------------------------------------------------------------
@dataclass
class QuestionResult:
    """Everything measured for one question (kept for calibrate.py)."""

    question: str
    gold_pages: tuple[int, ...]
    confidence: float
    search_ms: float
    rankings: dict = field(default_factory=dict)  # retriever name -> [(start, end), ...]
    top_chunk_ids: list = field(default_factory=list)  # hybrid top chunk ids


def open_library(book: Path, data_dir: Path, password: Optional[str] = None, settings=None):
    """A Library on ``data_dir`` with ``book`` ingested (reused when already there)."""
    from bookreader.config import Settings
    from bookreader.library import Library

    # The bench times searches itself; a generous budget keeps a slow search on a busy
    # machine from failing the quality run (QueryTimeout) instead of showing in p95.
    settings = settings or Settings(data_dir=Path(data_dir), retrieval_timeout_s=BENCH_TIMEOUT_S)
    settings.ensure_dirs()
    library = Library(settings)
    t0 = time.perf_counter()
    info = library.ingest(book, password=password)
    return library, info, time.perf_counter() - t0


class CachedQueryEmbedder:
    """Wraps an embedder and remembers query vectors, so the extra retrievers of a run
    (dense only, BM25 only, other weights) do not embed each question again.  The timed
    hybrid search goes through the library's own, uncached embedder."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self._cache: dict[str, object] = {}

    def embed(self, texts, batch_size: int = 32):
        import numpy as np

        missing = [t for t in texts if t not in self._cache]
        if missing:
            for text, vec in zip(missing, self._embedder.embed(missing, batch_size=batch_size)):
                self._cache[text] = vec
        return np.stack([self._cache[t] for t in texts])

    def __getattr__(self, name: str):
        return getattr(self._embedder, name)


def extra_retrievers(library, book_id: str, weights: Sequence[float] = ()) -> dict:
    """Dense-only and BM25-only twins of the book's hybrid retriever over the same index,
    plus hybrids with other dense weights (named ``hybrid@W``)."""
    from bookreader.core.retrieval import HybridRetriever

    hybrid = library.retriever(book_id)
    settings = hybrid.settings
    embedder = CachedQueryEmbedder(hybrid.embedder)
    configs = {"dense": 1.0, "bm25": 0.0}
    configs.update({f"hybrid@{w:g}": float(w) for w in weights})
    return {
        name: HybridRetriever(hybrid.store, hybrid.lexical, embedder,
                              settings.updated(dense_weight=w))
        for name, w in configs.items()
    }


def run_questions(
    library, book_id: str, questions: Sequence[Question], weights: Sequence[float] = ()
) -> list[QuestionResult]:
    """Search every question with every retriever; time the hybrid search."""
    retrievers = extra_retrievers(library, book_id, weights)
    for q in list(questions)[:WARMUP_QUERIES] or [Question("warm up", ())]:
        library.search(book_id, q.question, top_k=RANK_DEPTH)
    results = []
    for q in questions:
        t0 = time.perf_counter()
        hybrid = library.search(book_id, q.question, top_k=RANK_DEPTH)
        ms = (time.perf_counter() - t0) * 1000.0
        res = QuestionResult(q.question, q.gold_pages, hybrid.confidence, ms)
        res.rankings["hybrid"] = [(p.chunk.page_start, p.chunk.page_end) for p in hybrid.passages]
        res.top_chunk_ids = [p.chunk.chunk_id for p in hybrid.passages]
        for name, retriever in retrievers.items():
            r = retriever.search(q.question, top_k=RANK_DEPTH)
            res.rankings[name] = [(p.chunk.page_start, p.chunk.page_end) for p in r.passages]
        results.append(res)
    return results


def summarise(results: Sequence[QuestionResult], threshold: float) -> dict:
    """The JSON summary of a run (see the module docstring)."""
    inscope = [r for r in results if r.gold_pages]
    outscope = [r for r in results if not r.gold_pages]
    golds = [r.gold_pages for r in inscope]
    names = list(results[0].rankings) if results else list(RETRIEVERS)
    summary: dict = {
        name: retrieval_metrics([r.rankings[name] for r in inscope], golds) for name in names
    }
    # The tune / held-out halves (even / odd in-scope positions, as bench/answer_quality.py).
    for half, rows in (("tune", inscope[0::2]), ("test", inscope[1::2])):
        summary[f"hybrid_{half}"] = retrieval_metrics(
            [r.rankings["hybrid"] for r in rows], [r.gold_pages for r in rows]) if rows else {}
    times = [r.search_ms for r in results]
    summary.update(
        threshold=threshold,
        out_of_scope_declined=round(declined_share([r.confidence for r in outscope], threshold), 4),
        in_scope_declined=round(declined_share([r.confidence for r in inscope], threshold), 4),
        search_ms_p50=round(percentile(times, 50), 2),
        search_ms_p95=round(percentile(times, 95), 2),
        questions_in_scope=len(inscope),
        questions_out_of_scope=len(outscope),
        hybrid_beats_both_recall5=(
            summary["hybrid"]["recall@5"] > summary["dense"]["recall@5"]
            and summary["hybrid"]["recall@5"] > summary["bm25"]["recall@5"]
        ),
    )
    return summary


def per_question_row(r: QuestionResult) -> dict:
    """One question's outcome for the results file: first-hit rank per retriever."""
    row = {"question": r.question, "gold_pages": list(r.gold_pages),
           "confidence": r.confidence, "search_ms": round(r.search_ms, 2)}
    for name in r.rankings:
        ranking = r.rankings.get(name, [])
        row[f"{name}_rank"] = first_hit_rank(ranking, r.gold_pages) if r.gold_pages else None
        row[f"{name}_top"] = [list(span) for span in ranking[:3]]
    return row


def format_table(summary: dict, title: str) -> str:
    """A markdown table of the summary."""
    lines = [
        f"### Retrieval: {title}",
        "",
        "| retriever | recall@1 | recall@5 | MRR@10 |",
        "|---|---|---|---|",
    ]
    for name in [n for n in summary if isinstance(summary[n], dict) and "mrr@10" in summary[n]
                 and not n.startswith("hybrid_")]:
        m = summary[name]
        lines.append(f"| {name} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | {m['mrr@10']:.3f} |")
    for half in ("tune", "test"):
        m = summary.get(f"hybrid_{half}")
        if m:
            lines.append(f"| hybrid, {half} half | {m['recall@1']:.3f} | {m['recall@5']:.3f} | "
                         f"{m['mrr@10']:.3f} |")
    lines += [
        "",
        f"- questions: {summary['questions_in_scope']} in scope, "
        f"{summary['questions_out_of_scope']} out of scope",
        f"- confidence threshold {summary['threshold']:.2f}: out-of-scope declined "
        f"{summary['out_of_scope_declined']:.1%}, in-scope wrongly declined "
        f"{summary['in_scope_declined']:.1%}",
        f"- hybrid search latency: p50 {summary['search_ms_p50']:.1f} ms, "
        f"p95 {summary['search_ms_p95']:.1f} ms (after {WARMUP_QUERIES} warm-up queries)",
    ]
    return "\n".join(lines)


def evaluate(
    book: Path,
    questions_path: Path,
    data_dir: Path = DEFAULT_CACHE,
    threshold: Optional[float] = None,
    password: Optional[str] = None,
    weights: Sequence[float] = (),
) -> tuple[dict, list[QuestionResult]]:
    """Ingest (or reuse) ``book``, run the questions and return (summary, per-question)."""
    questions = load_questions(questions_path)
    library, info, ingest_s = open_library(book, data_dir, password)
    try:
        results = run_questions(library, info.book_id, questions, weights)
        threshold = library.settings.confidence_threshold if threshold is None else threshold
        summary = summarise(results, threshold)
    finally:
        library.close()
    summary.update(
        load_avg_1m=round(os.getloadavg()[0], 2),
        book=str(book),
        questions_file=str(questions_path),
        pages=info.page_count,
        chunks=info.chunk_count,
        index_ready_s=round(ingest_s, 2),
    )
    return summary, results


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Retrieval quality and latency on one book.")
    ap.add_argument("--book", required=True, type=Path, help="the PDF")
    ap.add_argument("--questions", required=True, type=Path, help="question file (JSON lines)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_CACHE,
                    help="index folder, reused between runs (default: bench/results/cache)")
    ap.add_argument("--threshold", type=float, default=None,
                    help="confidence threshold (default: the settings' confidence_threshold)")
    ap.add_argument("--password", default=None, help="the PDF's password, if it has one")
    ap.add_argument("--weights", default="",
                    help="extra dense weights to compare, comma-separated (e.g. 0.5,0.7)")
    ap.add_argument("--out", type=Path, default=None,
                    help="JSON file to write (default: bench/results/retrieval_<book>.json)")
    args = ap.parse_args(argv)

    for path, what in ((args.book, "book"), (args.questions, "question file")):
        if not path.is_file():
            print(f"The {what} {path} does not exist.", file=sys.stderr)
            return 2
    summary, results = evaluate(
        args.book, args.questions, args.data_dir, args.threshold, args.password,
        [float(w) for w in args.weights.split(",") if w.strip()],
    )
    out = args.out or RESULTS_DIR / f"retrieval_{args.book.stem}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    detailed = dict(summary, per_question=[per_question_row(r) for r in results])
    out.write_text(json.dumps(detailed, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(summary, args.book.name))
        print(f"\n(written to {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
