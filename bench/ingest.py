"""Ingestion speed and memory on one book, and how much of it is embedding.

Usage::

    python bench/ingest.py --book ../shared/eval/books/thinkjava2.pdf [--json] [--data-dir DIR]

Ingests the book into a fresh data folder (a temporary one, deleted afterwards, unless
``--data-dir`` names an empty or new folder) and reports:

* ``ingest_s``: the whole :meth:`Library.ingest` (read pages, chunk, embed, store, BM25)
  with the embedding model already loaded; ``model_load_s`` is reported separately and
  ``ingest_with_model_load_s`` is what a first ingest after starting the app costs;
* ``pages_per_s``, ``chunks_per_s`` over ``ingest_s``;
* ``peak_rss_mb``: the process's peak resident memory after the ingest (getrusage);
* ``embed_only_s``: the same chunk texts embedded again with the same embedder, in the
  same batches the ingest uses (``Library.ingest_batch``), and nothing else;
  ``ingest_to_embed_ratio = ingest_s / embed_only_s`` (1.0 would mean everything but
  embedding is free).  On a shared machine the two wall-clock times see different loads,
  so the same ratio of process CPU times (all threads) is reported too, with the load
  average.

Targets on Think Java (372 pages): ``ingest_s`` at most 90 s, ratio at most 1.25.
Results are printed (a table, or JSON with ``--json``) and written to
``bench/results/ingest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RESULTS_DIR = Path(__file__).resolve().parent / "results"
TARGET_S = 90.0
TARGET_RATIO = 1.25


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def measure(book: Path, data_dir: Path, password: Optional[str] = None) -> dict:
    """Ingest ``book`` into ``data_dir`` and time it; see the module docstring."""
    from bookreader.config import Settings
    from bookreader.library import Library

    settings = Settings(data_dir=data_dir)
    settings.ensure_dirs()
    library = Library(settings)
    try:
        t0 = time.perf_counter()
        library.embedder.warm_up()
        model_load_s = time.perf_counter() - t0

        stages: dict[str, float] = {}
        last = {"msg": None, "t": time.perf_counter()}

        def progress(done: int, total: int, message: str) -> None:
            now = time.perf_counter()
            if message != last["msg"]:
                last.update(msg=message, t=now)
            stages[message] = now - last["t"]

        t0, c0 = time.perf_counter(), time.process_time()
        info = library.ingest(book, password=password, progress=progress)
        ingest_s, ingest_cpu_s = time.perf_counter() - t0, time.process_time() - c0
        rss = peak_rss_mb()

        retriever = library.retriever(info.book_id)
        chunks = sorted(retriever.store.chunks(), key=lambda c: c.position)
        texts = [c.text for c in chunks]
        batch = max(1, int(library.ingest_batch))
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(0, len(texts), batch):
            library.embedder.embed(texts[i : i + batch])
        embed_only_s, embed_only_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    finally:
        library.close()
    return {
        "book": str(book),
        "pages": info.page_count,
        "chunks": info.chunk_count,
        "ingest_s": round(ingest_s, 2),
        "model_load_s": round(model_load_s, 2),
        "ingest_with_model_load_s": round(ingest_s + model_load_s, 2),
        "pages_per_s": round(info.page_count / ingest_s, 2) if ingest_s else 0.0,
        "chunks_per_s": round(info.chunk_count / ingest_s, 2) if ingest_s else 0.0,
        "peak_rss_mb": round(rss, 1),
        "embed_only_s": round(embed_only_s, 2),
        "ingest_to_embed_ratio": round(ingest_s / embed_only_s, 3) if embed_only_s else None,
        "ingest_cpu_s": round(ingest_cpu_s, 2),
        "embed_only_cpu_s": round(embed_only_cpu_s, 2),
        "ingest_to_embed_cpu_ratio": (
            round(ingest_cpu_s / embed_only_cpu_s, 3) if embed_only_cpu_s else None),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "stage_s": {k: round(v, 2) for k, v in stages.items()},
        "batch_size": batch,
        "target_s": TARGET_S,
        "target_ratio": TARGET_RATIO,
        "cpu_count": os.cpu_count(),
    }


def format_table(r: dict) -> str:
    ratio = r["ingest_to_embed_ratio"]
    rows = [
        ("pages", r["pages"]),
        ("chunks", r["chunks"]),
        ("ingest (model loaded), s", f"{r['ingest_s']:.1f} (target <= {TARGET_S:.0f})"),
        ("model load, s", f"{r['model_load_s']:.1f}"),
        ("pages/s", f"{r['pages_per_s']:.1f}"),
        ("chunks/s", f"{r['chunks_per_s']:.2f}"),
        ("peak RSS, MiB", f"{r['peak_rss_mb']:.0f}"),
        ("embedding alone, s", f"{r['embed_only_s']:.1f}"),
        ("ingest / embedding", f"{ratio:.3f} (target <= {TARGET_RATIO})" if ratio else "n/a"),
        ("ingest / embedding, CPU time", f"{r['ingest_to_embed_cpu_ratio']:.3f}"),
        ("load average (1 min) at the end", f"{r['load_avg_1m']:.1f}"),
    ]
    rows += [(f"stage: {k}, s", f"{v:.1f}") for k, v in r["stage_s"].items()]
    lines = [f"### Ingest: {Path(r['book']).name}", "", "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Ingestion speed, memory and embedding share.")
    ap.add_argument("--book", required=True, type=Path, help="the PDF")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="an empty or new folder for the index (default: a temporary one)")
    ap.add_argument("--password", default=None, help="the PDF's password, if it has one")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "ingest.json")
    args = ap.parse_args(argv)

    if not args.book.is_file():
        print(f"The book {args.book} does not exist.", file=sys.stderr)
        return 2
    temporary = args.data_dir is None
    if temporary:
        data_dir = Path(tempfile.mkdtemp(prefix="bookreader-bench-ingest-"))
    else:
        data_dir = args.data_dir
        if data_dir.exists() and any(data_dir.iterdir()):
            print(f"{data_dir} is not empty; the ingest benchmark needs a fresh folder.",
                  file=sys.stderr)
            return 2
    try:
        result = measure(args.book, data_dir, args.password)
    finally:
        if temporary:
            shutil.rmtree(data_dir, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_table(result))
        print(f"\n(written to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
