"""The instructor's HTML report: self-contained, charts as inline SVG, the right numbers."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from bookreader.core.audit import AuditLog
from bookreader.core.audit.report import percentile
from audit_samples import make_answer
from bookreader.core.types import Mode


@pytest.fixture
def log(tmp_path):
    t = [datetime(2025, 10, 1, 8, tzinfo=timezone.utc)]

    def clock():
        t[0] += timedelta(hours=5)
        return t[0]

    audit = AuditLog(f"sqlite:///{tmp_path / 'a.db'}", clock=clock)
    yield audit
    audit.close()


def fill(log, n=60, seed=4):
    rng = random.Random(seed)
    answers = [make_answer(rng, passage_chars=100) for _ in range(n)]
    answers[0] = replace(answers[0], chapter="<script>alert(1)</script> Chapter", mode=Mode.BOOK)
    answers[1] = replace(answers[1], error="Generation took longer than 5 s.")
    log.record_many(answers, session_id="s")
    return answers


def test_report_is_one_self_contained_page(log, tmp_path):
    answers = fill(log)
    out = log.report(tmp_path / "report.html")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # No network, no script, no external file of any kind.
    assert "<script" not in page and "<link" not in page and "src=" not in page
    assert "url(" not in page and "@import" not in page
    assert re.findall(r"https?://[^\s\"<]*", page) == (
        ["http://www.w3.org/2000/svg"] * page.count("<svg"))
    assert page.count("<svg") >= 6  # mode, rates, per day, chapter, pages, confidence, latency
    # The chapter name is shown, escaped.
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Chapter" in page
    # The numbers add up: questions per mode and the totals.
    n_book = sum(a.mode == Mode.BOOK for a in answers)
    assert f"{len(answers)}</b><span>questions" in page
    assert f"{n_book} · {100 * n_book / len(answers):.0f}%" in page
    for heading in ("Questions per mode", "Questions per chapter", "Most asked pages",
                    "Confidence distribution", "Latency percentiles", "failed validation",
                    "Questions per day"):
        assert heading in page
    assert "01 Oct 2025 – " in page  # the time span covered


def test_report_filters_and_empty_log(log, tmp_path):
    empty = log.report(tmp_path / "empty.html").read_text(encoding="utf-8")
    assert "0</b><span>questions" in empty and "Nothing to show" in empty
    fill(log)
    page = log.report(tmp_path / "sel.html", mode="selected").read_text(encoding="utf-8")
    assert "filtered: mode = selected" in page
    assert "Whole book" not in page


def test_percentile():
    values = sorted(float(v) for v in range(1, 101))
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 99) == pytest.approx(99.01)
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0


def test_timeouts_and_quotes_are_not_counted_as_not_in_the_book(log, tmp_path):
    from bookreader.core import prompts
    from bookreader.core.types import Outcome

    rng = random.Random(7)
    base = replace(make_answer(rng, passage_chars=100), mode=Mode.BOOK, error="",
                   fallback=False, outcome=Outcome.ANSWER)
    answers = [
        replace(base, fallback=True, text=prompts.TIMEOUT_MESSAGE, error=prompts.TIMEOUT_MESSAGE,
                outcome=Outcome.TIMEOUT),
        replace(base, fallback=True, text=prompts.TIMEOUT_MESSAGE, error=prompts.TIMEOUT_MESSAGE,
                outcome=Outcome.TIMEOUT),
        replace(base, fallback=True, text="No verified answer could be written ...",
                outcome=Outcome.QUOTES),
        replace(base, fallback=True, text=prompts.NOT_COVERED, outcome=Outcome.NOT_COVERED),
    ]
    log.record_many(answers, session_id="s")
    # The outcome is stored and read back.
    back = log.history(base.book_id)
    assert sorted(a.outcome.value for a in back) == sorted(a.outcome.value for a in answers)
    page = log.report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "25%</b><span>answered &#x27;not in the book&#x27;" in page or \
        "25%</b><span>answered 'not in the book'" in page
    assert "50%</b><span>timed out" in page
    assert "25%</b><span>got quotes" in page
