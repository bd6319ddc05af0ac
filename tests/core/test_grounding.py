"""The grounding validator with the real MiniLM."""

from __future__ import annotations

import json

import pytest

from bookreader.core.grounding import GroundingValidator, code_terms, supported_part
from bookreader.core.sentences import content_terms, numbers, split_sentences

CONTEXT = (
    "Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 to study physics "
    "at the Sorbonne. Together with Pierre Curie she discovered polonium and radium. "
    "She received the Nobel Prize in Physics in 1903 and in Chemistry in 1911."
)


@pytest.fixture(scope="module")
def validator(embedder):
    return GroundingValidator(embedder)


def test_supported_answers_pass(validator):
    for answer in (
        "Marie Curie was born in Warsaw in 1867.",
        "She moved to Paris in 1891 to study physics.",
        "Curie discovered polonium and radium together with Pierre Curie.",
        "Yes.",
    ):
        v = validator.validate(answer, CONTEXT)
        assert v.passed, (answer, v)
        assert v.ms >= 0


def test_a_paraphrase_passes(validator):
    v = validator.validate("In 1891 she relocated to Paris to study physics at the Sorbonne.", CONTEXT)
    assert v.passed, v


def test_invented_name_or_number_fails_and_is_reported(validator):
    v = validator.validate("Marie Curie was born in Krakow in 1867.", CONTEXT)
    assert not v.passed and "Krakow" in v.missing_terms
    v = validator.validate("She received the Nobel Prize in Physics in 1905.", CONTEXT)
    assert not v.passed and "1905" in v.missing_terms


def test_invented_code_or_command_fails(validator):
    context = ("To export the log, run bookreader audit export --format csv --out week1.csv. "
               "In Java, System.out.println prints a line.")
    ok = validator.validate("Run `bookreader audit export --format csv` to export the log.", context)
    assert ok.passed, ok
    v = validator.validate("To export the log, run the command `audit-export-log`.", context)
    assert not v.passed and "audit-export-log" in v.missing_terms
    v = validator.validate("In Java, System.out.printline prints a line.", context)
    assert not v.passed and "System.out.printline" in v.missing_terms
    assert code_terms("It is self-contained, e.g. in the U.S.") == []


def test_recombined_context_words_fail(validator):
    # Every word is in the context, but no context sentence says this.
    v = validator.validate("Pierre Curie was born in Warsaw and studied chemistry.", CONTEXT)
    assert not v.passed


def test_names_related_by_no_context_sentence_fail(validator):
    context = ("Stanford University is a private research university in California. "
               "Boston College is a Jesuit university in Chestnut Hill, Massachusetts.")
    v = validator.validate("Stanford University is located in Chestnut Hill.", context)
    assert not v.passed and v.missing_terms == ()
    assert validator.score_sentences(
        ["Stanford University is located in Chestnut Hill."], context)[0].relation_unstated
    ok = validator.validate("Boston College is located in Chestnut Hill.", context)
    assert ok.passed, ok


def test_a_pronoun_carries_the_names_of_the_sentence_before(validator):
    # "She moved to Paris in 1891": "She" is Marie Curie, so Curie - Paris is stated ...
    stated, unstated = validator.score_sentences(
        ["Marie Curie moved to Paris in 1891.", "Pierre Curie moved to Paris in 1891."], CONTEXT)
    assert not stated.relation_unstated
    # ... but nothing relates Pierre Curie to Paris.
    assert unstated.relation_unstated and not unstated.supported


def test_a_comparison_the_context_does_not_state_fails(validator):
    context = ("Luis Munoz Marin International Airport is 5 km from San Juan. "
               "Mercedita Airport is 8 km from Ponce.")
    v = validator.validate("Luis Munoz Marin International Airport is closer.", context)
    assert not v.passed and "closer" in v.missing_terms
    stated = context + " Of the two, Mercedita Airport is the smaller airport."
    assert validator.validate("Mercedita Airport is the smaller airport.", stated).passed


def test_unrelated_answer_fails(validator):
    v = validator.validate("The mitochondria is the powerhouse of the cell.", CONTEXT)
    assert not v.passed
    assert v.similarity < 0.7 and v.overlap < 0.5


def test_citations_and_confidence_line_do_not_count_as_support(validator):
    answer = ('Curie won a Nobel Prize for mathematics. [Source: Bio (Page 3) - "She received '
              'the Nobel Prize in Physics in 1903 and in Chemistry in 1911."]\nConfidence: 0.9')
    assert validator.answer_sentences(answer) == ["Curie won a Nobel Prize for mathematics."]
    assert not validator.validate(answer, CONTEXT).passed


def test_per_sentence_verdicts_and_supported_part(validator):
    answer = ('Marie Curie was born in Warsaw [Source: Bio (Page 1) - "Marie Curie was born in '
              'Warsaw in 1867"]. She later became the queen of Sweden.')
    v = validator.validate(answer, CONTEXT)
    assert not v.passed
    assert v.unsupported_sentences == ("She later became the queen of Sweden.",)
    kept = supported_part(answer, v)
    assert kept is not None and kept.startswith("Marie Curie was born in Warsaw [Source:")
    assert "queen" not in kept
    only_bad = validator.validate("She later became the queen of Sweden.", CONTEXT)
    assert supported_part("She later became the queen of Sweden.", only_bad) is None


def test_empty_answer_or_context_does_not_pass(validator):
    assert not validator.validate("", CONTEXT).passed
    assert not validator.validate("Marie Curie was born in Warsaw.", "   ").passed


def test_design_thresholds_remain_a_necessary_condition(embedder):
    strict = GroundingValidator(embedder, similarity_threshold=0.99, overlap_threshold=1.01)
    assert not strict.validate("She moved to Paris in 1891.", CONTEXT).passed
    assert GroundingValidator(embedder).validate("She moved to Paris in 1891.", CONTEXT).passed


def test_text_helpers():
    assert split_sentences("One is here.Two follows. Fig. 3 shows e.g. this! Done") == [
        "One is here.", "Two follows.", "Fig. 3 shows e.g. this!", "Done"]
    assert content_terms("The running dogs' owners") == ["run", "dog", "owner"]
    assert numbers("In 1,000 years or 3.5 days, not x2") == ["1000", "3.5"]


def test_halueval_sample(validator, eval_dir):
    """A small slice of the held-out half; the full figures come from bench/grounding.py."""
    lines = (eval_dir / "grounding" / "halueval_qa.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines[250:290]]
    right = sum(validator.validate(r["right_answer"], r["knowledge"]).passed for r in rows)
    wrong = sum(validator.validate(r["hallucinated_answer"], r["knowledge"]).passed for r in rows)
    assert right / len(rows) >= 0.85
    assert wrong / len(rows) <= 0.25
