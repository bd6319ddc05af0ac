"""The settings dialog's install row: a real download from a server on 127.0.0.1 with a
progress bar, and a refused file that leaves the row ready to try again."""

from __future__ import annotations

import dataclasses
import hashlib

from bookreader.core.llm import specs
from bookreader.core.llm.gguf_meta import write_tiny_gguf
from bookreader.ui.model_install import ModelInstallRow

from fakes.file_server import FileServer as _Server


def _spec(data: bytes, sha: str) -> specs.BackendSpec:
    model = dataclasses.replace(specs.SMALL.model, file_name="ui.gguf", size_bytes=len(data),
                                sha256=sha, upstream_sha256=sha, chunks=())
    return dataclasses.replace(specs.SMALL, model=model)


def test_install_row_downloads_with_progress(qtbot, tmp_path):
    data = write_tiny_gguf(tmp_path / "src.gguf", architecture="qwen2",
                           name="Qwen2.5 Coder 0.5B Instruct", padding=2_000_000).read_bytes()
    spec = _spec(data, hashlib.sha256(data).hexdigest())
    with _Server(data, drop_after=300_000) as server:
        spec = dataclasses.replace(spec, model=dataclasses.replace(spec.model,
                                                                   upstream_url=server.url))
        row = ModelInstallRow(spec, tmp_path / "models")
        qtbot.addWidget(row)
        assert row.source == "upstream" and "MB" in row.button.text()
        values = []
        row.bar.valueChanged.connect(values.append)
        with qtbot.waitSignal(row.installed, timeout=30000) as sig:
            row.button.click()
    assert sig.args == ["small"]
    assert (tmp_path / "models" / "ui.gguf").read_bytes() == data
    assert values and values[-1] == 100 and row.status.text() == "Installed and verified."


def test_install_row_reports_a_bad_checksum(qtbot, tmp_path):
    data = write_tiny_gguf(tmp_path / "src.gguf", padding=1000).read_bytes()
    with _Server(data) as server:
        spec = _spec(data, "0" * 64)
        spec = dataclasses.replace(spec, model=dataclasses.replace(spec.model,
                                                                   upstream_url=server.url))
        row = ModelInstallRow(spec, tmp_path / "models")
        qtbot.addWidget(row)
        row.start()
        qtbot.waitUntil(lambda: row.button.isEnabled(), timeout=30000)
    assert "pinned checksum" in row.status.text() and not row.bar.isVisible()
    assert not (tmp_path / "models" / "ui.gguf").exists()
