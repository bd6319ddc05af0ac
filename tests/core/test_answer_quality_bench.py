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
