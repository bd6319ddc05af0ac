"""The textbook grounding set's split: pairs added later to one half move no other pair."""

from __future__ import annotations

import json

from bench_modules import load_bench


def _bench():
    return load_bench("grounding.py")


def test_rows_with_an_explicit_split_stay_in_it_and_move_no_other_row():
    bench = _bench()
    rows = [{"id": f"r{i}", "kind": "paraphrase"} for i in range(10)]
    before = {h: [r["id"] for r in bench.textbook_split(rows, h)] for h in ("tune", "test")}
    added = rows + [{"id": f"new{i}", "kind": "paraphrase", "split": "tune"} for i in range(5)]
    tune = [r["id"] for r in bench.textbook_split(added, "tune")]
    test = [r["id"] for r in bench.textbook_split(added, "test")]
    assert test == before["test"]
    assert tune == before["tune"] + [f"new{i}" for i in range(5)]


def test_the_shipped_set_keeps_its_test_half():
    bench = _bench()
    lines = bench.TEXTBOOK_PAIRS.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) for x in lines if x.strip()]
    original = [r for r in rows if not r.get("split")]
    assert bench.textbook_split(rows, "test") == bench.textbook_split(original, "test")
    assert all(r["split"] == "tune" for r in rows if r.get("split"))
