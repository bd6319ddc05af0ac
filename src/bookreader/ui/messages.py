"""How the window talks to the user about errors: one sink, replaceable in tests.

Every :class:`~bookreader.errors.BookReaderError` is shown with its ``user_message``;
anything else is a crash: logged with its traceback and shown once in a crash dialog that
says where the log file is.  Tests pass a :class:`RecordingSink` so no dialog ever blocks.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)


class MessageSink:
    """Shows messages with dialogs.  ``parent`` is the main window (or None at start)."""

    def __init__(self, parent: Optional[QWidget] = None, log_file: Optional[Path] = None):
        self.parent = parent
        self.log_file = log_file

    def error(self, title: str, message: str) -> None:
        QMessageBox.warning(self.parent, title, message)

    def info(self, title: str, message: str) -> None:
        QMessageBox.information(self.parent, title, message)

    def ask_password(self, file_name: str, wrong: bool) -> Optional[str]:
        """Ask for a PDF's password; None when the user cancels."""
        prompt = (f"The password for {file_name} was not accepted. Try again:" if wrong
                  else f"{file_name} is protected with a password. Enter it to open the book:")
        text, ok = QInputDialog.getText(self.parent, "Password required", prompt,
                                        QLineEdit.EchoMode.Password)
        return text if ok else None

    def crash(self, summary: str, details: str) -> None:
        box = QMessageBox(self.parent)
        box.setIcon(QMessageBox.Icon.Critical)
        box.setWindowTitle("BookReader hit an unexpected problem")
        where = f"\n\nThe details are in the log file:\n{self.log_file}" if self.log_file else ""
        box.setText("Something went wrong that BookReader did not expect. Your books and "
                    "answers are safe; you can keep working, or restart BookReader if the "
                    f"window misbehaves.\n\n{summary}{where}")
        box.setDetailedText(details)
        box.exec()

    def crash_report(self, summary: str, report: str) -> None:
        """Offer a native crash report left by an earlier run (shown once, not blocking)."""
        box = QMessageBox(self.parent)
        box.setObjectName("crashReportBox")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("BookReader stopped unexpectedly last time")
        box.setText(f"{summary}\n\nYour books and answers are safe. If it happens again, "
                    "please send this report with a description of what you were doing.")
        box.setDetailedText(report)
        box.open()


@dataclass
class RecordingSink(MessageSink):
    """Records messages instead of showing dialogs (tests, screenshots, benchmarks)."""

    passwords: list[Optional[str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    infos: list[tuple[str, str]] = field(default_factory=list)
    crashes: list[tuple[str, str]] = field(default_factory=list)
    crash_reports: list[tuple[str, str]] = field(default_factory=list)
    password_prompts: list[tuple[str, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.parent = None
        self.log_file = None

    def error(self, title: str, message: str) -> None:
        self.errors.append((title, message))

    def info(self, title: str, message: str) -> None:
        self.infos.append((title, message))

    def crash_report(self, summary: str, report: str) -> None:
        self.crash_reports.append((summary, report))

    def ask_password(self, file_name: str, wrong: bool) -> Optional[str]:
        self.password_prompts.append((file_name, wrong))
        return self.passwords.pop(0) if self.passwords else None

    def crash(self, summary: str, details: str) -> None:
        self.crashes.append((summary, details))


class Reporter(QObject):
    """Routes errors from anywhere (any thread) to the sink on the GUI thread.

    ``report_error`` shows a :class:`BookReaderError` plainly and sends anything else to
    the crash dialog.  Emitting from another thread is safe: delivery is queued.
    """

    crash_reported = Signal(str, str)
    error_reported = Signal(str, str)

    def __init__(self, sink: MessageSink, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.sink = sink
        self._showing_crash = False
        self.crash_reported.connect(self.on_crash_reported)
        self.error_reported.connect(self.on_error_reported)
        self.on_crash: Optional[Callable[[str], None]] = None

    def report_error(self, exc: BaseException, title: str = "BookReader") -> None:
        if isinstance(exc, BookReaderError):
            self.error_reported.emit(title, exc.user_message)
        else:
            self.report_crash(type(exc), exc, exc.__traceback__)

    def report_crash(self, exc_type, exc, tb) -> None:
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("Unexpected error:\n%s", details)
        summary = f"{exc_type.__name__}: {exc}"
        self.crash_reported.emit(summary, details)

    @Slot(str, str)
    def on_error_reported(self, title: str, message: str) -> None:
        self.sink.error(title, message)

    @Slot(str, str)
    def on_crash_reported(self, summary: str, details: str) -> None:
        if self.on_crash is not None:
            self.on_crash(summary)
        if self._showing_crash:  # one dialog at a time; the rest are in the log
            return
        self._showing_crash = True
        try:
            self.sink.crash(summary, details)
        finally:
            self._showing_crash = False
