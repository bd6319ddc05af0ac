"""Answers from the real bundled model through a real server: ADR-003's integration
tests, a streamed answer, and a disconnect that stops the generation.

The first-token budget is raised to 120 s in these servers' settings: the tests are about what
the answer says, and the machine may be busy (speed is measured by bench/serve_load.py).
"""

from __future__ import annotations

import json

import pytest

from serve_support import ServerProcess, add_key, copy_data


@pytest.fixture(scope="module")
def bundled_server(tmp_path_factory, prepared_data):
    root, info = prepared_data
    data = copy_data(root, tmp_path_factory.mktemp("serve-bundled") / "data",
                     settings={"budgets": {"tiny": {"first_token_s": 120.0}}})
    token = add_key(data, "adr-tests")
    server = ServerProcess(data, "--backend", "bundled", "--queue-wait", "300")
    try:
        server.wait_ready()
        server.token, server.book = token, info
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(bundled_server):
    with bundled_server.client(bundled_server.token) as c:
        yield c


# --- ADR-003's two integration tests, verbatim (the client sends the key) -----------------
def test_selected_text_endpoint_valid(client):
    """Valid response through endpoint."""
    response = client.post(
        "/query-selected-text",
        json={
            "query": "What is this?",
            "selected_text": "ROS 2 is a robotics middleware.",
            "session_id": "test-session"
        }
    )
    assert response.json()["in_selected_text"] == True  # noqa: E712 - verbatim from ADR-003


def test_selected_text_endpoint_invalid(client):
    """Invalid response (out of scope)."""
    response = client.post(
        "/query-selected-text",
        json={
            "query": "What is AI?",
            "selected_text": "ROS 2 is a robotics middleware.",
            "session_id": "test-session"
        }
    )
    assert "does not contain the answer" in response.json()["response"]


# --- streaming ------------------------------------------------------------------------------
def events_of(response):
    name = None
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            yield name, json.loads(line[5:])


def test_bundled_answer_streams_tokens_then_the_checked_answer(client):
    with client.stream("POST", "/query-selected-text", headers={"Accept": "text/event-stream"},
                       json={"query": "What is this?",
                             "selected_text": "ROS 2 is a robotics middleware.",
                             "session_id": "stream-1"}) as r:
        assert r.status_code == 200
        events = list(events_of(r))
    names = [n for n, _ in events]
    assert names[0] == "start" and names[-1] == "answer" and names.count("answer") == 1
    tokens = [d["text"] for n, d in events if n == "token"]
    assert len(tokens) > 1  # several pieces, sent as they were generated
    final = events[-1][1]
    assert final["backend"] == "bundled" and final["session_id"] == "stream-1"
    assert final["in_selected_text"] is True
    assert "middleware" in final["response"]
    assert final["citations"] and final["citations"][0]["verified"]


def test_disconnect_stops_the_generation_and_records_no_answer(bundled_server, client):
    before = bundled_server.health()["counters"]
    selection = " ".join(
        f"Step {i}: the robot checks sensor {i}, logs its reading, and waits for the "
        f"controller to confirm before moving joint {i}." for i in range(1, 30))
    with client.stream("POST", "/query-selected-text", headers={"Accept": "text/event-stream"},
                       json={"query": "List every step the robot takes, in order.",
                             "selected_text": selection, "session_id": "gone-1"}) as r:
        first = next(events_of(r))
        assert first[0] == "start"
        # Leaving the block closes the connection before the answer is complete.
    counters = bundled_server.wait_counter("cancelled", before["cancelled"] + 1)
    assert counters["answered"] == before["answered"]
    from bookreader.core.audit import AuditLog

    with AuditLog(f"sqlite:///{bundled_server.data_dir / 'audit.sqlite3'}") as log:
        gone = [row for row in log.iter_rows() if row["session_id"] == "gone-1"]
    # Write-ahead audit (issue 12): the accepted question is in the log, and so is what
    # was shown before the client left, marked as stopped; no successful answer is.
    done = [row for row in gone if row.get("status") != "pending"]
    assert len(done) == 1 and not done[0]["success"], gone
    assert "stopped" in (done[0]["answer_text"] or "") + (done[0].get("error") or ""), gone
    # The model is free again for the next question.
    r = client.post("/query-selected-text", json={
        "query": "What is this?", "selected_text": "ROS 2 is a robotics middleware."})
    assert r.status_code == 200 and r.json()["backend"] == "bundled"
