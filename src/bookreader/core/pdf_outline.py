"""Page labels, and which chapter and section each part of a page belongs to.

Helpers for :mod:`bookreader.core.pdf`, free of file access so they can be tested alone:

* :func:`page_labels` turns a PDF's page-label rules into the label of every page;
* :func:`headings_toc` builds an outline from heading font sizes for books without one;
* :class:`SectionMap` knows the chapter and section in effect at the top of every page
  and finds where a new one begins inside a page's text.
"""

from __future__ import annotations

import logging
import unicodedata
from collections import Counter
from dataclasses import replace
from typing import Callable, Iterable, Optional

from bookreader.core import pdf_layout as lay
from bookreader.core.types import TocEntry

log = logging.getLogger(__name__)

#: Lines that may sit just above a heading's title and belong to it ("1.7", "Chapter 3").
_HEADING_PREFIX_KEYS = ("", "chapter", "section", "part", "appendix", "unit", "lesson")


# --- page labels --------------------------------------------------------------------------


def roman(n: int) -> str:
    """Lower-case roman numeral of ``n`` (1 -> "i")."""
    out = []
    for value, sym in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"),
                       (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"),
                       (4, "iv"), (1, "i")):
        while n >= value:
            out.append(sym)
            n -= value
    return "".join(out)


def letters(n: int) -> str:
    """PDF letter numbering: a..z, then aa..zz, aaa..."""
    n = max(n, 1)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def decode_pdf_string(raw: str) -> str:
    """Label prefixes sometimes come back as ``<FEFF0043>``; decode them, drop junk."""
    s = raw or ""
    if len(s) >= 2 and s.startswith("<") and s.endswith(">"):
        try:
            data = bytes.fromhex(s[1:-1])
            s = data[2:].decode("utf-16-be") if data[:2] == b"\xfe\xff" else data.decode("latin-1")
        except ValueError:
            return ""
    if any(unicodedata.category(ch) in ("Cc", "Co", "Cn") for ch in s):
        return ""
    return s


def page_labels(rules: Iterable[dict], page_count: int) -> list[str]:
    """The label of every page from PyMuPDF's ``get_page_labels()`` rules.

    Pages no rule covers, and rules that produce an empty label, fall back to the
    physical page number (1-based).
    """
    labels = [str(i + 1) for i in range(page_count)]
    ordered = sorted(
        (r for r in rules if isinstance(r.get("startpage"), int) and r["startpage"] >= 0),
        key=lambda r: r["startpage"],
    )
    for k, rule in enumerate(ordered):
        start = rule["startpage"]
        end = ordered[k + 1]["startpage"] if k + 1 < len(ordered) else page_count
        prefix = decode_pdf_string(rule.get("prefix", ""))
        style = rule.get("style", "")
        first = rule.get("firstpagenum", 1) or 1
        for p in range(start, min(end, page_count)):
            n = first + p - start
            if style == "D":
                num = str(n)
            elif style in ("r", "R"):
                num = roman(n) if style == "r" else roman(n).upper()
            elif style in ("a", "A"):
                num = letters(n) if style == "a" else letters(n).upper()
            else:
                num = ""
            labels[p] = (prefix + num).strip() or str(p + 1)
    return labels


# --- headings from font sizes -------------------------------------------------------------

#: ``extract(index)`` -> (blocks in reading order, page top, page height)
ExtractFn = Callable[[int], tuple[list[lay.TextBlock], float, float]]


def heading_candidates(
    index: int, blocks: list[lay.TextBlock], top: float, height: float, sizes: Counter
) -> list[lay.HeadingCandidate]:
    """Short lines of one page with their sizes; counts characters per size in ``sizes``.

    Lines in the margins count too: running headers are set no larger than the text and
    repeat on most pages, and :func:`~bookreader.core.pdf_layout.heading_sizes` drops
    both kinds, while a chapter title often sits high on its page.
    """
    out: list[lay.HeadingCandidate] = []
    for block in blocks:
        prev: Optional[lay.HeadingCandidate] = None
        for line in block.lines:
            text = line.text
            sizes[line.size] += len(text)
            if not lay.is_heading_text(text):
                prev = None
                continue
            if prev is not None and prev.size == line.size and len(prev.text) < 120:
                prev = lay.HeadingCandidate(index, line.size, f"{prev.text} {text}")
                out[-1] = prev
            else:
                prev = lay.HeadingCandidate(index, line.size, text)
                out.append(prev)
    return out


def headings_toc(page_count: int, extract: ExtractFn, sample_size: int = 80) -> list[TocEntry]:
    """An outline made from heading sizes, for a book without one ([] if none found).

    The body and heading sizes are learnt from up to ``sample_size`` pages spread over the
    book; then every page is scanned for lines in those sizes.
    """
    step = max(1, page_count // sample_size)
    sample = sorted(set(range(0, page_count, step)) | {0, min(1, page_count - 1)})
    sizes: Counter = Counter()
    cands: list[lay.HeadingCandidate] = []
    for i in sample:
        cands.extend(heading_candidates(i, *extract(i), sizes))
    level_of = lay.heading_sizes(cands, lay.body_font_size(sizes), len(sample))
    if not level_of:
        return []
    toc = []
    for i in range(page_count):
        for c in heading_candidates(i, *extract(i), Counter()):
            if c.size in level_of:
                toc.append(TocEntry(level=level_of[c.size], title=c.text, page=i))
    if toc and toc[0].level != 1:
        toc[0] = replace(toc[0], level=1)
    return toc


# --- chapter and section of each part of a page -------------------------------------------


class SectionMap:
    """Chapter and section in effect on every page, from an outline.

    The chapter level is the shallowest outline level with at least two entries (so a
    single root entry holding the whole book does not swallow the chapters).  A page's
    section is the latest entry deeper than a chapter; a chapter without sections is its
    own section.
    """

    def __init__(self, toc: list[TocEntry], page_count: int) -> None:
        levels = Counter(e.level for e in toc)
        self.chapter_level = min((lv for lv in sorted(levels) if levels[lv] >= 2), default=1)
        self.entries_on: dict[int, list[TocEntry]] = {}
        for e in toc:
            self.entries_on.setdefault(e.page, []).append(e)
        self._before: list[tuple[str, str]] = []
        state = ("", "")
        for p in range(page_count):
            self._before.append(state)
            for e in self.entries_on.get(p, ()):
                state = self.after(state, e)

    def after(self, state: tuple[str, str], e: TocEntry) -> tuple[str, str]:
        """The (chapter, section) once entry ``e`` has begun."""
        if e.level <= self.chapter_level:
            return (e.title, e.title)
        return (state[0] or e.title, e.title)

    def before(self, index: int) -> tuple[str, str]:
        """The (chapter, section) in effect before page ``index``'s own entries."""
        return self._before[index]

    def on_page(
        self, index: int, lines: list[lay.TextLine], offsets: list[int]
    ) -> tuple[tuple[str, str], tuple[tuple[int, str, str], ...]]:
        """(chapter, section) at the top of the page, and where new ones begin in its text.

        Each outline entry of the page is looked up among its lines (``offsets[k]`` is
        where line ``k`` starts in the page text).  An entry found at the very start of
        the text, or not found at all, takes effect at the top of the page.
        """
        top = self._before[index]
        entries = self.entries_on.get(index)
        if not entries:
            return top, ()
        keys = [lay.title_key(line.text) for line in lines]
        starts: list[tuple[int, str, str]] = []
        search_from = 0
        state = top
        for e in entries:
            found = find_heading(lines, keys, e.title, search_from)
            if found is None:
                offset = starts[-1][0] if starts else 0
            else:
                offset = offsets[found]
                search_from = found + 1
            state = self.after(state, e)
            if offset <= 0:
                top = state
            else:
                starts.append((offset, state[0], state[1]))
        return top, tuple(starts)


def find_heading(
    lines: list[lay.TextLine], keys: list[str], title: str, start: int
) -> Optional[int]:
    """Index of the line where the heading ``title`` begins (from ``start`` on), or None.

    A heading may be split over up to three lines; a number or "Chapter 3" line set just
    above the title belongs to it.
    """
    key = lay.title_key(title)
    if len(key) < 2:
        return None
    for i in range(start, len(lines)):
        if not keys[i]:
            continue  # a heading starts with words; a number line above is added below
        acc = ""
        for j in range(i, min(i + 3, len(lines))):
            if not keys[j]:
                break
            acc = f"{acc} {keys[j]}".strip()
            if acc == key:
                if i - 1 >= start and _is_heading_prefix(lines[i - 1].text, keys[i - 1]):
                    i -= 1
                return i
            if not key.startswith(acc):
                break
    return None


def _is_heading_prefix(text: str, key: str) -> bool:
    """ "1.7", "Chapter 3", "Part II": a short line that numbers the heading below it."""
    t = text.strip()
    if len(t) > 20 or key not in _HEADING_PREFIX_KEYS:
        return False
    return any(ch.isdigit() for ch in t) or (key != "" and len(t.split()) == 2)
