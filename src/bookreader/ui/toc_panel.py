"""The table of contents sidebar, built from the PDF outline."""

from __future__ import annotations

from typing import Optional, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from bookreader.core.types import TocEntry

PAGE_ROLE = Qt.ItemDataRole.UserRole


class TocPanel(QWidget):
    """Chapters and sections; a click goes to the page, the current one is highlighted."""

    page_requested = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 8)
        self.tree = QTreeWidget(objectName="tocTree")
        self.tree.setHeaderHidden(True)
        self.tree.setColumnCount(2)
        self.tree.setIndentation(14)
        self.tree.itemClicked.connect(self._on_clicked)
        self.tree.itemActivated.connect(self._on_clicked)
        lay.addWidget(self.tree, 1)
        # Empty until a book is set: "no outline" is said only of a book that has none.
        self.empty = QLabel("", objectName="emptyHint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        lay.addWidget(self.empty)
        self.tree.hide()
        self._items: list[tuple[int, QTreeWidgetItem]] = []
        #: The entry last clicked and its page: it stays the highlighted one while that
        #: page is shown, though a later entry (its first subsection) starts there too.
        self._clicked: Optional[tuple[int, QTreeWidgetItem]] = None

    def set_loading(self) -> None:
        """A book is being opened: a neutral note instead of "no outline"."""
        self.tree.clear()
        self._items = []
        self._clicked = None
        self.tree.hide()
        self.empty.setText("Opening the book…")
        self.empty.show()

    def set_toc(self, toc: Sequence[TocEntry], labels: Sequence[str] = ()) -> None:
        self.tree.clear()
        self._items = []
        self._clicked = None
        self.empty.setText("This book has no outline.")
        stack: list[tuple[int, QTreeWidgetItem]] = []
        for entry in toc:
            label = labels[entry.page] if 0 <= entry.page < len(labels) else str(entry.page + 1)
            item = QTreeWidgetItem([entry.title, label])
            item.setData(0, PAGE_ROLE, entry.page)
            item.setToolTip(0, entry.title)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            item.setForeground(1, self.palette().placeholderText())
            while stack and stack[-1][0] >= entry.level:
                stack.pop()
            if stack:
                stack[-1][1].addChild(item)
            else:
                self.tree.addTopLevelItem(item)
            stack.append((entry.level, item))
            self._items.append((entry.page, item))
        self.tree.expandToDepth(0)
        self.tree.resizeColumnToContents(1)
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, self.tree.header().ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, self.tree.header().ResizeMode.ResizeToContents)
        self.empty.setVisible(not self._items)
        self.tree.setVisible(bool(self._items))

    def set_current_page(self, page: int) -> None:
        """Select the last outline entry starting on or before ``page`` (the one clicked,
        when several start on the same page as it)."""
        best, best_start = None, -1
        for start, item in self._items:
            if best_start <= start <= page:
                best, best_start = item, start
        if self._clicked is not None:
            if self._clicked[0] == best_start:
                best = self._clicked[1]
            else:
                self._clicked = None
        if best is not None and best is not self.tree.currentItem():
            self.tree.blockSignals(True)
            self.tree.setCurrentItem(best)
            self.tree.blockSignals(False)

    def _on_clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        page = item.data(0, PAGE_ROLE)
        if page is not None and page >= 0:
            self._clicked = (int(page), item)
            self.page_requested.emit(int(page))
