"""The Study panel's views: a flashcard (browse and review), a quiz, a summary.

Each item shows its source as a citation chip; a click on it follows the citation in the
reader (the window highlights the excerpt on its page).  Keyboard: Space flips a card,
Left/Right move between cards, 1-4 rate a flipped card in a review (again, hard, good,
easy).
"""

from __future__ import annotations

from typing import Optional, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QButtonGroup, QFrame, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QRadioButton, QScrollArea, QVBoxLayout, QWidget)

from bookreader.ui.answer_card import CitationChip
from bookreader.ui.widgets import wrapped_label

RATING_NAMES = ("Again", "Hard", "Good", "Easy")


def key_text(text: str) -> str:
    """Letters and digits only, lower-cased: two texts that read the same compare equal."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


class FlashcardView(QFrame):
    """One card at a time: the front, then (Space) the back and its source."""

    citation_clicked = Signal(object)  # Citation
    rated = Signal(str, int)  # card id, rating 1-4 (review mode)
    flipped = Signal(bool)  # the back is shown

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("answerCard")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.cards: list = []
        self.index = 0
        self.reviewing = False
        self.shown_back = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(14, 12, 14, 12)
        lay.setSpacing(8)
        self.position_label = QLabel("", objectName="metaText")
        lay.addWidget(self.position_label)
        self.front_label = wrapped_label("", "questionText", selectable=True)
        self.front_label.setStyleSheet("font-size: 17px;")
        lay.addWidget(self.front_label)
        self.back_label = wrapped_label("", "answerText", selectable=True)
        lay.addWidget(self.back_label)
        self.chip_row = QHBoxLayout()
        lay.addLayout(self.chip_row)
        self.excerpt_label = wrapped_label("", "quoteSmall")
        lay.addWidget(self.excerpt_label)
        lay.addStretch(1)
        nav = QHBoxLayout()
        self.prev_button = QPushButton("◀ Previous", objectName="smallButton")
        self.prev_button.clicked.connect(lambda: self.move(-1))
        self.flip_button = QPushButton("Flip (Space)", objectName="primaryButton")
        self.flip_button.clicked.connect(self.flip)
        self.next_button = QPushButton("Next ▶", objectName="smallButton")
        self.next_button.clicked.connect(lambda: self.move(1))
        for b in (self.prev_button, self.flip_button, self.next_button):
            nav.addWidget(b)
        lay.addLayout(nav)
        self.rate_row = QHBoxLayout()
        self.rate_buttons: list[QPushButton] = []
        for n, name in enumerate(RATING_NAMES, 1):
            b = QPushButton(f"{n} {name}", objectName="segment")
            b.clicked.connect(lambda _=False, n=n: self.rate(n))
            self.rate_buttons.append(b)
            self.rate_row.addWidget(b)
        lay.addLayout(self.rate_row)
        self.set_cards([])

    # --- content ------------------------------------------------------------------------------
    def set_cards(self, cards: Sequence, *, reviewing: bool = False) -> None:
        self.cards = list(cards)
        self.reviewing = reviewing
        self.index = 0
        self._show()

    @property
    def current(self):
        return self.cards[self.index] if 0 <= self.index < len(self.cards) else None

    def _show(self) -> None:
        card = self.current
        self.shown_back = False
        while self.chip_row.count():
            item = self.chip_row.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        if card is None:
            self.position_label.setText("")
            self.front_label.setText("No cards." if not self.reviewing else
                                     "All caught up: no cards are due.")
            self.back_label.setText("")
            self.excerpt_label.setText("")
        else:
            what = "Review" if self.reviewing else "Card"
            self.position_label.setText(f"{what} {self.index + 1} of {len(self.cards)}")
            self.front_label.setText(card.front)
            self.back_label.setText("")
            self.excerpt_label.setText("")
        for b in (self.prev_button, self.next_button):
            b.setVisible(not self.reviewing)
        self.prev_button.setEnabled(self.index > 0)
        self.next_button.setEnabled(self.index + 1 < len(self.cards))
        self.flip_button.setEnabled(card is not None)
        for b in self.rate_buttons:
            b.setVisible(self.reviewing)
            b.setEnabled(False)
        self.flipped.emit(False)

    def flip(self) -> None:
        card = self.current
        if card is None:
            return
        self.shown_back = not self.shown_back
        if self.shown_back:
            self.back_label.setText(card.back)
            chip = CitationChip(card.citation)
            chip.clicked.connect(lambda: self.citation_clicked.emit(card.citation))
            self.chip_row.addWidget(chip)
            self.chip_row.addStretch(1)
            # the excerpt as cited, when it is more than the back (an entry's whole line)
            if key_text(card.citation.excerpt) != key_text(card.back):
                self.excerpt_label.setText(f"\u201c{card.citation.excerpt}\u201d")
        else:
            self._show()
            return
        for b in self.rate_buttons:
            b.setEnabled(self.reviewing)
        self.flipped.emit(True)

    def move(self, step: int) -> None:
        new = self.index + step
        if 0 <= new < len(self.cards):
            self.index = new
            self._show()

    def rate(self, rating: int) -> None:
        card = self.current
        if not self.reviewing or card is None or not self.shown_back:
            return
        self.rated.emit(card.card_id, rating)
        self.cards.pop(self.index)
        if self.index >= len(self.cards):
            self.index = max(0, len(self.cards) - 1)
        self._show()

    def keyPressEvent(self, event) -> None:  # noqa: N802
        key = event.key()
        if key == Qt.Key.Key_Space:
            self.flip()
        elif key in (Qt.Key.Key_Right, Qt.Key.Key_N) and not self.reviewing:
            self.move(1)
        elif key in (Qt.Key.Key_Left, Qt.Key.Key_P) and not self.reviewing:
            self.move(-1)
        elif Qt.Key.Key_1 <= key <= Qt.Key.Key_4:
            self.rate(int(key) - int(Qt.Key.Key_0))
        else:
            super().keyPressEvent(event)


class _QuizItemWidget(QFrame):
    """One quiz item: its prompt, an input, and after checking, the verdict and source."""

    def __init__(self, number: int, item, on_citation) -> None:
        super().__init__()
        self.setObjectName("answerCard")
        self.item = item
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 8, 12, 8)
        lay.setSpacing(4)
        lay.addWidget(wrapped_label(f"{number}. {item.prompt}", "questionText"))
        self.edit: Optional[QLineEdit] = None
        self.group: Optional[QButtonGroup] = None
        if item.options:
            row = QHBoxLayout() if item.kind == "true_false" else QVBoxLayout()
            self.group = QButtonGroup(self)
            for text in item.options:
                radio = QRadioButton(text)
                self.group.addButton(radio)
                row.addWidget(radio)
            lay.addLayout(row)
        else:
            self.edit = QLineEdit()
            self.edit.setPlaceholderText("Type the missing term")
            lay.addWidget(self.edit)
        self.verdict = wrapped_label("", "metaText")
        self.verdict.hide()
        lay.addWidget(self.verdict)
        self.chip = CitationChip(item.citation)
        self.chip.clicked.connect(lambda: on_citation(item.citation))
        self.chip.hide()
        lay.addWidget(self.chip, 0, Qt.AlignmentFlag.AlignLeft)

    def response(self) -> str:
        if self.edit is not None:
            return self.edit.text()
        checked = self.group.checkedButton() if self.group is not None else None
        return checked.text() if checked is not None else ""

    def reveal(self) -> bool:
        ok = self.item.is_correct(self.response())
        answer = self.item.answer
        self.verdict.setText(("\u2714 Correct" if ok else f"\u2718 The answer is: {answer}")
                             + f" \u2014 the book, page {self.item.citation.page_label}: "
                             f"\u201c{self.item.citation.excerpt}\u201d")
        self.verdict.setStyleSheet("color: #1a7f37;" if ok else "color: #b42318;")
        self.verdict.show()
        self.chip.show()
        if self.edit is not None:
            self.edit.setReadOnly(True)
        return ok


class QuizView(QWidget):
    """Every quiz item in a list; "Check answers" shows the result of each, cited."""

    citation_clicked = Signal(object)
    checked = Signal(int, int)  # right, total

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.score_label = wrapped_label("", "questionText")
        lay.addWidget(self.score_label)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lay.addWidget(self.scroll_area, 1)
        self.check_button = QPushButton("Check answers", objectName="primaryButton")
        self.check_button.clicked.connect(self.check)
        lay.addWidget(self.check_button)
        self.items: list[_QuizItemWidget] = []
        self.set_items([])

    def set_items(self, items: Sequence) -> None:
        host = QWidget()
        col = QVBoxLayout(host)
        col.setSpacing(8)
        self.items = [_QuizItemWidget(n, it, self.citation_clicked.emit)
                      for n, it in enumerate(items, 1)]
        for w in self.items:
            col.addWidget(w)
        col.addStretch(1)
        self.scroll_area.setWidget(host)
        self.score_label.setText(f"{len(items)} questions" if items else "No quiz items.")
        self.check_button.setEnabled(bool(items))

    def check(self) -> tuple[int, int]:
        right = sum(1 for w in self.items if w.reveal())
        total = len(self.items)
        self.score_label.setText(f"Result: {right} of {total} right. Each answer is cited; "
                                 "click a page to see it in the book.")
        self.check_button.setEnabled(False)
        self.checked.emit(right, total)
        return right, total


class SummaryView(QWidget):
    """The key sentences, each with its citation chip."""

    citation_clicked = Signal(object)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lay.addWidget(self.scroll_area)
        self.set_lines([])

    def set_lines(self, lines: Sequence) -> None:
        host = QWidget()
        col = QVBoxLayout(host)
        col.setSpacing(6)
        if not lines:
            col.addWidget(wrapped_label("No key sentences.", "emptyHint"))
        for ln in lines:
            row = QFrame(objectName="answerCard")
            rl = QVBoxLayout(row)
            rl.setContentsMargins(10, 6, 10, 6)
            rl.addWidget(wrapped_label(f"\u2022 {ln.text}", "answerText", selectable=True))
            chip = CitationChip(ln.citation)
            chip.clicked.connect(lambda _=False, c=ln.citation: self.citation_clicked.emit(c))
            rl.addWidget(chip, 0, Qt.AlignmentFlag.AlignLeft)
            col.addWidget(row)
        col.addStretch(1)
        self.scroll_area.setWidget(host)
