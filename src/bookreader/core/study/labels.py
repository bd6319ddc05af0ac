"""Labels a book repeats at the head of its paragraphs, read from the whole book.

A book marks its remarks with a short heading run into the text: "Caution: ...",
"Hint: ...", "Steps: ...".  Such a line looks like a glossary entry ("bug: An error in a
program.") but says nothing about its label.  What tells them apart is repetition: a term
is defined once, a label heads paragraphs all over the book.  :func:`repeated_labels`
counts every line-initial "Head:" in the book's text once per open book and returns the
heads used at least :data:`MIN_REPEATS` times.
"""

from __future__ import annotations

import logging
import re
import weakref
from collections import Counter
from typing import Any

log = logging.getLogger(__name__)

#: Times a line-initial head must recur in a book to be a label rather than a term.
MIN_REPEATS = 3
#: A capitalised head of up to five words that opens a line and ends on a colon (its text
#: after it or on the next line).
_HEAD = re.compile(r"(?m)^[ \t]*([A-Z][\w'\u2019\-]*(?:[ ][\w'\u2019\-]+){0,4}):(?:[ \t]|$)")

_CACHE: "weakref.WeakKeyDictionary[Any, frozenset[str]]" = weakref.WeakKeyDictionary()


def _text(pages: Any, index: int) -> str:
    plain = getattr(pages, "plain_text", None)
    if plain is not None:
        return str(plain(index))
    return str(pages.page(index).text or "")


def repeated_labels(pages: Any) -> frozenset[str]:
    """The heads (case-folded) that open a line before a colon on :data:`MIN_REPEATS`
    or more places of the book ``pages`` (``page_count``, ``plain_text(i)`` or
    ``page(i).text``); computed once per book object."""
    try:
        return _CACHE[pages]
    except (KeyError, TypeError):
        pass
    counts: Counter[str] = Counter()
    for i in range(int(getattr(pages, "page_count", 0))):
        counts.update(" ".join(h.split()).casefold() for h in _HEAD.findall(_text(pages, i)))
    found = frozenset(h for h, n in counts.items() if n >= MIN_REPEATS)
    try:
        _CACHE[pages] = found
    except TypeError:  # an object that cannot be weakly referenced: not cached
        pass
    log.debug("Study: %d repeated labels in the book", len(found))
    return found
