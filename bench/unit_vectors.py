"""Unit vectors computed ahead: build cost, size, hit rate and the focus step's time.

Usage::

    python bench/unit_vectors.py [--book thinkjava2 ...] [--n 8] [--data-dir DIR] [--json OUT]

For each book (already ingested into ``--data-dir``, else ingested first): builds the
table of its units' vectors (:meth:`Library.build_unit_vectors`; wall and CPU seconds,
units, file size, RSS growth), then for ``--n`` in-scope questions of its question file
retrieves the passages as a whole-book question does and times the focus step of the
default tier (``small``: budget and ranking from its spec) twice on a cold embedder
cache: without the table (the int8 copy embeds every unit) and with it.  Prints the
share of the focus step's units found in the table and the maximum difference between
a looked-up vector and the one computed on the fly (0 up to float rounding: the same
embedder copy).  ``--rebuild`` deletes a saved table first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))

import books  # noqa: E402


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_book(library, stem: str, n: int, rebuild: bool) -> dict:
    import numpy as np

    from bookreader.core import focus as focus_mod
    from bookreader.core import focus_ranking
    from bookreader.core.llm.specs import SMALL

    pdf = books.BOOKS_DIR / f"{stem}.pdf"
    info = library.ingest(pdf)
    embedder = library.answerer.validator.embedder
    embedder.warm_up()
    path = library._unit_vectors_path(info.book_id)
    if rebuild:
        embedder.detach_vectors(info.book_id)
        path.unlink(missing_ok=True)
    rss0, t0, c0 = _rss_mb(), time.perf_counter(), _cpu()
    loaded_before = library._load_unit_vectors(info.book_id)
    library.build_unit_vectors(info.book_id)
    build = {"loaded_saved": loaded_before, "wall_s": round(time.perf_counter() - t0, 1),
             "cpu_s": round(_cpu() - c0, 1), "rss_growth_mb": round(_rss_mb() - rss0, 1)}
    table = embedder._tables[info.book_id]
    build.update(units=len(table), file_mb=round(path.stat().st_size / 1e6, 1),
                 chunks=len(library.retriever(info.book_id).lexical.chunks))
    questions = BENCH_DIR / "questions" / f"{stem}.jsonl"
    items = [json.loads(x) for x in questions.read_text(encoding="utf-8").splitlines() if x.strip()]
    items = [i for i in items if i.get("gold_pages")]
    items = items[:: max(1, len(items) // n)][:n]
    retriever = library.retriever(info.book_id)
    rows = []
    for item in items:
        q = item["question"]
        passages = retriever.search(q, top_k=library.settings.top_k).passages
        if not passages:
            continue
        texts = focus_mod.unique_sentences([p.chunk.text for p in passages])
        sections = [p.chunk.section or p.chunk.chapter for p in passages]
        units: list[str] = []
        for t in texts:
            u, j = focus_mod._units(t, SMALL.context_chars)
            units.extend(focus_ranking.answer_units(u, j)[0])
        found = sum(table.get(u) is not None for u in units)
        timings = {}
        shown = {}
        for label in ("without", "with"):
            embedder._cache.clear()
            if label == "without":
                embedder.detach_vectors(info.book_id)
            t, c = time.perf_counter(), _cpu()
            shown[label] = focus_mod.focus_passages(
                texts, q, SMALL.context_chars, embedder=embedder, sections=sections,
                ranking=SMALL.focus_ranking, order=SMALL.focus_order)
            timings[label] = ((time.perf_counter() - t) * 1000, (_cpu() - c) * 1000)
            if label == "without":
                fresh = {u: embedder._cache.get(u) for u in units}
                embedder.attach_vectors(info.book_id, table)
        diffs = [float(np.max(np.abs(table.get(u) - v))) for u, v in fresh.items()
                 if v is not None and table.get(u) is not None]
        rows.append({"units": len(units), "in_table": found,
                     "without_ms": round(timings["without"][0]),
                     "without_cpu_ms": round(timings["without"][1]),
                     "with_ms": round(timings["with"][0]),
                     "with_cpu_ms": round(timings["with"][1]),
                     "same_excerpts": shown["without"] == shown["with"],
                     "max_abs_diff": max(diffs) if diffs else 0.0})
        print(f"  {stem}: {rows[-1]}", flush=True)
    units_all = sum(r["units"] for r in rows) or 1
    return {"book": stem, "build": build, "questions": rows,
            "hit_rate": round(sum(r["in_table"] for r in rows) / units_all, 4),
            "focus_ms_p50_without": statistics.median(r["without_ms"] for r in rows),
            "focus_ms_p50_with": statistics.median(r["with_ms"] for r in rows),
            "same_excerpts": sum(r["same_excerpts"] for r in rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--book", action="append", default=None, help="book stem (repeatable)")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--data-dir", type=Path, default=BENCH_DIR / "results" / "cache")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    from bookreader.config import Settings
    from bookreader.library import Library

    library = Library(Settings(data_dir=args.data_dir))
    library.background_unit_vectors = False
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    results = []
    try:
        for stem in args.book or ["thinkjava2"]:
            r = run_book(library, stem, args.n, args.rebuild)
            results.append(r)
            print(f"{stem}: build {r['build']}; units found {r['hit_rate']:.1%}; focus p50 "
                  f"{r['focus_ms_p50_without']:.0f} ms without, {r['focus_ms_p50_with']:.0f} "
                  f"ms with; same excerpts {r['same_excerpts']}/{len(r['questions'])}",
                  flush=True)
    finally:
        library.close()
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
