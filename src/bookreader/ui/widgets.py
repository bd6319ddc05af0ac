"""Small widgets shared by the panels: a flow layout for chips, badges, an elided label."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLabel, QLayout, QSizePolicy, QWidget, QWidgetItem


class FlowLayout(QLayout):
    """Lays widgets out left to right and wraps them onto new rows (citation chips)."""

    def __init__(self, parent: Optional[QWidget] = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item) -> None:  # noqa: N802 (Qt naming)
        self._items.append(item)

    def addWidget(self, widget: QWidget) -> None:  # noqa: N802
        self.addChildWidget(widget)
        self.addItem(QWidgetItem(widget))

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _arrange(self, rect: QRect, apply: bool) -> int:
        x, y, row_h = rect.x(), rect.y(), 0
        right = rect.right()
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > right + 1 and row_h > 0:
                x = rect.x()
                y += row_h + self._spacing
                row_h = 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            row_h = max(row_h, hint.height())
        return y + row_h - rect.y()


def badge(text: str, kind: str, tooltip: str = "") -> QLabel:
    """A small rounded label; ``kind`` selects its colours in the style sheet."""
    label = QLabel(text)
    label.setObjectName("badge")
    label.setProperty("kind", kind)
    label.setToolTip(tooltip)
    label.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
    return label


def wrapped_label(text: str = "", object_name: str = "", selectable: bool = False) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    if object_name:
        label.setObjectName(object_name)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def elide_middle(text: str, limit: int) -> str:
    """Shorten long text for display, keeping its start and end, cut between words
    ("Fixing … standard errors", never "Fixing … ndard errors").

    A first or last word longer than the room left is cut itself (a path, a URL)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = max(limit - 3, 2)  # " … " between the two ends
    words = text.split(" ")
    head: list[str] = []
    used = 0
    for w in words:
        if used + len(w) + bool(head) > room // 2:
            break
        head.append(w)
        used += len(w) + (len(head) > 1)
    tail: list[str] = []
    rest = room - used
    for w in reversed(words[len(head):]):
        if sum(map(len, tail)) + len(tail) + len(w) > rest:
            break
        tail.insert(0, w)
    if not head and not tail:  # one long word: cut it in the middle
        half = room // 2
        return f"{text[:half]}…{text[-half:]}"
    return " … ".join(part for part in (" ".join(head), " ".join(tail)) if part)
