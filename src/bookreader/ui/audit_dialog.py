"""The instructor's dialog: export the audit log, verify an exported file, open the report.

Every audit call runs on the library worker (the audit database belongs to the Library);
results come back as signals, so the dialog never freezes on a large log.
"""

from __future__ import annotations

import logging
from datetime import date, datetime
from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QDate, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDateEdit, QDialog, QDialogButtonBox,
                               QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QPushButton, QVBoxLayout, QWidget)

from bookreader.core.types import Mode
from bookreader.errors import BookReaderError
from bookreader.ui.library_service import LibraryService

log = logging.getLogger(__name__)

FORMATS = (("csv", "CSV (spreadsheets)"), ("jsonl", "JSON Lines (verifiable)"),
           ("json", "JSON (verifiable)"))
MODES = (("", "All modes"), (Mode.BOOK.value, "Whole book"),
         (Mode.SELECTED.value, "Selected text"), (Mode.HIGHLIGHT.value, "Selection + pages"))


def _date(edit: QDateEdit) -> date:
    d = edit.date()
    return date(d.year(), d.month(), d.day())


class AuditDialog(QDialog):
    """Export, verify and report on the audit log."""

    export_finished = Signal(int, int, str)  # questions, records written, path
    verify_finished = Signal(object)  # VerifyResult
    report_finished = Signal(str)  # path
    failed = Signal(str)

    def __init__(self, service: LibraryService, parent: Optional[QWidget] = None,
                 open_url: Optional[Callable[[QUrl], object]] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Audit log (instructors)")
        self.setObjectName("auditDialog")
        self.setMinimumWidth(680)
        self.service = service
        self.open_url = open_url or QDesktopServices.openUrl
        reports = service.settings.data_dir / "reports"
        lay = QVBoxLayout(self)
        lay.setSpacing(12)
        intro = QLabel("Every question and answer is kept in a tamper-evident log. Export it "
                       "for grading or research, check that an exported file was not edited, "
                       "or open a one-page summary.", objectName="hintText")
        intro.setWordWrap(True)
        lay.addWidget(intro)

        group = QGroupBox("Which records")
        form = QFormLayout(group)
        today = QDate.currentDate()
        self.since_check = QCheckBox("From")
        self.since_edit = QDateEdit(today.addDays(-30), calendarPopup=True,
                                    objectName="sinceDate")
        self.until_check = QCheckBox("Until")
        self.until_edit = QDateEdit(today, calendarPopup=True, objectName="untilDate")
        for check, edit in ((self.since_check, self.since_edit),
                            (self.until_check, self.until_edit)):
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setEnabled(False)
            check.toggled.connect(edit.setEnabled)
            row = QHBoxLayout()
            row.addWidget(edit)
            row.addStretch(1)
            form.addRow(check, row)
        self.book_combo = QComboBox(objectName="bookFilter")
        self.book_combo.addItem("All books", "")
        for info in service.books:
            self.book_combo.addItem(info.title, info.book_id)
        form.addRow("Book", self.book_combo)
        self.mode_combo = QComboBox(objectName="modeFilter")
        for value, name in MODES:
            self.mode_combo.addItem(name, value)
        form.addRow("Mode", self.mode_combo)
        lay.addWidget(group)

        group = QGroupBox("Export")
        form = QFormLayout(group)
        self.format_combo = QComboBox(objectName="formatCombo")
        for value, name in FORMATS:
            self.format_combo.addItem(name, value)
        self.format_combo.currentIndexChanged.connect(self._on_format_changed)
        form.addRow("Format", self.format_combo)
        self.export_path = QLineEdit(str(reports / "audit-export.csv"), objectName="exportPath")
        form.addRow("Save to", self._with_browse(self.export_path, self._choose_export))
        self.export_button = QPushButton("Export", objectName="primaryButton")
        self.export_button.clicked.connect(self.export)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.export_button)
        form.addRow("", row)
        lay.addWidget(group)

        group = QGroupBox("Verify an exported file")
        form = QFormLayout(group)
        self.verify_path = QLineEdit(objectName="verifyPath")
        self.verify_path.setPlaceholderText("An exported .jsonl or .json file")
        form.addRow("File", self._with_browse(self.verify_path, self._choose_verify))
        buttons = QHBoxLayout()
        self.verify_button = QPushButton("Verify file")
        self.verify_button.clicked.connect(lambda: self.verify())
        self.verify_live_button = QPushButton("Verify the live log")
        self.verify_live_button.clicked.connect(lambda: self.verify(live=True))
        buttons.addWidget(self.verify_button)
        buttons.addWidget(self.verify_live_button)
        buttons.addStretch(1)
        form.addRow("", buttons)
        lay.addWidget(group)

        group = QGroupBox("Report")
        rl = QHBoxLayout(group)
        hint = QLabel("Questions per day, modes, confidence, fallbacks, latency and the "
                      "most-cited pages, as one HTML page.", objectName="hintText")
        hint.setWordWrap(True)
        rl.addWidget(hint, 1)
        self.report_button = QPushButton("Open HTML report")
        self.report_button.clicked.connect(self.report)
        rl.addWidget(self.report_button)
        lay.addWidget(group)
        self.report_path = reports / "audit-report.html"

        self.status = QLabel("", objectName="statusText")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        lay.addWidget(close)

    # --- helpers --------------------------------------------------------------------------------
    def _with_browse(self, edit: QLineEdit, chooser) -> QWidget:
        host = QWidget()
        row = QHBoxLayout(host)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        button = QPushButton("Choose…")
        button.clicked.connect(chooser)
        row.addWidget(button)
        return host

    def _on_format_changed(self) -> None:
        fmt = self.format_combo.currentData()
        path = Path(self.export_path.text() or "audit-export")
        self.export_path.setText(str(path.with_suffix("." + fmt)))

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the audit log",
                                              self.export_path.text())
        if path:
            self.export_path.setText(path)

    def _choose_verify(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Verify an exported audit file", "",
                                              "Audit exports (*.jsonl *.json *.gz)")
        if path:
            self.verify_path.setText(path)

    def filters(self) -> dict:
        """The record filters as the AuditLog takes them."""
        return {
            "since": _date(self.since_edit) if self.since_check.isChecked() else None,
            "until": _date(self.until_edit) if self.until_check.isChecked() else None,
            "book": self.book_combo.currentData() or None,
            "mode": self.mode_combo.currentData() or None,
        }

    def _set_status(self, text: str, state: str = "") -> None:
        self.status.setText(text)
        self.status.setProperty("state", state)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)

    def _busy(self, busy: bool) -> None:
        for b in (self.export_button, self.verify_button, self.verify_live_button,
                  self.report_button):
            b.setEnabled(not busy)

    def _callbacks(self, name: str, on_success) -> dict:
        """Callbacks for one background audit call: re-enable, report, or show the error."""
        self._busy(True)

        def succeeded(value) -> None:
            self._busy(False)  # before on_success announces the result
            on_success(value)

        def failed(exc: BaseException) -> None:
            self._busy(False)
            message = exc.user_message if isinstance(exc, BookReaderError) else (
                f"{name} failed unexpectedly: {exc}. The details are in the log file.")
            if not isinstance(exc, BookReaderError):
                log.error("%s failed: %r", name, exc)
            self._set_status(message, "bad")
            self.failed.emit(message)

        return {"on_success": succeeded, "on_failure": failed,
                "on_end": lambda: self._busy(False)}

    # --- actions ---------------------------------------------------------------------------------
    def export(self) -> None:
        fmt = self.format_combo.currentData()
        out = Path(self.export_path.text().strip()).expanduser()
        filters = self.filters()
        self._set_status("Exporting…")

        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._set_status(f"Cannot write to {out.parent}: {exc.strerror}. Choose another "
                             "folder.", "bad")
            return

        def done(summary) -> None:  # an ExportSummary
            q, n = summary.questions, summary.records
            # Questions, as an instructor counts them; the file keeps each streamed
            # question's record when asked and its answer's, so say so once.
            extra = (f" ({n} records: each question is recorded when asked and when "
                     "answered)") if n != q else ""
            self._set_status(f"Exported {q} question{'s' if q != 1 else ''}{extra} to {out}.",
                             "good")
            self.export_finished.emit(q, n, str(out))

        self.service.export_audit(fmt, out, filters, **self._callbacks("Export", done))

    def verify(self, live: bool = False) -> None:
        path = None if live else Path(self.verify_path.text().strip()).expanduser()
        if path is not None and not str(path).strip(". "):
            self._set_status("Choose an exported file to verify.", "bad")
            return
        self._set_status("Verifying…")

        def done(result) -> None:
            self._set_status(("✔ " if result.ok else "✘ ") + result.message,
                             "good" if result.ok else "bad")
            self.verify_finished.emit(result)

        self.service.verify_audit(path, **self._callbacks("Verify", done))

    def report(self) -> None:
        out = self.report_path
        filters = self.filters()
        self._set_status("Writing the report…")

        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._set_status(f"Cannot write the report to {out.parent}: {exc.strerror}.", "bad")
            return

        def done(path: Path) -> None:
            self._set_status(f"Report written to {path} ({datetime.now():%H:%M}).", "good")
            self.open_url(QUrl.fromLocalFile(str(path)))
            self.report_finished.emit(str(path))

        self.service.audit_report(out, filters, **self._callbacks("Report", done))
