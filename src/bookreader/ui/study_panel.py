"""The Study panel: flashcards, quizzes, summaries and spaced review of the open book.

A chapter or section is picked from the book's outline (or pages typed when it has
none); "Make flashcards", "Quiz me" and "Summarize" run in the background on the
library's lane with a progress bar and a Cancel button; "Review due cards" shows the kept
cards that FSRS says are due.  Every item's citation chip opens its page with the excerpt
highlighted.  :func:`attach_study` adds the panel to the window (a dock beside the chat)
and "Make flashcards from this" to the selection's right-click menu, so the window itself
needs only one call.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDockWidget, QFileDialog, QFrame, QHBoxLayout,
                               QLabel, QProgressBar, QPushButton, QSpinBox, QStackedWidget,
                               QVBoxLayout, QWidget)

from bookreader.api import Command
from bookreader.errors import BookReaderError
from bookreader.ui.study_views import FlashcardView, QuizView, SummaryView
from bookreader.ui.widgets import wrapped_label

log = logging.getLogger(__name__)

MAKE_FROM_SELECTION = "Make flashcards from this"
EXPORT_FILTERS = {"Anki deck (*.apkg)": "anki", "CSV for spreadsheets (*.csv)": "csv",
                  "Markdown with citations (*.md)": "markdown"}


class StudyClient:
    """The study commands, sent through the window's library service (its one way to
    reach the library: :meth:`LibraryService._call`, background lane, queued signals)."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def _call(self, command: Command, args: tuple, kwargs: Optional[dict] = None, **kw):
        return self.service._call(command, args, kwargs or {}, **kw)

    def study(self, book_id: str, kind: str, scope: dict, **callbacks):
        return self._call(Command.STUDY, (book_id, kind), scope, inject=("progress", "cancel"),
                          name=f"study {kind}", **callbacks)

    def keep(self, book_id: str, cards, **callbacks):
        return self._call(Command.STUDY_KEEP, (book_id, list(cards)), name="keep cards",
                          **callbacks)

    def due(self, book_id: str, **callbacks):
        return self._call(Command.STUDY_DUE, (book_id,), name="due cards", **callbacks)

    def rate(self, book_id: str, card_id: str, rating: int, **callbacks):
        return self._call(Command.STUDY_RATE, (book_id, card_id, rating), name="rate card",
                          **callbacks)

    def export(self, book_id: str, fmt: str, out: Path, cards, **callbacks):
        return self._call(Command.STUDY_EXPORT, (book_id, fmt, out), {"cards": list(cards)},
                          name="export cards", **callbacks)


class StudyPanel(QWidget):
    """See the module docstring."""

    citation_clicked = Signal(object)  # Citation
    set_ready = Signal(object)  # StudySet, once shown
    review_loaded = Signal(int)  # cards due
    failed = Signal(str)  # the message shown

    def __init__(self, client: StudyClient, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.client = client
        self.book_id: Optional[str] = None
        self.toc: list = []
        self.labels: tuple[str, ...] = ()
        self.task: Any = None
        self.current_set: Any = None
        self.meta: Any = None  # the open book's DocumentMeta (its id may come later)
        self._build()
        self.set_book(None, "", (), ())

    # --- layout -------------------------------------------------------------------------------
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        header = QFrame(objectName="panelHeader")
        hl = QVBoxLayout(header)
        hl.setContentsMargins(14, 10, 14, 10)
        hl.addWidget(QLabel("Study", objectName="panelTitle"))
        self.book_label = QLabel("No book open", objectName="panelSubtitle")
        self.book_label.setWordWrap(True)
        hl.addWidget(self.book_label)
        lay.addWidget(header)

        body = QWidget()
        bl = QVBoxLayout(body)
        bl.setContentsMargins(10, 10, 10, 10)
        bl.setSpacing(8)
        self.scope_combo = QComboBox(objectName="studyScope")
        self.scope_combo.currentIndexChanged.connect(self._on_scope_changed)
        bl.addWidget(self.scope_combo)
        pages = QHBoxLayout()
        pages.addWidget(QLabel("PDF pages", objectName="hintText"))
        self.first_spin = QSpinBox()
        self.last_spin = QSpinBox()
        for spin in (self.first_spin, self.last_spin):
            spin.setMinimum(1)
            pages.addWidget(spin)
        pages.addStretch(1)
        bl.addLayout(pages)
        buttons = QHBoxLayout()
        self.cards_button = QPushButton("Make flashcards", objectName="primaryButton")
        self.quiz_button = QPushButton("Quiz me", objectName="smallButton")
        self.summary_button = QPushButton("Summarize", objectName="smallButton")
        self.cards_button.clicked.connect(lambda: self.generate("cards"))
        self.quiz_button.clicked.connect(lambda: self.generate("quiz"))
        self.summary_button.clicked.connect(lambda: self.generate("summary"))
        for b in (self.cards_button, self.quiz_button, self.summary_button):
            buttons.addWidget(b)
        bl.addLayout(buttons)
        self.phrase_check = QCheckBox("Let the model phrase the questions",
                                      objectName="studyPhrase")
        self.phrase_check.setToolTip("The answering model rewrites question cards' fronts "
                                     "(slower); the backs stay the book's own words. The "
                                     "Better model also leaves out cards whose back it "
                                     "judges not to answer the front.")
        self.code_check = QCheckBox("Include code cards", objectName="studyCode")
        self.code_check.setToolTip("Flashcards also show code listings that the page "
                                   "explains and ask what they do; the back is the book's "
                                   "sentence that says so. Listings without such a "
                                   "sentence make no card.")
        options = QHBoxLayout()
        options.addWidget(self.phrase_check)
        options.addWidget(self.code_check)
        options.addStretch(1)
        bl.addLayout(options)
        self.review_button = QPushButton("Review due cards", objectName="smallButton")
        self.review_button.clicked.connect(self.review)
        bl.addWidget(self.review_button)
        prog = QHBoxLayout()
        self.progress = QProgressBar(objectName="ingestProgress")
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel", objectName="smallButton")
        self.cancel_button.clicked.connect(self.cancel)
        prog.addWidget(self.progress, 1)
        prog.addWidget(self.cancel_button)
        bl.addLayout(prog)
        self.status = wrapped_label("", "hintText")
        bl.addWidget(self.status)

        self.stack = QStackedWidget()
        self.empty = wrapped_label(
            "Pick a chapter, then make flashcards, take a quiz or read its key sentences. "
            "Every card cites the page it comes from.", "emptyHint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.cards_view = FlashcardView()
        self.quiz_view = QuizView()
        self.summary_view = SummaryView()
        for w in (self.empty, self.cards_view, self.quiz_view, self.summary_view):
            self.stack.addWidget(w)
        for v in (self.cards_view, self.quiz_view, self.summary_view):
            v.citation_clicked.connect(self.citation_clicked)
        self.cards_view.rated.connect(self._on_rated)
        bl.addWidget(self.stack, 1)
        actions = QHBoxLayout()
        self.keep_button = QPushButton("Keep for review", objectName="smallButton")
        self.keep_button.clicked.connect(self.keep)
        self.export_button = QPushButton("Export…", objectName="smallButton")
        self.export_button.clicked.connect(lambda: self.export())
        actions.addWidget(self.keep_button)
        actions.addWidget(self.export_button)
        actions.addStretch(1)
        bl.addLayout(actions)
        lay.addWidget(body, 1)
        self._busy(False)

    # --- book ---------------------------------------------------------------------------------
    def set_book(self, book_id: Optional[str], title: str, toc, labels) -> None:
        self.book_id = book_id
        self.toc = list(toc)
        self.labels = tuple(labels)
        self.book_label.setText(title or "No book open")
        self.scope_combo.blockSignals(True)
        self.scope_combo.clear()
        self.scope_combo.addItem("Pages…", None)
        for n, entry in enumerate(self.toc):
            label = labels[entry.page] if 0 <= entry.page < len(labels) else entry.page + 1
            self.scope_combo.addItem(f"{'    ' * (entry.level - 1)}{entry.title}  (p. {label})",
                                     n)
        self.scope_combo.blockSignals(False)
        count = max(1, len(labels))
        for spin in (self.first_spin, self.last_spin):
            spin.setMaximum(count)
        self.scope_combo.setCurrentIndex(1 if self.toc else 0)
        self._on_scope_changed()
        self.stack.setCurrentWidget(self.empty)
        self.current_set = None
        self._busy(False)

    def choose_entry(self, index: int) -> None:
        """Pick outline entry ``index`` (0-based) in the chapter picker."""
        self.scope_combo.setCurrentIndex(index + 1)

    def _on_scope_changed(self, *_: Any) -> None:
        entry = self.scope_combo.currentData()
        manual = entry is None
        self.first_spin.setEnabled(manual)
        self.last_spin.setEnabled(manual)
        if not manual and 0 <= entry < len(self.toc):
            start = self.toc[entry].page
            end = len(self.labels) - 1
            for later in self.toc[entry + 1:]:
                if later.level <= self.toc[entry].level:
                    end = max(start, later.page - 1)
                    break
            self.first_spin.setValue(start + 1)
            self.last_spin.setValue(end + 1)

    def scope(self) -> dict:
        entry = self.scope_combo.currentData()
        if entry is not None:
            return {"chapter": int(entry)}
        first, last = sorted((self.first_spin.value() - 1, self.last_spin.value() - 1))
        return {"pages": (first, last)}

    # --- generation ---------------------------------------------------------------------------
    def refresh(self) -> None:
        """Enable what the book now allows (its id became known)."""
        self._busy(self.task is not None, self.status.text())

    def _busy(self, busy: bool, message: str = "") -> None:
        has_book = self.book_id is not None
        for b in (self.cards_button, self.quiz_button, self.summary_button, self.review_button):
            b.setEnabled(has_book and not busy)
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)
        showing_cards = bool(self.current_set is not None and self.current_set.cards)
        for b in (self.keep_button, self.export_button):
            b.setVisible(showing_cards)
            b.setEnabled(not busy and showing_cards)
        self.status.setText(message)

    def generate(self, kind: str, scope: Optional[dict] = None) -> None:
        if self.book_id is None or self.task is not None:
            return
        what = {"cards": "flashcards", "quiz": "a quiz", "summary": "a summary"}[kind]
        self._busy(True, f"Making {what}…")
        scope = dict(scope or self.scope())
        if kind == "cards" and self.phrase_check.isChecked():
            scope["phrase_with"] = "default"  # the model the window answers with
        if kind == "cards" and self.code_check.isChecked():
            scope["code"] = True
        self.task = self.client.study(
            self.book_id, kind, scope, on_progress=self._on_progress,
            on_success=self.show_set, on_failure=self._on_failed,
            on_cancel=lambda: self._busy(False, "Cancelled."), on_end=self._on_end)

    def make_from_selection(self, text: str, pages: tuple[int, int]) -> None:
        """The selection's right-click "Make flashcards from this"."""
        self.generate("cards", {"pages": tuple(pages), "selection": text})

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _on_end(self) -> None:
        self.task = None

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{message} %v/%m")

    def _on_failed(self, exc: BaseException) -> None:
        message = exc.user_message if isinstance(exc, BookReaderError) else (
            f"Something went wrong: {type(exc).__name__}. The log file has the details.")
        log.warning("Study failed: %s", message)
        self._busy(False, message)
        self.failed.emit(message)

    def show_set(self, made: Any) -> None:
        self.current_set = made
        notes = " ".join(made.notes)
        if made.kind == "cards":
            self.cards_view.set_cards(made.cards)
            self.stack.setCurrentWidget(self.cards_view)
            self.cards_view.setFocus()
            count = f"{len(made.cards)} flashcards"
        elif made.kind == "quiz":
            self.quiz_view.set_items(made.quiz)
            self.stack.setCurrentWidget(self.quiz_view)
            count = f"{len(made.quiz)} quiz questions"
        else:
            self.summary_view.set_lines(made.summary)
            self.stack.setCurrentWidget(self.summary_view)
            count = f"{len(made.summary)} key sentences"
        self._busy(False, f"{count} from {made.title} (pages {made.page_label}), each "
                   f"cited on its page. {notes}".strip())
        self.set_ready.emit(made)

    # --- keeping, review, export --------------------------------------------------------------
    def keep(self) -> None:
        made = self.current_set
        if self.book_id is None or made is None or not made.cards:
            return
        self.client.keep(self.book_id, made.cards, on_success=lambda n: self.status.setText(
            f"Kept {n} new card{'s' if n != 1 else ''} for review."),
            on_failure=self._on_failed)

    def review(self) -> None:
        if self.book_id is None:
            return
        self.client.due(self.book_id, on_success=self._show_due, on_failure=self._on_failed)

    def _show_due(self, cards: list) -> None:
        self.current_set = None
        self.cards_view.set_cards(cards, reviewing=True)
        self.stack.setCurrentWidget(self.cards_view)
        self.cards_view.setFocus()
        self._busy(False, f"{len(cards)} card{'s' if len(cards) != 1 else ''} due. Space "
                   "shows the answer; rate it with 1 (again) to 4 (easy).")
        self.review_loaded.emit(len(cards))

    def _on_rated(self, card_id: str, rating: int) -> None:
        if self.book_id is None:
            return
        left = len(self.cards_view.cards)
        self.client.rate(self.book_id, card_id, rating, on_success=lambda due: self.status
                         .setText(f"Next time for that card: {due:%d %b %Y %H:%M} UTC. "
                                  f"{left} left."), on_failure=self._on_failed)

    def export(self, out: Optional[str] = None, fmt: Optional[str] = None) -> None:
        made = self.current_set
        if self.book_id is None or made is None or not made.cards:
            return
        if out is None:
            chosen, selected = QFileDialog.getSaveFileName(
                self, "Export flashcards", str(Path.home() / "flashcards.apkg"),
                ";;".join(EXPORT_FILTERS))
            if not chosen:
                return
            out, fmt = chosen, EXPORT_FILTERS.get(selected, "anki")
        self.client.export(self.book_id, fmt or "anki", Path(out), made.cards,
                           on_success=lambda p: self.status.setText(f"Exported to {p}."),
                           on_failure=self._on_failed)


def attach_study(window: Any) -> StudyPanel:
    """Add the Study panel to ``window`` (a dock tabbed with the chat) and "Make
    flashcards from this" to the reader's selection menu; returns the panel."""
    panel = StudyPanel(StudyClient(window.service))
    dock = QDockWidget("Study", window)
    dock.setObjectName("studyDock")
    dock.setWidget(panel)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                     | QDockWidget.DockWidgetFeature.DockWidgetClosable)
    dock.setTitleBarWidget(QWidget())  # the panel has its own header, like the chat's
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.tabifyDockWidget(window.chat_dock, dock)
    window.chat_dock.raise_()
    window.study_dock = dock
    panel.citation_clicked.connect(window.on_citation_clicked)

    def book_of(meta: Any) -> tuple[Optional[str], str]:
        info = window.service.book_for_path(meta.path)
        return (info.book_id if info else None), meta.title

    def on_opened(meta: Any) -> None:
        book_id, title = book_of(meta)
        panel.set_book(book_id, title, meta.toc, meta.labels)
        panel.meta = meta

    def on_books(_books: Any) -> None:
        meta = panel.meta
        if meta is not None and panel.book_id is None:
            book_id, _ = book_of(meta)
            if book_id is not None:
                panel.book_id = book_id
                panel.refresh()

    window.book_opened.connect(on_opened)
    window.service.books_changed.connect(on_books)

    def add_menu_action(menu: Any) -> None:
        reader = window.reader
        action = menu.addAction(MAKE_FROM_SELECTION)
        action.setToolTip("Flashcards from the definitions and key statements in the "
                          "selected text, each cited on its page")

        def make() -> None:
            text, pages = reader.selected_text(), reader.selected_pages()
            if text and pages is not None and panel.book_id is not None:
                dock.show()
                dock.raise_()
                panel.make_from_selection(text, pages)

        action.triggered.connect(make)
        action.setEnabled(panel.book_id is not None)

    window.reader.context_menu_shown.connect(add_menu_action)
    return panel


__all__ = ["MAKE_FROM_SELECTION", "StudyClient", "StudyPanel", "attach_study"]
