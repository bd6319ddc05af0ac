"""Dump the candidate sentences the extractive answer ranks, per bench question.

Usage::

    python tools/answer_ranker_data.py --split tune|report [--data-dir DIR] [--out DIR]
        [--books-dir ../shared/eval/books] [--limit N]

Asks every in-scope question of each book of the split (``bench/books.py``) with the
extractive backend, as ``bench/answer_quality.py`` does, and writes one JSON line a question
to ``OUT/<book>.jsonl``: the question, its gold answer and gold pages, the answer shown and
the :data:`~bookreader.core.llm.extractive.RERANK_POOL` candidates the backend ranked (the
sentence, the heading it stands under, its page, the two sentences after it, the sentence
before it and the hand-weighted score, without the learned ranker).  ``tools/train_answer_ranker.py`` trains the
learned answer ranker on the tune books' dumps; the report books' dumps measure it, and
nothing may be chosen by reading them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import books  # noqa: E402  (bench/books.py: the book-level split)

DEFAULT_OUT = ROOT / "build" / "answer_ranker"


def candidate_row(c) -> dict:
    """What the trainer needs of one ranked candidate."""
    return {
        "sentence": c.sentence,
        "heading": c.heading,
        "section": c.block.section,
        "page": c.block.page_label,
        "block": c.block.number,
        "next": [f.sentence for f in c.following[:2]],
        "previous": c.previous.sentence if c.previous is not None else "",
        "points_back": c.antecedent is not None,
        "score": round(float(c.score), 4),
        "coverage": round(float(c.coverage), 4),
        "similarity": None if c.similarity is None else round(float(c.similarity), 4),
        "bm25": round(float(c.bm25), 4),
    }


def dump_book(stem: str, pdf: Path, questions: Path, data_dir: Path, out: Path,
              limit: int | None) -> int:
    from answer_quality import gold_share, load
    from retrieval import open_library

    from bookreader.config import Settings
    from bookreader.core.llm import answer_ranker
    from bookreader.core.llm.extractive import ExtractiveBackend

    # The hand-weighted ranking, without the learned ranker the dump is made to train.
    answer_ranker.shipped = lambda: None
    seen: list[list] = []
    original = ExtractiveBackend.rank

    def recording(self, prompt):
        ranked = original(self, prompt)
        seen.append(list(ranked))
        return ranked

    ExtractiveBackend.rank = recording  # type: ignore[method-assign]
    try:
        settings = Settings(data_dir=data_dir, retrieval_timeout_s=120.0)
        library, info, _ = open_library(pdf, data_dir, settings=settings)
        items = [i for i in load(questions, None) if i["gold_pages"]][:limit]
        n = 0
        with out.open("w", encoding="utf-8") as f:
            for item in items:
                seen.clear()
                a = library.ask(item["question"], book=info.book_id, backend="extractive")
                ranked = seen[0] if seen else []
                f.write(json.dumps({
                    "book": stem, "question": item["question"], "gold": item["gold"],
                    "gold_pages": item["gold_pages"],
                    "outcome": getattr(a.outcome, "value", str(a.outcome)),
                    "answer": a.text,
                    "share": gold_share(a.text, item["gold"]) if item["gold"] else 0.0,
                    "candidates": [candidate_row(c) for c in ranked],
                }, ensure_ascii=False) + "\n")
                n += 1
        library.close()
        return n
    finally:
        ExtractiveBackend.rank = original  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=sorted(books.SPLITS), required=True)
    ap.add_argument("--data-dir", type=Path, default=ROOT / "bench" / "results" / "cache")
    ap.add_argument("--books-dir", type=Path, default=books.BOOKS_DIR)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--book", action="append", help="only these books of the split")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args(argv)
    runnable, skipped = books.books_of(args.split, args.books_dir)
    for msg in skipped:
        print(msg, file=sys.stderr)
    if not runnable:
        print("no book to run: the evaluation books live in ../shared/eval/books",
              file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for stem, pdf, questions in runnable:
        if args.book and stem not in args.book:
            continue
        n = dump_book(stem, pdf, questions, args.data_dir, args.out / f"{stem}.jsonl",
                      args.limit)
        print(f"{stem}: {n} questions -> {args.out / (stem + '.jsonl')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
