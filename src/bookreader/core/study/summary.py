"""A chapter's key sentences, in reading order, each cited on its page.

No model: a sentence's weight is the mean frequency, over the range, of its content
words (words the chapter keeps coming back to), with more for a sentence that defines a
term (:func:`~bookreader.core.study.terms.definition_in`) and none for one that cannot be
read alone (it opens by pointing back: "This", "It", "For example", or leans on "the
previous example").  Glossary entries are left to the flashcards unless the range has
nothing else, and no page gives more than :data:`PER_PAGE_MAX` sentences.  The best ones are
taken greedily, skipping any that repeats most of the words of one already taken, then put
back in reading order.  Every line is the book's sentence with a verified citation; a
sentence that cannot be cited is left out, never shown uncited.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional, Sequence

from bookreader.core.sentences import content_terms
from bookreader.core.study.model import SummaryLine
from bookreader.core.study.source import Citer, StudySentence
from bookreader.core.study.terms import definition_in
from bookreader.core.types import CancelFn, check_cancel

#: Key sentences per page of the range, and the bounds on their number.
PER_PAGE = 0.6
MIN_LINES = 3
MAX_LINES = 15
#: A sentence sharing this share of its terms with one already chosen repeats it.
REPEAT_SHARE = 0.6
#: Extra weight of a defining sentence.
DEFINITION_BONUS = 1.5
#: Sentences that cannot stand alone: they point back or continue an example.
_POINTS_BACK = re.compile(
    r"^\s*(?:this|that|these|those|it|its|they|their|here|there|such|so|thus|hence|also|"
    r"for\s+example|for\s+instance|in\s+this|in\s+that|as\s+(?:a\s+result|shown|we)|"
    r"similarly|likewise|however|but|and|or|then|now|next|finally|otherwise|e\.g\.)\b",
    re.IGNORECASE)
#: Most key sentences taken from one page (the summary covers the range, not one page).
PER_PAGE_MAX = 2
#: A sentence that leans on what came before it ("as in the previous example").
_LEANS_BACK = re.compile(r"\b(?:previous|preceding|above|aforementioned|following|"
                         r"this\s+(?:example|case|chapter|section|figure))\b", re.IGNORECASE)
#: Fewest and most words of a summary sentence.
MIN_WORDS = 7
MAX_WORDS = 45


def summary_size(pages: int) -> int:
    """How many key sentences a range of ``pages`` pages gets."""
    return max(MIN_LINES, min(MAX_LINES, round(pages * PER_PAGE)))


def key_sentences(sentences: Sequence[StudySentence], size: int, citer: Citer, *,
                  cancel: Optional[CancelFn] = None) -> list[SummaryLine]:
    """The ``size`` key sentences, cited, in reading order."""
    freq: Counter = Counter()
    terms_of: dict[int, set[str]] = {}
    for s in sentences:
        ts = set(content_terms(s.text))
        terms_of[s.position] = ts
        freq.update(ts)
    scored: list[tuple[float, StudySentence]] = []
    prose = [s for s in sentences if not s.glossary] or list(sentences)
    for s in prose:
        n = len(s.text.split())
        ts = terms_of[s.position]
        if (not MIN_WORDS <= n <= MAX_WORDS or len(ts) < 3 or _POINTS_BACK.match(s.text)
                or _LEANS_BACK.search(s.text)):
            continue
        if not s.text.rstrip("\"')\u201d").endswith((".", "!")):
            continue
        weight = sum(freq[t] - 1 for t in ts) / (len(ts) + 2)
        if definition_in(s.text, s.glossary) is not None:
            weight += DEFINITION_BONUS
        scored.append((weight, s))
    scored.sort(key=lambda p: (-p[0], p[1].position))
    chosen: list[tuple[StudySentence, SummaryLine]] = []
    per_page: Counter = Counter()
    for n, (_, s) in enumerate(scored):
        if n % 20 == 0:
            check_cancel(cancel)
        if per_page[s.page] >= PER_PAGE_MAX:
            continue
        ts = terms_of[s.position]
        if any(len(ts & terms_of[c.position]) >= REPEAT_SHARE * len(ts) for c, _ in chosen):
            continue
        cit = citer.cite(s)
        if cit is None:
            continue
        chosen.append((s, SummaryLine(s.text, cit)))
        per_page[s.page] += 1
        if len(chosen) >= size:
            break
    chosen.sort(key=lambda p: p[0].position)
    return [line for _, line in chosen]
