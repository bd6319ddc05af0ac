"""Settings' row for a model server the user runs (Ollama, LM Studio, llama.cpp's server,
vLLM...): its address, its model (listed from the server's ``/models``) and an optional
key kept in the system keyring.

Opening Settings looks for the common servers on this machine's default ports (one short
request each to 127.0.0.1, on a worker thread); nothing else is contacted until the user
asks for the model list or picks the backend.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Optional

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QFrame, QGridLayout, QLabel, QLineEdit,
                               QPushButton, QWidget)

from bookreader.config import Settings
from bookreader.core.llm.openai_compat import API_KEY_ENV, keyring_api_key, store_api_key
from bookreader.core.llm.openai_servers import (KNOWN_SERVERS, FoundServer,
                                                detect_local_servers, list_models,
                                                notice_once)
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

PLACEHOLDER_URL = "http://127.0.0.1:11434/v1"


class ModelServerRow(QFrame):
    """Address, model and key of an OpenAI-compatible server; finds local ones on open."""

    #: The servers that answered on this machine (a list of FoundServer).
    servers_found = Signal(object)
    #: The model ids of the server in the address field, or an error message (str).
    models_listed = Signal(object)

    def __init__(self, settings: Settings, parent: Optional[QWidget] = None, *,
                 known: tuple[tuple[str, int], ...] = KNOWN_SERVERS) -> None:
        super().__init__(parent)
        self.setObjectName("modelServerRow")
        self.settings = settings
        grid = QGridLayout(self)
        grid.setContentsMargins(24, 0, 0, 6)
        self.found_combo = QComboBox(objectName="openaiFound")
        self.found_combo.setPlaceholderText("Looking for model servers on this computer…")
        self.found_combo.activated.connect(self._use_found)
        self.url_edit = QLineEdit(settings.openai_base_url, objectName="openaiUrl")
        self.url_edit.setPlaceholderText(PLACEHOLDER_URL)
        self.model_combo = QComboBox(objectName="openaiModel", editable=True)
        self.model_combo.setMinimumWidth(200)
        if settings.openai_model:
            self.model_combo.addItem(settings.openai_model)
        self.model_combo.setEditText(settings.openai_model)
        self.list_button = QPushButton("List models", objectName="openaiListModels")
        self.list_button.clicked.connect(self.request_models)
        self.key_edit = QLineEdit(objectName="openaiKey")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText(
            "A key is stored; type a new one to replace it" if keyring_api_key()
            else "Key, if the server needs one (kept in the system keyring)")
        self.status = QLabel("", objectName="hintText")
        self.status.setWordWrap(True)
        grid.addWidget(QLabel("Found"), 0, 0)
        grid.addWidget(self.found_combo, 0, 1, 1, 3)
        grid.addWidget(QLabel("Address"), 1, 0)
        grid.addWidget(self.url_edit, 1, 1)
        grid.addWidget(QLabel("Model"), 1, 2)
        grid.addWidget(self.model_combo, 1, 3)
        grid.addWidget(self.list_button, 1, 4)
        grid.addWidget(QLabel("Key"), 2, 0)
        grid.addWidget(self.key_edit, 2, 1, 1, 3)
        grid.addWidget(self.status, 3, 0, 1, 5)
        grid.setColumnStretch(1, 1)
        self.found: list[FoundServer] = []
        self.servers_found.connect(self._on_servers_found)
        self.models_listed.connect(self._on_models_listed)
        self._run(lambda: self.servers_found.emit(detect_local_servers(known=known)),
                  "find-model-servers")

    # --- work on a thread ---------------------------------------------------------------
    def _run(self, work: Any, name: str) -> None:
        def guarded() -> None:
            try:
                work()
            except RuntimeError:  # the dialog closed first: nobody to tell
                log.debug("%s finished after its widget was closed", name)

        threading.Thread(target=guarded, name=name, daemon=True).start()

    def request_models(self) -> None:
        """List the models of the server in the address field (on a thread)."""
        url = self.url_edit.text().strip() or PLACEHOLDER_URL
        key = self.key_edit.text().strip() or None
        self.status.setText(f"Asking {url} for its models…")

        def work() -> None:
            try:
                self.models_listed.emit(list_models(url, api_key=key))
            except BookReaderError as exc:
                self.models_listed.emit(exc.user_message)

        self._run(work, "list-models")

    # --- results ------------------------------------------------------------------------
    def _on_servers_found(self, found: list[FoundServer]) -> None:
        self.found = list(found)
        self.found_combo.clear()
        if not found:
            self.found_combo.setPlaceholderText(
                "No model server found on this computer's usual ports: enter its address")
            return
        for server in found:
            count = len(server.models)
            self.found_combo.addItem(f"{server.name} at {server.url} ({count} model"
                                     f"{'' if count == 1 else 's'})", server.url)
        self.found_combo.setCurrentIndex(-1)
        self.found_combo.setPlaceholderText(f"{len(found)} found: pick one to use it")
        if not self.url_edit.text().strip():
            self._use_found(0)

    def _use_found(self, index: int) -> None:
        if 0 <= index < len(self.found):
            server = self.found[index]
            self.url_edit.setText(server.url)
            self._set_models(list(server.models))

    def _on_models_listed(self, result: Any) -> None:
        if isinstance(result, str):
            self.status.setText(f"⚠ {result}")
            return
        self._set_models(list(result))

    def _set_models(self, models: list[str]) -> None:
        current = self.model_combo.currentText().strip()
        self.model_combo.clear()
        self.model_combo.addItems(models)
        self.model_combo.setEditText(current if current in models or not models else models[0])
        self.status.setText(f"{len(models)} model{'' if len(models) == 1 else 's'} on this "
                            "server." if models else "The server lists no models.")

    # --- saving -------------------------------------------------------------------------
    def values(self) -> dict[str, str]:
        """The settings fields this row edits."""
        return dict(openai_base_url=self.url_edit.text().strip(),
                    openai_model=self.model_combo.currentText().strip())

    def save(self, data_dir: Any) -> list[str]:
        """Store a typed key (keyring, else this process's environment) and return the
        notes for the user: where the key went, and the one-time notice when the address
        is outside this computer and its local network.

        Raises:
            BookReaderError: the address is not an http(s) URL.
        """
        notes = []
        key = self.key_edit.text().strip()
        if key:
            try:
                store_api_key(key)
                notes.append("The model server's key was saved in the system keyring.")
            except BookReaderError:
                os.environ[API_KEY_ENV] = key
                notes.append("This system has no keyring, so the model server's key is kept "
                             f"in memory until BookReader closes (or set {API_KEY_ENV}).")
            self.key_edit.clear()
        url = self.values()["openai_base_url"]
        note = notice_once(url, data_dir) if url else None
        if note:
            notes.append(note)
        return notes
