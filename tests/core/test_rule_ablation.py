"""``bench/rule_ablation.py`` switches a rule off everywhere it is held (the module that
defines it and every module that imported it by name) and puts it back afterwards."""

from __future__ import annotations

from bench_modules import load_bench

from bookreader.core import sentences
from bookreader.core.llm import answer_type


def test_a_rule_is_switched_off_where_it_is_imported_and_restored():
    bench = load_bench("rule_ablation.py")
    reason, number = answer_type._REASON_Q, sentences.NEXT_ITEM_NUMBER
    assert answer_type.NEXT_ITEM_NUMBER is number  # imported by name
    assert answer_type.question_kind("Why does the loop stop?") == "reason"
    undo = bench.switch_off([reason, number])
    try:
        assert answer_type.question_kind("Why does the loop stop?") == "other"
        assert sentences.NEXT_ITEM_NUMBER.search("... these steps: 1.") is None
        assert answer_type.NEXT_ITEM_NUMBER is sentences.NEXT_ITEM_NUMBER
    finally:
        bench.restore(undo)
    assert answer_type._REASON_Q is reason and sentences.NEXT_ITEM_NUMBER is number
    assert answer_type.NEXT_ITEM_NUMBER is number
    assert answer_type.question_kind("Why does the loop stop?") == "reason"


def test_rules_of_a_module_are_its_own_patterns_and_word_lists():
    bench = load_bench("rule_ablation.py")
    names = {name for name, _ in bench.rules_of(answer_type)}
    assert {"_REASON_Q", "_DEFINES", "_QUESTION_WORDS"} <= names
    assert "NEXT_ITEM_NUMBER" not in names  # imported, counted where it is defined
    off = bench.switch_off([answer_type._QUESTION_WORDS])
    try:
        assert answer_type._QUESTION_WORDS == frozenset()
    finally:
        bench.restore(off)
    assert "name" in {w[:4] for w in answer_type._QUESTION_WORDS}
