"""Settings: who answers (in a student's words), the data folder, and an "Advanced"
section with the technical figures (time budgets, grounding thresholds, model details).

Saving writes ``settings.json`` (never the API key: that goes to the system keyring, or,
where there is none, stays in this process's memory only) and hands the new settings to the
window, which applies them without a restart.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QDialog, QDialogButtonBox,
                               QDoubleSpinBox, QFileDialog, QFrame, QGridLayout, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QRadioButton,
                               QScrollArea, QSpinBox, QToolButton, QVBoxLayout, QWidget)

from bookreader.config import Settings
from bookreader.errors import BookReaderError
from bookreader.ui.wording import model_words

log = logging.getLogger(__name__)

def backend_choices() -> list[tuple[str, str, str]]:
    """(key, label, help) for each choice: auto, every spec of the table, a GGUF file; the
    technical label and description (the Advanced section shows them)."""
    from bookreader.core.llm.specs import SPECS

    out = [("auto", "Automatic (best for this computer)",
            "The largest installed local model that answers quickly enough here.")]
    out.extend((s.name, s.label, s.description) for s in SPECS)
    out.append(("gguf", "Another GGUF model file", "A model file of your choice, run by "
                                                   "llama.cpp."))
    return out


def typical_answer_text(key: str) -> str:
    """How long a typical whole-book answer takes, in words, from the spec table's
    reference speeds on two idle cores ("" when unknown)."""
    from bookreader.core.llm.specs import lookup

    if key == "extractive":
        return "An answer takes about a second."
    if key == "claude":
        return "An answer takes a few seconds, depending on the connection."
    spec = lookup(key)
    if spec is None or not spec.local or spec.reference_speed[0] <= 0:
        return ""
    prompt_tps, gen_tps = spec.reference_speed
    prompt = spec.prompt_tokens[0] or spec.context_chars / 3.5 + 60
    seconds = prompt / prompt_tps + spec.answer_tokens[0] / gen_tps
    shown = 5 * round(seconds / 5) if seconds > 12 else max(2, round(seconds))
    return f"An answer takes about {shown} seconds on a two-core laptop."


def _gguf_spec():
    from bookreader.core.llm.specs import GGUF

    return GGUF


def _gguf_models(settings: Settings) -> list[tuple[str, str]]:
    """(label, path) of GGUF files the registry knows, else those in the models folder."""
    from bookreader.core.llm.registry import list_gguf_models

    found: list[Any] = []
    try:
        found = list(list_gguf_models(settings))
    except BookReaderError as exc:
        log.warning("Cannot list GGUF models: %s", exc.user_message)
    out = []
    for item in found:
        path = str(getattr(item, "path", item))
        name = getattr(item, "name", None) or Path(path).name
        size = getattr(item, "size_bytes", None) or getattr(item, "size", None)
        if not size:
            try:
                size = Path(path).stat().st_size
            except OSError:
                size = 0
        label = f"{name}  ({size / 1e9:.1f} GB)" if size else str(name)
        out.append((label, path))
    return out


def stored_api_key_present() -> bool:
    from bookreader.core.llm.claude import API_KEY_ENV, keyring_api_key

    return bool(keyring_api_key() or os.environ.get(API_KEY_ENV))


def save_api_key(key: str) -> tuple[str, bool]:
    """Keep the Claude API key safe.

    Returns:
        A sentence saying where it went, and whether it is kept in memory only (no keyring
        on this system): then the caller hands it to the library, wherever that runs.
    """
    from bookreader.core.llm.claude import API_KEY_ENV, store_api_key

    try:
        store_api_key(key)
        return "The API key was saved in the system keyring.", False
    except BookReaderError:
        # No keyring on this system: keep it in memory for this session, never on disk.
        os.environ[API_KEY_ENV] = key.strip()
        return ("This system has no keyring, so the API key is kept in memory until "
                f"BookReader closes. Set {API_KEY_ENV} to keep it across restarts."), True


class SettingsDialog(QDialog):
    """Edit the settings; ``settings_saved`` carries the new Settings."""

    settings_saved = Signal(object, str)  # Settings, a note for the user ("" if none)
    #: A key typed here with no keyring to keep it: the library process must be told.
    api_key_in_memory = Signal(str)

    def __init__(self, settings: Settings, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("settingsDialog")
        self.setMinimumWidth(720)
        self.settings = settings
        desc = Settings.describe()
        outer = self.outer = QVBoxLayout(self)
        # The sections scroll (the Advanced figures do not fit a small screen); the
        # error line and the buttons stay in view.
        self.sections = QScrollArea(objectName="settingsScroll", widgetResizable=True)
        self.sections.setFrameShape(QFrame.Shape.NoFrame)
        self.sections.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = self.body = QWidget(objectName="settingsBody")
        lay = QVBoxLayout(body)
        lay.setContentsMargins(0, 0, 6, 0)
        lay.setSpacing(12)
        self.sections.setWidget(body)
        outer.addWidget(self.sections, 1)

        # --- who answers: one row per choice, in a student's words ----------------------
        group = QGroupBox("Who answers your questions")
        gl = QVBoxLayout(group)
        self.backend_group = QButtonGroup(self)
        self.backend_buttons: dict[str, QRadioButton] = {}
        self.backend_hints: dict[str, QLabel] = {}
        self.install_rows: dict[str, Any] = {}
        details = []  # (technical label, description) for the Advanced section
        for key, label, description in backend_choices():
            self._backend_row(gl, key, label, description)
            details.append((label, description))
        self.backend_group.buttonToggled.connect(lambda *_: self._update_enabled())
        lay.addWidget(group)

        # --- data folder -------------------------------------------------------------------
        lay.addWidget(self._data_dir_group(desc))

        # --- advanced: the technical figures, folded away ------------------------------
        self.advanced_button = QToolButton(objectName="advancedToggle", checkable=True)
        self.advanced_button.setText("Advanced ▸")
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.advanced_button.toggled.connect(self._show_advanced)
        lay.addWidget(self.advanced_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.advanced = QWidget(objectName="advancedSection")
        al = QVBoxLayout(self.advanced)
        al.setContentsMargins(0, 0, 0, 0)
        al.addWidget(self._model_details(details))
        al.addWidget(self._budgets_group(settings, desc))
        self.advanced.hide()
        lay.addWidget(self.advanced)
        lay.addStretch(1)
        lay = outer

        self.error_label = QLabel("", objectName="errorText")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        lay.addWidget(self.error_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        lay.addWidget(buttons)
        self._load_backend(settings.llm_backend)
        self._show_availability()
        self._fit_height()

    # --- sections ------------------------------------------------------------------------------
    def _backend_row(self, box: QVBoxLayout, key: str, label: str, description: str) -> None:
        """One choice: its name and what it is good for, the technical description as a
        tooltip; an install button, the file picker or the API key under it."""
        from bookreader.core.llm import models as model_files
        from bookreader.core.llm.specs import lookup

        words = model_words(key, label)
        button = QRadioButton(words.title)
        button.setObjectName(f"backend_{key}")
        button.setToolTip(f"{label}: {description}")
        self.backend_group.addButton(button)
        self.backend_buttons[key] = button
        row = QHBoxLayout()
        row.addWidget(button)
        hint = QLabel(self._good_for(key, words.good_for or description), objectName="hintText")
        hint.setWordWrap(True)
        hint.setToolTip(f"{label}: {description}")
        row.addWidget(hint, 1)
        box.addLayout(row)
        self.backend_hints[key] = hint
        spec = lookup(key)
        if spec is not None and spec.model is not None and \
                model_files.installed_path(spec, self.settings.models_dir) is None:
            from bookreader.ui.model_install import ModelInstallRow

            install = ModelInstallRow(spec, self.settings.models_dir, self)
            install.installed.connect(self._tier_installed)
            self.install_rows[key] = install
            box.addWidget(install)
        if key == "gguf":
            self.gguf_row = self._gguf_row()
            box.addWidget(self.gguf_row)
        if key == "claude":
            self.claude_row = self._claude_row()
            box.addWidget(self.claude_row)
        if key == "openai":
            from bookreader.ui.model_server import ModelServerRow

            self.model_server_row = ModelServerRow(self.settings, self)
            box.addWidget(self.model_server_row)

    def _good_for(self, key: str, good_for: str) -> str:
        if key == "auto":
            return self._auto_text()
        return " ".join(t for t in (good_for, typical_answer_text(key)) if t)

    def _show_advanced(self, shown: bool) -> None:
        self.advanced.setVisible(shown)
        self.advanced_button.setText("Advanced ▾" if shown else "Advanced ▸")
        self._fit_height()
        if shown:
            self.sections.ensureWidgetVisible(self.advanced_button, 0, 0)

    def _fit_height(self) -> None:
        """As tall as the sections need, at most nine tenths of the screen (and of the
        window it belongs to)."""
        body = self.body
        layout = body.layout()
        if layout is not None:
            layout.invalidate()
            layout.activate()
        body.adjustSize()
        outer = self.outer
        margins = outer.contentsMargins()
        want = (body.sizeHint().height() + self.save_button.sizeHint().height()
                + margins.top() + margins.bottom() + 3 * outer.spacing() + 8)
        limits = [want]
        screen = self.screen()
        if screen is not None:
            limits.append(int(screen.availableGeometry().height() * 0.9))
        parent = self.parentWidget()
        if parent is not None:
            limits.append(int(parent.height() * 0.85))
        self.resize(max(self.width(), body.sizeHint().width() + 40), min(limits))

    def _model_details(self, details: list[tuple[str, str]]) -> QGroupBox:
        """The technical description of every choice, and why 'auto' chose its model."""
        group = QGroupBox("The models in detail")
        gl = QVBoxLayout(group)
        lines = [f"<b>{_html(label)}</b>: {_html(text)}" for label, text in details]
        if self.settings.auto_reason:
            lines.append(f"<b>Automatic choice</b>: {_html(self.settings.auto_reason)}")
        self.details_label = QLabel("<br>".join(lines), objectName="hintText")
        self.details_label.setWordWrap(True)
        self.details_label.setTextFormat(Qt.TextFormat.RichText)
        gl.addWidget(self.details_label)
        return group

    def _data_dir_group(self, desc: dict) -> QGroupBox:
        group = QGroupBox("Data folder")
        dl = QVBoxLayout(group)
        row = QHBoxLayout()
        self.data_dir_edit = QLineEdit(str(self.settings.data_dir), objectName="dataDirEdit")
        self.data_dir_edit.setToolTip(desc.get("data_dir", ""))
        row.addWidget(self.data_dir_edit, 1)
        browse = QPushButton("Choose…")
        browse.clicked.connect(lambda: self._choose_data_dir())
        row.addWidget(browse)
        dl.addLayout(row)
        hint = QLabel("Your books' index, the record of your questions, the models and the "
                      "logs are kept here. Choosing another folder switches to the library "
                      "in it.", objectName="hintText")
        hint.setWordWrap(True)
        dl.addWidget(hint)
        return group

    def _budgets_group(self, settings: Settings, desc: dict) -> QGroupBox:
        from bookreader.core.llm.specs import SPECS, budgets

        group = QGroupBox("Time budgets and grounding")
        grid = QGridLayout(group)
        grid.setHorizontalSpacing(14)
        # One budget per backend, from the spec table: local models get a first-token
        # budget (then they stream to the end; Stop ends them), Claude a total one.
        self.budget_boxes: dict[str, tuple[str, QDoubleSpinBox]] = {}
        budget_rows = []
        for spec in (*SPECS, _gguf_spec()):
            first, total = budgets(spec, settings)
            if spec.first_token_s is not None:
                box = self._seconds(float(first or spec.first_token_s), 1, 600)
                box.setObjectName(f"budget_{spec.name}")
                self.budget_boxes[spec.name] = ("first_token_s", box)
                budget_rows.append((f"{spec.label.split(':')[0]}: first token within", box,
                                    "budgets"))
            elif spec.kind in ("claude", "openai"):
                box = self._seconds(float(total or spec.total_s or 60), 5, 600)
                box.setObjectName(f"budget_{spec.name}")
                self.budget_boxes[spec.name] = ("total_s", box)
                budget_rows.append(("Claude: answer within" if spec.kind == "claude" else
                                    "Model server: answer within", box, "budgets"))
        self.max_tokens = QSpinBox(minimum=32, maximum=4096, singleStep=50,
                                   value=settings.max_new_tokens)
        # 0 follows the load (core/llm/cpu_load.py); shown as "Follow the load"
        self.threads = QSpinBox(minimum=0, maximum=256, value=max(0, int(settings.n_threads)))
        self.threads.setSpecialValueText("Follow the load")
        self.similarity = self._fraction(settings.grounding_similarity_threshold)
        self.overlap = self._fraction(settings.grounding_overlap_threshold)
        self.confidence = self._fraction(settings.confidence_threshold)
        rows = (
            *budget_rows,
            ("Longest answer (tokens)", self.max_tokens, "max_new_tokens"),
            ("Local model: CPU threads", self.threads, "n_threads"),
            ("Grounding: similarity", self.similarity, "grounding_similarity_threshold"),
            ("Grounding: word overlap", self.overlap, "grounding_overlap_threshold"),
            ("Not-in-book threshold", self.confidence, "confidence_threshold"),
        )
        for i, (label, widget, name) in enumerate(rows):
            widget.setToolTip(desc.get(name, ""))
            widget.setObjectName(name)
            half = (len(rows) + 1) // 2
            r, c = (i, 0) if i < half else (i - half, 2)
            grid.addWidget(QLabel(label), r, c)
            grid.addWidget(widget, r, c + 1)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        return group

    def _show_availability(self) -> None:
        """Say which backends cannot run here and why (from the registry; loads nothing)."""
        try:
            from bookreader.core.llm.registry import describe_backends

            entries = describe_backends(self.settings)
        except BookReaderError as exc:
            log.info("Cannot describe the answering backends: %s", exc)
            return
        for entry in entries:
            name = entry.get("name")
            if name not in self.backend_hints:
                continue
            hint = self.backend_hints[name]
            if not entry.get("available") and entry.get("problem"):
                hint.setText(f"{hint.text()}  ⚠ {entry['problem']}")
                hint.setToolTip(entry.get("fix", ""))
            for warning in entry.get("warnings") or ():
                hint.setText(f"{hint.text()}  ⚠ {warning}")
        gguf_warnings = [w for e in entries if e.get("selected") and e["name"].startswith("gguf:")
                         for w in e.get("warnings") or ()]
        if gguf_warnings and "gguf" in self.backend_hints:
            hint = self.backend_hints["gguf"]
            hint.setText(f"{hint.text()}  ⚠ {' '.join(gguf_warnings)}")

    def _auto_text(self) -> str:
        s = self.settings
        good_for = model_words("auto").good_for
        if s.auto_tier:
            # why, in figures, is in the Advanced section
            return f"{good_for} Chosen for this computer: {model_words(s.auto_tier).name}."
        return (f"{good_for} It is chosen by timing the installed models at the next "
                "start.")

    def _tier_installed(self, name: str) -> None:
        """A tier was installed: let auto measure again and say it is there."""
        self.settings = self.settings.updated(auto_tier="", auto_reason="")
        hint = self.backend_hints.get(name)
        if hint is not None:
            hint.setText(hint.text().split("  ⚠")[0])
        if "auto" in self.backend_hints:
            self.backend_hints["auto"].setText(self._auto_text())

    # --- widgets -------------------------------------------------------------------------------
    def _gguf_row(self) -> QWidget:
        row = QFrame()
        rl = QHBoxLayout(row)
        rl.setContentsMargins(24, 0, 0, 6)
        self.gguf_combo = QComboBox(objectName="ggufCombo")
        self.gguf_combo.setMinimumWidth(320)
        for label, path in _gguf_models(self.settings):
            self.gguf_combo.addItem(label, path)
        if not self.gguf_combo.count():
            self.gguf_combo.setPlaceholderText(f"No .gguf files in {self.settings.models_dir}")
        rl.addWidget(self.gguf_combo, 1)
        pick = QPushButton("Browse…")
        pick.clicked.connect(lambda: self._choose_gguf())
        rl.addWidget(pick)
        self.gguf_widgets = (self.gguf_combo, pick)
        return row

    def _claude_row(self) -> QWidget:
        row = QFrame()
        rl = QHBoxLayout(row)
        rl.setContentsMargins(24, 0, 0, 6)
        self.api_key_edit = QLineEdit(objectName="apiKeyEdit")
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key_edit.setPlaceholderText(
            "A key is stored; type a new one to replace it" if stored_api_key_present()
            else "API key (sk-ant-…), kept in the system keyring")
        self.claude_model_edit = QLineEdit(self.settings.claude_model, objectName="claudeModel")
        self.claude_model_edit.setMaximumWidth(200)
        rl.addWidget(QLabel("Key"))
        rl.addWidget(self.api_key_edit, 1)
        rl.addWidget(QLabel("Model"))
        rl.addWidget(self.claude_model_edit)
        self.claude_widgets = (self.api_key_edit, self.claude_model_edit)
        return row

    @staticmethod
    def _seconds(value: float, lo: float, hi: float) -> QDoubleSpinBox:
        box = QDoubleSpinBox(minimum=lo, maximum=hi, decimals=1, singleStep=1.0, suffix=" s")
        box.setValue(value)
        return box

    @staticmethod
    def _fraction(value: float) -> QDoubleSpinBox:
        box = QDoubleSpinBox(minimum=0.0, maximum=1.0, decimals=2, singleStep=0.05)
        box.setValue(value)
        return box

    def _load_backend(self, backend: str) -> None:
        if backend.startswith("openai:"):
            self.model_server_row.url_edit.setText(backend[len("openai:"):])
            backend = "openai"
        if backend.startswith("gguf:"):
            path = backend[5:]
            i = self.gguf_combo.findData(path)
            if i < 0:
                self.gguf_combo.addItem(Path(path).name, path)
                i = self.gguf_combo.count() - 1
            self.gguf_combo.setCurrentIndex(i)
            key = "gguf"
        else:
            from bookreader.core.llm.specs import lookup

            spec = lookup(backend)
            key = spec.name if spec is not None else backend
            key = key if key in self.backend_buttons else "auto"
        self.backend_buttons[key].setChecked(True)
        self._update_enabled()

    def _update_enabled(self) -> None:
        # A choice's file picker or key field shows only while it is chosen.
        self.gguf_row.setVisible(self.backend_buttons["gguf"].isChecked())
        self.claude_row.setVisible(self.backend_buttons["claude"].isChecked())
        for w in self.gguf_widgets:
            w.setEnabled(self.backend_buttons["gguf"].isChecked())
        for w in self.claude_widgets:
            w.setEnabled(self.backend_buttons["claude"].isChecked())
        self.model_server_row.setEnabled(self.backend_buttons["openai"].isChecked())

    def _choose_gguf(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model",
                                              str(self.settings.models_dir),
                                              "GGUF models (*.gguf)")
        if path:
            self.gguf_combo.addItem(Path(path).name, path)
            self.gguf_combo.setCurrentIndex(self.gguf_combo.count() - 1)

    def _choose_data_dir(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose the data folder",
                                                self.data_dir_edit.text())
        if path:
            self.data_dir_edit.setText(path)

    # --- saving ---------------------------------------------------------------------------------
    def selected_backend(self) -> str:
        for key, button in self.backend_buttons.items():
            if button.isChecked():
                if key == "gguf":
                    path = self.gguf_combo.currentData()
                    return f"gguf:{path}" if path else "auto"
                return key
        return "auto"

    def chosen_settings(self) -> Settings:
        """The settings as edited (data folder included), without saving anything."""
        return self.settings.updated(
            llm_backend=self.selected_backend(),
            claude_model=self.claude_model_edit.text().strip() or self.settings.claude_model,
            budgets=self._budgets(),
            max_new_tokens=self.max_tokens.value(),
            n_threads=self.threads.value(),
            grounding_similarity_threshold=self.similarity.value(),
            grounding_overlap_threshold=self.overlap.value(),
            confidence_threshold=self.confidence.value(),
            data_dir=Path(self.data_dir_edit.text().strip() or self.settings.data_dir),
            **self.model_server_row.values(),
        )

    def _budgets(self) -> dict[str, dict[str, float]]:
        """Only the budgets that differ from the spec table's defaults."""
        from bookreader.core.llm.specs import spec_for

        out: dict[str, dict[str, float]] = {}
        for name, (field_name, box) in self.budget_boxes.items():
            default = getattr(spec_for(name if name != "gguf" else "x.gguf"), field_name)
            if default is None or abs(box.value() - default) > 1e-6:
                out[name] = {field_name: round(box.value(), 1)}
        return out

    def save(self) -> None:
        """Validate, store the API key safely, save the settings file, announce them."""
        new = self.chosen_settings()
        if self.backend_buttons["gguf"].isChecked() and not self.gguf_combo.currentData():
            return self._show_error("Choose a GGUF file, or pick another answering model.")
        notes = []
        key = self.api_key_edit.text().strip()
        if key:
            note, in_memory = save_api_key(key)
            notes.append(note)
            self.api_key_edit.clear()
            if in_memory:
                self.api_key_in_memory.emit(key)
        elif new.llm_backend == "claude" and not stored_api_key_present():
            return self._show_error("Claude needs an API key. Paste it into the API key field.")
        if new.llm_backend == "openai":
            if not new.openai_base_url:
                return self._show_error("Enter the model server's address (Ollama: "
                                        "http://127.0.0.1:11434/v1), or pick another model.")
            try:
                notes.extend(self.model_server_row.save(new.data_dir))
            except BookReaderError as exc:
                return self._show_error(exc.user_message)
        try:
            new.save()  # into the new data folder when that changed
        except (BookReaderError, OSError) as exc:
            return self._show_error(getattr(exc, "user_message", None) or
                                    f"Cannot save the settings: {exc}")
        log.info("Settings saved (backend %s)", new.llm_backend)
        self.settings = new
        self.settings_saved.emit(new, " ".join(notes))
        self.accept()

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()


def _html(text: str) -> str:
    from html import escape

    return escape(text)
