"""Vector store and BM25 speed: Qdrant Edge against qdrant-client's local mode.

Usage::

    python bench/store.py [--points 5000] [--queries 200] [--chunks 1500] [--json]

Stores: ``--points`` chunks with ~200-word texts and random normalised 384-float vectors
are upserted into a fresh :class:`EdgeStore` (a shard in a temp folder) and a fresh
:class:`ServerStore` in qdrant-client's local in-memory mode.  Reported per store: import
time of the client library (in a fresh interpreter), open, upsert (one call of all points,
then closed) and in ingest-sized batches of 64 (Edge: with its default flush interval, and
flushing after every batch), query latency unfiltered
and filtered (page range + chapter; mean and p50/p95 in ms), ``chunks()``,
``existing_ids`` for every id, and reopening a closed store (Edge only).

BM25: ``--chunks`` chunks of ~200 words of real textbook text (Think Java and Python for
Everybody from ``../shared/eval/books``, reused cyclically when the books are shorter; a
synthetic code-heavy text when they are absent):
``LexicalIndex.build`` (tokenise + index) against ``save`` and ``load`` (the token lists,
gzip JSON), file size, and query latency.

Results are printed as a table (or JSON with ``--json``) and written to
``bench/results/store.json``.  Machine load matters: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
BOOKS = BENCH_DIR.parent.parent / "shared" / "eval" / "books"
DIM = 384
CHAPTERS = [f"{i} Chapter {i}" for i in range(1, 16)]


def book_words(limit: int) -> tuple[list[str], str]:
    """Up to ``limit`` words of real textbook text, and where they came from."""
    words: list[str] = []
    sources = []
    try:
        import fitz  # PyMuPDF
    except ImportError:  # pragma: no cover
        fitz = None
    for name in ("thinkjava2.pdf", "py4e.pdf"):
        path = BOOKS / name
        if fitz is None or not path.exists() or len(words) >= limit:
            continue
        with fitz.open(path) as doc:
            for page in doc:
                words.extend(page.get_text().split())
                if len(words) >= limit:
                    break
        sources.append(name)
    if not words:  # no books: synthetic, code-flavoured text (make_chunks cycles real text)
        rng = np.random.default_rng(0)
        vocab = (
            "the a of to and in is for while loop method class object String int value "
            "System.out.println ArrayList parseInt recursion array index variable compiler "
            "program statement return boolean condition instance static void public main "
            "error exception debug print list dictionary tuple file import module function"
        ).split()
        words.extend(rng.choice(vocab, size=limit - len(words)).tolist())
        sources.append("synthetic")
    return words[:limit], "+".join(sources)


def make_chunks(n: int, words: list[str], book_id: str = "bench"):
    from bookreader.core.types import Chunk

    chunks = []
    per = 200
    for i in range(n):
        start = (i * per) % max(len(words) - per, 1)
        page = i // 4
        chunks.append(
            Chunk(
                chunk_id=f"{book_id}-{i:06d}",
                book_id=book_id,
                position=i,
                text=" ".join(words[start : start + per]),
                page_start=page,
                page_end=page + (i % 3 == 2),
                label_start=str(page + 1),
                label_end=str(page + 1 + (i % 3 == 2)),
                chapter=CHAPTERS[i * len(CHAPTERS) // n],
                section=f"Section {i // 20}",
                char_start=0,
                char_end=1200,
            )
        )
    return chunks


def unit_vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def latency_ms(fn, queries: np.ndarray, warmup: int = 5) -> dict:
    for q in queries[:warmup]:
        fn(q)
    times = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {
        "mean": statistics.fmean(times),
        "p50": times[len(times) // 2],
        "p95": times[min(len(times) - 1, int(len(times) * 0.95))],
    }


def import_seconds(module: str) -> float:
    """Time to import ``module`` in a fresh interpreter (what app start-up pays)."""
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def bench_store(kind: str, chunks, vectors, queries, root: Path) -> dict:
    from bookreader.core.store.edge import EdgeStore
    from bookreader.core.store.server import ServerStore
    from bookreader.core.types import SearchFilter

    def open_store(book_id: str, **kw):
        if kind == "edge":
            return EdgeStore(root / book_id / "shard", book_id, dimension=DIM, **kw)
        return ServerStore(book_id, dimension=DIM, location=":memory:")

    res: dict = {}
    res["import_s"] = import_seconds("qdrant_edge" if kind == "edge" else "qdrant_client")
    store, res["open_s"] = timed(open_store, "bulk")
    _, res["upsert_all_s"] = timed(store.upsert, chunks, vectors)
    assert store.count() == len(chunks)

    flt = SearchFilter(page_start=len(chunks) // 16, page_end=len(chunks) // 6,
                       chapters=tuple(CHAPTERS[1:4]))
    res["query_ms"] = latency_ms(lambda q: store.search(q, 20), queries)
    res["filtered_query_ms"] = latency_ms(lambda q: store.search(q, 20, flt), queries)
    _, res["chunks_s"] = timed(store.chunks)
    _, res["existing_ids_s"] = timed(store.existing_ids, [c.chunk_id for c in chunks])
    store.close()
    if kind == "edge":
        again, res["reopen_s"] = timed(open_store, "bulk")
        assert again.count() == len(chunks)
        again.close()

    batched = open_store("batched")
    t = time.perf_counter()
    for start in range(0, len(chunks), 64):
        batched.upsert(chunks[start : start + 64], vectors[start : start + 64])
    res["upsert_batches_of_64_s"] = time.perf_counter() - t
    batched.close()
    if kind == "edge":  # the cost of flushing segments after every batch
        each = open_store("flush-each", flush_interval_s=0.0)
        t = time.perf_counter()
        for start in range(0, len(chunks), 64):
            each.upsert(chunks[start : start + 64], vectors[start : start + 64])
        res["upsert_batches_of_64_flush_each_s"] = time.perf_counter() - t
        each.close()
    return res


def bench_bm25(n_chunks: int, root: Path) -> dict:
    from bookreader.core.lexical import LexicalIndex

    words, source = book_words(n_chunks * 200)
    chunks = make_chunks(n_chunks, words, "bm25")
    res: dict = {"chunks": n_chunks, "words_per_chunk": 200, "text_source": source}
    builds = []
    for _ in range(3):
        # a fresh process would start with an empty stemmer cache: clear it each time
        from bookreader.core import lexical

        lexical._stem.cache_clear()
        index, s = timed(LexicalIndex.build, chunks)
        builds.append(s)
    res["build_s"] = min(builds)
    path = root / "bm25.json.gz"
    _, res["save_s"] = timed(index.save, path)
    res["file_kb"] = path.stat().st_size / 1024
    loads = [timed(LexicalIndex.load, path, chunks)[1] for _ in range(3)]
    res["load_s"] = min(loads)
    loaded = LexicalIndex.load(path, chunks)
    _, first = timed(loaded.scores, "how do I print a line")  # builds the postings
    res["first_query_after_load_ms"] = first * 1000
    queries = [
        "how do I print a line with System.out.println",
        "what is recursion",
        "for loop over a list",
        "ArrayList versus array",
        "open and read a file",
    ] * 20
    res["query_ms"] = latency_ms(lambda q: index.scores(q), queries)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--chunks", type=int, default=1500)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)

    words, source = book_words(4000)
    chunks = make_chunks(args.points, words)
    vectors = unit_vectors(args.points, seed=1)
    queries = unit_vectors(args.queries, seed=2)
    results: dict = {
        "points": args.points,
        "dimension": DIM,
        "queries": args.queries,
        "cpu_count": os.cpu_count(),
        "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results["edge"] = bench_store("edge", chunks, vectors, queries, root / "edge")
        results["local"] = bench_store("local", chunks, vectors, queries, root / "local")
        results["bm25"] = bench_bm25(args.chunks, root)

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "store.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_table(results)
    return 0


def print_table(r: dict) -> None:
    e, l, b = r["edge"], r["local"], r["bm25"]  # noqa: E741
    print(f"\nVector stores, {r['points']} points x {r['dimension']} floats "
          f"(load average {r['load_avg_1m']:.1f} on {r['cpu_count']} cores)\n")
    print(f"| {'measure':<34} | {'Qdrant Edge':>12} | {'qdrant-client local':>20} |")
    print(f"|{'-' * 36}|{'-' * 14}|{'-' * 22}|")
    rows = [
        ("import (s)", "import_s", 1, None),
        ("open / create (s)", "open_s", 1, None),
        ("upsert all, one call (s)", "upsert_all_s", 1, None),
        ("upsert in batches of 64 (s)", "upsert_batches_of_64_s", 1, None),
        ("  same, flushing every batch (s)", "upsert_batches_of_64_flush_each_s", 1, None),
        ("query top-20, mean (ms)", "query_ms", 1, "mean"),
        ("query top-20, p95 (ms)", "query_ms", 1, "p95"),
        ("filtered query, mean (ms)", "filtered_query_ms", 1, "mean"),
        ("filtered query, p95 (ms)", "filtered_query_ms", 1, "p95"),
        ("chunks() all (s)", "chunks_s", 1, None),
        ("existing_ids(all) (s)", "existing_ids_s", 1, None),
        ("reopen (s)", "reopen_s", 1, None),
    ]
    for label, key, _, sub in rows:
        cells = []
        for side in (e, l):
            v = side.get(key)
            if isinstance(v, dict):
                v = v[sub]
            cells.append("-" if v is None else f"{v:.3f}")
        print(f"| {label:<34} | {cells[0]:>12} | {cells[1]:>20} |")
    print(f"\nBM25, {b['chunks']} chunks x {b['words_per_chunk']} words ({b['text_source']})\n")
    print(f"| {'measure':<34} | {'value':>12} |")
    print(f"|{'-' * 36}|{'-' * 14}|")
    for label, v in [
        ("build: tokenise + index (s)", b["build_s"]),
        ("save (s)", b["save_s"]),
        ("load (s)", b["load_s"]),
        ("first query after load (ms)", b["first_query_after_load_ms"]),
        ("file size (KiB)", b["file_kb"]),
        ("query, mean (ms)", b["query_ms"]["mean"]),
        ("query, p95 (ms)", b["query_ms"]["p95"]),
    ]:
        print(f"| {label:<34} | {v:>12.3f} |")
    print(f"\nwritten to {RESULTS_DIR / 'store.json'}")


if __name__ == "__main__":
    sys.exit(main())
