"""Ctrl+F: the find bar above the pages."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from bookreader.ui.reader_view import ReaderView


class FindBar(QFrame):
    """Ctrl+F: a search box above the pages; Enter finds the next hit, Shift+Enter the last."""

    def __init__(self, reader: ReaderView, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.reader = reader
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 5, 10, 5)
        self.edit = QLineEdit(objectName="findEdit")
        self.edit.setPlaceholderText("Find in book")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(self._on_return)
        row.addWidget(self.edit, 1)
        prev_b = QPushButton("Previous", objectName="smallButton")
        prev_b.clicked.connect(lambda: reader.find_next(-1))
        next_b = QPushButton("Next", objectName="smallButton")
        next_b.clicked.connect(lambda: self._on_return())
        self.count = QLabel("", objectName="hintText")
        close = QPushButton("Done", objectName="smallButton")
        close.clicked.connect(self.close_bar)
        for w in (prev_b, next_b, self.count, close):
            row.addWidget(w)
        self._searched = ""
        self._finished = False
        reader.find_changed.connect(self.on_find_changed)
        reader.find_finished.connect(self.on_find_finished)

    def open_bar(self) -> None:
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.reader.clear_find()
        self._searched = ""
        self.reader.setFocus()

    def _on_return(self) -> None:
        text = self.edit.text().strip()
        if text != self._searched:
            self._searched = text
            self._finished = False
            self.reader.find(text)
        else:
            self.reader.find_next(1)

    def on_find_changed(self, current: int, total: int) -> None:
        if not self._searched:
            self.count.setText("")
        elif total == 0:
            self.count.setText("No matches" if self._finished else "Searching…")
        elif not self._finished:
            # Hits before the current one may still be found (the search wraps around
            # from the page shown): no "n of m" until every page was searched.
            self.count.setText("counting…")
        else:
            self.count.setText(f"{current + 1} of {total}")

    def on_find_finished(self, total: int) -> None:
        self._finished = True
        current = self.reader.find_current()
        self.on_find_changed(current, total)

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
        else:
            super().keyPressEvent(event)
