"""The HTTP API against a real ``bookreader serve`` process (extractive backend) on
127.0.0.1: auth, every route, bad input, rate limits, time budgets and the audit log."""

from __future__ import annotations

import json
import subprocess
import sys

import fitz
import httpx
import pytest

from serve_support import ServerProcess, add_key, copy_data

SELECTION = ("The grounding check compares every sentence of an answer with the context. "
             "An answer whose sentences are not supported is replaced by a fallback.")


def audit_rows(data_dir):
    from bookreader.core.audit import AuditLog

    with AuditLog(f"sqlite:///{data_dir / 'audit.sqlite3'}") as log:
        return list(log.iter_rows())


def rows_of_session(server, session_id):
    """The answer records of a session (a question's write-ahead "pending" record is
    followed by the record of its answer, issue 12; this counts answers)."""
    return [r for r in audit_rows(server.data_dir)
            if r["session_id"] == session_id and r.get("status") != "pending"]


# --- health and auth ------------------------------------------------------------------------
def test_health_needs_no_key_and_says_ready(extractive_server):
    health = httpx.get(extractive_server.url + "/health").json()
    assert health["status"] == "ready"
    assert health["backend"] == "extractive" and health["books"] == 1
    assert httpx.get(extractive_server.url + "/openapi.json").status_code == 200


def test_docs_page_loads_its_script_and_style_from_this_server(extractive_server):
    """/docs works offline: no CDN (FastAPI's default page loads Swagger UI from one)."""
    page = httpx.get(extractive_server.url + "/docs")
    assert page.status_code == 200
    assert "cdn" not in page.text.lower() and "https://" not in page.text
    for asset in ("/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css"):
        assert asset in page.text
        r = httpx.get(extractive_server.url + asset)
        assert r.status_code == 200 and len(r.content) > 10_000


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer brk_wrong"},
                                     {"Authorization": "Basic YWxpY2U6eA=="}])
def test_missing_or_wrong_key_is_401_json(extractive_server, headers):
    for method, path in (("GET", "/v1/books"), ("POST", "/query-selected-text"),
                         ("GET", "/v1/sessions/x")):
        r = httpx.request(method, extractive_server.url + path, headers=headers,
                          json={"query": "q", "selected_text": "s"})
        assert r.status_code == 401, (path, r.text)
        body = r.json()
        assert body["code"] == "unauthorized" and "key" in body["error"]
        assert r.headers["WWW-Authenticate"].startswith("Bearer")


def test_revoked_key_is_refused_by_the_running_server(extractive_server):
    data = extractive_server.data_dir
    with extractive_server.client(extractive_server.tokens["carol"]) as c:
        assert c.get("/v1/books").status_code == 200
        done = subprocess.run([sys.executable, "-m", "bookreader", "--data-dir", str(data),
                               "keys", "revoke", "carol"], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        r = c.get("/v1/books")
    assert r.status_code == 401 and "revoked" in r.json()["error"]
    listing = subprocess.run([sys.executable, "-m", "bookreader", "--data-dir", str(data),
                              "keys", "list"], capture_output=True, text=True, timeout=120)
    assert "alice" in listing.stdout and "carol" not in listing.stdout
    stored = (data / "api_keys.json").read_text()
    assert extractive_server.tokens["alice"] not in stored  # only hashes are stored


# --- routes ---------------------------------------------------------------------------------
def test_books_and_book(extractive_server):
    book = extractive_server.book
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        books = c.get("/v1/books").json()
        assert [b["book_id"] for b in books] == [book.book_id]
        one = c.get(f"/v1/books/{book.book_id[:8]}").json()
    assert one["title"] == book.title and one["pages"] == book.page_count
    assert one["state"] == "ready"


def test_whole_book_answer_cites_a_page_and_the_page_png_highlights_it(extractive_server):
    book = extractive_server.book
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post(f"/v1/books/{book.book_id}/query",
                   json={"question": "How do I export the audit log?", "mode": "book"})
        assert r.status_code == 200, r.text
        data = r.json()
        assert data["mode"] == "book" and data["outcome"] == "answer"
        assert data["citations"], data
        cite = data["citations"][0]
        assert cite["verified"] and cite["rects"] and cite["label"]
        plain = c.get(f"/v1/books/{book.book_id}/pages/{cite['page']}.png?zoom=1")
        marked = c.get(cite["page_image"] + "&zoom=1")
    assert plain.status_code == marked.status_code == 200
    assert plain.headers["content-type"] == "image/png"
    a, b = fitz.Pixmap(plain.content), fitz.Pixmap(marked.content)
    assert (a.width, a.height) == (b.width, b.height)
    assert a.samples != b.samples  # the excerpt is painted


def test_highlight_mode_answers_from_the_selection_pages(extractive_server):
    book = extractive_server.book
    from bookreader.core.pdf import PdfBook

    with PdfBook.open(book.path) as pdf:
        page = next(i for i in range(pdf.page_count) if "highlight top k" in pdf.page(i).text)
        text = pdf.page(page).text
    start = text.index("Highlight mode sits")
    selection = text[start:start + 300]
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post(f"/v1/books/{book.book_id}/query",
                   json={"question": "How many extra passages are retrieved?",
                         "mode": "highlight", "selection": selection, "pages": [page, page]})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["mode"] == "highlight"
    assert all(c["page"] in (page, -1) for c in data["citations"])


def test_selected_text_json_fields_and_session_history(extractive_server):
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post("/query-selected-text", json={
            "query": "What replaces an unsupported answer?", "selected_text": SELECTION,
            "session_id": "hist-1"})
        assert r.status_code == 200, r.text
        data = r.json()
        for key in ("response", "in_selected_text", "session_id", "citations", "confidence",
                    "outcome", "validation", "latency_ms", "answer", "backend"):
            assert key in data, key
        assert data["session_id"] == "hist-1" and data["in_selected_text"] is True
        assert "fallback" in data["response"]
        history = c.get("/v1/sessions/hist-1").json()
        assert [q["question"] for q in history["questions"]] == [
            "What replaces an unsupported answer?"]
        assert history["questions"][0]["response"] == data["response"]
    with extractive_server.client(extractive_server.tokens["bob"]) as other:
        r = other.get("/v1/sessions/hist-1")  # another key does not see alice's session
    assert r.status_code == 404 and r.json()["code"] == "session_not_found"


def test_client_id_is_written_into_every_audit_record_and_the_export(extractive_server,
                                                                      tmp_path):
    with extractive_server.client(extractive_server.tokens["bob"]) as c:
        assert c.post("/query-selected-text", json={
            "query": "What does the check compare?", "selected_text": SELECTION,
            "session_id": "bob-1"}).status_code == 200
        assert c.post("/query-selected-text", json={
            "query": "   ", "selected_text": SELECTION, "session_id": "bob-1"}).status_code == 422
    rows = rows_of_session(extractive_server, "bob-1")
    assert len(rows) == 2 and {r["client_id"] for r in rows} == {"bob"}
    assert [r["success"] for r in rows] == [True, False]  # the bad question is audited too
    out = tmp_path / "export.csv"
    done = subprocess.run([sys.executable, "-m", "bookreader", "--data-dir",
                           str(extractive_server.data_dir), "audit", "export", "--format", "csv",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    header, *lines = out.read_text(encoding="utf-8-sig").splitlines()
    assert "client_id" in header.split(",")
    assert any(",bob," in line or line.endswith(",bob") for line in lines)


# --- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("body,status,code,words", [
    (b'{"query": "q", "selected_text": ', 422, "invalid_json", "not valid JSON"),
    (b'[1, 2]', 422, "invalid_json", "JSON object"),
    (json.dumps({"query": "", "selected_text": SELECTION}).encode(), 422, "invalid_input",
     "question is empty"),
    (json.dumps({"query": "Why?", "selected_text": "   "}).encode(), 422, "invalid_input",
     "selection is empty"),
    (json.dumps({"query": "Wh\u0000y?", "selected_text": SELECTION}).encode(), 422,
     "invalid_input", "NUL"),
    (json.dumps({"query": "Why?", "selected_text": "a\u0000b"}).encode(), 422,
     "invalid_input", "NUL"),
    (json.dumps({"selected_text": SELECTION}).encode(), 422, "invalid_input", "'query'"),
    (json.dumps({"query": 3, "selected_text": SELECTION}).encode(), 422, "invalid_input",
     "not text"),
    (json.dumps({"query": "Why?", "selected_text": "x" * 70_000}).encode(), 413, "too_large",
     "larger than"),
    (b"\xff\xfe{}", 422, "invalid_json", "UTF-8"),
])
def test_bad_input_gets_a_clear_json_error(extractive_server, body, status, code, words):
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post("/query-selected-text", content=body,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["code"] == code and words in r.json()["error"]


def test_unknown_book_and_page(extractive_server):
    book = extractive_server.book
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post("/v1/books/ffffffffffff/query", json={"question": "Why?"})
        assert r.status_code == 404 and r.json()["code"] == "book_not_found"
        r = c.post(f"/v1/books/{book.book_id}/query", json={"question": "Why?",
                                                             "mode": "selected"})
        assert r.status_code == 422 and "/query-selected-text" in r.json()["error"]
        r = c.get(f"/v1/books/{book.book_id}/pages/{book.page_count}.png")
        assert r.status_code == 404 and r.json()["code"] == "page_not_found"
        r = c.get("/v1/nothing-here")
        assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_long_selection_is_cut_with_a_warning(extractive_server):
    text = (SELECTION + " ") * 40  # about 6,000 characters: cut at a sentence, not refused
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post("/query-selected-text", json={"query": "What is replaced?",
                                                 "selected_text": text})
    assert r.status_code == 200, r.text
    assert "only its first" in r.json()["truncation_warning"]


# --- streaming ------------------------------------------------------------------------------
def read_events(response) -> list[tuple[str, dict]]:
    events, name = [], None
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            events.append((name, json.loads(line[5:])))
    return events


def test_sse_sends_tokens_then_one_final_checked_answer(extractive_server):
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        with c.stream("POST", "/query-selected-text", headers={"Accept": "text/event-stream"},
                      json={"query": "What replaces an unsupported answer?",
                            "selected_text": SELECTION, "session_id": "sse-1"}) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            events = read_events(r)
    names = [n for n, _ in events]
    assert names[0] == "start" and names[-1] == "answer"
    assert names.count("answer") == 1 and "token" in names
    assert set(names[1:-1]) == {"token"}
    streamed = "".join(d["text"] for n, d in events if n == "token")
    final = events[-1][1]
    assert final["session_id"] == "sse-1" and final["citations"]
    assert streamed.strip()
    assert len(rows_of_session(extractive_server, "sse-1")) == 1


def test_sse_reports_a_bad_request_as_json_before_streaming(extractive_server):
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.post("/query-selected-text", headers={"Accept": "text/event-stream"},
                   json={"query": "Why?"})
    assert r.status_code == 422 and r.json()["code"] == "invalid_input"


# --- rate limit and time budget ---------------------------------------------------------------
@pytest.fixture(scope="module")
def strict_server(tmp_path_factory, prepared_data):
    """Three requests a minute per key, and a 1 ms answer budget."""
    root, info = prepared_data
    data = copy_data(root, tmp_path_factory.mktemp("serve-strict") / "data")
    tokens = {name: add_key(data, name) for name in ("dave", "erin")}
    server = ServerProcess(data, "--backend", "extractive", "--rate-limit", "3/minute",
                           "--timeout", "0.001", "--queue-wait", "30",
                           env={"BOOKREADER_API_KEYS": "deploy:s3cret-token-1"})
    try:
        server.wait_ready()
        server.tokens, server.book = tokens, info
        yield server
    finally:
        server.stop()


def test_rate_limit_answers_429_with_retry_after_per_key(strict_server):
    with strict_server.client(strict_server.tokens["dave"]) as c:
        codes = [c.get("/v1/books").status_code for _ in range(3)]
        over = c.get("/v1/books")
    assert codes == [200, 200, 200]
    assert over.status_code == 429 and over.json()["code"] == "rate_limited"
    assert 1 <= int(over.headers["Retry-After"]) <= 60
    assert "3/minute" in over.json()["error"]
    with strict_server.client(strict_server.tokens["erin"]) as other:
        assert other.get("/v1/books").status_code == 200  # the limit is per key


def test_over_budget_is_504_and_audited(strict_server):
    with strict_server.client(strict_server.tokens["erin"]) as c:
        r = c.post(f"/v1/books/{strict_server.book.book_id}/query",
                   json={"question": "How do I export the audit log?", "session_id": "slow-1"})
    assert r.status_code == 504, r.text
    assert r.json() == {"error": "Query processing timed out. Try a simpler question.",
                        "code": "timeout", "session_id": "slow-1"}
    rows = rows_of_session(strict_server, "slow-1")
    assert len(rows) == 1
    assert rows[0]["error_message"] == "Query processing timed out. Try a simpler question."
    assert rows[0]["client_id"] == "erin" and rows[0]["success"] is False
    assert strict_server.health()["counters"]["timed_out"] >= 1


def test_env_keys_work_beside_the_file_keys(strict_server):
    with strict_server.client("s3cret-token-1") as c:
        assert c.get("/v1/books").status_code == 200
    with strict_server.client("s3cret-token-2") as c:
        assert c.get("/v1/books").status_code == 401
    later = add_key(strict_server.data_dir, "later")  # a key added while the server runs
    with strict_server.client(later) as c:
        assert c.get("/v1/books").status_code == 200


def test_cors_is_off_by_default(extractive_server):
    with extractive_server.client(extractive_server.tokens["alice"]) as c:
        r = c.get("/v1/books", headers={"Origin": "https://textbook.example"})
        pre = c.options("/v1/books", headers={"Origin": "https://textbook.example",
                                              "Access-Control-Request-Method": "GET"})
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers
    assert "access-control-allow-origin" not in pre.headers
