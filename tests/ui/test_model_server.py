"""Settings' model-server row: it finds the servers on this machine's ports when Settings
opens, lists a server's models, and saving keeps the address and model in the settings
and the key out of every file."""

from __future__ import annotations

import json
import re

import keyring
import keyring.backend

from bookreader.config import Settings
from bookreader.ui.model_server import ModelServerRow
from fakes.claude_server import free_port
from fakes.openai_server import MODEL, FakeOpenAIServer


def _port(url: str) -> int:
    return int(re.search(r":(\d+)/v1$", url).group(1))


def test_the_row_offers_the_servers_it_finds_and_their_models(qtbot, tmp_path):
    with FakeOpenAIServer(models=(MODEL, "qwen3:4b")) as fake:
        settings = Settings(data_dir=tmp_path)
        known = (("Nothing here", free_port()), ("Fake server", _port(fake.url)))
        row = ModelServerRow(settings, known=known)
        qtbot.addWidget(row)
        qtbot.waitUntil(lambda: row.found_combo.count() == 1, timeout=10000)
        assert row.found_combo.count() == 1 and "Fake server" in row.found_combo.itemText(0)
        # the address was empty, so the one found is taken, with its models
        assert row.url_edit.text() == fake.url
        assert [row.model_combo.itemText(i) for i in range(row.model_combo.count())] == \
            [MODEL, "qwen3:4b"]
        assert row.values() == {"openai_base_url": fake.url, "openai_model": MODEL}
        # only /models was asked: nothing was sent to a model
        assert {r["path"] for r in fake.requests} == {"/v1/models"}


def test_listing_models_of_a_server_that_is_down_says_so(qtbot, tmp_path):
    row = ModelServerRow(Settings(data_dir=tmp_path), known=())
    qtbot.addWidget(row)
    row.url_edit.setText(f"http://127.0.0.1:{free_port()}/v1")
    with qtbot.waitSignal(row.models_listed, timeout=10000):
        row.request_models()
    assert "Could not reach the model server" in row.status.text()


class _MemoryKeyring(keyring.backend.KeyringBackend):
    """The user's real keyring is never touched."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        self.store.pop((service, username), None)


def test_saving_keeps_the_key_out_of_files_and_notes_a_remote_server(qtbot, tmp_path,
                                                                     monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    memory = _MemoryKeyring()
    previous = keyring.get_keyring()
    keyring.set_keyring(memory)
    try:
        _save_and_check(qtbot, tmp_path)
    finally:
        keyring.set_keyring(previous)
    assert memory.store == {("BookReader", "openai_api_key"): "sk-never-on-disk"}


def _save_and_check(qtbot, tmp_path):
    settings = Settings(data_dir=tmp_path)
    row = ModelServerRow(settings, known=())
    qtbot.addWidget(row)
    row.url_edit.setText("https://llm.example.edu/v1")
    row.model_combo.setEditText("llama3.1:8b")
    row.key_edit.setText("sk-never-on-disk")
    notes = row.save(tmp_path)
    assert any("llm.example.edu is outside this computer" in n for n in notes)
    assert row.save(tmp_path) == []  # the notice is shown once
    settings.updated(**row.values()).save()
    saved = json.loads((tmp_path / "settings.json").read_text())
    assert saved["openai_base_url"] == "https://llm.example.edu/v1"
    assert saved["openai_model"] == "llama3.1:8b"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert "sk-never-on-disk" not in path.read_text(errors="ignore"), path


def test_the_settings_dialog_saves_the_model_server(qtbot, tmp_path):
    from bookreader.ui.settings_dialog import SettingsDialog

    with FakeOpenAIServer() as fake:
        settings = Settings(data_dir=tmp_path).updated(llm_backend=f"openai:{fake.url}")
        dialog = SettingsDialog(settings)
        qtbot.addWidget(dialog)
        assert dialog.backend_buttons["openai"].isChecked()
        assert dialog.model_server_row.isEnabled()
        assert dialog.model_server_row.url_edit.text() == fake.url
        assert dialog.budget_boxes["openai"][0] == "total_s"
        dialog.model_server_row.model_combo.setEditText(MODEL)
        with qtbot.waitSignal(dialog.settings_saved, timeout=5000) as saved:
            dialog.save_button.click()
        new = saved.args[0]
        assert (new.llm_backend, new.openai_base_url, new.openai_model) == \
            ("openai", fake.url, MODEL)
        dialog.backend_buttons["extractive"].setChecked(True)
        assert not dialog.model_server_row.isEnabled()
