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


def test_a_recorded_rule_notes_the_questions_on_which_it_matched_and_nothing_else():
    bench = load_bench("rule_ablation.py")
    recorder = bench._Recorder()
    reason, words = answer_type._REASON_Q, answer_type._QUESTION_WORDS
    undo = bench.wrap_rules([reason, words], recorder)
    try:
        recorder.current = "q1"
        assert answer_type.question_kind("Why does the loop stop?") == "reason"
        recorder.current = "q2"
        assert answer_type._REASON_Q.search("How does it stop?") is None  # no match, no note
        assert answer_type._REASON_Q.sub("", "why not") == " not"
        assert "zebra" not in answer_type._QUESTION_WORDS  # a miss is no use
        recorder.current = "q3"
        assert sorted(answer_type._QUESTION_WORDS)  # read whole: it could matter
    finally:
        bench.restore(undo)
    assert answer_type._REASON_Q is reason and answer_type._QUESTION_WORDS is words
    assert recorder.hits[id(reason)] == {"q1", "q2"}  # q2 by the substitution
    assert recorder.hits[id(words)] == {"q3"}


def test_a_guided_row_counts_the_change_over_the_questions_asked_again():
    bench = load_bench("rule_ablation.py")
    keys = ("tune.gold", "tune.correct", "tune.false_nc", "tune.oos_declined")

    def answer(gold, correct, text):
        return {"gold": gold, "correct": correct, "false_nc": 0, "oos_declined": 0,
                "text": text}

    base = {"tune.gold": 2, "tune.correct": 1, "tune.false_nc": 0, "tune.oos_declined": 0,
            "questions": {"tune|b|q1": answer(1, 1, "a"), "tune|b|q2": answer(1, 0, "b")}}
    row = {"questions": {"tune|b|q1": answer(1, 0, "a2")}}  # only q1 asked again
    d = bench.delta(row, base, keys)
    assert d["tune.correct"] == -1 and d["tune.gold"] == 0 and d["changed"] == 1
