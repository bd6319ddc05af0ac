"""The retrieval benchmark harness: its metric maths on hand-made rankings, and one real
run of ``bench/retrieval.py`` on the bundled sample book."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_modules import load_bench

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = REPO_ROOT / "bench"
SAMPLE_QUESTIONS = BENCH_DIR / "questions" / "sample_guide.jsonl"


def _load(name: str):
    return load_bench(f"{name}.py")


@pytest.fixture(scope="module")
def bench():
    return _load("retrieval")


# --- metric maths ------------------------------------------------------------------------
def test_span_hits_is_inclusive_at_both_ends(bench):
    assert bench.span_hits((3, 5), [3])
    assert bench.span_hits((3, 5), [5])
    assert bench.span_hits((3, 5), [9, 4])
    assert not bench.span_hits((3, 5), [2, 6])
    assert not bench.span_hits((3, 5), [])


def test_first_hit_rank_finds_the_first_matching_span(bench):
    ranking = [(0, 0), (7, 8), (10, 12), (8, 8)]
    assert bench.first_hit_rank(ranking, [8]) == 2
    assert bench.first_hit_rank(ranking, [11]) == 3
    assert bench.first_hit_rank(ranking, [50]) is None


def test_recall_and_mrr_on_hand_made_rankings(bench):
    rankings = [
        [(1, 1), (2, 2), (3, 3)],  # gold 1: hit at rank 1
        [(5, 5), (6, 7), (9, 9)],  # gold 7: hit at rank 2 (span 6-7 meets it)
        [(0, 0)] * 5 + [(4, 4)],  # gold 4: hit at rank 6
        [(0, 0)] * 12,  # gold 20: never
    ]
    golds = [[1], [7], [4], [20]]
    assert bench.recall_at_k(rankings, golds, 1) == pytest.approx(1 / 4)
    assert bench.recall_at_k(rankings, golds, 5) == pytest.approx(2 / 4)
    assert bench.recall_at_k(rankings, golds, 10) == pytest.approx(3 / 4)
    assert bench.mrr_at_k(rankings, golds, 10) == pytest.approx((1 + 1 / 2 + 1 / 6 + 0) / 4)
    # A hit beyond the cut-off does not count towards MRR@5.
    assert bench.mrr_at_k(rankings, golds, 5) == pytest.approx((1 + 1 / 2) / 4)
    metrics = bench.retrieval_metrics(rankings, golds)
    assert metrics == {"recall@1": 0.25, "recall@5": 0.5, "mrr@10": round((1 + 0.5 + 1 / 6) / 4, 4)}


def test_metrics_of_no_questions_are_zero(bench):
    assert bench.recall_at_k([], [], 5) == 0.0
    assert bench.mrr_at_k([], [], 10) == 0.0
    assert bench.declined_share([], 0.6) == 0.0


def test_declined_share_and_percentile(bench):
    assert bench.declined_share([0.1, 0.59, 0.6, 0.9], 0.6) == pytest.approx(0.5)
    assert bench.percentile([10.0, 20.0, 30.0, 40.0, 50.0], 50) == pytest.approx(30.0)
    assert bench.percentile([10.0, 20.0], 95) == pytest.approx(19.5)
    assert bench.percentile([7.0], 95) == pytest.approx(7.0)


def test_summarise_separates_in_and_out_of_scope(bench):
    R = bench.QuestionResult
    results = [
        R("a", (1,), 0.9, 5.0, {"hybrid": [(1, 1)], "dense": [(2, 2)], "bm25": [(1, 1)]}),
        R("b", (4,), 0.3, 7.0, {"hybrid": [(0, 0), (3, 4)], "dense": [(4, 4)], "bm25": [(9, 9)]}),
        R("c", (), 0.2, 6.0, {"hybrid": [(0, 0)], "dense": [(0, 0)], "bm25": [(0, 0)]}),
        R("d", (), 0.8, 8.0, {"hybrid": [(0, 0)], "dense": [(0, 0)], "bm25": [(0, 0)]}),
    ]
    s = bench.summarise(results, threshold=0.5)
    assert s["hybrid"] == {"recall@1": 0.5, "recall@5": 1.0, "mrr@10": 0.75}
    assert s["dense"] == {"recall@1": 0.5, "recall@5": 0.5, "mrr@10": 0.5}
    assert s["bm25"]["recall@5"] == 0.5
    assert s["out_of_scope_declined"] == 0.5  # c declined, d wrongly accepted
    assert s["in_scope_declined"] == 0.5  # b wrongly declined
    assert (s["questions_in_scope"], s["questions_out_of_scope"]) == (2, 2)
    assert s["hybrid_beats_both_recall5"] is True
    # the halves: a (first in-scope question) is tune, b is held out
    assert s["hybrid_tune"] == {"recall@1": 1.0, "recall@5": 1.0, "mrr@10": 1.0}
    assert s["hybrid_test"] == {"recall@1": 0.0, "recall@5": 1.0, "mrr@10": 0.5}
    assert "| hybrid, test half | 0.000 | 1.000 | 0.500 |" in bench.format_table(s, "x")


def test_load_questions_reads_the_shared_format_and_names_bad_lines(bench, tmp_path):
    good = tmp_path / "q.jsonl"
    good.write_text(
        '{"question": "What is X?", "gold_pages": [3, 4], "section": "ignored"}\n\n'
        '{"question": "Off topic?", "gold_pages": []}\n'
    )
    qs = bench.load_questions(good)
    assert [(q.question, q.gold_pages, q.in_scope) for q in qs] == [
        ("What is X?", (3, 4), True),
        ("Off topic?", (), False),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "fine", "gold_pages": [1]}\n{"gold_pages": [2]}\n')
    with pytest.raises(ValueError, match="line 2"):
        bench.load_questions(bad)


def test_shipped_question_files_are_well_formed(bench):
    for path in sorted((BENCH_DIR / "questions").glob("*.jsonl")):
        qs = bench.load_questions(path)
        assert qs, path
        assert any(q.in_scope for q in qs) and any(not q.in_scope for q in qs), path
        assert all(p >= 0 for q in qs for p in q.gold_pages), path


# --- end to end on the bundled sample book -------------------------------------------------
def test_retrieval_bench_runs_end_to_end_on_the_sample_book(bench, sample_pdf, tmp_path, capsys):
    out = tmp_path / "retrieval.json"
    rc = bench.main([
        "--book", str(sample_pdf),
        "--questions", str(SAMPLE_QUESTIONS),
        "--data-dir", str(tmp_path / "index"),
        "--out", str(out),
        "--json",
    ])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads(out.read_text())
    per_question = written.pop("per_question")
    assert printed == written
    assert len(per_question) == len(bench.load_questions(SAMPLE_QUESTIONS))
    for name in ("hybrid", "dense", "bm25"):
        assert set(printed[name]) == {"recall@1", "recall@5", "mrr@10"}
        assert 0.0 <= printed[name]["recall@1"] <= printed[name]["recall@5"] <= 1.0
    questions = bench.load_questions(SAMPLE_QUESTIONS)
    assert printed["questions_in_scope"] == sum(q.in_scope for q in questions)
    assert printed["questions_out_of_scope"] == sum(not q.in_scope for q in questions)
    assert 0.0 <= printed["out_of_scope_declined"] <= 1.0
    assert 0.0 < printed["search_ms_p50"] <= printed["search_ms_p95"]
    # The guide is small and the questions are plain: hybrid search finds most of them.
    assert printed["hybrid"]["recall@5"] >= 0.6
    assert printed["chunks"] > 0

    # A second run reuses the index instead of ingesting again.
    rc = bench.main([
        "--book", str(sample_pdf), "--questions", str(SAMPLE_QUESTIONS),
        "--data-dir", str(tmp_path / "index"), "--out", str(out), "--json",
    ])
    assert rc == 0
    again = json.loads(capsys.readouterr().out)
    assert again["hybrid"] == printed["hybrid"]


def test_sample_questions_gold_pages_match_the_built_sample_book(sample_pdf, capsys):
    """The gold pages of sample_guide.jsonl still follow the guide's outline and text.

    When this fails after the guide's text or layout changed, rebuild the file with
    ``bench/questions/check_questions.py --book <built guide> --questions
    bench/questions/sample_guide.jsonl --write`` and review the printed problems.
    """
    import pymupdf

    checker = _load_questions_checker()
    items = [json.loads(line) for line in SAMPLE_QUESTIONS.read_text().splitlines() if line.strip()]
    stored = [list(i["gold_pages"]) for i in items]
    with pymupdf.open(sample_pdf) as doc:
        pages = [checker.normalise(p.get_text()) for p in doc]
        outline = checker.load_outline(sample_pdf, doc)
    errors = checker.check_items(items, outline, pages, fix=False,
                                 top_sections=checker.top_sections_of(sample_pdf))
    assert errors == 0, capsys.readouterr().out
    assert [i["gold_pages"] for i in items] == stored


def _load_questions_checker():
    return load_bench("questions/check_questions.py")


# --- bench/answerability.py --------------------------------------------------------------
def test_answerability_auc_on_hand_made_scores():
    mod = _load("answerability")
    assert mod.auc([3, 4], [1, 2]) == 1.0
    assert mod.auc([1, 2], [3, 4]) == 0.0
    assert mod.auc([1, 3], [1, 3]) == 0.5


def test_answerability_bench_runs_on_a_small_case_file(tmp_path, capsys):
    mod = _load("answerability")
    selection = ("The Eiffel Tower was completed in 1889 for the World's Fair in Paris. "
                 "It is 330 metres tall. Gustave Eiffel's company designed and built it.")
    cases = [
        {"selection": selection, "question": "When was the Eiffel Tower completed?",
         "answerable": True, "gold_answer": "1889"},
        {"selection": selection, "question": "How tall is the Eiffel Tower?",
         "answerable": True, "gold_answer": "330 metres"},
        {"selection": selection, "question": "Which river flows past the tower?",
         "answerable": False, "gold_answer": None},
        {"selection": selection, "question": "Who painted the tower in 1968?",
         "answerable": False, "gold_answer": None},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    assert mod.main(["--cases", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 4 and out["n_answerable"] == 2
    assert out["ceiling_correct"] == 1.0  # both answers are quoted when nothing declines
    assert set(out["auc"]) == {"coverage", "similarity", "question_words_missing"}
    assert all(0.0 <= v <= 1.0 for v in out["auc"].values())
    assert [f["fallback_at_least"] for f in out["frontier"]] == [0.5, 0.6, 0.7, 0.8, 0.9]
    # Here the unanswerable questions share few words with the text: separable.
    assert out["target_met"] is True


def test_gold_pages_take_the_page_where_a_section_runs_on_above_the_next_heading():
    checker = _load_questions_checker()
    outline = [("1 Intro", 0), ("2 Loops", 1), ("3 Arrays", 3), ("4 Strings", 4)]
    pages = ["intro", "loops while", "loops for", "nested loops end. arrays", "strings"]
    # page 3 starts with the tail of "2 Loops"; page 4 starts with its own heading
    tops = ["1 Intro", "2 Loops", "2 Loops", "2 Loops", "4 Strings"]
    item = {"question": "q", "section": "2 Loops", "evidence": "nested loops"}
    gold, problems = checker.gold_for(item, outline, pages, tops)
    assert (gold, problems) == ([1, 2, 3], [])
    item = {"question": "q", "section": "3 Arrays", "evidence": "arrays"}
    assert checker.gold_for(item, outline, pages, tops) == ([3], [])
    # without the reader's view of the pages the outline's range stands
    item = {"question": "q", "section": "2 Loops", "evidence": "for"}
    assert checker.gold_for(item, outline, pages, None) == ([1, 2], [])
    item["gold_pages"] = [1, 2, 3]
    assert checker.evidence_pages(item, pages) == [2]
