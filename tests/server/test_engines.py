"""BookReader on existing engines, for real: the command line and ``bookreader serve``
answering through llama.cpp's own OpenAI-compatible server (the bundled model), the
server keeping its vectors in a Qdrant server (the REST stand-in, over HTTP), and the
audit record naming the engine's host, the model and what it returned.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from bookreader.core.audit import AuditLog
from fakes.qdrant_server import FakeQdrantServer
from serve_support import ServerProcess

SELECTION = ("Mitochondria release the energy stored in food. The energy is stored in a "
             "molecule called ATP.")


def _records(data_dir) -> list[dict]:
    with AuditLog(f"sqlite:///{data_dir / 'audit.sqlite3'}") as log:
        assert log.verify().ok
        return [r for r in log.iter_rows() if r.get("status") != "pending"]


def _host(url: str) -> str:
    return url.split("//")[1].split("/")[0]


def test_ask_on_the_command_line_through_a_model_server(llama_server, tmp_path):
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "bookreader", "--data-dir", str(data), "ask",
         "Where is the energy stored?", "--mode", "selected", "--selection", SELECTION,
         "--backend", f"openai:{llama_server.url}", "--model", llama_server.alias, "--json"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 2), done.stderr
    answer = json.loads(done.stdout)
    assert not answer.get("error"), answer
    assert answer["backend"] == f"openai:{llama_server.url}"
    assert answer["model"] == f"{llama_server.alias} @ {_host(llama_server.url)}"
    assert "outside this computer" not in done.stderr  # a local server gets no notice
    (record,) = _records(data)
    assert record["backend"] == f"openai:{llama_server.url}"
    assert record["model"] == answer["model"] and record["raw_output"]
    # whatever the tiny model wrote, only the selection is cited
    assert all(c["section"] == "Selected text" for c in answer["citations"])


def test_a_remote_address_gets_its_notice_once(tmp_path):
    data = tmp_path / "data"
    argv = [sys.executable, "-m", "bookreader", "--data-dir", str(data), "ask", "What is ATP?",
            "--mode", "selected", "--selection", SELECTION, "--backend",
            "openai:http://llm.example.invalid/v1", "--model", "m"]  # .invalid never resolves
    env_timeout = {"timeout": 600, "capture_output": True, "text": True}
    first = subprocess.run(argv, **env_timeout)
    second = subprocess.run(argv, **env_timeout)
    assert "llm.example.invalid is outside this computer" in first.stderr
    assert "Could not reach the model server" in first.stdout + first.stderr
    assert "outside this computer" not in second.stderr


def test_serve_on_a_qdrant_server_and_a_model_server(llama_server, sample_pdf, tmp_path):
    token = "class-token-for-engines"
    (tmp_path / "data").mkdir()
    with FakeQdrantServer() as qdrant:
        server = ServerProcess(
            tmp_path / "data", "--backend", f"openai:{llama_server.url}", "--model",
            llama_server.alias, "--store", f"qdrant:{qdrant.url}", "--book", str(sample_pdf),
            "--timeout", "600", "--queue-wait", "600",
            env={"BOOKREADER_API_KEYS": f"class:{token}"})
        try:
            server.wait_ready()
            with server.client(token) as c:
                books = c.get("/v1/books").json()
                book_id = books["books"][0]["book_id"] if isinstance(books, dict) else \
                    books[0]["book_id"]
                r = c.post(f"/v1/books/{book_id}/query",
                           json={"question": "What does the audit log record?",
                                 "session_id": "engines"})
        finally:
            server.stop()
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["backend"] == f"openai:{llama_server.url}"
        assert body["model"] == f"{llama_server.alias} @ {_host(llama_server.url)}"
        paths = {p for _, p in qdrant.requests}
        assert f"/collections/book_{book_id}/points" in paths  # indexed into the server
        assert f"/collections/book_{book_id}/points/query" in paths  # and searched there
    (record,) = [r for r in _records(tmp_path / "data") if r["session_id"] == "engines"]
    assert record["client_id"] == "class" and record["model"] == body["model"]
    assert record["raw_output"] is not None
    assert not httpx.get(llama_server.url + "/models", timeout=10).is_error  # engine still up
