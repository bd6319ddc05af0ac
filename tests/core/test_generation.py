"""Generation's stop rule for over-long quotes (core/generation.py)."""

from __future__ import annotations

import time

from bookreader.core import generation
from bookreader.core.citations import parse_citations
from bookreader.core.llm import specs
from bookreader.core.types import Message, Token

PASSAGE = ("This result often confuses people. The value of minute is 59, and 59 divided by "
           "60 should be 0.98333, not 0. The problem is that Java performs integer division "
           "when the operands are integers.")
HEAD = 'Java performs integer division. [Source: 2.5 Arithmetic Operators (Page 22) - "'


def test_a_quote_past_its_word_cap_is_cut_and_closed():
    long = HEAD + PASSAGE
    closed = generation.close_long_quote(long, 20)
    assert closed is not None and closed.endswith('"]')
    quote = closed[len(HEAD):-2]
    assert len(quote.split()) == 20 and PASSAGE.startswith(quote.rstrip(",."))
    [cite] = parse_citations(closed)
    assert cite.excerpt == quote and cite.page_label == "22"
    # Within the cap, closed, or no citation at all: nothing to do.
    assert generation.close_long_quote(HEAD + "This result often confuses people.", 20) is None
    assert generation.close_long_quote(HEAD + PASSAGE + '"] And more words here', 5) is None
    assert generation.close_long_quote(PASSAGE, 5) is None


class _Stream:
    """The backend protocol (``stream`` yielding tokens), replaying a fixed answer word by
    word and counting what was consumed."""

    def __init__(self, text: str) -> None:
        self.words = text.split(" ")
        self.sent = 0

    def stream(self, messages, **_kw):
        for i, w in enumerate(self.words):
            self.sent += 1
            yield Token(w if i == 0 else " " + w, -0.1)


def test_generation_stops_at_the_quote_cap_of_the_tier():
    text = HEAD + PASSAGE + '"] It also rounds down. [Source: X (Page 1) - "y"]'
    backend = _Stream(text)
    out = generation.generate(
        backend, [Message("user", "q")], request=None, max_tokens=500, temperature=0.0,
        first_budget=None, total_budget=None, max_claims=3, started=time.perf_counter(),
        stage_ms={}, on_token=None, cancel=lambda: False,
        quote_words=specs.SMALL.quote_words)
    assert specs.SMALL.quote_words == 20 and specs.TINY.quote_words is None
    assert out.cut is not None and out.cut.endswith('"]')
    assert backend.sent < len(backend.words) - 10  # stopped instead of copying on
    # Without a cap the whole answer streams.
    backend = _Stream(text)
    out = generation.generate(
        backend, [Message("user", "q")], request=None, max_tokens=500, temperature=0.0,
        first_budget=None, total_budget=None, max_claims=3, started=time.perf_counter(),
        stage_ms={}, on_token=None, cancel=lambda: False)
    assert out.cut is None and backend.sent == len(backend.words)
