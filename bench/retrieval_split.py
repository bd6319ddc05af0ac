"""Where whole-book retrieval ranks the gold pages, per book and pooled over a split.

Usage::

    PYTHONPATH=src python bench/retrieval_split.py --split tune --data-dir DIR [--misses]

For every in-scope question of every book of ``--split`` (``bench/books.py``), the
question is searched as an answer searches it (:func:`bookreader.core.retrieval.
search_question`, the default settings) for ``RANK_DEPTH`` passages, and the rank of the
first passage whose page span meets a gold page is kept.  Printed per book and pooled:

* ``r@1 r@3 r@5 r@8 r@10``: share of in-scope questions with a gold page in the top k.
  Whole-book answers read the settings' ``top_k`` passages (5 by default): the extractive
  backend quotes from all of them (its ``context_chars`` holds five chunks), the small
  tier's focus step picks its ``context_chars`` of sentences from all of them.  So
  ``r@top_k`` bounds how often an answer can cite a gold page.
* ``in-declined``: in-scope questions whose confidence is below the threshold (a false
  "not covered"); ``out-declined``: out-of-scope questions below it (should be all);
  ``out-conf p50/max``: the out-of-scope confidences, to see a change move them.

``--misses`` lists the in-scope questions whose gold page is not in the top ``top_k``.
The index in ``--data-dir`` is reused (a book is ingested only when missing or stale).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Optional, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from books import SPLITS, books_of  # noqa: E402

RANK_DEPTH = 10
KS = (1, 3, 5, 8, 10)


def gold_rank(spans: Sequence[tuple[int, int]], gold: Sequence[int]) -> Optional[int]:
    """1-based rank of the first page span ``(start, end)`` holding a gold page, or None."""
    for rank, (start, end) in enumerate(spans, 1):
        if any(start <= g <= end for g in gold):
            return rank
    return None


def summarise(rows: Sequence[dict], threshold: float) -> dict:
    """The printed figures of one book's (or the pooled) rows."""
    ins = [r for r in rows if r["gold_pages"]]
    outs = [r for r in rows if not r["gold_pages"]]
    out = {"n_in": len(ins), "n_out": len(outs)}
    for k in KS:
        hits = sum(1 for r in ins if r["rank"] is not None and r["rank"] <= k)
        out[f"r@{k}"] = round(hits / len(ins), 3) if ins else None
    out["in_declined"] = sum(r["confidence"] < threshold for r in ins)
    out["out_declined"] = sum(r["confidence"] < threshold for r in outs)
    conf = [r["confidence"] for r in outs]
    out["out_conf_p50"] = round(statistics.median(conf), 3) if conf else None
    out["out_conf_max"] = round(max(conf), 3) if conf else None
    return out


def run_book(pdf: Path, questions: Path, data_dir: Path, dense_weight: Optional[float] = None
             ) -> tuple[list[dict], float, int]:
    from bookreader.config import Settings
    from bookreader.core.retrieval import search_question
    from bookreader.library import Library

    settings = Settings(data_dir=data_dir, retrieval_timeout_s=120.0)
    if dense_weight is not None:
        settings.dense_weight = dense_weight
    settings.ensure_dirs()
    library = Library(settings)
    info = library.ingest(pdf)
    retriever = library.retriever(info.book_id)
    rows = []
    for line in questions.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        retrieval, _ = search_question(retriever, item["question"], RANK_DEPTH)
        spans = [(p.chunk.page_start, p.chunk.page_end) for p in retrieval.passages]
        rows.append({"question": item["question"], "gold_pages": item["gold_pages"],
                     "rank": gold_rank(spans, item["gold_pages"]) if item["gold_pages"] else None,
                     "confidence": retrieval.confidence,
                     "top": [f"{p.chunk.page_start}:{(p.chunk.section or '')[:40]}"
                             for p in retrieval.passages[:5]]})
    return rows, settings.confidence_threshold, settings.top_k


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=sorted(SPLITS), default="tune")
    ap.add_argument("--data-dir", type=Path, required=True, help="index folder (reused)")
    ap.add_argument("--misses", action="store_true", help="list questions missed at top_k")
    ap.add_argument("--dense-weight", type=float, help="in place of the settings' 0.85")
    ap.add_argument("--json", type=Path, help="also write the rows and figures here")
    args = ap.parse_args(argv)

    runnable, skipped = books_of(args.split)
    for msg in skipped:
        print(msg, file=sys.stderr)
    pooled: list[dict] = []
    table = []
    threshold, top_k = 0.0, 5
    for stem, pdf, questions in runnable:
        rows, threshold, top_k = run_book(pdf, questions, args.data_dir, args.dense_weight)
        pooled += rows
        table.append((stem, summarise(rows, threshold)))
        if args.misses:
            for r in rows:
                if r["gold_pages"] and (r["rank"] is None or r["rank"] > top_k):
                    print(f"  MISS {stem} rank={r['rank']} gold={r['gold_pages']} "
                          f"conf={r['confidence']:.2f} {r['question']!r}\n      top: {r['top']}")
    table.append(("POOLED", summarise(pooled, threshold)))
    cols = ["n_in", *[f"r@{k}" for k in KS], "in_declined", "n_out", "out_declined",
            "out_conf_p50", "out_conf_max"]
    print(f"split {args.split}: answers read top_k={top_k} passages; threshold {threshold}")
    print(f"{'book':34s} " + " ".join(f"{c:>12s}" for c in cols))
    for name, s in table:
        print(f"{name:34s} " + " ".join(f"{str(s[c]):>12s}" for c in cols))
    if args.json:
        args.json.write_text(json.dumps({"table": dict(table), "rows": pooled}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
