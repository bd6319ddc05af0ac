"""Mouse and keyboard for the page view: word-snapped drag selection, double-click,
the selection's context menu, Ctrl+wheel zoom and reading keys.

A mixin of :class:`~bookreader.ui.reader_view.ReaderView` (kept apart to keep both files
short); it uses the view's selection state, signals and geometry helpers.
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from bookreader.core.types import Mode
from bookreader.ui.answer_card import NEARBY_ACTION, NEARBY_TIP
from bookreader.ui.page_layout import WordRef



class ReaderInputMixin:
    """Input handling of the page view."""

    # --- mouse -------------------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton and self.layout_ is not None:
            self._press_pos = event.position().toPoint()
            self._dragging = False
            ref = self.word_ref_at(event.position())
            if ref is not None and event.modifiers() & Qt.KeyboardModifier.ShiftModifier \
                    and self._anchor is not None:
                self._cursor = ref
                self._selection_updated()
            self._press_ref = ref
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        pos = event.position()
        if self._press_pos is not None and event.buttons() & Qt.MouseButton.LeftButton:
            if not self._dragging and (pos.toPoint() - self._press_pos).manhattanLength() >= 4:
                self._dragging = True
                self._anchor = self._press_ref
                self._autoscroll.start()
            if self._dragging:
                self._drag_to(pos)
        elif self._words:
            over = self.word_ref_at(pos, snap=False) is not None
            self.viewport().setCursor(Qt.CursorShape.IBeamCursor if over
                                      else Qt.CursorShape.ArrowCursor)
        super().mouseMoveEvent(event)

    def _drag_to(self, pos: QPointF) -> None:
        ref = self.word_ref_at(pos)
        if ref is None:
            return
        if self._anchor is None:
            self._anchor = ref
        if ref != self._cursor:
            self._cursor = ref
            self._selection_updated()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            if self._press_pos is not None and not self._dragging and \
                    not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.clear_selection()
            self._press_pos = None
            self._dragging = False
            self._autoscroll.stop()
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        ref = self.word_ref_at(event.position(), snap=False)
        if ref is not None:
            self.select_words(ref, ref)
            self._press_pos = None
        super().mouseDoubleClickEvent(event)

    def _on_autoscroll(self) -> None:
        if not self._dragging:
            self._autoscroll.stop()
            return
        pos = self.viewport().mapFromGlobal(self.cursor().pos())
        h = self.viewport().height()
        step = 0
        if pos.y() < 0:
            step = max(-60, pos.y())
        elif pos.y() > h:
            step = min(60, pos.y() - h)
        if step:
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + step)
            self._drag_to(QPointF(pos.x(), max(0, min(h - 1, pos.y()))))

    def wheelEvent(self, event) -> None:  # noqa: N802
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120.0
            if steps:
                self._zoom_mode = "custom"
                self._set_scale(self.scale * (1.15 ** steps), anchor=event.position())
            event.accept()
            return
        super().wheelEvent(event)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        pos = QPointF(event.pos())
        ref = self.word_ref_at(pos, snap=False)
        if ref is not None and not self._in_selection(ref):
            self.select_words(ref, ref)
        if not self.selected_text():
            return
        self.show_context_menu(event.globalPos())

    def _in_selection(self, ref: WordRef) -> bool:
        if self._anchor is None or self._cursor is None:
            return False
        a, b = sorted((self._anchor, self._cursor), key=WordRef.key)
        return a.key() <= ref.key() <= b.key()

    def show_context_menu(self, global_pos: QPoint) -> QMenu:
        """The selection's menu, shown without blocking (so tests can drive it)."""
        if self.context_menu is not None:
            self.context_menu.close()
            self.context_menu.deleteLater()
        menu = QMenu(cast(QWidget, self))  # the mixin is part of a QWidget (ReaderView)
        menu.setObjectName("selectionMenu")
        ask = menu.addAction("Ask about this")
        ask.setToolTip("Ask about the selected text only")
        ask.triggered.connect(lambda: self._ask(Mode.SELECTED))
        around = menu.addAction(NEARBY_ACTION)
        around.setToolTip(NEARBY_TIP)
        around.triggered.connect(lambda: self._ask(Mode.HIGHLIGHT))
        menu.addSeparator()
        copy = QAction("Copy", menu)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.triggered.connect(self.copy_selection)
        menu.addAction(copy)
        self.context_menu = menu
        menu.popup(global_pos)
        self.context_menu_shown.emit(menu)
        return menu

    def _ask(self, mode: Mode) -> None:
        text = self.selected_text()
        pages = self.selected_pages()
        if not text or pages is None:
            return
        self.ask_requested.emit(text, mode, pages)

    # --- keyboard ---------------------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:  # noqa: N802
        bar = self.verticalScrollBar()
        key = event.key()
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
        elif key == Qt.Key.Key_PageDown or (key == Qt.Key.Key_Space and
                                            not event.modifiers()):
            bar.setValue(bar.value() + int(self.viewport().height() * 0.9))
        elif key == Qt.Key.Key_PageUp:
            bar.setValue(bar.value() - int(self.viewport().height() * 0.9))
        elif key == Qt.Key.Key_Home:
            bar.setValue(0)
        elif key == Qt.Key.Key_End:
            bar.setValue(bar.maximum())
        elif key == Qt.Key.Key_Escape:
            self.clear_selection()
            self.clear_citation()
        else:
            super().keyPressEvent(event)
