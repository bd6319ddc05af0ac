"""bench/answer_quality.py: the scoring rule, calibration figures and the gold files."""

from __future__ import annotations

import json
import sys

import pytest

from bench_modules import BENCH_DIR, load_bench


@pytest.fixture(scope="module")
def aq():
    return load_bench("answer_quality.py")


def test_gold_share_counts_gold_content_words_outside_citations(aq):
    gold = "Use the BigInteger class, which represents integers of any size."
    assert aq.gold_share("Use class BigInteger: it represents integers of any size.", gold) == 1.0
    assert aq.gold_share("BigInteger represents integers of any size.", gold) == pytest.approx(4 / 6, abs=1e-3)
    cited = 'No. [Source: 9.7 (Page 155) - "BigInteger represents integers of any size"]'
    assert aq.gold_share(cited, gold) == 0.0  # words inside a citation do not count
    assert 0.0 < aq.gold_share("Use integers.", gold) < aq.CORRECT_SHARE
    assert aq.gold_share("anything", "") == 0.0


def test_ece_and_levels_on_hand_made_pairs(aq):
    assert aq.ece([(0.95, True)] * 9 + [(0.95, False)]) == pytest.approx(0.05)
    assert aq.ece([(0.2, False), (0.9, True)]) == pytest.approx(0.15)
    assert aq.ece([]) is None
    # Sampling noise: a perfectly calibrated 0.5 on few answers still measures an ECE > 0.
    assert aq.ece_floor([0.5] * 10) > aq.ece_floor([0.5] * 1000) > 0.0
    assert aq.ece_floor([1.0] * 10) == 0.0 and aq.ece_floor([]) is None
    levels = aq.by_level([(0.9, True), (0.9, False), (0.75, True), (0.1, False)])
    assert levels["high"] == {"n": 2, "correct": 0.5}
    assert levels["medium"] == {"n": 1, "correct": 1.0}
    assert levels["low"] == {"n": 1, "correct": 0.0}


def test_summarise_separates_outcomes(aq):
    def row(outcome, pages, correct=False, cited=False, split="tune", share=0.0):
        return {"outcome": outcome, "gold_pages": pages, "correct": correct,
                "cited_gold": cited, "confidence": 0.9, "split": split if pages else None,
                "first_token_ms": 100.0, "total_ms": 200.0, "gold_share": share}
    s = aq.summarise([row("answer", [1], True, True), row("quotes", [2], cited=True, share=0.6),
                      row("not_covered", [3]), row("timeout", [4]),
                      row("not_covered", []), row("quotes", [])])
    assert s["cited_gold"] == 0.5 and s["answer_correct"] == 0.25
    assert s["false_not_covered"] == 0.25 and s["out_of_scope_declined"] == 0.5
    assert s["quotes_with_gold_content"] == 0.25
    assert s["outcomes"] == {"answer": 1, "quotes": 2, "not_covered": 2, "timeout": 1}


def test_the_models_own_part_is_scored_apart_from_quotes_beside_it(aq):
    gold = "Use the indexOf method, which returns the index of the character."
    text = ("You could write a loop and use charAt. [Source: 6.8 (Page 99) - \"use charAt\"]\n"
            "\u201cThe indexOf method returns the index of the character.\u201d "
            "[Source: 6.8 (Page 99) - \"The indexOf method returns the index\"]")
    own = aq.model_part(text)
    assert own.startswith("You could write") and "indexOf" not in own
    assert aq.gold_share(text, gold) >= aq.CORRECT_SHARE > aq.gold_share(own, gold)
    rows = [{"outcome": "answer", "gold_pages": [1], "correct": True, "correct_model_part": False,
             "cited_gold": True, "confidence": 0.5, "split": "tune", "first_token_ms": 1.0,
             "total_ms": 2.0, "gold_share": 0.8}]
    s = aq.summarise(rows)
    assert s["answer_correct"] == 1.0 and s["answer_correct_model_part"] == 0.0
    assert "model's own sentences" in aq.format_table(s, "t")


def test_every_in_scope_question_has_a_gold_answer(aq):
    for qfile in sorted((BENCH_DIR / "questions").glob("*.jsonl")):
        items = aq.load(qfile, None)
        missing = [i["question"] for i in items if i["gold_pages"] and not i["gold"]]
        assert not missing, (qfile.name, missing[:3])
        splits = {i["split"] for i in items if i["gold_pages"]}
        assert splits == {"tune", "test"}


def test_logistic_fit_separates_a_clear_signal(aq):
    xs = [[x / 10] for x in range(11)] * 4
    ys = [1 if x[0] > 0.5 else 0 for x in xs]
    w = aq.fit_logistic(xs, ys, steps=2000)
    assert w[1] > 0  # a higher signal means more often correct
    assert json.dumps(w)  # plain floats


def test_roc_auc_of_a_signal(aq):
    assert aq.roc_auc([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == 1.0
    assert aq.roc_auc([0.9, 0.8, 0.2, 0.1], [False, False, True, True]) == 0.0
    assert aq.roc_auc([0.5, 0.5], [True, False]) == 0.5  # a tie counts half
    assert aq.roc_auc([0.5, 0.6], [True, True]) is None  # one class only


def test_fit_is_per_kind_of_backend_and_reads_progress_files(aq, tmp_path):
    """Rows of the extractive backend and of a language model are fitted apart: the model's
    correct answers are the relevant ones, the extractive backend's the long ones."""
    def row(n, extractive, relevance, length, correct):
        return {"question": f"q{n}", "answer": "an answer", "outcome": "answer",
                "split": "tune" if n % 2 == 0 else "test", "correct": correct,
                "signals": {"extractive": extractive, "relevance": relevance, "length": length,
                            "coverage": 0.5, "answer_type": 0.0}}
    rows = [row(n, 0.0, 0.9 if n % 4 < 2 else 0.2, 0.5, n % 4 < 2) for n in range(40)]
    rows += [row(n, 1.0, 0.5, 0.9 if n % 4 < 2 else 0.1, n % 4 < 2) for n in range(40)]
    progress = tmp_path / "progress.jsonl"
    progress.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = aq.run_fit([progress], ["relevance", "length"])
    assert set(out) == {"extractive", "model"}
    model, extractive = out["model"], out["extractive"]
    assert model["tune"] == model["test"] == 20
    assert model["tune_auc"]["relevance"] == 1.0 and model["tune_auc"]["length"] == 0.5
    assert extractive["tune_auc"]["length"] == 1.0
    assert model["coefficients"]["relevance"] > 1.0 > abs(model["coefficients"]["length"])
    assert extractive["coefficients"]["length"] > 1.0 > abs(extractive["coefficients"]["relevance"])
    assert model["fitted"]["test_ece"] < 0.2
    assert set(aq.run_fit([progress], ["relevance"], kind="model")) == {"model"}


@pytest.fixture(scope="module")
def books(aq):
    """bench/books.py, as bench/answer_quality.py imports it."""
    return sys.modules["books"]


def test_the_book_split_is_fixed_and_disjoint(books):
    assert not set(books.TUNE) & set(books.REPORT)
    assert len(books.TUNE) <= 4 and len(books.REPORT) >= 5
    assert {"thinkjava2", "py4e", "physical_ai_textbook"} <= set(books.TUNE)
    assert books.SPLITS == {"tune": books.TUNE, "report": books.REPORT}


def test_question_sets_of_the_split_books_are_complete(aq, books):
    """Each split book with a question file has at least 30 in-scope questions with gold
    answers in full sentences, and 8 out of scope, 4 of them from the book's own field with
    terms the book never uses (checked against the text by check_questions.py)."""
    for stem in books.TUNE[3:] + books.REPORT:
        qfile = BENCH_DIR / "questions" / f"{stem}.jsonl"
        if not qfile.is_file():
            continue
        items = aq.load(qfile, None)
        ins = [i for i in items if i["gold_pages"]]
        assert len(ins) >= 30 and len(items) - len(ins) >= 8, stem
        assert all(i["gold"].endswith(".") and len(i["gold"].split()) >= 8 for i in ins), stem
        raw = [json.loads(x) for x in qfile.read_text(encoding="utf-8").splitlines() if x]
        assert sum(bool(r.get("absent")) for r in raw if not r["gold_pages"]) >= 4, stem


def _row(outcome, pages, *, correct=False, cited=False, level="medium", ft=1000.0, total=4000.0):
    return {"question": "q", "outcome": outcome, "gold_pages": pages, "correct": correct,
            "cited_gold": cited, "confidence": 0.5, "level": level,
            "split": "tune" if pages else None, "first_token_ms": ft, "total_ms": total,
            "gold_share": 1.0 if correct else 0.0}


def test_split_table_has_a_row_per_book_and_pools_their_questions(aq, books):
    book_a = [_row("answer", [3], correct=True, cited=True, level="high", ft=1000.0),
              _row("answer", [4], cited=True, level="high", ft=2000.0),
              _row("not_covered", [5], ft=3000.0),
              _row("not_covered", [], ft=500.0)]
    book_b = [_row("answer", [7], correct=True, cited=True, ft=5000.0, total=20000.0),
              _row("quotes", [8], cited=True, ft=6000.0),
              _row("answer", [], ft=7000.0)]
    a = books.table_row("a", book_a, aq.summarise(book_a))
    b = books.table_row("b", book_b, aq.summarise(book_b))
    pooled_rows = book_a + book_b
    pooled = books.table_row("POOLED", pooled_rows, aq.summarise(pooled_rows))
    assert (a["in_scope"], a["out_of_scope"], a["cited_gold"], a["correct"]) == (3, 1, 2, 1)
    assert (a["false_not_covered"], a["declined"], a["high"], a["high_correct"]) == (1, 1, 2, 1)
    assert b["declined_share"] == 0.0 and b["high"] == 0 and b["high_correct_share"] is None
    # pooled over the questions, not averaged over the books
    assert (pooled["in_scope"], pooled["cited_gold"], pooled["correct"]) == (5, 4, 2)
    assert pooled["cited_gold_share"] == 0.8 and pooled["correct_share"] == 0.4
    assert pooled["declined_share"] == 0.5 and pooled["high_correct_share"] == 0.5
    assert pooled["first_token_ms_p50"] == 3000.0 and pooled["total_ms_p95"] == 20000.0
    text = books.format_table([a, b, pooled])
    lines = text.splitlines()
    assert len(lines) == 5 and lines[-1].startswith("| POOLED | 5/2 | 80.0% (4/5) | 40.0% (2/5)")
    assert "| 50.0% (1/2) | 3.0 s | 20.0 s |" in lines[-1]
    assert "| - |" in lines[3]  # no "high" answer on book b


def test_books_of_a_split_skip_books_without_questions_or_pdf(books, tmp_path):
    books_dir, questions_dir = tmp_path / "books", tmp_path / "questions"
    books_dir.mkdir()
    questions_dir.mkdir()
    first, second, third = books.REPORT[:3]
    for stem in (first, second):
        (questions_dir / f"{stem}.jsonl").write_text("{}\n", encoding="utf-8")
    for stem in (first, third):
        (books_dir / f"{stem}.pdf").write_bytes(b"%PDF-1.4\n")
    runnable, skipped = books.books_of("report", books_dir, questions_dir)
    assert runnable == [(first, books_dir / f"{first}.pdf", questions_dir / f"{first}.jsonl")]
    assert len(skipped) == len(books.REPORT) - 1
    assert skipped[0].startswith(f"skipping {second}:") and "not found" in skipped[0]
    assert skipped[1].startswith(f"skipping {third}: no question file")
