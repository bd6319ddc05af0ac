"""Dump the candidate sentences the extractive answer ranks, with their features, per
bench question.

Usage::

    python tools/answer_ranker_data.py --split tune|report [--data-dir DIR] [--out DIR]
        [--books-dir ../shared/eval/books] [--book STEM] [--limit N]

Asks every in-scope question of each book of the split (``bench/books.py``) with the
extractive backend, as ``bench/answer_quality.py`` does, and writes one JSON line a question
to ``OUT/<book>.jsonl``: the question, its gold answer, the answer shown and its gold
share, and the candidates the backend ranked, each with its
:data:`~bookreader.core.llm.answer_features.FEATURES`, its hand-weighted score and its
label (the gold share of the answer composed around it as the best sentence: :meth:`~bookreader.core.llm.extractive.ExtractiveBackend.compose`).
``tools/train_answer_ranker.py`` trains on the tune books' dumps; the report books' dumps
only measure, and nothing may be chosen by reading them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import books  # noqa: E402  (bench/books.py: the book-level split)

DEFAULT_OUT = ROOT / "build" / "answer_ranker"


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def states(sentence: str, answers: list[str]) -> bool:
    """Whether a candidate sentence is (or holds, or is held by) one of the sentences a
    labeller marked as stating the answer."""
    s = _norm(sentence)
    if len(s) < 8:
        return False
    for a in answers:
        a = _norm(a)
        if a and (s in a or a in s):
            return True
        sw, aw = set(s.split()), set(a.split())
        if sw and aw and len(sw & aw) / len(sw | aw) >= 0.6:
            return True
    return False


def dump_book(stem: str, pdf: Path, questions: Path, data_dir: Path, out: Path,
              limit: int | None) -> int:
    from answer_quality import gold_share, load
    from retrieval import open_library

    from bookreader.config import Settings
    from bookreader.core.llm.answer_features import candidate_features, question_view
    from bookreader.core.llm.answer_type import comparison_sides, question_kind
    from bookreader.core.llm.extractive import ExtractiveBackend
    from bookreader.core.llm.extractive_compose import render

    seen: list[tuple] = []
    original = ExtractiveBackend.rank

    def recording(self, prompt):
        ranked = original(self, prompt)
        seen.append((self, prompt, list(ranked)))
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
                rows = []
                if seen:
                    backend, prompt, ranked = seen[0]
                    first = next((b.number for b in prompt.blocks if b.kind == "excerpt"),
                                 None)
                    view = question_view(prompt.question, question_kind(prompt.question),
                                         comparison_sides(prompt.question), first, ranked)
                    for c in ranked:
                        matches = backend._matches(c)
                        answer = "\n".join(render(x) for x in backend.compose(
                            prompt, ranked, c)) if matches else ""
                        rows.append({
                            "sentence": c.sentence, "page": c.block.page_label,
                            "score": round(float(c.score), 4),
                            "features": [round(float(x), 4)
                                         for x in candidate_features(c, view)],
                            "matches": matches,
                            "states": states(c.sentence, item["answer_sentences"]),
                            "label": gold_share(answer, item["gold"])
                            if item["gold"] and matches else 0.0,
                        })
                f.write(json.dumps({
                    "book": stem, "question": item["question"], "gold": item["gold"],
                    "gold_pages": item["gold_pages"],
                    "outcome": getattr(a.outcome, "value", str(a.outcome)),
                    "answer": a.text,
                    "share": gold_share(a.text, item["gold"]) if item["gold"] else 0.0,
                    "candidates": rows,
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
    ap.add_argument("--questions-dir", type=Path,
                    help="question files (<book>.jsonl, gold answers inline) in place of "
                    "the bench's")
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
        if args.questions_dir:
            questions = args.questions_dir / f"{stem}.jsonl"
            if not questions.exists():
                continue
        n = dump_book(stem, pdf, questions, args.data_dir, args.out / f"{stem}.jsonl",
                      args.limit)
        print(f"{stem}: {n} questions -> {args.out / (stem + '.jsonl')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
