"""Slow and half-open clients against a real ``bookreader serve`` process on 127.0.0.1.

Before the connection guard, 1,100 sockets that never finished their request headers took
every file descriptor of a server with the usual 1,024 limit, and every real request
failed until they went away.  Each test here opens a bounded number of sockets and closes
them all before it returns.
"""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import subprocess
import sys

import httpx
import pytest

from serve_support import ServerProcess, add_key, copy_data

SLOW_SOCKETS = 1500
SERVER_OPEN_FILES = 1024  # the usual limit, and the hard limit too: it cannot be raised
HALF_HEAD = b"GET /v1/books HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never-Finished: "


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory, prepared_data):
    """An extractive server limited to 1,024 open files, with a header time limit long
    enough that only the connection caps can save it, and a short body time limit."""
    root, info = prepared_data
    data = copy_data(root, tmp_path_factory.mktemp("serve-guarded") / "data")
    token = add_key(data, "reader")
    server = ServerProcess(data, "--backend", "extractive", "--rate-limit", "1000/minute",
                           "--header-timeout", "600", "--body-timeout", "2",
                           "--timeout", "300", "--queue-wait", "300",
                           open_files=SERVER_OPEN_FILES)
    try:
        server.wait_ready()
        server.token, server.book = token, info
        yield server
    finally:
        server.stop()


@pytest.fixture
def many_files():
    """This test process may hold the slow sockets (the soft limit raised if need be)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = SLOW_SOCKETS + 300
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"needs {need} open files; the hard limit here is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_slow_sockets(stack: contextlib.ExitStack, port: int, sources: list[str]) -> list:
    """SLOW_SOCKETS connections (spread over ``sources``), each sending half a request
    head and then nothing; closed when ``stack`` closes."""
    socks = []
    for i in range(SLOW_SOCKETS):
        src = sources[i % len(sources)]
        s = stack.enter_context(socket.create_connection(
            ("127.0.0.1", port), timeout=30, source_address=(src, 0)))
        try:
            s.sendall(HALF_HEAD)
        except OSError:  # the server closed it already
            pass
        socks.append(s)
    return socks


def closed_by_server(socks: list) -> int:
    """How many of ``socks`` the server answered 503 and closed."""
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            data = s.recv(4096)
        except BlockingIOError:
            continue  # still open, waiting
        except OSError:
            closed += 1
            continue
        if not data or data.startswith(b"HTTP/1.1 503"):
            closed += 1
    return closed


def real_requests_answered(server) -> None:
    with httpx.Client(base_url=server.url, timeout=120,
                      headers={"Authorization": f"Bearer {server.token}"}) as c:
        assert c.get("/health").json()["status"] == "ready"
        assert c.get("/v1/books").status_code == 200
        r = c.post(f"/v1/books/{server.book.book_id}/query",
                   json={"question": "How do I export the audit log?"})
        assert r.status_code == 200, r.text


def loopback_sources(n: int) -> list[str]:
    """``n`` other loopback addresses this machine can send from (Linux routes 127/8)."""
    sources = [f"127.0.0.{i}" for i in range(2, 2 + n)]
    try:
        with socket.socket() as s:
            s.bind((sources[-1], 0))
    except OSError:
        pytest.skip("this system sends from 127.0.0.1 only")
    return sources


def test_1500_half_open_sockets_from_one_address_do_not_lock_others_out(guarded_server,
                                                                       many_files):
    with contextlib.ExitStack() as stack:
        socks = open_slow_sockets(stack, guarded_server.port, ["127.0.0.1"])
        real_requests_answered(guarded_server)
        # all but the newest 128 per address were closed with a 503 to make room
        assert closed_by_server(socks) >= SLOW_SOCKETS - 128 - 1


def test_1500_half_open_sockets_from_many_addresses_do_not_exhaust_the_descriptors(
        guarded_server, many_files):
    """15 addresses x 100 sockets: under the per-address cap, over the total budget
    (1,024 open files minus a reserve): the oldest waiting connections give way."""
    with contextlib.ExitStack() as stack:
        socks = open_slow_sockets(stack, guarded_server.port, loopback_sources(15))
        real_requests_answered(guarded_server)
        assert closed_by_server(socks) >= SLOW_SOCKETS - (SERVER_OPEN_FILES - 256)


def read_reply(sock: socket.socket) -> tuple[int, dict]:
    """The status and JSON body of the response on ``sock`` (read until it closes)."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_request_head_not_finished_in_time_is_408_json(extractive_server):
    """The default limit: 10 s to send the request line and headers."""
    with socket.create_connection(("127.0.0.1", extractive_server.port), timeout=120) as s:
        s.sendall(HALF_HEAD)
        status, body = read_reply(s)
    assert status == 408 and body["code"] == "request_timeout"
    assert "10 s" in body["error"]


def test_request_body_not_finished_in_time_is_408_json(guarded_server):
    head = (f"POST /query-selected-text HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {guarded_server.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", guarded_server.port), timeout=120) as s:
        s.sendall(head + b'{"query": "Why?", ')
        status, body = read_reply(s)
    assert status == 408 and body["code"] == "request_timeout"
    assert "2 s" in body["error"]


def test_endless_request_headers_are_431_json(guarded_server):
    with socket.create_connection(("127.0.0.1", guarded_server.port), timeout=120) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        try:
            for i in range(100):  # 100 x 1 KB: more than the 64 KB a head may hold
                s.sendall(f"X-Filler-{i}: ".encode() + b"a" * 1000 + b"\r\n")
        except OSError:  # closed by the server once over the limit
            pass
        status, body = read_reply(s)
    assert status == 431 and body["code"] == "headers_too_large"


def test_open_file_limit_is_raised_to_the_hard_limit_where_allowed():
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 2048))\n"
        "from bookreader.server.connections import raise_open_files_limit\n"
        "print(raise_open_files_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2048", "2048"]
