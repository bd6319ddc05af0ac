"""What a client learns when the server fails, invalid keys, shared limits and what an
extractive server loads: real ``bookreader serve`` processes on 127.0.0.1."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from bookreader.config import default_data_dir
from bookreader.core.llm import models, specs
from serve_support import ServerProcess, add_key, copy_data

#: The small tier as `bookreader models install small` put it in the user's data folder.
SMALL_FILE = models.installed_path(specs.SMALL, default_data_dir() / "models")


def server_log(data_dir) -> str:
    """The server's log file (bookreader.log in the data folder's logs)."""
    return "\n".join(p.read_text(errors="replace") for p in (data_dir / "logs").glob("*.log*"))


def assert_private(body: dict, data_dir) -> str:
    """A server error: an error id and a message naming neither folders nor databases;
    returns the id."""
    text = json.dumps(body)
    assert str(data_dir) not in text and "sqlite" not in text.lower(), text
    assert body["code"] == "server_error" and re.fullmatch(r"[0-9a-f]{12}", body["error_id"])
    assert body["error_id"] in body["error"] and "server log" in body["error"]
    return body["error_id"]


@pytest.fixture(scope="module")
def unwritable_audit_server(tmp_path_factory, prepared_data):
    """An extractive server whose audit database cannot be written (its path is a folder;
    a full disk refuses a write the same way, with the database URL in the message), with a limit of 5 invalid keys a minute, and
    the small tier installed beside the bundled one where this machine has it."""
    root, info = prepared_data
    target = tmp_path_factory.mktemp("serve-private") / "data"
    data = copy_data(root, target, settings={
        "audit_url": f"sqlite:///{target / 'audit-folder'}"})
    (data / "audit-folder").mkdir()
    token = add_key(data, "reader")
    if SMALL_FILE is not None:  # two tiers installed: what `auto` would measure
        (data / "models").mkdir(exist_ok=True)
        (data / "models" / SMALL_FILE.name).symlink_to(SMALL_FILE)
    server = ServerProcess(data, "--backend", "extractive", "--rate-limit-store", "memory",
                           "--auth-failure-limit", "5/minute", "--timeout", "300",
                           "--queue-wait", "300")
    try:
        server.wait_ready()
        server.token, server.book = token, info
        yield server
    finally:
        server.stop()


# --- no paths or internal errors for clients -----------------------------------------------
def test_audit_write_failure_gives_an_error_id_not_the_database_url(unwritable_audit_server):
    s = unwritable_audit_server
    with s.client(s.token) as c:
        r = c.post(f"/v1/books/{s.book.book_id}/query",
                   json={"question": "How do I export the audit log?"})
    assert r.status_code == 500
    error_id = assert_private(r.json(), s.data_dir)
    logged = [line for line in server_log(s.data_dir).splitlines() if error_id in line]
    assert logged and "audit" in logged[0].lower() and "sqlite" in logged[0]


def test_corrupt_key_file_gives_an_error_id_not_its_path(unwritable_audit_server):
    s = unwritable_audit_server
    keys = s.data_dir / "api_keys.json"
    saved = keys.read_bytes()
    try:
        keys.write_text('{"version": 1, "keys": {')
        with s.client(s.token) as c:
            r = c.get("/v1/books")
    finally:
        keys.write_bytes(saved)
    assert r.status_code == 500
    error_id = assert_private(r.json(), s.data_dir)
    assert any(error_id in line and "api_keys.json" in line
               for line in server_log(s.data_dir).splitlines())
    with s.client(s.token) as c:
        assert c.get("/v1/books").status_code == 200  # the file is read again once fixed


def test_failed_load_shows_an_error_id_on_health_not_the_data_folder(tmp_path, prepared_data):
    root, _ = prepared_data
    data = copy_data(root, tmp_path / "data")
    broken = data / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 this is not a PDF")
    with ServerProcess(data, "--backend", "extractive", "--book", str(broken)) as s:
        with pytest.raises(RuntimeError, match="failed to load"):
            s.wait_ready()
        health = s.health()
    assert health["status"] == "failed", health
    assert str(data) not in json.dumps(health) and "broken.pdf" not in json.dumps(health)
    assert health["error_id"] and health["error_id"] in health["message"]
    assert any(health["error_id"] in line and "broken.pdf" in line
               for line in server_log(data).splitlines())


# --- invalid keys are limited per address ----------------------------------------------------
def from_address(server, address: str, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=60,
                        transport=httpx.HTTPTransport(local_address=address))


def test_invalid_keys_are_limited_per_client_address(unwritable_audit_server):
    s = unwritable_audit_server
    try:
        with from_address(s, "127.0.0.3", "brk_guess") as guesser:
            codes = [guesser.get("/v1/books").status_code for _ in range(8)]
            over = guesser.get("/v1/books")
    except httpx.ConnectError:
        pytest.skip("this system sends from 127.0.0.1 only")
    assert codes == [401] * 5 + [429] * 3
    assert over.json()["code"] == "auth_rate_limited" and "5/minute" in over.json()["error"]
    assert 1 <= int(over.headers["Retry-After"]) <= 60
    with from_address(s, "127.0.0.3", s.token) as same_address:
        assert same_address.get("/v1/books").status_code == 429  # until the window passes
    with from_address(s, "127.0.0.1", s.token) as other_address:
        assert other_address.get("/v1/books").status_code == 200
    with from_address(s, "127.0.0.4", None) as no_key:  # no key is no guess
        assert [no_key.get("/v1/books").status_code for _ in range(8)] == [401] * 8
    assert s.health()["counters"]["auth_limited"] >= 4


# --- two servers on one data folder ------------------------------------------------------------
def refused(data, *args: str) -> str:
    """The message of a server that stopped at once on ``data``."""
    server = ServerProcess(data, "--backend", "extractive", *args)
    try:
        assert server.proc.wait(timeout=120) != 0
    finally:
        server.stop()
    return " ".join(server.log_path.read_text().split())


def test_a_second_server_on_one_data_folder_may_not_double_each_keys_budget(tmp_path,
                                                                            prepared_data):
    """Two servers counting in memory on one folder used to start silently, each giving
    every key its whole budget.  Now the second stops and says why; servers that count in
    the shared store may share the folder, and share each key's budget."""
    root, _ = prepared_data
    data = copy_data(root, tmp_path / "data")
    token = add_key(data, "class")
    with ServerProcess(data, "--backend", "extractive", "--rate-limit", "4/minute") as first:
        first.wait_ready()
        assert first.health()["rate_limit_store"] == "memory"
        message = refused(data, "--rate-limit", "4/minute")
        assert f"already serves the data folder {data}" in message
        assert "doubling it" in message and "--rate-limit-store shared" in message
        message = refused(data, "--rate-limit-store", "shared")
        assert "counts the rate limit in its own memory" in message
        assert first.health()["status"] == "ready"  # the first one serves on
    servers = [ServerProcess(data, "--backend", "extractive", "--rate-limit", "4/minute",
                             "--rate-limit-store", "shared") for _ in range(2)]
    try:
        for server in servers:
            server.wait_ready()
        codes = [httpx.get(servers[n % 2].url + "/v1/books", timeout=60,
                           headers={"Authorization": f"Bearer {token}"}).status_code
                 for n in range(8)]
    finally:
        for server in servers:
            server.stop()
    assert codes == [200] * 4 + [429] * 4


# --- an extractive server loads no local model ------------------------------------------------
def test_extractive_server_neither_loads_nor_measures_a_local_model(unwritable_audit_server):
    """With ``llm_backend`` auto (the default) and several tiers installed, the server
    used to measure every tier at start (the 0.5B model: about 2 GB) before serving
    extractive answers."""
    from bookreader.config import Settings
    from bookreader.core.llm import choose

    s = unwritable_audit_server
    settings = Settings.load(s.data_dir)
    assert settings.llm_backend == "auto"
    if len(choose.installed_tiers(settings)) < 2:
        pytest.skip("needs the small tier installed (`bookreader models install small`): "
                    "with one tier nothing is measured")
    with s.client(s.token) as c:  # answer a question too: it must not load one either
        c.post("/query-selected-text", json={"query": "What is checked?",
                                             "selected_text": "The grounding check compares "
                                             "every sentence of an answer with the context."})
    maps = open(f"/proc/{s.proc.pid}/maps").read()
    assert "libllama" not in maps and ".gguf" not in maps
    assert not Settings.load(s.data_dir).auto_tier  # nothing was measured


# --- a bug is a JSON 500 with an error id --------------------------------------------------------
def test_an_unexpected_exception_is_a_json_500_with_an_error_id(caplog):
    """Starlette answers an exception no handler takes with a plain-text 500; the server's
    outermost middleware answers JSON, and the detail goes to the log only."""
    import asyncio

    from bookreader.server.app import UnexpectedErrors

    async def broken_route(scope, receive, send):
        raise ZeroDivisionError("detail naming /srv/bookreader-data")

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=UnexpectedErrors(broken_route))
        async with httpx.AsyncClient(transport=transport, base_url="http://server") as c:
            return await c.get("/v1/books")

    r = asyncio.run(call())
    assert r.status_code == 500 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert "/srv" not in r.text and "ZeroDivision" not in r.text
    assert body["code"] == "server_error" and body["error_id"] in body["error"]
    assert body["error_id"] in caplog.text and "/srv/bookreader-data" in caplog.text
