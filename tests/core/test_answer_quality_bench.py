"""bench/answer_quality.py: the scoring rule, calibration figures and the gold files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def aq():
    spec = importlib.util.spec_from_file_location("bench_answer_quality",
                                                  BENCH_DIR / "answer_quality.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


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
