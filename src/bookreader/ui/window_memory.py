"""What the main window remembers between runs, in ``ui.ini`` in the data folder.

A mixin of :class:`~bookreader.ui.main_window.MainWindow` (kept apart to keep that file
short): the recently opened books and their titles (the File > Open recent menu and the
library panel's list), the page each book was left at, and the window's geometry and
dock layout.  It reads and writes ``self.ui_state`` (the window's ``QSettings``) and
nothing else of the library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import QSettings, Qt

MAX_RECENT = 8
#: Widest "Open recent" entry, in pixels (longer titles are cut in the middle).
RECENT_TEXT_PX = 420


class WindowMemoryMixin:
    """Recent books, last pages and the layout of the main window."""

    # Provided by MainWindow.
    ui_state: QSettings
    recent_menu: Any
    library_panel: Any
    side_dock: Any
    chat_dock: Any
    open_book: Any

    # --- recent books ------------------------------------------------------------------------------
    def recent_books(self) -> list[str]:
        value = self.ui_state.value("recent", [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            return []
        return [str(p) for p in value if p]

    def last_book(self) -> Optional[str]:
        """The most recently opened book that still exists (None: none)."""
        return next((p for p in self.recent_books() if Path(p).is_file()), None)

    def _add_recent(self, path: str) -> None:
        recent = [path] + [p for p in self.recent_books() if p != path]
        self.ui_state.setValue("recent", recent[:MAX_RECENT])
        self.library_panel.set_recent(recent[:MAX_RECENT])

    def _fill_recent_menu(self) -> None:
        """Each recent book by its title, cut in the middle when long; the full path in
        its tooltip."""
        self.recent_menu.clear()
        self.recent_menu.setToolTipsVisible(True)
        metrics = self.recent_menu.fontMetrics()
        for p in self.recent_books():
            text = metrics.elidedText(self._recent_title(p), Qt.TextElideMode.ElideMiddle,
                                      RECENT_TEXT_PX)
            action = self.recent_menu.addAction(text.replace("&", "&&"))
            action.setToolTip(p)
            action.setData(p)
            action.triggered.connect(lambda _checked=False, p=p: self.open_book(p))
        if not self.recent_books():
            self.recent_menu.addAction("(none)").setEnabled(False)

    def _recent_title(self, path: str) -> str:
        """A book's title as last seen (the file name for a book never opened)."""
        title = self.ui_state.value(_title_key(path), "")
        return str(title) if title else Path(path).name

    def _remember_title(self, path: str, title: str) -> None:
        self.ui_state.setValue(_title_key(path), title)

    # --- last pages --------------------------------------------------------------------------------
    def last_page(self, path: str) -> int:
        """The page a book was left at (0 when never opened)."""
        value = self.ui_state.value(_last_page_key(path), 0)
        if not isinstance(value, (int, float, str)):
            return 0
        try:
            return int(value)
        except ValueError:
            return 0

    def _remember_page(self, path: str, page: int) -> None:
        self.ui_state.setValue(_last_page_key(path), page)

    # --- layout ------------------------------------------------------------------------------------
    def _restore_layout(self) -> None:
        geometry = self.ui_state.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1440, 900)
        state = self.ui_state.value("window_state")
        self._layout_restored = state is not None and self.restoreState(state)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not getattr(self, "_layout_restored", True):
            self._layout_restored = True
            self.default_dock_sizes()

    def default_dock_sizes(self) -> None:
        """Contents on the left, the chat a third of the window on the right."""
        width = max(self.width(), 1000)
        self.resizeDocks([self.side_dock, self.chat_dock], [260, int(width * 0.3)],
                         Qt.Orientation.Horizontal)

    def save_layout(self) -> None:
        self.ui_state.setValue("geometry", self.saveGeometry())
        self.ui_state.setValue("window_state", self.saveState())
        self.ui_state.sync()


def _last_page_key(path: str) -> str:
    """The ui.ini key of a book's last page (a hash: paths hold slashes)."""
    return "last_page/" + _path_hash(path)


def _title_key(path: str) -> str:
    return "title/" + _path_hash(path)


def _path_hash(path: str) -> str:
    import hashlib

    return hashlib.sha1(path.encode("utf-8")).hexdigest()[:16]
