"""The page view: continuous scrolling, lazy sharp rendering, word-snapped selection.

Only visible pages (and one either side) are rendered, on the document thread, at the
screen's device pixel ratio; images are cached per zoom level, and while a sharp render is
on its way the page shows the nearest cached image scaled.  Selection snaps to the words
the PDF pipeline extracted, so what is highlighted is exactly what is copied or asked.
"""

from __future__ import annotations

import logging
from typing import Optional

from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QMenu, QWidget

from bookreader.core.types import Rect, Word
from bookreader.ui.document import DocumentMeta, DocumentService, RenderedPage
from bookreader.ui.page_cache import CACHE_BYTES, FindResults, PageImageCache
from bookreader.ui.page_layout import (PageLayout, WordRef, join_words, line_rects,
                                       selected_refs, word_at)
from bookreader.ui.reader_input import ReaderInputMixin

log = logging.getLogger(__name__)

SCREEN_DPI_SCALE = 96.0 / 72.0  # 100 % zoom shows a page at its printed size on a 96 dpi screen
MIN_SCALE, MAX_SCALE = 0.25, 8.0

BACKGROUND = QColor("#5b6270")
SELECTION = QColor(41, 121, 255, 80)
FIND_HIT = QColor(255, 214, 0, 110)
FIND_CURRENT = QColor(255, 140, 0, 150)
CITATION_FILL = QColor(46, 204, 113, 90)
CITATION_EDGE = QColor(22, 140, 70)


class ReaderView(ReaderInputMixin, QAbstractScrollArea):
    """Shows one book as a continuous column of pages."""

    page_changed = Signal(int, str)  # physical page, printed label
    selection_changed = Signal(str)
    ask_requested = Signal(str, object, object)  # text, Mode, (first_page, last_page)
    zoom_changed = Signal(int)  # percent
    find_changed = Signal(int, int)  # current hit (0-based, -1 none), number of hits
    find_finished = Signal(int)  # number of hits, once every page was searched
    first_page_painted = Signal()
    citation_shown = Signal(int)  # page
    context_menu_shown = Signal(object)  # the QMenu (tests and screenshots use it)

    def __init__(self, document: DocumentService, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.doc = document
        self.meta: Optional[DocumentMeta] = None
        self.layout_: Optional[PageLayout] = None
        self._cache = PageImageCache(CACHE_BYTES)
        self._words: dict[int, list[Word]] = {}
        self._anchor: Optional[WordRef] = None
        self._cursor: Optional[WordRef] = None
        self._press_pos: Optional[QPoint] = None
        self._dragging = False
        self._find = FindResults()
        self._citation: Optional[tuple[int, list[Rect]]] = None
        self._zoom_mode = "fit_width"
        self._last_page = -1
        self._painted_first = False
        self._schedule_timer = QTimer(self, singleShot=True, interval=0)
        self._schedule_timer.timeout.connect(self._request_renders)
        self._autoscroll = QTimer(self, interval=30)
        self._autoscroll.timeout.connect(self._on_autoscroll)
        self.context_menu: Optional[QMenu] = None

        self.setObjectName("readerView")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.setFrameShape(QAbstractScrollArea.Shape.NoFrame)
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.horizontalScrollBar().valueChanged.connect(self._on_scrolled)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)
        document.opened.connect(self.on_document_opened)
        document.page_rendered.connect(self.on_page_rendered)
        document.find_progressed.connect(self.on_find_progressed)
        document.find_finished.connect(self.on_find_finished)
        document.excerpt_located.connect(self.on_excerpt_located)
        document.page_failed.connect(self.on_page_failed)
        self._failed: dict[int, str] = {}

    # --- document -------------------------------------------------------------------------
    def on_document_opened(self, meta: DocumentMeta) -> None:
        self.meta = meta
        self.layout_ = PageLayout(meta.sizes)
        self._cache.clear()
        self._words.clear()
        self._failed.clear()
        self._anchor = self._cursor = None
        self._find = FindResults()
        self._citation = None
        self._last_page = -1
        self._painted_first = False
        self._apply_zoom_mode(keep_position=False)
        self.verticalScrollBar().setValue(0)
        self._update_scrollbars()
        self._schedule()
        self._emit_page_changed()
        self.viewport().update()


    @property
    def page_count(self) -> int:
        return self.meta.page_count if self.meta else 0

    def words(self, page: int) -> list[Word]:
        """The words of a page once it has been rendered (empty before)."""
        return list(self._words.get(page, ()))

    # --- zoom -------------------------------------------------------------------------------
    @property
    def scale(self) -> float:
        return self.layout_.scale if self.layout_ else SCREEN_DPI_SCALE

    @property
    def zoom_percent(self) -> int:
        return int(round(self.scale / SCREEN_DPI_SCALE * 100))

    @property
    def zoom_mode(self) -> str:
        return self._zoom_mode

    def set_zoom_percent(self, percent: float) -> None:
        self._zoom_mode = "custom"
        self._set_scale(percent / 100.0 * SCREEN_DPI_SCALE)

    def zoom_in(self) -> None:
        self.set_zoom_percent(self.zoom_percent * 1.2)

    def zoom_out(self) -> None:
        self.set_zoom_percent(self.zoom_percent / 1.2)

    def fit_width(self) -> None:
        self._zoom_mode = "fit_width"
        self._apply_zoom_mode()

    def fit_page(self) -> None:
        self._zoom_mode = "fit_page"
        self._apply_zoom_mode()

    def _apply_zoom_mode(self, keep_position: bool = True) -> None:
        if self.layout_ is None or self._zoom_mode == "custom":
            return
        vw = self.viewport().width() - 2  # leave room so no horizontal scrollbar appears
        vh = self.viewport().height()
        if self._zoom_mode == "fit_width":
            scale = min(self.layout_.fit_width_scale(vw), 2.5 * SCREEN_DPI_SCALE)
        else:
            scale = self.layout_.fit_page_scale(vw, vh, max(0, self.current_page()))
        self._set_scale(scale, keep_position=keep_position)

    def _set_scale(self, scale: float, anchor: Optional[QPointF] = None,
                   keep_position: bool = True) -> None:
        if self.layout_ is None:
            return
        scale = max(MIN_SCALE, min(MAX_SCALE, scale))
        if abs(scale - self.layout_.scale) < 1e-6:
            return
        if anchor is None:
            anchor = QPointF(self.viewport().width() / 2, 0.0)
        spot = self._viewport_to_page(anchor) if keep_position else None
        self.layout_.set_scale(scale)
        self._update_scrollbars()
        if spot is not None:
            page, x, y = spot
            cx, cy = self.layout_.to_content(page, x, y)
            self.horizontalScrollBar().setValue(int(cx - anchor.x()))
            self.verticalScrollBar().setValue(int(cy - anchor.y()))
        self.zoom_changed.emit(self.zoom_percent)
        self._schedule()
        self.viewport().update()

    # --- navigation -------------------------------------------------------------------------
    def current_page(self) -> int:
        """The page at the top third of the viewport."""
        if self.layout_ is None or not len(self.layout_):
            return -1
        y = self.verticalScrollBar().value() + self.viewport().height() / 3.0
        return self.layout_.page_at_y(y)

    def go_to_page(self, page: int, y_points: Optional[float] = None) -> None:
        """Scroll so ``page`` is at the top (or ``y_points`` on it near the top third)."""
        if self.layout_ is None or not len(self.layout_):
            return
        page = max(0, min(page, len(self.layout_) - 1))
        _, top, _, _ = self.layout_.page_rect(page)
        if y_points is None:
            target = top - 8
        else:
            target = top + y_points * self.layout_.scale - self.viewport().height() / 3.0
        self.verticalScrollBar().setValue(int(max(0, target)))
        self._emit_page_changed()

    def go_to_label(self, label: str) -> bool:
        """Go to the page printed as ``label``; False when no page has that label."""
        if self.meta is None:
            return False
        page = self.meta.find_label(label)
        if page is None:
            return False
        self.go_to_page(page)
        return True

    def label(self, page: int) -> str:
        if self.meta and 0 <= page < len(self.meta.labels):
            return self.meta.labels[page]
        return str(page + 1)

    def _emit_page_changed(self) -> None:
        page = self.current_page()
        if page != self._last_page and page >= 0:
            self._last_page = page
            self.page_changed.emit(page, self.label(page))

    # --- selection -----------------------------------------------------------------------------
    def selected_items(self) -> list[tuple[int, Word]]:
        if self._anchor is None or self._cursor is None:
            return []
        return selected_refs(self._anchor, self._cursor, self._words)

    def selected_text(self) -> str:
        """The selected words in reading order (what Ctrl+C copies and questions quote)."""
        return join_words(self.selected_items())

    def selected_pages(self) -> Optional[tuple[int, int]]:
        if self._anchor is None or self._cursor is None:
            return None
        a, b = sorted((self._anchor.page, self._cursor.page))
        return (a, b)

    def select_words(self, start: WordRef, end: WordRef) -> None:
        self._anchor, self._cursor = start, end
        self._selection_updated()

    def clear_selection(self) -> None:
        if self._anchor is not None:
            self._anchor = self._cursor = None
            self._selection_updated()

    def copy_selection(self) -> str:
        text = self.selected_text()
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    def _selection_updated(self) -> None:
        self.viewport().update()
        self.selection_changed.emit(self.selected_text())

    def word_ref_at(self, pos: QPointF, snap: bool = True) -> Optional[WordRef]:
        spot = self._viewport_to_page(pos)
        if spot is None:
            return None
        page, x, y = spot
        word = word_at(self._words.get(page, ()), x, y, snap=snap)
        return WordRef(page, word.index) if word is not None else None

    def word_center(self, page: int, index: int) -> Optional[QPoint]:
        """Where a word is drawn, in viewport coordinates (tests use it to click words)."""
        if self.layout_ is None:
            return None
        for w in self._words.get(page, ()):
            if w.index == index:
                x0, y0 = self.layout_.to_content(page, w.rect[0], w.rect[1])
                x1, y1 = self.layout_.to_content(page, w.rect[2], w.rect[3])
                return QPoint(int((x0 + x1) / 2 - self.horizontalScrollBar().value()),
                              int((y0 + y1) / 2 - self.verticalScrollBar().value()))
        return None

    # --- citations --------------------------------------------------------------------------
    def show_citation(self, page: int, rects: list[Rect], excerpt: str = "") -> None:
        """Scroll to a cited page and highlight the excerpt (located on the page when the
        citation came without rectangles)."""
        if self.meta is None or not (0 <= page < self.meta.page_count):
            return
        self._citation = (page, [tuple(r) for r in rects])
        top = min((r[1] for r in rects), default=None)
        self.go_to_page(page, top)
        if not rects and excerpt:
            self.doc.locate_excerpt(page, excerpt)
        self.viewport().update()
        self.citation_shown.emit(page)

    def on_excerpt_located(self, page: int, rects: list) -> None:
        if self._citation and self._citation[0] == page and not self._citation[1] and rects:
            self._citation = (page, [tuple(r) for r in rects])
            self.go_to_page(page, min(r[1] for r in rects))
            self.viewport().update()

    def citation_highlight(self) -> Optional[tuple[int, list[Rect]]]:
        return self._citation

    def clear_citation(self) -> None:
        self._citation = None
        self.viewport().update()

    # --- find ------------------------------------------------------------------------------
    def find(self, query: str) -> None:
        self._find = FindResults(query.strip())
        if self._find.query:
            self.doc.find(self._find.query, max(0, self.current_page()))
        self.find_changed.emit(-1, 0)
        self.viewport().update()

    def clear_find(self) -> None:
        self.doc.cancel_find()
        self._find = FindResults()
        self.find_changed.emit(-1, 0)
        self.viewport().update()

    def on_find_progressed(self, query: str, page: int, rects: list) -> None:
        if query != self._find.query:
            return
        if self._find.add(page, rects):
            self._show_find_hit(self._find.current_hit())
        self.find_changed.emit(self._find.current, self._find.total)
        self.viewport().update()

    def on_find_finished(self, query: str, hits: int) -> None:
        if query == self._find.query:
            self.find_changed.emit(self._find.current, self._find.total)
            self.find_finished.emit(self._find.total)

    def find_next(self, step: int = 1) -> None:
        hit = self._find.step(step)
        if hit is not None:
            self._show_find_hit(hit)
            self.find_changed.emit(self._find.current, self._find.total)

    def find_current(self) -> int:
        """The current find hit's place among all hits (-1: none)."""
        return self._find.current

    def find_hits(self) -> dict[int, list[Rect]]:
        return dict(self._find.hits)

    def _show_find_hit(self, hit) -> None:
        if hit is not None:
            page, rect = hit
            self.go_to_page(page, rect[1])
            # Ask for the page now, not on the next event-loop pass: the find pauses for
            # a waiting render, so the page shows before the rest of the book is searched.
            self._request_renders()
            self.viewport().update()

    # --- rendering ----------------------------------------------------------------------------
    def _schedule(self) -> None:
        self._schedule_timer.start()

    def _render_key(self) -> tuple[int, float]:
        zoom = self.scale * self.viewport().devicePixelRatioF()
        return int(round(zoom * 1000)), zoom

    def visible_pages(self) -> range:
        if self.layout_ is None:
            return range(0)
        y0 = self.verticalScrollBar().value()
        return self.layout_.visible_pages(y0, y0 + self.viewport().height())

    def _request_renders(self) -> None:
        if self.layout_ is None or self.meta is None:
            return
        key, zoom = self._render_key()
        visible = list(self.visible_pages())
        around = []
        if visible:
            around = [p for p in (visible[-1] + 1, visible[0] - 1) if 0 <= p < self.page_count]
        wanted = [(p, key, zoom) for p in visible + around
                  if (p, key) not in self._cache and p not in self._failed]
        self.doc.set_wanted_pages(wanted)

    def on_page_rendered(self, result: RenderedPage) -> None:
        if self.meta is None:
            return
        if result.words is not None:
            self._words[result.page] = sorted(result.words, key=lambda w: w.index)
        image = result.image
        self._cache.put(result.page, result.key, image)
        if result.page in self.visible_pages():
            self.viewport().update()

    def on_page_failed(self, page: int, message: str) -> None:
        """A damaged page: say so on the page instead of retrying it forever."""
        self._failed[page] = message
        self.viewport().update()

    def is_page_rendered(self, page: int) -> bool:
        return (page, self._render_key()[0]) in self._cache

    def _image_for(self, page: int) -> tuple[Optional[QImage], bool]:
        """The sharp image for the current zoom, else any cached one (scaled), else None."""
        return self._cache.best(page, self._render_key()[0])

    # --- painting ------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        painter = QPainter(self.viewport())
        painter.fillRect(self.viewport().rect(), BACKGROUND)
        if self.layout_ is None:
            painter.end()
            return
        dx = self.horizontalScrollBar().value()
        dy = self.verticalScrollBar().value()
        selection = self._selection_by_page()
        current_hit = self._find.current_hit()
        painted_sharp = False
        for page in self.visible_pages():
            x, y, w, h = self.layout_.page_rect(page)
            target = QRectF(x - dx, y - dy, w, h)
            painter.fillRect(target.translated(2, 3), QColor(0, 0, 0, 60))
            image, sharp = self._image_for(page)
            if image is None:
                painter.fillRect(target, QColor("#ffffff"))
                painter.setPen(QColor("#b42318" if page in self._failed else "#9aa0aa"))
                text = self._failed.get(page) or f"Page {self.label(page)}"
                painter.drawText(target.adjusted(24, 24, -24, -24),
                                 Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
            else:
                # A sharp image is drawn 1:1; a stale one (other zoom) is scaled quickly until
                # its sharp render arrives, because smooth scaling a page costs ~50 ms.
                if sharp:  # pixel for pixel, whatever the rounding of the page size
                    dpr = self.viewport().devicePixelRatioF()
                    painter.drawImage(QRectF(target.x(), target.y(), image.width() / dpr,
                                             image.height() / dpr), image)
                else:
                    painter.drawImage(target, image)
                painted_sharp = painted_sharp or sharp
            self._paint_rects(painter, page, self._find.hits.get(page, ()), FIND_HIT, dx, dy)
            if current_hit is not None and current_hit[0] == page:
                self._paint_rects(painter, page, [current_hit[1]], FIND_CURRENT, dx, dy)
            self._paint_rects(painter, page, selection.get(page, ()), SELECTION, dx, dy)
            if self._citation and self._citation[0] == page:
                self._paint_rects(painter, page, self._citation[1], CITATION_FILL, dx, dy,
                                  edge=CITATION_EDGE)
        painter.end()
        if painted_sharp and not self._painted_first:
            self._painted_first = True
            self.first_page_painted.emit()

    def _paint_rects(self, painter: QPainter, page: int, rects, color: QColor, dx: float,
                     dy: float, edge: Optional[QColor] = None) -> None:
        layout = self.layout_
        if not rects or layout is None:
            return
        painter.setPen(QPen(edge, 1.5) if edge is not None else Qt.PenStyle.NoPen)
        painter.setBrush(color)
        for r in rects:
            x, y, w, h = layout.rect_to_content(page, r)
            painter.drawRoundedRect(QRectF(x - dx - 1, y - dy - 1, w + 2, h + 2), 2, 2)

    def _selection_by_page(self) -> dict[int, list[Rect]]:
        by_page: dict[int, list[Word]] = {}
        for page, w in self.selected_items():
            by_page.setdefault(page, []).append(w)
        return {p: line_rects(ws) for p, ws in by_page.items()}

    # --- geometry -------------------------------------------------------------------------------
    def _viewport_to_page(self, pos: QPointF) -> Optional[tuple[int, float, float]]:
        if self.layout_ is None or not len(self.layout_):
            return None
        cx = pos.x() + self.horizontalScrollBar().value()
        cy = pos.y() + self.verticalScrollBar().value()
        page = self.layout_.page_at_y(cy)
        x, y = self.layout_.to_page(page, cx, cy)
        return page, x, y

    def _update_scrollbars(self) -> None:
        if self.layout_ is None:
            return
        self.layout_.set_viewport_width(self.viewport().width())
        vh, vw = self.viewport().height(), self.viewport().width()
        self.verticalScrollBar().setRange(0, max(0, int(self.layout_.content_height - vh)))
        self.verticalScrollBar().setPageStep(vh)
        self.verticalScrollBar().setSingleStep(40)
        self.horizontalScrollBar().setRange(0, max(0, int(self.layout_.content_width - vw)))
        self.horizontalScrollBar().setPageStep(vw)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._update_scrollbars()
        self._apply_zoom_mode()
        self._schedule()

    def _on_scrolled(self, _value: int) -> None:
        self._schedule()
        self._emit_page_changed()
        self.viewport().update()
