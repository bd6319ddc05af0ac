"""The main window: library and contents on the left, the pages, the chat on the right.

It wires the panels together and owns no slow work: opening and rendering run on the
document worker, indexing and questions on the library workers (see ``workers.py``).
What it remembers between runs (recent books, last pages, layout) is in
``window_memory.py``; loading the model before the first question in ``model_warm_up.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QLabel, QLineEdit, QMainWindow,
                               QMessageBox, QTabWidget, QToolBar, QVBoxLayout, QWidget)

from bookreader.config import Settings
from bookreader.core.types import BookInfo, BookState, Citation, Mode
from bookreader.errors import BookReaderError, PasswordRequired
from bookreader.ui.audit_dialog import AuditDialog
from bookreader.ui.chat_panel import STATE_UNKNOWN, ChatPanel
from bookreader.ui.document import DocumentMeta, DocumentService
from bookreader.ui.find_bar import FindBar
from bookreader.ui.help_dialog import ASKING_PAGE, SHORTCUTS_PAGE, HelpDialog
from bookreader.ui.library_panel import LibraryPanel
from bookreader.ui.library_service import LibraryService, _norm
from bookreader.ui.messages import MessageSink, Reporter
from bookreader.ui.model_warm_up import ModelWarmUpMixin
from bookreader.ui.reader_view import ReaderView
from bookreader.ui.settings_dialog import SettingsDialog
from bookreader.ui.toc_panel import TocPanel
from bookreader.ui.window_memory import MAX_RECENT, RECENT_TEXT_PX, WindowMemoryMixin  # noqa: F401
from bookreader.ui.workers import TaskRunner


class MainWindow(WindowMemoryMixin, ModelWarmUpMixin, QMainWindow):
    """The reader window."""

    book_opened = Signal(object)  # DocumentMeta
    settings_applied = Signal(object)  # Settings
    conversation_exported = Signal(str)  # path of the Markdown file
    model_warmed = Signal(str)  # the backend warmed ("" when no model could be loaded)

    def __init__(self, settings: Settings, runner: TaskRunner, service: LibraryService,
                 sink: MessageSink, reporter: Reporter,
                 on_switch_data_dir: Optional[Callable[[Settings], bool]] = None) -> None:
        super().__init__()
        self.settings = settings
        self.runner = runner
        self.service = service
        self.sink = sink
        self.reporter = reporter
        self.on_switch_data_dir = on_switch_data_dir
        self.ui_state = QSettings(str(settings.data_dir / "ui.ini"), QSettings.Format.IniFormat)
        self.document = DocumentService(runner, self)
        self.document.settings = settings  # the sandbox's caps (see document._open_book)
        self.current_path: Optional[str] = None
        #: The book whose page changes are recorded (None while one is being opened).
        self._page_book: Optional[str] = None
        self._passwords: dict[str, Optional[str]] = {}
        self._dialogs: list = []
        #: Books warmed up under the current settings (any Settings change rebuilds the
        #: library and its models) and whether the model is loaded.
        self._warmed_books: set[str] = set()
        self._model_warm = False
        self.setWindowTitle("BookReader")
        self.setAcceptDrops(True)

        self.reader = ReaderView(self.document)
        self.find_bar = FindBar(self.reader)
        self.find_bar.hide()
        center = QWidget()
        cl = QVBoxLayout(center)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.find_bar)
        cl.addWidget(self.reader, 1)
        self.setCentralWidget(center)

        self.library_panel = LibraryPanel()
        self.toc_panel = TocPanel()
        self.side_tabs = QTabWidget(objectName="sideTabs")
        self.side_tabs.addTab(self.toc_panel, "Contents")
        self.side_tabs.addTab(self.library_panel, "Library")
        self.side_dock = self._dock("Book", "sideDock", self.side_tabs,
                                    Qt.DockWidgetArea.LeftDockWidgetArea)
        self.chat = ChatPanel(service, reporter)
        self.chat_dock = self._dock("Ask", "chatDock", self.chat,
                                    Qt.DockWidgetArea.RightDockWidgetArea)
        self.chat_dock.setTitleBarWidget(QWidget())  # the panel has its own header
        self.side_dock.setTitleBarWidget(QWidget())

        self._build_actions()
        self._connect()
        self.status_model = QLabel("", objectName="hintText")
        self.statusBar().addPermanentWidget(self.status_model)
        self.status_page = QLabel("", objectName="hintText")
        self.statusBar().addPermanentWidget(self.status_page)
        self.library_panel.set_recent(self.recent_books())
        from bookreader.ui.study_panel import attach_study

        self.study = attach_study(self)  # the Study dock and the selection's flashcards
        self._restore_layout()

    # --- construction ---------------------------------------------------------------------------
    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(tip or text)
        # triggered(bool) carries "checked": a slot with an optional argument would get it
        # (File > Export conversation took False for its file name).
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_actions(self) -> None:
        A = self._action
        self.open_action = A("Open…", self.choose_pdf, QKeySequence.StandardKey.Open,
                             "Open a PDF book")
        self.find_action = A("Find", self.find_bar.open_bar, QKeySequence.StandardKey.Find,
                             "Find in book (Ctrl+F)")
        self.zoom_in_action = A("Zoom in", self.reader.zoom_in, QKeySequence.StandardKey.ZoomIn)
        self.zoom_out_action = A("Zoom out", self.reader.zoom_out,
                                 QKeySequence.StandardKey.ZoomOut)
        self.fit_width_action = A("Fit width", self.reader.fit_width, "Ctrl+2")
        self.fit_page_action = A("Fit page", self.reader.fit_page, "Ctrl+1")
        self.settings_action = A("Settings…", self.show_settings, QKeySequence.StandardKey.Preferences)
        self.audit_action = A("Audit log…", self.show_audit, tip="Instructors: export, verify "
                              "and report on the audit log")
        quit_action = A("Quit", self.close, QKeySequence.StandardKey.Quit)
        self.goto_action = A("Go to page…", self.focus_page_box, "Ctrl+G")
        self.export_conversation_action = A(
            "Export conversation…", self.export_conversation,
            tip="Save this book's questions and answers, with their citations, as Markdown")

        menu = self.menuBar().addMenu("&File")
        menu.addAction(self.open_action)
        self.recent_menu = menu.addMenu("Open recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        menu.addAction(self.export_conversation_action)
        menu.addSeparator()
        menu.addAction(quit_action)
        menu = self.menuBar().addMenu("&View")
        for a in (self.find_action, self.goto_action, None, self.zoom_in_action,
                  self.zoom_out_action, self.fit_width_action, self.fit_page_action, None,
                  self.side_dock.toggleViewAction(), self.chat_dock.toggleViewAction()):
            menu.addSeparator() if a is None else menu.addAction(a)
        self.side_dock.toggleViewAction().setText("Contents and library")
        self.chat_dock.toggleViewAction().setText("Ask panel")
        menu = self.menuBar().addMenu("&Tools")
        menu.addAction(self.settings_action)
        menu.addAction(self.audit_action)
        menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action = A("Keyboard shortcuts", self.show_shortcuts, "F1",
                                  "Every keyboard shortcut of the reader and the chat")
        self.how_asking_works_action = A("How asking works", self.show_how_asking_works,
                                         tip="The three ways to ask and what each promises")
        menu.addAction(self.shortcuts_action)
        menu.addAction(self.how_asking_works_action)
        menu.addSeparator()
        menu.addAction(A("About BookReader", self._about))

        bar = QToolBar("Main", objectName="mainToolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.addToolBar(bar)
        bar.addAction(self.open_action)
        bar.addSeparator()
        bar.addWidget(QLabel("Page", objectName="pageCount"))
        self.page_edit = QLineEdit(objectName="pageEdit")
        self.page_edit.setToolTip("Type a printed page number (e.g. 37 or xii) and press Enter")
        self.page_edit.returnPressed.connect(self._on_page_entered)
        bar.addWidget(self.page_edit)
        self.page_count_label = QLabel("", objectName="pageCount")
        bar.addWidget(self.page_count_label)
        bar.addSeparator()
        bar.addAction(self.zoom_out_action)
        self.zoom_label = QLabel("100 %", objectName="zoomLabel")
        bar.addWidget(self.zoom_label)
        bar.addAction(self.zoom_in_action)
        bar.addAction(self.fit_width_action)
        bar.addAction(self.fit_page_action)
        bar.addSeparator()
        bar.addAction(self.find_action)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                             spacer.sizePolicy().verticalPolicy().Preferred)
        bar.addWidget(spacer)
        bar.addAction(self.audit_action)
        bar.addAction(self.settings_action)

    def _connect(self) -> None:
        d, r, s = self.document, self.reader, self.service
        d.opened.connect(self.on_document_opened)
        d.open_failed.connect(self.on_open_failed)
        r.page_changed.connect(self.on_page_changed)
        r.zoom_changed.connect(lambda p: self.zoom_label.setText(f"{p} %"))
        r.ask_requested.connect(self.on_ask_requested)
        self.chat.citation_clicked.connect(self.on_citation_clicked)
        self.toc_panel.page_requested.connect(r.go_to_page)
        lp = self.library_panel
        lp.book_activated.connect(self.open_book)
        lp.open_requested.connect(self.choose_pdf)
        lp.cancel_requested.connect(s.cancel_ingest)
        lp.reindex_requested.connect(lambda p: s.ingest(p, self._passwords.get(p)))
        lp.remove_requested.connect(self._remove_book)
        s.books_changed.connect(self.on_books_changed)
        s.ingest_queued.connect(lp.set_queued)
        s.ingest_progressed.connect(self.on_ingest_progressed)
        s.ingest_finished.connect(self.on_ingest_finished)
        s.ingest_failed.connect(self.on_ingest_failed)
        s.ingest_cancelled.connect(self.on_ingest_cancelled)

    # --- opening books ---------------------------------------------------------------------------
    def choose_pdf(self) -> None:
        start = str(Path(self.current_path).parent) if self.current_path else str(Path.home())
        paths, _ = QFileDialog.getOpenFileNames(self, "Open PDF books", start, "PDF files (*.pdf)")
        for i, path in enumerate(paths):
            self.open_book(path) if i == 0 else self.service.ingest(_norm(path))

    def open_book(self, path: str | Path, password: Optional[str] = None) -> None:
        """Show a PDF at once; index it in the background if the library lacks it."""
        path = _norm(path)
        self._page_book = None  # no page is recorded until the new book is positioned
        self.statusBar().showMessage(f"Opening {Path(path).name}…")
        if self.current_path is None:  # nothing on screen yet: a neutral "Opening…"
            self.toc_panel.set_loading()
            self.chat.set_loading(self._recent_title(path))
        self.document.open(path, password or self._passwords.get(path))

    def on_document_opened(self, meta: DocumentMeta) -> None:
        path = _norm(meta.path)
        self.current_path = path
        self._passwords[path] = meta.password
        self.setWindowTitle(f"{meta.title} — BookReader")
        self.toc_panel.set_toc(meta.toc, meta.labels)
        self.side_tabs.setCurrentWidget(self.toc_panel if meta.toc else self.library_panel)
        self.page_count_label.setText(f"of {meta.page_count}")
        self.library_panel.set_current(path)
        self._add_recent(path)
        self._remember_title(path, meta.title)
        info = self.service.book_for_path(path)
        if info is None and not self.service.catalogue_read:
            # The library has not said yet whether it knows the book: neither "Indexing…"
            # nor an ingest until it has (on_books_changed decides).
            self.chat.set_book(path, meta.title, None, ready=False, state=STATE_UNKNOWN)
        else:
            self._index_or_warm(path, info, meta.password, meta.title)
        self.statusBar().showMessage(f"Opened {meta.title} ({meta.page_count} pages)", 4000)
        last = self.last_page(path)
        if 0 < last < meta.page_count:  # reopen where the student left it
            self.reader.go_to_page(last)
        self._page_book = path  # from now on its page changes are recorded
        self.on_page_changed(self.reader.current_page(), self.reader.label(
            self.reader.current_page()))
        self.reader.setFocus()
        self.book_opened.emit(meta)

    def _index_or_warm(self, path: str, info: Optional[BookInfo], password: Optional[str],
                       title: str) -> None:
        """Show the book's state in the chat; index it if the library lacks it."""
        self.chat.set_book(path, title, info.book_id if info else None,
                           ready=bool(info and info.state is BookState.READY),
                           state=info.state if info else BookState.INDEXING)
        if info is None or info.state is not BookState.READY:
            self.service.ingest(path, password)
        else:
            self.warm_up(info)

    def on_open_failed(self, path: str, exc: BaseException) -> None:
        self.statusBar().clearMessage()
        self._page_book = self.current_path  # the book on screen stays
        if isinstance(exc, PasswordRequired):
            password = self.sink.ask_password(Path(path).name, exc.wrong_password)
            if password is not None:
                self.open_book(path, password)
            return
        if isinstance(exc, BookReaderError):
            self.sink.error("Cannot open the book", exc.user_message)
        else:
            self.reporter.report_error(exc)

    # --- library ------------------------------------------------------------------------------------
    def on_books_changed(self, books: list[BookInfo]) -> None:
        self.library_panel.set_books(books)
        if self.current_path and self.chat.state_text == STATE_UNKNOWN:
            # the first catalogue since the book opened: now its state is known
            path = self.current_path
            meta = self.document.meta
            self._index_or_warm(path, self.service.book_for_path(path),
                                self._passwords.get(path), meta.title if meta else "")
            return
        if self.current_path:
            info = self.service.book_for_path(self.current_path)
            if info is not None and not self.service.is_ingesting(self.current_path):
                self.chat.set_book_state(info.book_id, info.state is BookState.READY, info.state)
                self.warm_up(info)

    def on_ingest_progressed(self, path: str, done: int, total: int, message: str) -> None:
        self.library_panel.set_progress(path, done, total, message)
        if path == self.current_path and total:
            self.statusBar().showMessage(
                f"Indexing: {message or 'working'} {done}/{total} — you can read meanwhile")

    def on_ingest_finished(self, path: str, info: BookInfo) -> None:
        self.library_panel.set_finished(path, info)
        if path == self.current_path:
            self.chat.set_book_state(info.book_id, info.state is BookState.READY, info.state)
            self.statusBar().showMessage(
                f"{info.title} is ready for questions ({info.chunk_count} passages indexed)",
                6000)
            self.warm_up(info)

    def on_ingest_failed(self, path: str, exc: BaseException) -> None:
        message = exc.user_message if isinstance(exc, BookReaderError) else (
            "Indexing failed unexpectedly; the details are in the log file.")
        self.library_panel.set_failed(path, message)
        if path == self.current_path:
            self.chat.set_book_state(None, False, BookState.FAILED)
            self.statusBar().showMessage(f"Indexing failed: {message}")
        if not isinstance(exc, BookReaderError):
            self.reporter.report_error(exc)

    def on_ingest_cancelled(self, path: str) -> None:
        self.library_panel.set_cancelled(path)
        if path == self.current_path:
            self.statusBar().showMessage("Indexing cancelled; the book can still be read.", 6000)

    def _remove_book(self, book_id: str) -> None:
        self.service.remove(book_id, on_failure=lambda e: self.reporter.report_error(e))

    # --- reading ------------------------------------------------------------------------------------
    def focus_page_box(self) -> None:
        """Ctrl+G: the page box, its text selected so typing replaces it."""
        self.page_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.page_edit.selectAll()

    def on_page_changed(self, page: int, label: str) -> None:
        # Recorded only for the book on screen once it is at its page: the new layout's
        # page 0 of a book being opened is neither the old book's page nor the new one's.
        book = self._page_book
        if book is not None and page >= 0 and self.reader.meta is not None \
                and _norm(self.reader.meta.path) == book:
            self._remember_page(book, page)
        if not self.page_edit.hasFocus():
            self.page_edit.setText(label)
        self.toc_panel.set_current_page(page)
        physical = f" (page {page + 1})" if label != str(page + 1) else ""
        self.status_page.setText(f"Page {label}{physical} of {self.reader.page_count}")

    def _on_page_entered(self) -> None:
        text = self.page_edit.text().strip()
        if not text or self.reader.meta is None:
            return
        if self.reader.go_to_label(text):
            self.reader.setFocus()
            return
        if text.isdigit() and 1 <= int(text) <= self.reader.page_count:
            self.reader.go_to_page(int(text) - 1)
            self.statusBar().showMessage(
                f"No page is printed as '{text}'; showing physical page {text}.", 5000)
        else:
            labels = self.reader.meta.labels
            span = f" Its pages run from {labels[0]} to {labels[-1]}." if labels else ""
            self.statusBar().showMessage(f"This book has no page '{text}'.{span}", 8000)
            self.page_edit.selectAll()

    def export_conversation(self, out: Optional[str | Path] = None) -> None:
        """File > Export conversation: the open book's questions and answers as Markdown."""
        info = self.service.book_for_path(self.current_path) if self.current_path else None
        if info is None:
            self.sink.info("Export conversation", "Open a book that has been indexed first: "
                           "its questions and answers are what gets exported.")
            return
        if out is None:
            from bookreader.api import conversation_file_name

            start = str(Path(self.current_path or Path.home()).parent /
                        conversation_file_name(info.title))
            chosen, _ = QFileDialog.getSaveFileName(self, "Export conversation", start,
                                                    "Markdown (*.md)")
            if not chosen:
                return
            out = chosen
        self.service.export_conversation(
            info.book_id, Path(out),
            on_success=lambda path: (self.statusBar().showMessage(
                f"Conversation exported to {path}", 8000), self.conversation_exported.emit(
                str(path))),
            on_failure=self.reporter.report_error)

    def on_ask_requested(self, text: str, mode: Mode, pages) -> None:
        self.chat_dock.show()
        self.chat.set_selection(text, mode, pages)

    def on_citation_clicked(self, citation: Citation) -> None:
        if citation.page < 0:
            return
        self.reader.show_citation(citation.page, list(citation.rects), citation.excerpt)

    # --- dialogs ------------------------------------------------------------------------------------
    def show_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.settings, self)
        dialog.api_key_in_memory.connect(self.service.use_api_key)
        dialog.settings_saved.connect(self.apply_settings)
        self._keep(dialog)
        dialog.open()  # window-modal but not blocking
        return dialog

    def apply_settings(self, settings: Settings, note: str = "") -> None:
        """Use new settings at once: a new data folder switches libraries."""
        if settings.data_dir != self.settings.data_dir and self.on_switch_data_dir:
            if not self.on_switch_data_dir(settings):
                return
        self.settings = settings
        self.service.apply_settings(settings)
        self._warmed_books.clear()  # the library (and its models) are rebuilt
        self._model_warm = False
        current = self.service.book_for_path(self.current_path) if self.current_path else None
        if current is not None:
            self.warm_up(current)
        self.statusBar().showMessage("Settings saved and applied. " + note, 6000)
        if note:
            self.sink.info("Settings", note)
        self.settings_applied.emit(settings)

    def show_audit(self) -> AuditDialog:
        dialog = AuditDialog(self.service, self)
        self._keep(dialog)
        dialog.open()
        return dialog

    def _keep(self, dialog) -> None:
        self._dialogs.append(dialog)
        dialog.finished.connect(lambda *_: self._dialogs.remove(dialog)
                                if dialog in self._dialogs else None)

    def show_shortcuts(self) -> HelpDialog:
        """Help > Keyboard shortcuts (F1): the sheet, in the app."""
        return self._show_help(SHORTCUTS_PAGE)

    def show_how_asking_works(self) -> HelpDialog:
        """Help > How asking works: the three modes and what each guarantees."""
        return self._show_help(ASKING_PAGE)

    def _show_help(self, page: str) -> HelpDialog:
        dialog = HelpDialog(page, self)
        self._keep(dialog)
        dialog.show()
        return dialog

    def _about(self) -> None:
        QMessageBox.about(self, "About BookReader",
                          "BookReader answers questions from the book only, with citations "
                          "that lead to the page. Everything runs on this computer unless "
                          "you choose Claude in Settings.")

    # --- drag and drop ------------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if any(u.toLocalFile().lower().endswith(".pdf") for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        pdfs = [u.toLocalFile() for u in event.mimeData().urls()
                if u.toLocalFile().lower().endswith(".pdf")]
        for i, path in enumerate(pdfs):
            self.open_book(path) if i == 0 else self.service.ingest(_norm(path))
        event.acceptProposedAction()

    def start(self) -> None:
        """Read the catalogue (in the background) once the window shows."""
        QTimer.singleShot(0, self.service.refresh_books)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.save_layout()
        self.hide()  # the library process may take a moment to finish its current step
        self.chat.stop()
        self.runner.shutdown()
        self.service.close()
        super().closeEvent(event)

