"""The book-level split of the evaluation books, and the per-book table of a split run.

The books of ``../shared/eval/books`` are split once, before any tuning, into books that
rules, thresholds and prompts may be tuned on (:data:`TUNE`) and books whose figures are
only reported (:data:`REPORT`).  A change is judged by the pooled figures of the report
books, never by the books it was tuned on.  ``bench/answer_quality.py --split report``
asks every question of every report book whose question file exists and prints
:func:`format_table` (one row a book and a ``POOLED`` row over all their questions).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

#: Books that may be tuned on (the first three were tuned on before the split was fixed).
TUNE = ("thinkjava2", "py4e", "physical_ai_textbook", "economics_econometrics_godwin")
#: Books that are only reported on: nothing may be chosen by looking at their answers.
REPORT = ("biology_popgen_coop", "philosophy_forallx", "math_ladr4e",
          "engineering_fluid_mechanics_duque", "computing_thinkcomplexity2")
SPLITS = {"tune": TUNE, "report": REPORT}

BENCH_DIR = Path(__file__).resolve().parent
BOOKS_DIR = BENCH_DIR.parent.parent / "shared" / "eval" / "books"
QUESTIONS_DIR = BENCH_DIR / "questions"


def books_of(split: str, books_dir: Path = BOOKS_DIR, questions_dir: Path = QUESTIONS_DIR
             ) -> tuple[list[tuple[str, Path, Path]], list[str]]:
    """(stem, pdf, question file) of each book of ``split`` that can be run, and a message
    for each book that cannot (its question file or its PDF is missing)."""
    runnable, skipped = [], []
    for stem in SPLITS[split]:
        questions = questions_dir / f"{stem}.jsonl"
        pdf = books_dir / f"{stem}.pdf"
        if not questions.is_file():
            skipped.append(f"skipping {stem}: no question file {questions} yet")
        elif not pdf.is_file():
            skipped.append(f"skipping {stem}: {pdf} not found (the evaluation books live in "
                           "../shared/eval/books; --books-dir names another folder)")
        else:
            runnable.append((stem, pdf, questions))
    return runnable, skipped


def _share(k: int, n: int) -> Optional[float]:
    return round(k / n, 3) if n else None


def table_row(name: str, rows: Sequence[dict], summary: dict) -> dict:
    """One line of the split table from a book's (or the pooled) per-question rows and
    their ``summarise`` figures (which give the latencies)."""
    ins = [r for r in rows if r["gold_pages"]]
    outs = [r for r in rows if not r["gold_pages"]]
    high = [r for r in ins if r["outcome"] == "answer" and r.get("level") == "high"]
    counts = {
        "cited_gold": sum(bool(r["cited_gold"]) for r in ins),
        "correct": sum(bool(r["correct"]) for r in ins),
        "false_not_covered": sum(r["outcome"] == "not_covered" for r in ins),
        "declined": sum(r["outcome"] == "not_covered" for r in outs),
        "high_correct": sum(bool(r["correct"]) for r in high),
    }
    return {
        "book": name, "in_scope": len(ins), "out_of_scope": len(outs), "high": len(high),
        **counts,
        "cited_gold_share": _share(counts["cited_gold"], len(ins)),
        "correct_share": _share(counts["correct"], len(ins)),
        "false_not_covered_share": _share(counts["false_not_covered"], len(ins)),
        "declined_share": _share(counts["declined"], len(outs)),
        "high_correct_share": _share(counts["high_correct"], len(high)),
        "first_token_ms_p50": summary.get("first_token_ms_p50"),
        "total_ms_p95": summary.get("total_ms_p95"),
    }


COLUMNS = ("book", "in/out", "gold page cited", "correct", "false 'not covered'",
           "out of scope declined", "'high' correct", "first token p50", "total p95")


def _pct(k: int, n: int) -> str:
    return f"{k / n:.1%} ({k}/{n})" if n else "-"


def _seconds(ms: Optional[float]) -> str:
    return f"{ms / 1000:.1f} s" if ms is not None else "-"


def format_table(table: Sequence[dict]) -> str:
    """The split's rows as a Markdown table (shares with their counts, latencies in s)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for t in table:
        cells = (t["book"], f"{t['in_scope']}/{t['out_of_scope']}",
                 _pct(t["cited_gold"], t["in_scope"]), _pct(t["correct"], t["in_scope"]),
                 _pct(t["false_not_covered"], t["in_scope"]),
                 _pct(t["declined"], t["out_of_scope"]), _pct(t["high_correct"], t["high"]),
                 _seconds(t["first_token_ms_p50"]), _seconds(t["total_ms_p95"]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def backend_tag(backend: str, model: str | None = None) -> str:
    """A backend's name as it appears in result file names (an OpenAI-compatible engine
    by its model's name, since its URL says little)."""
    if backend.startswith("openai"):
        backend = f"openai_{model or 'default'}"
    return backend.replace(":", "_").replace("/", "_")


def run_split(args: argparse.Namespace,
              run_book: Callable[[argparse.Namespace], tuple[list[dict], dict]],
              summarise: Callable[[Sequence[dict]], dict]) -> int:
    """Every runnable book of ``args.split`` in turn through ``run_book`` (each book with
    its own result files, as ``--book`` writes them), then :func:`format_table` with a
    POOLED row over all their questions, also written to
    ``bench/results/answer_quality_split_<split>_<backend>[_ft<s>][_<tag>].json``."""
    if args.replay or args.book or args.questions or args.gold:
        print("--split runs the books of the split with their own question and gold files; "
              "it cannot be combined with --book, --questions, --gold or --replay",
              file=sys.stderr)
        return 2
    runnable, skipped = books_of(args.split, args.books_dir)
    for message in skipped:
        print(message, file=sys.stderr)
    if not runnable:
        print(f"no book of the {args.split} split can be run", file=sys.stderr)
        return 2
    table, summaries, pooled = [], {}, []
    for stem, pdf, questions in runnable:
        print(f"## {stem}", file=sys.stderr, flush=True)
        progress = args.progress and args.progress.with_name(
            f"{args.progress.stem}_{stem}{args.progress.suffix}")  # one file a book
        rows, summary = run_book(argparse.Namespace(
            **{**vars(args), "book": pdf, "questions": questions, "progress": progress}))
        summaries[stem] = summary
        table.append(table_row(stem, rows, summary))
        pooled.extend({**r, "book": stem} for r in rows)
    pooled_summary = summarise(pooled)
    table.append(table_row("POOLED", pooled, pooled_summary))
    tag = backend_tag(args.backend, getattr(args, "model", None))
    name = f"answer_quality_split_{args.split}_{tag}"
    name += f"_ft{args.first_token_budget:g}" if args.first_token_budget else ""
    if getattr(args, "sample", 0):
        name += f"_s{args.sample}"
        name += f"by{args.sample_stride}" if getattr(args, "sample_stride", 1) > 1 else ""
    name += f"_{args.tag}" if args.tag else ""
    results = BENCH_DIR / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{name}.json").write_text(json.dumps(
        {"split": args.split, "backend": args.backend, "model": getattr(args, "model", ""),
         "limit": args.limit, "sample": getattr(args, "sample", 0),
         "skipped": skipped, "table": table, "summaries": summaries,
         "pooled": pooled_summary,
         # every question's row (its book named; the prompt left out), for --engines-table
         "rows": [{k: v for k, v in r.items() if k != "prompt"} for r in pooled]},
        indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(table, indent=2) if args.json else format_table(table))
    return 0
