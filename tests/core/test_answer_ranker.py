"""The learned answer ranker (core/llm/answer_ranker.py) and its place in the extractive
answer's ranking.

The real shipped model decides: for questions of two fields, the sentence that states the
answer scores above the one that only raises or restates the question; a missing or
damaged weights file is a ModelError saying what to do, and the extractive answer then
ranks without the model instead of failing.
"""

from __future__ import annotations

import hashlib

import pytest

from bookreader.core.llm import answer_ranker
from bookreader.core.llm.answer_ranker import AnswerRanker, ranker_text
from bookreader.core.llm.extractive import ContextBlock, ExtractiveBackend, ParsedPrompt
from bookreader.errors import ModelError

# Invented sentences (not from any evaluation book), each pair: the one that answers and
# the one that raises the question in the same words.
CASES = [
    ("What is a hash table?",
     "A hash table is a structure that maps keys to values by computing an index from each key.",
     "You might wonder what a hash table is and why anyone would use one."),
    ("Why does ice float on water?",
     "Ice floats because it is less dense than liquid water: its molecules lock into an open "
     "lattice as it freezes.",
     "To see why ice floats on water, we are going to look at its density."),
    ("What does the coefficient of performance measure?",
     "The coefficient of performance is the heat delivered divided by the work supplied.",
     "In this section we discuss the coefficient of performance of heat pumps."),
]


@pytest.fixture(scope="module")
def ranker():
    r = answer_ranker.shipped()
    assert r is not None
    return r


def test_the_shipped_file_is_the_pinned_one():
    blob = (answer_ranker.resources.files("bookreader") / "resources"
            / answer_ranker.RESOURCE).read_bytes()
    assert hashlib.sha256(blob).hexdigest() == answer_ranker.SHA256
    assert len(blob) < 5_000_000


@pytest.mark.parametrize("question,answers,raises", CASES)
def test_the_sentence_that_answers_scores_above_the_one_that_asks(ranker, question, answers,
                                                                   raises):
    p_answers, p_raises = ranker.probabilities(question, [(answers, ""), (raises, "")])
    assert p_answers > p_raises
    assert 0.0 <= p_raises <= 1.0 and 0.0 <= p_answers <= 1.0


def test_nothing_to_rank_gives_nothing(ranker):
    assert ranker.probabilities("What is a hash table?", []) == []
    assert ranker.probabilities("  ", [("A sentence.", "")]) == [0.0]


def test_the_heading_is_read_before_the_sentence():
    assert ranker_text(" Ice  floats.", "2.1 Density") == "2.1 Density: Ice floats."
    assert ranker_text("Ice floats.", "") == "Ice floats."
    assert ranker_text("Ice floats.", "Ice floats.") == "Ice floats."


def test_a_damaged_file_is_a_model_error(tmp_path):
    bad = tmp_path / "ranker.safetensors"
    bad.write_bytes(b"not weights")
    with pytest.raises(ModelError, match="not a valid weights file"):
        AnswerRanker(bad)
    with pytest.raises(ModelError, match="SHA-256"):
        AnswerRanker(bad, expected_sha256="0" * 64)
    with pytest.raises(ModelError, match="cannot be read"):
        AnswerRanker(tmp_path / "missing.safetensors")


def _prompt(question: str, *sentences: str) -> ParsedPrompt:
    return ParsedPrompt((ContextBlock("excerpt", " ".join(sentences), "3.2 Lookup", "41", 1),),
                        question, None)


def test_the_extractive_answer_leads_with_the_sentence_that_answers(embedder, ranker):
    question, answers, raises = CASES[0]
    prompt = _prompt(question, raises, "Arrays are indexed by position.", answers)
    ranked = ExtractiveBackend(embedder, ranker=ranker).rank(prompt)
    assert ranked[0].sentence == answers
    assert all(c.answers is not None for c in ranked)


def test_a_failing_ranker_leaves_the_hand_ranking(embedder):
    class Broken:
        def probabilities(self, question, sentences):
            raise RuntimeError("out of memory")

    question, answers, raises = CASES[0]
    prompt = _prompt(question, raises, answers)
    plain = [c.sentence for c in ExtractiveBackend(embedder).rank(prompt)]
    broken = ExtractiveBackend(embedder, ranker=Broken()).rank(prompt)
    assert [c.sentence for c in broken] == plain
    assert all(c.answers is None for c in broken)
