"""Malformed requests against a real server: every one is a JSON 4xx that says what is
wrong, never a plain-text 500 or a dropped connection.

The red team's seven inputs are tested by name; then hypothesis generates bodies, query
strings and path values for every route and checks that none gets a 500.  The fuzzed
server answers with a 1 ms budget, so a request that passes every check ends as a 504
at once (the checks run before the budget does) instead of a whole answer.
"""

from __future__ import annotations

import json
import math
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from serve_support import ServerProcess, add_key, copy_data


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory, prepared_data):
    root, info = prepared_data
    data = copy_data(root, tmp_path_factory.mktemp("serve-fuzz") / "data")
    token = add_key(data, "fuzz")
    server = ServerProcess(data, "--backend", "extractive", "--rate-limit", "100000/minute",
                           "--timeout", "0.001", "--queue-wait", "120")
    try:
        server.wait_ready()
        server.book = info
        server.http = httpx.Client(base_url=server.url, timeout=120,
                                   headers={"Authorization": f"Bearer {token}"})
        yield server
        server.http.close()
    finally:
        server.stop()


def check(r: httpx.Response, status: int | None = None) -> dict:
    """A JSON error with a message and a code, never a 500; ``status`` when given."""
    assert r.status_code != 500, r.text
    if r.status_code < 400:
        return {}
    assert r.headers["content-type"].startswith("application/json"), r.text
    body = r.json()
    assert isinstance(body["error"], str) and body["error"] and body["code"], body
    if status is not None:
        assert r.status_code == status, r.text
    return body


# --- the red team's inputs -----------------------------------------------------------------
@pytest.mark.parametrize("highlight", ["nan,nan,nan,nan", "inf,0,10,10", "0,0,1e308,1e308",
                                       "-inf,-inf,inf,inf", "0,0,1e999,1"])
def test_non_finite_or_huge_highlight_is_422(fuzz_server, highlight):
    book = fuzz_server.book.book_id
    r = fuzz_server.http.get(f"/v1/books/{book}/pages/0.png",
                             params={"zoom": "4", "highlight": highlight})
    assert "highlight" in check(r, 422)["error"]


@pytest.mark.parametrize("zoom", ["nan", "inf", "1e308", "-0", "x"])
def test_bad_zoom_is_422(fuzz_server, zoom):
    book = fuzz_server.book.book_id
    r = fuzz_server.http.get(f"/v1/books/{book}/pages/0.png", params={"zoom": zoom})
    assert "zoom" in check(r, 422)["error"]


def test_mode_that_is_not_text_is_422(fuzz_server):
    r = fuzz_server.http.post(f"/v1/books/{fuzz_server.book.book_id}/query",
                              json={"question": "x", "mode": ["book"]})
    assert "mode must be 'book' or 'highlight'" in check(r, 422)["error"]


@pytest.mark.parametrize("path", ["/query-selected-text", "/v1/books/{book}/query"])
def test_deeply_nested_json_is_422(fuzz_server, path):
    body = b"[" * 30_000 + b"]" * 30_000
    r = fuzz_server.http.post(path.format(book=fuzz_server.book.book_id), content=body,
                              headers={"Content-Type": "application/json"})
    assert "too deeply" in check(r, 422)["error"]


@pytest.mark.parametrize("pages", [b"9" * 5000, b"[0, " + b"9" * 5000 + b"]",
                                   b"[0, " + b"9" * 4300 + b"]", b"-" + b"9" * 40])
def test_huge_page_number_is_422(fuzz_server, pages):
    body = b'{"question": "Why?", "pages": ' + pages + b"}"
    r = fuzz_server.http.post(f"/v1/books/{fuzz_server.book.book_id}/query", content=body,
                              headers={"Content-Type": "application/json"})
    check(r, 422)


def test_page_number_of_5000_digits_in_the_path_is_422(fuzz_server):
    r = fuzz_server.http.get(f"/v1/books/{fuzz_server.book.book_id}/pages/{'9' * 5000}.png")
    body = check(r, 422)
    assert len(body["error"]) < 200  # the value is not echoed whole


def test_lone_surrogate_in_text_is_422(fuzz_server):
    body = b'{"query": "Why\\ud800?", "selected_text": "Some text to ask about."}'
    r = fuzz_server.http.post("/query-selected-text", content=body,
                              headers={"Content-Type": "application/json"})
    assert "surrogate" in check(r, 422)["error"]
    r = fuzz_server.http.post("/v1/books/%ED%A0%80/query", json={"question": "x"})
    check(r, 404)
    r = fuzz_server.http.post("/query-selected-text", content=(
        b'{"query": "q", "selected_text": "s", "book_id": "\\udfff"}'))
    check(r, 404)


# --- generated requests --------------------------------------------------------------------
FUZZ = settings(max_examples=120, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
scalars = (st.none() | st.booleans() | st.integers() | st.floats()
           | st.integers(min_value=10**300, max_value=10**4000) | st.text(max_size=40)
           | st.sampled_from(["book", "highlight", "selected", "pdf:1-2", "3-1", "", " ",
                              "\x00", "\ud800", "0", "-1", "1e308", "NaN"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                           max_leaves=10)
QUESTION_KEYS = ["question", "mode", "selection", "pages", "session_id"]
SELECTED_KEYS = ["query", "selected_text", "session_id", "book_id", "pages"]


def body_of(data) -> bytes:
    # NaN and Infinity as Python's json writes them; lone surrogates as \\u escapes
    return json.dumps(data).encode("utf-8")


@FUZZ
@given(data=st.dictionaries(st.sampled_from(QUESTION_KEYS) | st.text(max_size=6),
                            json_values, max_size=5))
@example(data={"question": "x", "mode": ["book"]})
@example(data={"question": "x", "pages": [0, math.inf]})
@example(data={"question": "x", "mode": "highlight", "selection": "y", "pages": "pdf:2-1"})
def test_fuzz_book_query(fuzz_server, data):
    r = fuzz_server.http.post(f"/v1/books/{fuzz_server.book.book_id}/query",
                              content=body_of(data),
                              headers={"Content-Type": "application/json"})
    check(r)


@FUZZ
@given(data=st.dictionaries(st.sampled_from(SELECTED_KEYS) | st.text(max_size=6),
                            json_values, max_size=5))
@example(data={"query": "q", "selected_text": "s", "book_id": {"a": 1}, "pages": [1, 2]})
def test_fuzz_selected_text_query(fuzz_server, data):
    r = fuzz_server.http.post("/query-selected-text", content=body_of(data),
                              headers={"Content-Type": "application/json"})
    check(r)


@FUZZ
@given(body=st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode()))
@example(body=b"[" * 3000)
@example(body=b'{"query": 1' + b"0" * 4400 + b"}")
def test_fuzz_raw_bodies(fuzz_server, body):
    r = fuzz_server.http.post("/query-selected-text", content=body,
                              headers={"Content-Type": "application/json"})
    check(r)


texts = st.text(st.characters(codec="utf-8"), min_size=1, max_size=30)
url_text = texts.map(lambda t: quote(t, safe=""))  # one path segment, percent-encoded
numbers = st.floats().map(repr) | st.integers().map(str) | texts


@FUZZ
@given(page=st.integers(min_value=-5, max_value=10**30).map(str) | url_text,
       zoom=st.none() | numbers,
       highlight=st.none() | st.lists(st.lists(numbers, min_size=1, max_size=5),
                                      max_size=3).map(
                                          lambda rs: ";".join(",".join(r) for r in rs)))
@example(page="0", zoom="4", highlight="nan,nan,nan,nan")
@example(page="0", zoom="4", highlight="1e308,1e308,1e308,1e308")
def test_fuzz_page_image(fuzz_server, page, zoom, highlight):
    params = {k: v for k, v in (("zoom", zoom), ("highlight", highlight)) if v is not None}
    r = fuzz_server.http.get(f"/v1/books/{fuzz_server.book.book_id}/pages/{page}.png",
                             params=params)
    check(r)


@FUZZ
@given(ref=url_text)
def test_fuzz_book_and_session_ids(fuzz_server, ref):
    for path in (f"/v1/books/{ref}", f"/v1/sessions/{ref}", f"/v1/books/{ref}/query"):
        r = fuzz_server.http.request("POST" if path.endswith("query") else "GET", path,
                                     json={"question": "Why?"})
        check(r)


STUDY_KEYS = ["pages", "chapter", "selection", "limit", "format"]


@FUZZ
@given(tool=st.sampled_from(["cards", "quiz", "summary", "export"]),
       data=st.dictionaries(st.sampled_from(STUDY_KEYS) | st.text(max_size=6), json_values,
                            max_size=5))
@example(tool="export", data={"pages": [0, 1], "format": ["anki"]})
def test_fuzz_study_tools(fuzz_server, tool, data):
    r = fuzz_server.http.post(f"/v1/books/{fuzz_server.book.book_id}/study/{tool}",
                              content=body_of(data),
                              headers={"Content-Type": "application/json"})
    check(r)
