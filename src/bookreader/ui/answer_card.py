"""One question and its answer in the chat: streamed text, badges, citation chips."""

from __future__ import annotations

import re

from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from bookreader.core.types import Answer, Citation, ConfidenceLevel, Mode, Outcome
from bookreader.ui.widgets import FlowLayout, badge, elide_middle, wrapped_label
from bookreader.ui.wording import answered_by, tidy_text

#: Pages on each side of a selection that highlight mode also searches (same chapter).
NEARBY_PAGES = 1
NEARBY_ACTION = "Ask with nearby pages"
NEARBY_TIP = ("Ask about the selection, helped by passages from its pages and one page "
              "either side, within its chapter")
MODE_NAMES = {
    Mode.BOOK: ("Whole book", "Answered from passages retrieved from the whole book"),
    Mode.SELECTED: ("Selected text", "Answered from the selected text only"),
    Mode.HIGHLIGHT: ("Selection + nearby pages",
                     "Answered from the selection and passages from its pages and one page "
                     "either side, within its chapter"),
}
#: The mark a card shows for each outcome but ``answer``: (text, kind, tooltip).
OUTCOME_MARKS = {
    Outcome.QUOTES: ("No verified answer: quotes", "warn",
                     "No answer could be checked against the book; these cited sentences "
                     "address the question. Click a source to read the page."),
    Outcome.NOT_COVERED: ("Not found in the book", "warn",
                          "The book does not seem to cover this; no answer was made up"),
    Outcome.NOT_IN_SELECTION: ("Not found in the selection", "warn",
                               "The selected text does not answer this; no answer was made up"),
    Outcome.TIMEOUT: ("Timed out", "bad", "No answer came within the time budget"),
    Outcome.ERROR: ("Error", "bad", ""),
}
CONFIDENCE: dict[str, tuple[str, str]] = {  # ConfidenceLevel values are strings
    ConfidenceLevel.HIGH: ("High confidence", "good"),
    ConfidenceLevel.MEDIUM: ("Medium confidence", "warn"),
    ConfidenceLevel.LOW: ("Low confidence", "bad"),
}


def number_sources(answer: Answer) -> str:
    """The answer's text with each inline ``[Source: ...]`` shown as ``[n]``, where ``n``
    is the number of its chip (core finds the markers: ``Answer.citation_marks``)."""
    text = answer.text
    out: list[str] = []
    pos = 0
    for start, end, number in answer.citation_marks():
        out.append(text[pos:start].rstrip() + f" [{number}]")
        pos = end
    out.append(text[pos:])
    return "".join(out).strip()


_FENCE = re.compile(r"^[ \t]*```[\w+#.-]*[ \t]*$\n?", re.M)


def without_fences(text: str) -> str:
    """``text`` without Markdown code-fence lines (```java ... ```): the card shows plain
    text, where the fences were stray backticks around the code they enclose."""
    return _FENCE.sub("", text)


class CitationChip(QPushButton):
    """A clickable citation: page label and section; a click follows it in the reader."""

    def __init__(self, citation: Citation, number: int = 0,
                 parent: Optional[QWidget] = None) -> None:
        where = f"p. {citation.page_label}" if citation.page_label else "selection"
        section = elide_middle(citation.section, 28) if citation.section else ""
        label = f"{where} · {section}" if section else where
        super().__init__(f"{number}  {label}" if number else label, parent)
        self.citation = citation
        self.setObjectName("citationChip")
        self.setProperty("verified", bool(citation.verified))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        state = ("Quoted text found on the page" if citation.verified
                 else "This excerpt could not be found on the page")
        self.setToolTip(f"“{elide_middle(tidy_text(citation.excerpt), 220)}”\n\n{state}. "
                        "Click to show it.")
        self.setEnabled(citation.page >= 0)


class AnswerCard(QFrame):
    """A question, the (streaming) answer and everything the student needs to judge it."""

    citation_clicked = Signal(object)  # Citation
    search_book_requested = Signal(str)  # the question, to ask again in whole-book mode

    def __init__(self, question: str, mode: Mode, selection: str = "",
                 parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("answerCard")
        self.answer: Optional[Answer] = None
        self._text = ""
        self.mode = mode
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 10, 12, 10)
        lay.setSpacing(6)

        self.question_label = wrapped_label(question, "questionText", selectable=True)
        lay.addWidget(self.question_label)
        if selection:
            quote = wrapped_label(f"“{elide_middle(selection, 160)}”", "quoteSmall")
            lay.addWidget(quote)

        self.answer_label = wrapped_label("", "answerText", selectable=True)
        self.answer_label.setText("…")
        lay.addWidget(self.answer_label)

        self.warning_label = wrapped_label("", "warningText")
        self.warning_label.hide()
        lay.addWidget(self.warning_label)

        # Badges and chips wrap onto new rows: a card is never wider than the chat panel.
        self.badges_host = QWidget()
        self.badges = FlowLayout(self.badges_host)
        name, tip = MODE_NAMES.get(mode, (str(mode), ""))
        self.badges.addWidget(badge(name, "mode", tip))
        lay.addWidget(self.badges_host)

        self.chips_host = QWidget()
        self.chips = FlowLayout(self.chips_host)
        self.chips_host.hide()
        lay.addWidget(self.chips_host)

        self.search_book_button = QPushButton("Search the whole book")
        self.search_book_button.setObjectName("linkButton")
        self.search_book_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.search_book_button.setToolTip(
            "Ask the same question about the whole book, as a new question")
        self.search_book_button.clicked.connect(
            lambda: self.search_book_requested.emit(self.question_label.text()))
        self.search_book_button.hide()
        lay.addWidget(self.search_book_button, 0, Qt.AlignmentFlag.AlignLeft)

        footer = QHBoxLayout()
        self.meta_label = wrapped_label("", "metaText")
        footer.addWidget(self.meta_label, 1)
        self.copy_button = QPushButton("Copy answer")
        self.copy_button.setObjectName("linkButton")
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.clicked.connect(self.copy_answer)
        self.copy_button.setEnabled(False)
        footer.addWidget(self.copy_button)
        lay.addLayout(footer)

    # --- streaming --------------------------------------------------------------------------

    def set_stage(self, words: str) -> None:
        """Say what the answer is doing ("Searching the book…") until its text streams."""
        if self._text or self.answer is not None:
            return
        self.answer_label.setText(words)
        self.answer_label.setProperty("state", "stage")
        self._restyle(self.answer_label)

    def append_tokens(self, text: str) -> None:
        """Add streamed text (the panel batches tokens so the label updates ~30 times/s)."""
        if not text:
            return
        if not self._text and self.answer_label.property("state") == "stage":
            self.answer_label.setProperty("state", "")
            self._restyle(self.answer_label)
        self._text += text
        self.answer_label.setText(tidy_text(self._text))

    def mark_stopped(self, reason: str) -> None:
        self.answer_label.setText((self._text + "\n\n" if self._text else "") + reason)
        self.answer_label.setProperty("state", "stopped")
        self._restyle(self.answer_label)

    def mark_failed(self, message: str) -> None:
        self.answer_label.setText(message)
        self.answer_label.setProperty("state", "error")
        self._restyle(self.answer_label)

    # --- the final answer ---------------------------------------------------------------------
    def set_answer(self, answer: Answer) -> None:
        """Show the final answer: the validated text replaces the streamed draft."""
        self.answer = answer
        self._text = answer.text
        shown = number_sources(answer) if answer.citations else answer.text
        self.answer_label.setText(tidy_text(without_fences(shown)).strip() or "(no answer)")
        self.answer_label.setProperty("state", "error" if answer.error else "")
        self._restyle(self.answer_label)
        marks = []
        outcome = answer.outcome or Outcome.ANSWER
        if outcome is Outcome.ANSWER:
            level = (answer.confidence_level or "low").lower()
            text, kind = CONFIDENCE.get(level, (f"{level.title()} confidence", "warn"))
            marks.append(badge(text, kind, f"Estimated chance that this answer is right "
                                           f"({answer.confidence:.2f})"))
        else:
            # No confidence badge: there is no answer whose correctness it could describe.
            text, kind, tip = OUTCOME_MARKS[outcome]
            if outcome is Outcome.ERROR:
                tip = answer.error
            marks.append(badge(text, kind, tip))
        # Offered on a selected-text card that found nothing: the selection path itself never
        # searches the book, so the student asks again, as a separate whole-book question.
        self.search_book_button.setVisible(
            outcome is Outcome.NOT_IN_SELECTION and Mode(answer.mode) is Mode.SELECTED)
        for mark in marks:
            self.badges.addWidget(mark)
        warnings = [w for w in (answer.truncation_warning,) if w]
        if warnings:
            self.warning_label.setText("\n".join(warnings))
            self.warning_label.show()
        numbered = len(answer.citations) > 1 or bool(answer.citation_marks())
        for n, citation in enumerate(answer.citations, 1):
            chip = CitationChip(citation, n if numbered else 0)
            chip.clicked.connect(lambda _=False, c=citation: self.citation_clicked.emit(c))
            self.chips.addWidget(chip)
        self.chips_host.setVisible(bool(answer.citations))
        # Who wrote it, in a student's words; the model file and why the book's
        # sentences were shown are in the tooltip (and the audit log).
        who, detail = answered_by(answer)
        parts = [who] if who else []
        if answer.latency_ms:
            parts.append(f"{answer.latency_ms / 1000:.1f} s")
        self.meta_label.setText(" · ".join(parts))
        self.meta_label.setToolTip(detail)
        self.copy_button.setEnabled(bool(answer.text))

    def citation_chips(self) -> list[CitationChip]:
        items = (self.chips.itemAt(i) for i in range(self.chips.count()))
        return [w for item in items if item is not None
                for w in (item.widget(),) if isinstance(w, CitationChip)]

    def copy_answer(self) -> str:
        """Copy the answer with its citations as plain text."""
        text = self._text
        if self.answer is not None and self.answer.citations:
            text = number_sources(self.answer)
            refs = [f"[{n}] {c.section}, p. {c.page_label}: \u201c{c.excerpt}\u201d"
                    for n, c in enumerate(self.answer.citations, 1)]
            text = text.rstrip() + "\n\n" + "\n".join(refs)
        QGuiApplication.clipboard().setText(text)
        return text

    @staticmethod
    def _restyle(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)
