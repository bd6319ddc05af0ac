"""The chat panel: the quoted selection, the question box and the answers with citations.

Enter sends, Shift+Enter starts a new line.  Tokens stream into the newest card (batched
by a 30 ms timer so a fast backend cannot flood the event loop); the Stop button cancels
generation.  Whole-book questions wait for the book's index; questions about a selection
work at once.
"""

from __future__ import annotations

import logging
from typing import Optional

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QButtonGroup, QFrame, QHBoxLayout, QLabel, QPlainTextEdit,
                               QPushButton, QScrollArea, QSizePolicy, QToolButton, QVBoxLayout,
                               QWidget)

from bookreader.core.types import Answer, BookState, Mode
from bookreader.errors import BookReaderError
from bookreader.ui.answer_card import NEARBY_PAGES, NEARBY_TIP, AnswerCard
from bookreader.ui.library_service import LibraryService
from bookreader.ui.messages import Reporter
from bookreader.ui.widgets import elide_middle, wrapped_label
from bookreader.ui.workers import Task

log = logging.getLogger(__name__)

SUGGESTIONS = ("Explain this", "Summarize this", "What does this term mean?")
FLUSH_MS = 30
#: The book's state before the library's catalogue was read: nothing is said about indexing
#: (an indexed book must not flash "Indexing…" while the library starts).
STATE_UNKNOWN = "unknown"
#: What the student reads while an answer is prepared, for each stage the library reports
#: (the values of ``bookreader.core.types.AnswerStage``).
STAGE_WORDS = {
    "searching": "Searching the book…",
    "reading": "Reading the passages…",
    "writing": "Writing the answer…",
    "checking": "Checking the answer against the book…",
}


class QuestionEdit(QPlainTextEdit):
    """The question box: Enter submits, Shift+Enter inserts a line break."""

    submitted = Signal()

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class ChatPanel(QWidget):
    """Questions and answers about the open book."""

    answer_started = Signal()
    answer_finished = Signal(object)  # Answer
    answer_failed = Signal(str)  # the message shown
    answer_stopped = Signal()
    tokens_streamed = Signal(str)  # text added to the newest answer (batched tokens)
    stage_changed = Signal(str)  # what the answer being prepared is doing (STAGE_WORDS)
    citation_clicked = Signal(object)  # Citation
    history_loaded = Signal(int)

    def __init__(self, service: LibraryService, reporter: Reporter,
                 parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.service = service
        self.reporter = reporter
        self.book_path: Optional[str] = None
        self.book_id: Optional[str] = None
        self.book_ready = False
        self._selection = ""
        self._pages: Optional[tuple[int, int]] = None
        self._task: Optional[Task] = None
        self._seq = 0
        self._card: Optional[AnswerCard] = None
        self._pending = ""
        self._state_text = ""
        self._loading = False
        self._flush = QTimer(self, interval=FLUSH_MS)
        self._flush.timeout.connect(self._flush_tokens)
        self.setObjectName("chatPanel")
        self._build()
        self._update_state()

    # --- layout -------------------------------------------------------------------------------
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)

        header = QFrame(objectName="panelHeader")
        hl = QVBoxLayout(header)
        hl.setContentsMargins(14, 10, 14, 10)
        title = QLabel("Ask the book", objectName="panelTitle")
        self.book_label = QLabel("No book open", objectName="panelSubtitle")
        self.book_label.setWordWrap(True)
        hl.addWidget(title)
        hl.addWidget(self.book_label)
        lay.addWidget(header)

        self.scroll_area = QScrollArea(objectName="chatScroll")
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        host = QWidget(objectName="chatHost")
        self.cards_layout = QVBoxLayout(host)
        self.cards_layout.setContentsMargins(10, 10, 10, 10)
        self.cards_layout.setSpacing(10)
        self.empty_label = wrapped_label(
            "Ask a question about this book, or select text on a page and right-click "
            "“Ask about this”. Every answer cites the pages it comes from.", "emptyHint")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.cards_layout.addWidget(self.empty_label)
        self.cards_layout.addStretch(1)
        self.scroll_area.setWidget(host)
        self.scroll_area.verticalScrollBar().rangeChanged.connect(self._on_range_changed)
        lay.addWidget(self.scroll_area, 1)

        self.quote_frame = QFrame(objectName="quoteFrame")
        ql = QVBoxLayout(self.quote_frame)
        ql.setContentsMargins(12, 8, 8, 8)
        ql.setSpacing(6)
        top = QHBoxLayout()
        self.quote_title = QLabel("Selected text", objectName="quoteTitle")
        top.addWidget(self.quote_title, 1)
        close = QToolButton(text="✕", objectName="quoteClose")
        close.setToolTip("Stop asking about the selection")
        close.clicked.connect(self.clear_selection)
        top.addWidget(close)
        ql.addLayout(top)
        self.quote_label = wrapped_label("", "quoteText")
        ql.addWidget(self.quote_label)
        self.truncation_label = wrapped_label("", "warningText")
        self.truncation_label.hide()
        ql.addWidget(self.truncation_label)
        modes = QHBoxLayout()
        modes.setSpacing(0)
        self.mode_group = QButtonGroup(self)
        self.only_button = QPushButton("This text only", objectName="segment", checkable=True)
        self.around_button = QPushButton("With nearby pages", objectName="segment",
                                         checkable=True)
        self.around_button.setToolTip(NEARBY_TIP)
        for i, b in enumerate((self.only_button, self.around_button)):
            self.mode_group.addButton(b, i)
            modes.addWidget(b)
        self.only_button.setChecked(True)
        modes.addStretch(1)
        ql.addLayout(modes)
        sugg = QHBoxLayout()
        sugg.setSpacing(6)
        for text in SUGGESTIONS:
            b = QPushButton(text, objectName="suggestion")
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.clicked.connect(lambda _=False, t=text: self.ask(t))
            sugg.addWidget(b)
        sugg.addStretch(1)
        ql.addLayout(sugg)
        self.quote_frame.hide()
        lay.addWidget(self.quote_frame)

        box = QFrame(objectName="inputFrame")
        bl = QVBoxLayout(box)
        bl.setContentsMargins(10, 8, 10, 8)
        bl.setSpacing(4)
        row = QHBoxLayout()
        self.question_edit = QuestionEdit(objectName="questionEdit")
        self.question_edit.setPlaceholderText("Ask a question about the book…")
        self.question_edit.setFixedHeight(64)
        self.question_edit.submitted.connect(self.ask)
        row.addWidget(self.question_edit, 1)
        self.send_button = QPushButton("Send", objectName="primaryButton")
        self.send_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.send_button.clicked.connect(self._on_send_clicked)
        row.addWidget(self.send_button)
        bl.addLayout(row)
        self.status_label = QLabel("", objectName="hintText")
        self.status_label.setWordWrap(True)
        bl.addWidget(self.status_label)
        lay.addWidget(box)

    # --- book and selection ---------------------------------------------------------------------
    def set_book(self, path: Optional[str], title: str = "", book_id: Optional[str] = None,
                 ready: bool = False, state: str = "") -> None:
        """Show a new book; earlier answers about it come from the audit log."""
        changed = path != self.book_path
        self.book_path = path
        self._loading = False
        self.book_label.setText(title or "No book open")
        if changed:
            self.stop()
            self.clear_cards()
            self.clear_selection()
            self.book_id = None
        self.set_book_state(book_id, ready, state)

    def set_loading(self, title: str) -> None:
        """A book is being opened: a neutral note until :meth:`set_book` says what it is."""
        self.book_label.setText(f"Opening {title}…")
        self._loading = True
        self._update_state()

    def set_book_state(self, book_id: Optional[str], ready: bool, state: str = "") -> None:
        """The library's view of the open book changed (indexing finished, failed...)."""
        if book_id and book_id != self.book_id:
            self.book_id = book_id
            if not self.cards():
                self.load_history(book_id)
        self.book_ready = ready
        self._state_text = state
        self._update_state()

    def set_selection(self, text: str, mode: Mode = Mode.SELECTED,
                      pages: Optional[tuple[int, int]] = None) -> None:
        """Quote a selection (from the reader's context menu) and focus the question box."""
        text = text.strip()
        if not text:
            self.clear_selection()
            return
        self._selection = text
        self._pages = pages
        where = " and its nearby pages" if mode == Mode.HIGHLIGHT else ""
        self.quote_title.setText(f"Asking about the selected text{where}")
        self.quote_label.setText(f"“{elide_middle(text, 420)}”")
        (self.around_button if mode == Mode.HIGHLIGHT else self.only_button).setChecked(True)
        self.truncation_label.hide()
        self._check_selection_length(text)
        self.quote_frame.show()
        self._update_state()
        self.question_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def _check_selection_length(self, text: str) -> None:
        """Show the core's truncation notice for a long selection before asking."""
        if len(text) < 2000:  # far below the core's limit: no need to ask
            return

        def checked(result) -> None:
            _, warning = result
            if warning and text == self._selection:
                self.truncation_label.setText(warning)
                self.truncation_label.show()

        self.service.check_selection(
            text, on_success=checked,
            on_failure=lambda exc: log.info("Selection check failed: %s", exc))

    def clear_selection(self) -> None:
        self._selection = ""
        self._pages = None
        self.quote_frame.hide()
        self._update_state()

    @property
    def state_text(self) -> str:
        """The open book's state as last set (a BookState value, or STATE_UNKNOWN)."""
        return self._state_text

    @property
    def selection(self) -> str:
        return self._selection

    def current_mode(self) -> Mode:
        if not self._selection:
            return Mode.BOOK
        return Mode.HIGHLIGHT if self.around_button.isChecked() else Mode.SELECTED

    # --- asking -----------------------------------------------------------------------------------

    def _pages_for(self, mode: Mode) -> Optional[tuple[int, int]]:
        """The page range sent with a question: the selection's own pages, and in highlight
        mode one page either side as well (the answerer keeps to the selection's chapter)."""
        if mode == Mode.BOOK or self._pages is None:
            return None
        a, b = self._pages
        if mode == Mode.HIGHLIGHT:
            return max(0, a - NEARBY_PAGES), b + NEARBY_PAGES
        return a, b

    def ask(self, question: Optional[str] = None, mode: Optional[Mode] = None) -> Optional[Task]:
        """Send the question in the box (or ``question``) in the current mode (or ``mode``)."""
        if self._task is not None:
            return None
        text = (question if isinstance(question, str) else
                self.question_edit.toPlainText()).strip()
        mode = self.current_mode() if mode is None else Mode(mode)
        if not text:
            self.status_label.setText("Type a question first.")
            return None
        if self.book_path is None:
            self.status_label.setText("Open a book first.")
            return None
        if mode != Mode.SELECTED and not self.book_ready:
            self.status_label.setText(self._not_ready_text())
            return None
        book = self.book_id
        if book is None:
            known = self.service.book_for_path(self.book_path)
            book = known.book_id if known is not None else None
        if book is None and mode != Mode.SELECTED:
            book = self.book_path
        # A selected-text question needs no index: a book the library does not know yet is
        # asked about without its id (the selection carries everything).
        card = AnswerCard(text, mode, self._selection if mode != Mode.BOOK else "")
        card.citation_clicked.connect(self.citation_clicked)
        card.search_book_requested.connect(self.ask_whole_book)
        self._add_card(card)
        self._card = card
        if not isinstance(question, str):
            self.question_edit.clear()
        self._seq += 1
        self._task = self.service.ask(
            text, mode=mode, book=book,
            selection=self._selection if mode != Mode.BOOK else None,
            # The selection's pages label and locate its citations (no retrieval in
            # selected-text mode: the page range only says where the selection is).
            pages=self._pages_for(mode),
            on_token=self._on_token, on_success=self._on_answer,
            on_progress=lambda _done, _total, stage, seq=self._seq: self._on_stage(seq, stage),
            on_failure=self._on_failure, on_cancel=self._on_cancelled,
            on_end=lambda seq=self._seq: self._on_ended(seq))
        self._flush.start()
        self._update_state()
        self.answer_started.emit()
        return self._task

    def ask_whole_book(self, question: str) -> Optional[Task]:
        """"Search the whole book" on a selected-text card: the same question, asked anew in
        whole-book mode (its own card and its own audit record; the selection is not sent)."""
        if self._task is not None:
            self.status_label.setText("Wait for the current answer, then search the whole book.")
            return None
        return self.ask(question, mode=Mode.BOOK)

    def stop(self) -> None:
        """The Stop button: cancel the running answer."""
        if self._task is not None:
            self._task.cancel()
            self.status_label.setText("Stopping…")

    def _on_send_clicked(self) -> None:
        if self._task is not None:
            self.stop()
        else:
            self.ask()

    def _on_stage(self, seq: int, stage: str) -> None:
        """The library began a stage of the answer: say it on the card and under the box."""
        if seq != self._seq or self._task is None:
            return
        words = STAGE_WORDS.get(stage)
        if not words:
            return
        self.status_label.setText(f"{words}  (Stop cancels)")
        if self._card is not None:
            self._card.set_stage(words)
        self.stage_changed.emit(words)

    def _on_token(self, text: str) -> None:
        self._pending += text

    def _flush_tokens(self) -> None:
        if self._pending and self._card is not None:
            self._card.append_tokens(self._pending)
            self.tokens_streamed.emit(self._pending)
        self._pending = ""

    def _finish(self) -> Optional[AnswerCard]:
        """The answer is over: show the last tokens, free the Send button."""
        self._flush_tokens()
        self._flush.stop()
        card, self._card = self._card, None
        self._task = None
        self._update_state()
        return card

    def _on_answer(self, answer: Answer) -> None:
        card = self._finish()
        if card is not None:
            card.set_answer(answer)
            if answer.truncation_warning and self._selection:
                self.truncation_label.setText(answer.truncation_warning)
                self.truncation_label.show()
        self.answer_finished.emit(answer)

    def _on_failure(self, exc: BaseException) -> None:
        card = self._finish()
        if isinstance(exc, BookReaderError):
            message = exc.user_message
        else:
            message = "The answer failed unexpectedly; the details are in the log file."
            self.reporter.report_error(exc)
        if card is not None:
            card.mark_failed(message)
        self.answer_failed.emit(message)

    def _on_cancelled(self) -> None:
        card = self._finish()
        if card is not None:
            card.mark_stopped("Stopped.")
        self.answer_stopped.emit()

    def _on_ended(self, seq: int) -> None:
        if seq == self._seq and self._task is not None:  # ended without any result
            self._finish()

    # --- cards and history ----------------------------------------------------------------------
    def cards(self) -> list[AnswerCard]:
        out = []
        for i in range(self.cards_layout.count()):
            item = self.cards_layout.itemAt(i)
            w = item.widget() if item is not None else None
            if isinstance(w, AnswerCard):
                out.append(w)
        return out

    def clear_cards(self) -> None:
        for card in self.cards():
            card.setParent(None)
            card.deleteLater()
        self.empty_label.show()

    def _add_card(self, card: AnswerCard) -> None:
        self.empty_label.hide()
        self._stick_to_bottom = True
        self.cards_layout.insertWidget(self.cards_layout.count() - 1, card)

    def _on_range_changed(self, _lo: int, hi: int) -> None:
        if getattr(self, "_stick_to_bottom", False):
            self.scroll_area.verticalScrollBar().setValue(hi)

    def load_history(self, book_id: str) -> None:
        """Earlier answers about the book, read from the audit log in the background.

        They go above any card asked while they were being read: a question the student
        sent right after opening the book stays the last card, with its answer under it
        (otherwise, on a book with a long history, the first question ends up under the
        history, out of sight)."""
        earlier = {id(c) for c in self.cards()}

        def loaded(answers: list[Answer]) -> None:
            if book_id != self.book_id:
                return
            newer = [c for c in self.cards() if id(c) not in earlier]
            at = (self.cards_layout.indexOf(newer[0]) if newer
                  else self.cards_layout.count() - 1)
            for answer in answers:
                card = AnswerCard(answer.question, Mode(answer.mode), answer.selection)
                card.citation_clicked.connect(self.citation_clicked)
                card.search_book_requested.connect(self.ask_whole_book)
                card.set_answer(answer)
                self.empty_label.hide()
                self.cards_layout.insertWidget(at, card)
                at += 1
            if answers and not newer:
                self._stick_to_bottom = True
            self.history_loaded.emit(len(answers))

        self.service.history(book_id, on_success=loaded)

    # --- state -------------------------------------------------------------------------------------
    def _not_ready_text(self) -> str:
        state = self._state_text
        if state == STATE_UNKNOWN:
            return "Looking the book up in the library…"
        if state == BookState.FAILED:
            return "This book could not be indexed; you can still ask about selected text."
        return ("Indexing… whole-book questions become available when it finishes. "
                "Select text to ask about it now.")

    def _update_state(self) -> None:
        busy = self._task is not None
        self.send_button.setText("Stop" if busy else "Send")
        self.send_button.setProperty("danger", busy)
        self.send_button.style().unpolish(self.send_button)
        self.send_button.style().polish(self.send_button)
        self.around_button.setEnabled(self.book_ready)
        if busy:
            self.status_label.setText("Answering…  (Stop cancels)")
        elif self._loading or self._state_text == STATE_UNKNOWN:
            self.status_label.setText("Opening the library…")
        elif self.book_path is None:
            self.status_label.setText("Open a book to ask questions.")
        elif not self._selection and not self.book_ready:
            self.status_label.setText(self._not_ready_text())
        else:
            self.status_label.setText("Enter to send · Shift+Enter for a new line")
        placeholder = ("Ask about the selected text…" if self._selection
                       else "Ask a question about the book…")
        self.question_edit.setPlaceholderText(placeholder)
