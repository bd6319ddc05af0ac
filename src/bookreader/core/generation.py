"""Generation: stream a backend's answer within its time budget, and stop it early.

A local model must start within its first-token budget; once tokens flow it streams to
its token cap (the student can press Stop).  Claude has a total budget.  Generation also
stops, without waiting for the token cap, when:

* the backend's claim cap is reached (small models add wrong claims after the first
  few; the answer keeps the first ``max_claims`` with their citations),
* the model wrote its confidence line (what follows is chatter), or
* the model repeats itself (a token loop, or one sentence three times over), or
* a citation's quoted excerpt runs past the tier's ``quote_words`` (a small model told
  to copy "exact words" copies whole paragraphs, and an unclosed citation is dropped):
  the quote is cut to its first ``quote_words`` words, still copied text, and closed.

Only an answer that was cut off by a budget is a timeout; one that finished is kept,
however long it took.  :mod:`bookreader.core.answering` decides what to show either way.
"""

from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from bookreader.core.model_output import (
    claim_units,
    confidence_written,
    loop_start,
    split_confidence,
)
from bookreader.core.sentences import words
from bookreader.core.types import AnswerRequest, CancelFn, Message

log = logging.getLogger(__name__)

#: Characters at the end of the stream that the stop rules look at.
_TAIL_CHARS = 400
#: Streamed pieces (tokens) the quote check looks back over: a citation's head and a
#: quote past its word cap fit well within them.
_QUOTE_PIECES = 160


@dataclass
class Generation:
    """What one streamed generation produced."""

    raw: str = ""  # everything that streamed
    #: The first ``max_claims`` claims when the claim cap stopped generation, else None.
    cut: Optional[str] = None
    logprobs: list[float] = field(default_factory=list)
    first_token_ms: Optional[float] = None  # from the question's start
    generation_ms: float = 0.0
    timed_out: str = ""  # "", "first_token" or "total"


def budget_pair(value: Any) -> tuple[Optional[float], Optional[float]]:
    """(first-token, total) seconds from a budget function's result (a number: a total)."""
    if isinstance(value, (int, float)):
        return None, float(value)
    first, total = value
    return first, total


def generate(
    backend: Any,
    messages: Sequence[Message],
    *,
    request: Optional[AnswerRequest],
    max_tokens: int,
    temperature: float,
    first_budget: Optional[float],
    total_budget: Optional[float],
    max_claims: Optional[int],
    started: float,
    quote_words: Optional[int] = None,
    stage_ms: dict[str, float],
    on_token: Optional[Callable[[str], None]],
    cancel: CancelFn,
) -> Generation:
    """Stream ``backend``'s answer to ``messages`` under the budgets and stop rules.

    Args:
        started: ``time.perf_counter()`` when the question was asked (first-token time
            is reported from there: it is what the user waits for).
        stage_ms: Gets ``first_token`` (from the start of generation) and ``generation``.

    Raises:
        BookReaderError: the backend failed (``stage_ms["generation"]`` is set first).
        Cancelled: raised by the backend when the user pressed Stop.
    """
    g0 = time.perf_counter()
    first_deadline = g0 + first_budget if first_budget is not None else math.inf
    deadline = g0 + total_budget if total_budget is not None else math.inf
    out = Generation()

    def stop() -> bool:
        if cancel():
            return True
        now = time.perf_counter()
        if out.first_token_ms is None and now > first_deadline:
            out.timed_out = "first_token"
            return True
        if now > deadline:
            out.timed_out = "total"
            return True
        return False

    pieces: list[str] = []
    try:
        for token in backend.stream(
            list(messages), max_tokens=max_tokens, temperature=temperature, cancel=stop,
            request=request,
        ):
            if out.first_token_ms is None and token.text:
                out.first_token_ms = (time.perf_counter() - started) * 1000.0
                stage_ms["first_token"] = (time.perf_counter() - g0) * 1000.0
            pieces.append(token.text)
            if token.logprob is not None:
                out.logprobs.append(token.logprob)
            if on_token is not None and token.text:
                on_token(token.text)
            if stop():
                break
            # Checked at word ends, on the last pieces only (the whole text is joined
            # once, when the quote is cut).
            if quote_words and " " in token.text and \
                    close_long_quote("".join(pieces[-_QUOTE_PIECES:]), quote_words):
                closed = close_long_quote("".join(pieces), quote_words)
                if closed is not None:
                    log.debug("Stopped generation: a quote ran past %d words", quote_words)
                    out.cut = first_claims(closed, max_claims) if max_claims else closed
                    break
            if max_claims and enough_sentences(pieces, max_claims):
                log.debug("Stopped generation after %d sentences", max_claims)
                # The answer keeps the first claims; raw keeps all that streamed.
                out.cut = first_claims("".join(pieces), max_claims)
                break
            if answer_complete(pieces):
                log.debug("Stopped generation: the answer is complete or repeating")
                break
    finally:
        out.generation_ms = (time.perf_counter() - g0) * 1000.0
        stage_ms["generation"] = out.generation_ms
    out.raw = "".join(pieces)
    return out


# --- the stop rules ------------------------------------------------------------------------

def enough_sentences(pieces: list[str], limit: Optional[int]) -> bool:
    """True once ``limit`` claims are complete (with their citations, if any follow)."""
    if not limit:
        return False
    last = pieces[-1] if pieces else ""
    if not last or not any(c in last for c in ".!?]\n"):
        return False
    text, _ = split_confidence("".join(pieces))
    units = [c for c, _ in claim_units(text) if is_claim(c)]
    # The (limit+1)-th claim has begun, so the limit-th one and its citations are complete.
    return len(units) > limit


_OPEN_QUOTE = re.compile(
    r"\[\s*Sources?\s*:[^\[\]]*?[-\u2013\u2014:]\s*[\"\u201c\u201e\u00ab'\u2018](?P<quote>[^\[\]\"\u201d\u00bb]*)$",
    re.IGNORECASE,
)


def close_long_quote(text: str, limit: int) -> Optional[str]:
    """``text`` cut after the first ``limit`` words of an open citation quote that has
    already run past them, with the quote and the citation closed; None when no open
    quote is that long yet."""
    m = _OPEN_QUOTE.search(text[-_TAIL_CHARS * 2:])
    if m is None:
        return None
    quote = m.group("quote")
    parts = quote.split()
    # The (limit+1)-th word has begun, so the limit-th is complete.
    if len(parts) <= limit:
        return None
    start = len(text) - len(quote)
    kept = " ".join(parts[:limit]).rstrip(" .,;:\u2026")
    return f'{text[:start]}{kept}"]'


def is_claim(text: str) -> bool:
    """True for a unit that says something: a word with a letter in it.  A list item's
    number the splitter left on its own ("... the following equations: 1." then "1.") is
    not a claim, so it does not use up the claim cap (the Zero Moment Point answer lost its
    second equation to the two numbers before it)."""
    return any(not w.isdigit() for w in words(text))


def first_claims(text: str, limit: int) -> str:
    """The first ``limit`` claims of ``text`` with their citations (the rest cut)."""
    body, _ = split_confidence(text)
    kept: list[str] = []
    n = 0
    for claim, full in claim_units(body):
        if is_claim(claim):
            if n == limit:
                break
            n += 1
        kept.append(full)
    return " ".join(kept)


def answer_complete(pieces: list[str]) -> bool:
    """True once the model wrote its confidence line, or started repeating itself.

    Small models often go on after "Confidence: 0.9" or loop over one sentence until the
    token limit; both only cost time (the rest would be cut or judged unsupported).
    """
    last = pieces[-1] if pieces else ""
    if not last:
        return False
    if not any(c in last for c in ".\n!?%0123456789"):
        # A plain word: only a word loop ("--mode csv --mode csv ...") can have begun,
        # looked for every 8th piece (joining the text after every word made a streamed
        # answer's stop checks quadratic in its length).
        if " " not in last or len(pieces) % 8:
            return False
    text = "".join(pieces)
    tail = text[-_TAIL_CHARS:]
    if confidence_written(tail):
        return True
    if loop_start(tail) is not None:
        return True
    if len(text) < 120:
        return False
    # One sentence three times over, also with its numbers counting up ("4.8 The window
    # is 10 days. 4.9 The window is 10 days. ...").
    sentences = [
        " ".join(re.sub(r"\d+(?:[.,]\d+)*", "#", x).lower().split())
        for x in re.split(r"(?<=[.!?])\s+|\n+", text)
        if len(x.strip()) >= 20
    ]
    return len(sentences) >= 3 and sentences.count(sentences[-1]) >= 3
