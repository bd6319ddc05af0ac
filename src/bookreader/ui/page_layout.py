"""Geometry of the continuous page view and word-snapped selection, without widgets.

Pages are stacked vertically, centred, with a gap.  ``scale`` is logical pixels per PDF
point.  Word rectangles stay in PDF points (PyMuPDF page space, origin top-left); this
module converts between the two and decides which words a drag selects.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from bookreader.core.types import Rect, Word

PAGE_GAP = 14.0  # logical px between pages
MARGIN = 18.0  # logical px around the column of pages


@dataclass(frozen=True)
class WordRef:
    """A word by page and position in that page's reading order."""

    page: int
    index: int

    def key(self) -> tuple[int, int]:
        return (self.page, self.index)


class PageLayout:
    """Where each page sits for a given scale and viewport width.

    Args:
        sizes: (width, height) of every page in PDF points.
    """

    def __init__(self, sizes: Sequence[tuple[float, float]]) -> None:
        self.sizes = [(max(1.0, w), max(1.0, h)) for w, h in sizes]
        self.scale = 1.0
        self.viewport_width = 800.0
        self._tops: list[float] = []
        self._relayout()

    def __len__(self) -> int:
        return len(self.sizes)

    def set_scale(self, scale: float) -> None:
        self.scale = scale
        self._relayout()

    def set_viewport_width(self, width: float) -> None:
        self.viewport_width = float(width)

    def _relayout(self) -> None:
        y = MARGIN
        self._tops = []
        for _, h in self.sizes:
            self._tops.append(y)
            y += h * self.scale + PAGE_GAP
        self._total = y - PAGE_GAP + MARGIN if self.sizes else 0.0

    # --- sizes -----------------------------------------------------------------------
    @property
    def max_page_width(self) -> float:
        return max((w for w, _ in self.sizes), default=612.0)

    @property
    def content_height(self) -> float:
        return self._total

    @property
    def content_width(self) -> float:
        return max(self.viewport_width, self.max_page_width * self.scale + 2 * MARGIN)

    def page_rect(self, page: int) -> tuple[float, float, float, float]:
        """(x, y, w, h) of a page in content pixels."""
        w, h = self.sizes[page]
        pw, ph = w * self.scale, h * self.scale
        x = max(MARGIN, (self.content_width - pw) / 2.0)
        return (x, self._tops[page], pw, ph)

    def fit_width_scale(self, viewport_width: float) -> float:
        return max(0.05, (viewport_width - 2 * MARGIN) / self.max_page_width)

    def fit_page_scale(self, viewport_width: float, viewport_height: float, page: int) -> float:
        w, h = self.sizes[page] if self.sizes else (612.0, 792.0)
        return max(0.05, min((viewport_width - 2 * MARGIN) / w,
                             (viewport_height - 2 * MARGIN) / h))

    # --- lookups ---------------------------------------------------------------------
    def page_at_y(self, y: float) -> int:
        """The page at content height ``y`` (the nearest one in a gap)."""
        if not self.sizes:
            return -1
        i = bisect.bisect_right(self._tops, y) - 1
        i = max(0, min(i, len(self.sizes) - 1))
        if i + 1 < len(self.sizes):
            bottom = self._tops[i] + self.sizes[i][1] * self.scale
            if y > bottom and (y - bottom) > (self._tops[i + 1] - y):
                return i + 1
        return i

    def visible_pages(self, y0: float, y1: float) -> range:
        """Pages that intersect content rows ``y0..y1``."""
        if not self.sizes:
            return range(0)
        first = max(0, bisect.bisect_right(self._tops, y0) - 1)
        if self._tops[first] + self.sizes[first][1] * self.scale < y0:
            first = min(first + 1, len(self.sizes) - 1)
        last = max(first, bisect.bisect_right(self._tops, y1) - 1)
        return range(first, min(last, len(self.sizes) - 1) + 1)

    def to_page(self, page: int, x: float, y: float) -> tuple[float, float]:
        """Content pixels -> PDF points on ``page``."""
        px, py, _, _ = self.page_rect(page)
        return ((x - px) / self.scale, (y - py) / self.scale)

    def to_content(self, page: int, x: float, y: float) -> tuple[float, float]:
        """PDF points on ``page`` -> content pixels."""
        px, py, _, _ = self.page_rect(page)
        return (px + x * self.scale, py + y * self.scale)

    def rect_to_content(self, page: int, rect: Rect) -> tuple[float, float, float, float]:
        """A PDF rect on ``page`` -> (x, y, w, h) in content pixels."""
        x0, y0 = self.to_content(page, rect[0], rect[1])
        x1, y1 = self.to_content(page, rect[2], rect[3])
        return (x0, y0, x1 - x0, y1 - y0)


# --- words ----------------------------------------------------------------------------
def word_at(words: Sequence[Word], x: float, y: float, *, snap: bool = True) -> Optional[Word]:
    """The word under (x, y) in PDF points; with ``snap`` the nearest one otherwise.

    A point level with a line (in the margin beside it, say) snaps to the nearest word of
    that line; elsewhere nearness weighs vertical distance three times horizontal distance.
    """
    best, best_d = None, float("inf")
    level, level_dx = None, float("inf")
    for w in words:
        x0, y0, x1, y1 = w.rect
        dx = max(x0 - x, 0.0, x - x1)
        dy = max(y0 - y, 0.0, y - y1)
        if dx == 0.0 and dy == 0.0:
            return w
        if dy == 0.0 and dx < level_dx:
            level, level_dx = w, dx
        d = 3.0 * dy + dx
        if d < best_d:
            best, best_d = w, d
    if not snap:
        return None
    return level if level is not None else best


def selected_refs(anchor: WordRef, cursor: WordRef,
                  words_by_page: Mapping[int, Sequence[Word]]) -> list[tuple[int, Word]]:
    """Every word between two ends (inclusive) in reading order, across pages."""
    a, b = sorted((anchor, cursor), key=WordRef.key)
    out: list[tuple[int, Word]] = []
    for page in range(a.page, b.page + 1):
        words = words_by_page.get(page)
        if not words:
            continue
        lo = a.index if page == a.page else -1
        hi = b.index if page == b.page else 1 << 30
        out.extend((page, w) for w in words if lo <= w.index <= hi)
    return out


def join_words(items: Iterable[tuple[int, Word]]) -> str:
    """Selected words as text: spaces within a line, newlines between lines, blank
    lines between blocks and pages."""
    parts: list[str] = []
    prev: Optional[tuple[int, Word]] = None
    for page, w in items:
        if prev is not None:
            p_page, p = prev
            if p_page != page or p.block != w.block:
                parts.append("\n\n")
            elif p.line != w.line:
                parts.append("\n")
            else:
                parts.append(" ")
        parts.append(w.text)
        prev = (page, w)
    return "".join(parts)


def line_rects(words: Sequence[Word]) -> list[Rect]:
    """Merge the boxes of consecutive words on one line into one band per line."""
    out: list[Rect] = []
    cur: Optional[list[float]] = None
    key = None
    for w in words:
        k = (w.block, w.line)
        if cur is not None and k == key and w.rect[0] >= cur[0] - 1.0:
            cur[1] = min(cur[1], w.rect[1])
            cur[2] = max(cur[2], w.rect[2])
            cur[3] = max(cur[3], w.rect[3])
        else:
            if cur is not None:
                out.append((cur[0], cur[1], cur[2], cur[3]))
            cur = list(w.rect)
            key = k
    if cur is not None:
        out.append((cur[0], cur[1], cur[2], cur[3]))
    for w in words:  # second halves of words hyphenated across a line end
        out.extend(getattr(w, "more_rects", ()))
    return out
