"""State behind the page view that needs no widget: rendered images and find hits."""

from __future__ import annotations

from collections import OrderedDict
from typing import Optional

from PySide6.QtGui import QImage

from bookreader.core.types import Rect

CACHE_BYTES = 256 * 1024 * 1024


class PageImageCache:
    """Rendered pages keyed by (page, zoom key), least recently used evicted first."""

    def __init__(self, budget_bytes: int = CACHE_BYTES) -> None:
        self.budget = budget_bytes
        self._images: OrderedDict[tuple[int, int], QImage] = OrderedDict()
        self._bytes = 0

    def __contains__(self, key: tuple[int, int]) -> bool:
        return key in self._images

    def clear(self) -> None:
        self._images.clear()
        self._bytes = 0

    def put(self, page: int, key: int, image: QImage) -> None:
        k = (page, key)
        if k in self._images:
            self._bytes -= self._images.pop(k).sizeInBytes()
        self._images[k] = image
        self._bytes += image.sizeInBytes()
        while self._bytes > self.budget and len(self._images) > 1:
            _, old = self._images.popitem(last=False)
            self._bytes -= old.sizeInBytes()

    def best(self, page: int, key: int) -> tuple[Optional[QImage], bool]:
        """The image for this zoom (sharp=True), else the newest one of the page, else None."""
        image = self._images.get((page, key))
        if image is not None:
            self._images.move_to_end((page, key))
            return image, True
        for (p, _), img in reversed(self._images.items()):
            if p == page:
                return img, False
        return None, False


class FindResults:
    """Hits of one search, in book order, and which one is current."""

    def __init__(self, query: str = "") -> None:
        self.query = query
        self.hits: dict[int, list[Rect]] = {}
        self.order: list[tuple[int, int]] = []  # (page, hit index on the page)
        self.current = -1
        self._current_key: tuple[int, int] = (-1, -1)

    def add(self, page: int, rects: list) -> bool:
        """Record a page's hits; True when this made the first hit current."""
        self.hits[page] = [tuple(r) for r in rects]
        self.order = sorted((p, i) for p, rs in self.hits.items() for i in range(len(rs)))
        if self.current < 0:
            self.current = self.order.index((page, 0))
            self._current_key = (page, 0)
            return True
        self.current = self.order.index(self._current_key)
        return False

    def step(self, by: int) -> Optional[tuple[int, Rect]]:
        """Move the current hit; returns (page, rect) of the new current hit."""
        if not self.order:
            return None
        self.current = (self.current + by) % len(self.order)
        return self.current_hit()

    def current_hit(self) -> Optional[tuple[int, Rect]]:
        if not (0 <= self.current < len(self.order)):
            return None
        page, i = self.order[self.current]
        self._current_key = (page, i)
        return page, self.hits[page][i]

    @property
    def total(self) -> int:
        return len(self.order)
