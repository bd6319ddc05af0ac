"""The library panel: every book with its state, indexing progress, and recent files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QMenu, QProgressBar, QPushButton, QScrollArea, QVBoxLayout,
                               QWidget)

from bookreader.core.types import BookInfo


def _title_from_path(path: str) -> str:
    return Path(path).stem.replace("_", " ").replace("-", " ")


@dataclass
class BookEntry:
    """What a row shows; merged from the catalogue and running ingests."""

    path: str
    title: str
    book_id: str = ""
    page_count: int = 0
    state: str = "ready"  # "queued", "indexing", "ready", "failed", "cancelled", "damaged"
    message: str = ""
    done: int = 0
    total: int = 0
    step: str = ""


class BookRow(QFrame):
    """One book: title, pages and state; a progress bar and Cancel while indexing."""

    cancel_clicked = Signal(str)
    retry_clicked = Signal(str)
    activated = Signal(str)
    menu_requested = Signal(str, object)  # path, global position

    def __init__(self, entry: BookEntry, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("bookRow")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 8)
        lay.setSpacing(4)
        self.title = QLabel(objectName="bookTitle")
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        self.status = QLabel(objectName="bookStatus")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        row = QHBoxLayout()
        row.setSpacing(6)
        self.progress = QProgressBar(objectName="ingestProgress")
        self.progress.setTextVisible(False)
        self.progress.setFixedHeight(6)
        row.addWidget(self.progress, 1)
        self.cancel = QPushButton("Cancel", objectName="smallButton")
        self.cancel.clicked.connect(lambda: self.cancel_clicked.emit(self.entry.path))
        row.addWidget(self.cancel)
        self.retry = QPushButton("Index again", objectName="smallButton")
        self.retry.clicked.connect(lambda: self.retry_clicked.emit(self.entry.path))
        row.addWidget(self.retry)
        lay.addLayout(row)
        self.update_entry(entry)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self.activated.emit(self.entry.path)
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event) -> None:  # noqa: N802
        self.menu_requested.emit(self.entry.path, event.globalPos())

    def set_current(self, current: bool) -> None:
        self.setProperty("current", current)
        self.style().unpolish(self)
        self.style().polish(self)

    def update_entry(self, entry: BookEntry) -> None:
        self.entry = entry
        self.title.setText(entry.title)
        pages = f"{entry.page_count} pages · " if entry.page_count else ""
        indexing = entry.state in ("queued", "indexing")
        self.progress.setVisible(indexing)
        self.cancel.setVisible(indexing)
        self.retry.setVisible(entry.state in ("failed", "cancelled", "damaged"))
        if entry.state == "queued":
            text = f"{pages}Waiting to be indexed…"
            self.progress.setRange(0, 0)
        elif entry.state == "indexing":
            if entry.total:
                pct = int(100 * entry.done / max(1, entry.total))
                text = f"{pages}{entry.step or 'Indexing'} {entry.done}/{entry.total} ({pct} %)"
                self.progress.setRange(0, entry.total)
                self.progress.setValue(entry.done)
            else:
                text = f"{pages}{entry.step or 'Indexing'}…"
                self.progress.setRange(0, 0)
        elif entry.state == "failed":
            text = f"Could not be indexed: {entry.message}"
        elif entry.state == "cancelled":
            text = f"{pages}Indexing cancelled; you can still read it."
        elif entry.state == "damaged":
            text = f"{pages}{entry.message or 'Damaged: re-index.'}"
        else:
            text = f"{pages}Ready for questions"
            if entry.message:
                text += f" · {entry.message}"
        self.status.setText(text)
        self.status.setProperty("state", entry.state)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)


class LibraryPanel(QWidget):
    """Books in the library (with state), plus recently opened files."""

    book_activated = Signal(str)  # path
    open_requested = Signal()
    cancel_requested = Signal(str)  # path
    reindex_requested = Signal(str)  # path
    remove_requested = Signal(str)  # book_id

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("libraryPanel")
        self._entries: dict[str, BookEntry] = {}
        self._rows: dict[str, BookRow] = {}
        self._current: Optional[str] = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 8)
        lay.setSpacing(6)
        top = QHBoxLayout()
        top.addWidget(QLabel("Books", objectName="sectionTitle"), 1)
        open_button = QPushButton("Open PDF…", objectName="smallButton")
        open_button.clicked.connect(self.open_requested)
        top.addWidget(open_button)
        lay.addLayout(top)
        self.scroll_area = QScrollArea(objectName="bookScroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        host = QWidget(objectName="bookHost")
        self.rows_layout = QVBoxLayout(host)
        self.rows_layout.setContentsMargins(0, 0, 0, 0)
        self.rows_layout.setSpacing(2)
        self.rows_layout.addStretch(1)
        self.scroll_area.setWidget(host)
        lay.addWidget(self.scroll_area, 3)
        self.empty = QLabel("Drop PDF files here or use File › Open.", objectName="emptyHint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(self.empty)
        lay.addWidget(QLabel("Recent", objectName="sectionTitle"))
        self.recent = QListWidget(objectName="recentList")
        self.recent.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # keep ".pdf" and the start
        self.recent.itemActivated.connect(lambda it: self.book_activated.emit(it.data(256)))
        self.recent.itemClicked.connect(lambda it: self.book_activated.emit(it.data(256)))
        lay.addWidget(self.recent, 1)

    # --- data ------------------------------------------------------------------------------------
    def entry(self, path: str) -> Optional[BookEntry]:
        return self._entries.get(path)

    def entries(self) -> list[BookEntry]:
        return list(self._entries.values())

    def set_books(self, books: list[BookInfo]) -> None:
        """The catalogue changed; running ingests keep their live progress."""
        seen = set()
        for info in books:
            key = info.path
            seen.add(key)
            old = self._entries.get(key)
            if old is not None and old.state in ("queued", "indexing"):
                old.book_id, old.page_count = info.book_id, info.page_count
                old.title = info.title or old.title
                continue
            state = info.state
            if state == "indexing":  # an interrupted ingest, not running now
                state = "cancelled" if old is None or old.state != "failed" else old.state
            self._entries[key] = BookEntry(
                path=key, title=info.title or _title_from_path(key), book_id=info.book_id,
                page_count=info.page_count, state=state, message=info.message)
        for key in list(self._entries):
            if key not in seen and self._entries[key].state not in ("queued", "indexing",
                                                                    "failed"):
                del self._entries[key]
        self._refresh()

    def set_queued(self, path: str) -> None:
        e = self._entries.get(path) or BookEntry(path=path, title=_title_from_path(path))
        e.state, e.done, e.total, e.step = "queued", 0, 0, ""
        self._entries[path] = e
        self._refresh()

    def set_progress(self, path: str, done: int, total: int, message: str) -> None:
        e = self._entries.get(path) or BookEntry(path=path, title=_title_from_path(path))
        e.state, e.done, e.total, e.step = "indexing", done, total, message
        self._entries[path] = e
        self._refresh(only=path)

    def set_finished(self, path: str, info: BookInfo) -> None:
        self._entries[path] = BookEntry(path=path, title=info.title or _title_from_path(path),
                                        book_id=info.book_id, page_count=info.page_count,
                                        state=info.state, message=info.message)
        self._refresh()

    def set_failed(self, path: str, message: str) -> None:
        e = self._entries.get(path) or BookEntry(path=path, title=_title_from_path(path))
        e.state, e.message = "failed", message
        self._entries[path] = e
        self._refresh()

    def set_cancelled(self, path: str) -> None:
        e = self._entries.get(path)
        if e is not None:
            e.state = "cancelled"
            self._refresh()

    def set_current(self, path: Optional[str]) -> None:
        self._current = path
        for key, row in self._rows.items():
            row.set_current(key == path)

    def set_recent(self, paths: list[str]) -> None:
        self.recent.clear()
        for p in paths:
            item = QListWidgetItem(Path(p).name)
            item.setToolTip(p)
            item.setData(256, p)
            self.recent.addItem(item)

    # --- rows ------------------------------------------------------------------------------------
    def row(self, path: str) -> Optional[BookRow]:
        return self._rows.get(path)

    def _refresh(self, only: Optional[str] = None) -> None:
        if only is not None and only in self._rows:
            self._rows[only].update_entry(self._entries[only])
            return
        for row in self._rows.values():
            row.setParent(None)
            row.deleteLater()
        self._rows.clear()
        order = sorted(self._entries.values(), key=lambda e: e.title.casefold())
        for i, e in enumerate(order):
            row = BookRow(e)
            row.cancel_clicked.connect(self.cancel_requested)
            row.retry_clicked.connect(self.reindex_requested)
            row.activated.connect(self.book_activated)
            row.menu_requested.connect(self._on_context_menu)
            row.setToolTip(e.path)
            row.set_current(e.path == self._current)
            self.rows_layout.insertWidget(i, row)
            self._rows[e.path] = row
        self.empty.setVisible(not self._entries)

    def _on_context_menu(self, path: str, global_pos) -> None:
        e = self._entries.get(path)
        if e is None:
            return
        menu = QMenu(self)
        menu.addAction("Open", lambda: self.book_activated.emit(e.path))
        menu.addAction("Index again", lambda: self.reindex_requested.emit(e.path))
        if e.book_id and e.state not in ("queued", "indexing"):
            menu.addAction("Remove from library", lambda: self.remove_requested.emit(e.book_id))
        menu.popup(global_pos)
