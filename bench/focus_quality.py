"""What a local tier is shown: does the focused context hold the gold answer?

Usage::

    python bench/focus_quality.py --book ../shared/eval/books/thinkjava2.pdf \\
        --questions bench/questions/thinkjava2.jsonl [--split tune] [--limit 40] \\
        [--chars 600] [--ranking current,extractive]

No language model runs: every in-scope question is retrieved once in whole-book mode (the
passages are cached in ``bench/results/focus_passages_<book>.json``), and for each
ranking (``NAME[:ORDER]``) of :func:`bookreader.core.focus.focus_passages` the bench prints, over the
in-scope questions:

* ``gold_share``: mean share of the gold answer's content words present in the focused
  text (the scoring rule of ``bench/answer_quality.py``);
* ``share>=0.5``: questions whose focused text holds at least half of them;
* ``gold_page``: questions with a shown passage on a gold page;
* ``first_gold``: questions whose first shown line comes from a passage on a gold page;
* the focused text's length (characters) p50 / p95.

It measures what the model *can* read, not what it writes: a cheap way to compare focus
rankings before a model run (``bench/answer_quality.py``) confirms one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))


def retrieve_all(args, items: list[dict]) -> list[dict]:
    """Each item with its retrieved passages (text, physical pages, label, section)."""
    cache = RESULTS_DIR / f"focus_passages_{args.questions.stem}.json"
    known = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {}
    missing = [i for i in items if i["question"] not in known]
    if missing:
        from retrieval import open_library

        from bookreader.config import Settings

        settings = Settings(data_dir=Path(args.data_dir), retrieval_timeout_s=120.0)
        library, info, _ = open_library(Path(args.book), Path(args.data_dir), settings=settings)
        try:
            retriever = library.retriever(info.book_id)
            for item in missing:
                r = retriever.search(item["question"], top_k=settings.top_k)
                known[item["question"]] = [
                    {"text": p.chunk.text, "pages": [p.chunk.page_start + 1, p.chunk.page_end + 1],
                     "label": p.chunk.page_label, "section": p.chunk.section or p.chunk.chapter}
                    for p in r.passages]
        finally:
            close = getattr(library, "close", None)
            if close is not None:
                close()
        cache.write_text(json.dumps(known, ensure_ascii=False), encoding="utf-8")
    return [{**i, "passages": known[i["question"]]} for i in items]


def on_gold(passage: dict, gold_pages: list[int]) -> bool:
    a, b = passage["pages"]
    return any(a <= g <= b for g in gold_pages)


def measure(items: list[dict], ranking: str, chars: int, embedder) -> dict:
    from answer_quality import gold_share, percentile

    from bookreader.core.focus import focus_passages, unique_sentences

    rows = []
    for item in items:
        ps = item["passages"]
        if not ps:
            rows.append({"share": 0.0, "gold_page": False, "first_gold": False, "chars": 0})
            continue
        name, _, order = ranking.partition(":")
        picked = focus_passages(unique_sentences([p["text"] for p in ps]), item["question"],
                                chars, embedder=embedder, ranking=name, order=order or "text",
                                sections=[p["section"] for p in ps])
        picked = [(k, t) for k, t in picked if t.strip()] or picked[:1]
        shown = "\n".join(t for _, t in picked)
        rows.append({
            "question": item["question"],
            "share": gold_share(shown, item["gold"]) if item["gold"] else 0.0,
            "gold_page": any(on_gold(ps[k], item["gold_pages"]) for k, _ in picked),
            "first_gold": on_gold(ps[picked[0][0]], item["gold_pages"]),
            "chars": len(shown),
            "shown": shown,
        })
    n = max(1, len(rows))
    return {
        "ranking": ranking,
        "questions": len(rows),
        "gold_share": round(sum(r["share"] for r in rows) / n, 3),
        "share_ge_half": round(sum(r["share"] >= 0.5 for r in rows) / n, 3),
        "gold_page": round(sum(r["gold_page"] for r in rows) / n, 3),
        "first_gold": round(sum(r["first_gold"] for r in rows) / n, 3),
        "chars_p50": percentile([r["chars"] for r in rows], 0.5),
        "chars_p95": percentile([r["chars"] for r in rows], 0.95),
        "rows": rows,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--book", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--split", choices=("tune", "test"), default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--chars", type=int, default=0,
                    help="focus budget in characters (default: the small tier's context_chars)")
    ap.add_argument("--ranking", default="keywords,answer",
                    help="rankings to compare, each NAME[:ORDER] (ORDER: text, best_first, best_last)")
    ap.add_argument("--data-dir", default=str(RESULTS_DIR / "cache"))
    ap.add_argument("--dump", type=Path, default=None, help="write every focused text here")
    args = ap.parse_args(argv)
    if not args.book.exists():
        print(f"{args.book} not found: the evaluation books live in ../shared/eval/books/",
              file=sys.stderr)
        return 2
    from answer_quality import load

    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.llm.specs import SMALL

    items = [i for i in load(args.questions, None) if i["gold_pages"]]
    if args.limit:
        items = items[: args.limit]
    if args.split:
        items = [i for i in items if i["split"] == args.split]
    items = retrieve_all(args, items)
    embedder = MiniLMEmbedder().quantized_copy()
    chars = args.chars or SMALL.context_chars
    results = [measure(items, r, chars, embedder) for r in args.ranking.split(",")]
    for res in results:
        print(f"{args.questions.stem} {args.split or 'all'} {res['ranking']:12s} chars {chars}: "
              f"gold_share {res['gold_share']:.3f}  share>=0.5 {res['share_ge_half']:.1%}  "
              f"gold_page {res['gold_page']:.1%}  first_gold {res['first_gold']:.1%}  "
              f"shown chars p50/p95 {res['chars_p50']}/{res['chars_p95']}  (n={res['questions']})")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for res in results:
                for r in res["rows"]:
                    fh.write(json.dumps({"ranking": res["ranking"], **r}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
