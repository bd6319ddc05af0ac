"""bench/engines.py: the fair question sample, the fate of each model answer, and the
per-engine table that ``bench/answer_quality.py --engines-table`` prints."""

from __future__ import annotations

import argparse
import json
import sys

import pytest

from bench_modules import load_bench


@pytest.fixture(scope="module")
def aq():
    return load_bench("answer_quality.py", "bench_answer_quality_engines")


@pytest.fixture(scope="module")
def engines(aq):
    """bench/engines.py, as bench/answer_quality.py imports it."""
    return sys.modules["engines"]


def _items(n_in, n_out):
    return ([{"question": f"in {i}", "gold_pages": [i + 1]} for i in range(n_in)]
            + [{"question": f"out {i}", "gold_pages": []} for i in range(n_out)])


def test_spread_takes_the_middle_of_equal_stretches(engines):
    assert engines.spread(30, 6) == [2, 7, 12, 17, 22, 27]
    assert engines.spread(8, 3) == [1, 4, 6]
    assert engines.spread(4, 9) == [0, 1, 2, 3]
    assert engines.spread(5, 0) == [] and engines.spread(0, 3) == []


def test_sample_spreads_in_scope_and_out_of_scope_questions_over_the_file(engines):
    items = _items(30, 8)
    picked = engines.sample(items, 6)
    assert [p["question"] for p in picked] == [
        "in 2", "in 7", "in 12", "in 17", "in 22", "in 27", "out 1", "out 4", "out 6"]
    # the same questions every time (every engine is asked the same ones)
    assert engines.sample(items, 6) == picked
    assert [p["question"] for p in engines.sample(items, 2, 1)] == ["in 7", "in 22", "out 4"]
    assert len(engines.sample(items, 1)) == 2  # at least one out-of-scope question


def test_sample_replaces_limit_in_run_book_and_names_the_result_files(aq, engines, tmp_path,
                                                                       monkeypatch):
    questions = tmp_path / "book.jsonl"
    questions.write_text("".join(json.dumps(i) + "\n" for i in _items(10, 4)), encoding="utf-8")
    asked = []

    def fake_ask_all(args, items):  # the model is not what is tested here
        asked.extend(i["question"] for i in items)
        return [{**i, "outcome": "not_covered", "correct": False, "cited_gold": False,
                 "confidence": 0.0, "level": "low", "first_token_ms": None, "total_ms": 1.0}
                for i in items]

    monkeypatch.setattr(aq, "ask_all", fake_ask_all)
    monkeypatch.setattr(aq, "RESULTS_DIR", tmp_path)
    ns = argparse.Namespace(questions=questions, gold=None, sample=4, sample_oos=None, limit=3,
                            half=None, backend="small", model="", first_token_budget=0.0,
                            replay=None, tag="")
    aq.run_book(ns)
    assert asked == ["in 1", "in 3", "in 6", "in 8", "out 1", "out 3"]
    assert (tmp_path / "answer_quality_book_small_s4.json").is_file()


def _row(outcome, pages=(3,), **kw):
    return {"question": "q", "outcome": outcome, "gold_pages": list(pages), "raw_output": "x",
            "model": "qwen", "answer": "An answer.", **kw}


def test_answer_fate_says_what_the_check_did_with_the_model_answer(engines):
    fate = engines.answer_fate
    assert fate(_row("answer", validation_passed=True)) == ("kept", "")
    assert fate(_row("answer", validation_passed=False,
                     unsupported=["An invented claim."])) == ("trimmed", "rejected")
    book = "book sentences (extractive), in place of qwen: "
    assert fate(_row("answer", book_sentences=True,
                     model=book + "its answer was less likely right")) == (
        "replaced", "less likely right")
    assert fate(_row("answer", book_sentences=True,
                     model=book + "its answer could not be verified")) == ("replaced", "rejected")
    assert fate(_row("answer", book_sentences=True, model=book + "no answer in time")) == (
        "replaced", "late")
    assert fate(_row("answer", book_sentences=True, model=book + "its answer could not be "
                     "verified", raw_output="This question is not covered in the book.")) == (
        "replaced", "declined")
    assert fate(_row("quotes", replaced_by_validator=True)) == ("quoted", "rejected")
    assert fate(_row("quotes", answer="No answer in time: the Better model ...")) == (
        "quoted", "late")
    # the model's own "not covered" sentence (core/prompts.py), then quotes or nothing
    declined = "This question is not covered in the book."
    assert fate(_row("quotes", raw_output=declined)) == ("quoted", "declined")
    assert fate(_row("not_covered", raw_output=declined)) == ("declined", "declined")
    assert fate(_row("not_covered", raw_output="")) == ("not_asked", "")
    assert fate(_row("timeout")) == ("timeout", "late")
    assert fate(_row("error")) == ("error", "")


def _file(tmp_path, name, backend, rows, model=""):
    path = tmp_path / name
    path.write_text(json.dumps({"backend": backend, "model": model, "rows": rows}),
                    encoding="utf-8")
    return path


def test_engines_table_pools_books_and_counts_fates(engines, tmp_path):
    small = [
        _row("answer", book="a", validation_passed=True, correct=True, cited_gold=True,
             correct_model_part=True, first_token_ms=2000.0, total_ms=9000.0),
        _row("answer", book="a", book_sentences=True, correct=True, cited_gold=True,
             correct_model_part=False, model="book sentences (extractive), in place of "
             "small: its answer could not be verified", first_token_ms=4000.0, total_ms=8000.0),
        _row("not_covered", (), book="a", raw_output="", first_token_ms=None, total_ms=500.0),
        _row("quotes", book="b", replaced_by_validator=True, cited_gold=True,
             first_token_ms=6000.0, total_ms=12000.0),
        _row("not_covered", book="b", raw_output="This question is not covered in the book.",
             first_token_ms=3000.0, total_ms=5000.0),
    ]
    server = [{**r, "outcome": "answer", "validation_passed": True, "book_sentences": False,
               "model": "qwen2.5-coder-1.5b-instruct"} for r in small]
    paths = [_file(tmp_path, "s.json", "small", small),
             _file(tmp_path, "o.json", "openai:http://127.0.0.1:1/v1", server,
                   model="qwen2.5-coder-1.5b-instruct")]
    text = engines.engines_table(paths)
    pooled, per_book = text.split("\n\nPer book:\n\n")
    lines = pooled.splitlines()
    assert len(lines) == 4
    assert lines[2] == ("| small | POOLED | 4/1 | 75% (3/4) | 50% (2/4) | 25% (1/4) | 25% (1/4) "
                        "| 100% (1/1) | 1/0/1/1/1 | check 2, model declined 1 | 4.0 s | 12.0 s |")
    assert lines[3].startswith("| server: qwen2.5-coder-1.5b-instruct | POOLED | 4/1 |")
    assert "| 5/0/0/0/0 | - |" in lines[3]
    book_lines = per_book.splitlines()[2:]
    assert [ln.split(" | ")[:2] for ln in book_lines] == [
        ["| small", "a"], ["| server: qwen2.5-coder-1.5b-instruct", "a"],
        ["| small", "b"], ["| server: qwen2.5-coder-1.5b-instruct", "b"]]


def test_engines_table_names_a_result_file_without_rows(engines, tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"backend": "small", "table": []}), encoding="utf-8")
    with pytest.raises(SystemExit, match="no per-question rows"):
        engines.engines_table([path])


def test_sample_stride_keeps_a_subset_of_the_full_sample(engines):
    items = _items(30, 8)
    full = engines.sample(items, 4, 2)
    half = engines.sample(items, 4, 2, stride=2)
    assert [p["question"] for p in half] == ["in 3", "in 18", "out 2"]
    assert all(p in full for p in half)


def test_common_rows_compare_engines_on_the_questions_all_answered(engines, tmp_path):
    def rows(book, questions):
        return [{**_row("answer", validation_passed=True), "question": q, "book": book}
                for q in questions]

    everything = rows("a", ["q1", "q2", "q3"]) + rows("b", ["q1"])
    fewer = rows("a", ["q1", "q3"]) + rows("b", ["q9"])
    cut = dict(engines.common_rows([("all", everything), ("some", fewer)]))
    assert [(r["book"], r["question"]) for r in cut["all"]] == [("a", "q1"), ("a", "q3")]
    assert [(r["book"], r["question"]) for r in cut["some"]] == [("a", "q1"), ("a", "q3")]
    paths = [_file(tmp_path, "all.json", "small", everything),
             _file(tmp_path, "some.json", "better", fewer)]
    assert "| small | POOLED | 4/0 |" in engines.engines_table(paths)
    assert "| small | POOLED | 2/0 |" in engines.engines_table(paths, common=True)


def test_an_unfinished_run_is_read_from_its_progress_files(engines, tmp_path):
    for book, n in (("math_ladr4e", 2), ("biology_popgen_coop", 1)):
        (tmp_path / f"progress_better_{book}.jsonl").write_text("".join(
            json.dumps({**_row("answer", validation_passed=True), "question": f"q{i}"}) + "\n"
            for i in range(n)),
            encoding="utf-8")
    spec = f"better={tmp_path}/progress_better_*.jsonl"
    [(name, rows)] = engines.read_results([spec], ["math_ladr4e", "biology_popgen_coop"])
    assert name == "better" and sorted(r["book"] for r in rows) == [
        "biology_popgen_coop", "math_ladr4e", "math_ladr4e"]


def test_an_engine_is_read_from_a_split_file_and_per_book_result_files(engines, tmp_path):
    split = [{**_row("answer", validation_passed=True), "book": "math_ladr4e"}]
    _file(tmp_path, "answer_quality_split_report_srv_s4by4.json", "openai:x", split)
    _file(tmp_path, "answer_quality_biology_popgen_coop_srv_q18.json", "openai:x",
          [_row("answer", validation_passed=True)])
    # the split run's own per-book file repeats its rows: each question counts once
    _file(tmp_path, "answer_quality_math_ladr4e_srv_s4by4.json", "openai:x",
          [_row("answer", validation_passed=True)])
    [(name, rows)] = engines.read_results(
        [f"srv={tmp_path}/answer_quality_*srv*.json"], ["math_ladr4e", "biology_popgen_coop"])
    assert name == "srv" and sorted(r["book"] for r in rows) == [
        "biology_popgen_coop", "math_ladr4e"]
