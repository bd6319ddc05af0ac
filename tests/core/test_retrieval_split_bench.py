"""The figures of ``bench/retrieval_split.py`` (pure functions; no index needed)."""

from __future__ import annotations

import sys

from bench_modules import BENCH_DIR, load_bench


def _load():
    sys.path.insert(0, str(BENCH_DIR))
    return load_bench("retrieval_split.py")


def test_gold_rank_is_the_first_span_holding_a_gold_page():
    bench = _load()
    assert bench.gold_rank([(1, 2), (7, 8), (9, 9)], [8]) == 2
    assert bench.gold_rank([(1, 2)], [5]) is None


def test_summary_counts_recall_and_out_of_scope_declines():
    bench = _load()
    rows = [{"gold_pages": [3], "rank": 1, "confidence": 0.9},
            {"gold_pages": [4], "rank": 6, "confidence": 0.5},
            {"gold_pages": [], "rank": None, "confidence": 0.2},
            {"gold_pages": [], "rank": None, "confidence": 0.7}]
    s = bench.summarise(rows, threshold=0.6)
    assert (s["r@1"], s["r@5"], s["r@8"]) == (0.5, 0.5, 1.0)
    assert (s["in_declined"], s["out_declined"], s["out_conf_max"]) == (1, 1, 0.7)
