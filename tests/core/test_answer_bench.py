"""bench/answer.py: the selected-text scoring rules (gold containment, quote-only count)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from bookreader.core.selection_answer import LEAD

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_answer", BENCH_DIR / "answer.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


QUOTE = ('\u201cHarvard College ended its early admissions program in 2007, yet for the class of '
         '2016 an Early Action program was reintroduced.\u201d [Source: Selected text - '
         '"Harvard College ended its early admissions program in 2007"]')


def test_a_gold_answer_only_in_the_quote_beside_the_answer_is_counted(bench):
    answer = f"In 2007. [Source: Selected text - \"an Early Action program\"]\n{LEAD}\n{QUOTE}"
    assert bench.contains_gold(answer, ["2016"])  # it counts as correct ...
    assert bench.quote_only(answer, ["2016"])  # ... and is counted apart
    assert not bench.quote_only(answer, ["2007"])  # the model's own words hold it


def test_an_answer_without_a_quote_is_never_quote_only(bench):
    assert not bench.quote_only("In 2016, an Early Action program was reintroduced.", ["2016"])
    assert not bench.quote_only(f"{LEAD}\n{QUOTE}", ["2016"])  # the rescue: no answer before it
