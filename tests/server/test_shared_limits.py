"""The rate limit shared by several server processes through the audit database: real
SQLite (and PostgreSQL where installed), and two real server processes."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from audit_support import audit_url, pg_cluster  # noqa: F401 - the fixtures
from serve_support import ServerProcess, copy_data
from bookreader.server.shared_limits import SharedRateLimiter


class Clock:
    def __init__(self, now: float = 6000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_two_limiters_on_one_database_share_the_count(audit_url):  # noqa: F811
    clock = Clock()
    a = SharedRateLimiter(audit_url, 3, 60.0, clock=clock)  # as two server processes
    b = SharedRateLimiter(audit_url, 3, 60.0, clock=clock)
    try:
        assert [a.check("dave"), b.check("dave"), a.check("dave")] == [None, None, None]
        wait = b.check("dave")
        # the sliding estimate counts the full window just begun for the rest of it and
        # part of the next: 60 s + 20 s
        assert wait == 80
        assert a.check("dave") is not None  # refused on either process
        assert a.check("erin") is None  # per key
        # refused requests do not count: once the window has moved on enough, one fits
        clock.now += wait
        assert b.check("dave") is None
        assert a.check("dave") is not None
    finally:
        a.close()
        b.close()


def test_the_previous_window_counts_for_the_part_still_in_the_sliding_window(tmp_path):
    clock = Clock(6000.0)  # the start of a window
    lim = SharedRateLimiter(f"sqlite:///{tmp_path / 'audit.sqlite3'}", 4, 60.0, clock=clock)
    try:
        clock.now = 6050.0  # late in the window: four requests
        assert all(lim.check("k") is None for _ in range(4))
        clock.now = 6075.0  # 15 s into the next window: 3 of the 4 still count
        assert lim.check("k") is None  # 3 + 1
        wait = lim.check("k")  # 3 + 2 > 4
        assert wait is not None
        clock.now += wait
        assert lim.check("k") is None
    finally:
        lim.close()


def test_concurrent_requests_never_exceed_the_limit(tmp_path):
    url = f"sqlite:///{tmp_path / 'audit.sqlite3'}"
    limiters = [SharedRateLimiter(url, 10, 3600.0) for _ in range(3)]
    allowed = []

    def hammer(lim):
        for _ in range(10):
            if lim.check("shared-key") is None:
                allowed.append(1)

    threads = [threading.Thread(target=hammer, args=(lim,)) for lim in limiters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for lim in limiters:
        lim.close()
    assert len(allowed) == 10


def test_two_server_processes_share_one_limit_per_key(tmp_path, prepared_data):
    """Two real ``bookreader serve`` processes (each its own copy of the books) writing
    one audit database: a key gets its limit once in all, not once per process."""
    root, _ = prepared_data
    shared = tmp_path / "shared-audit.sqlite3"
    env = {"BOOKREADER_API_KEYS": "class:t0ken-for-the-class,other:t0ken-other"}
    servers = []
    try:
        for i in range(2):
            data = copy_data(root, tmp_path / f"data{i}",
                             settings={"audit_url": f"sqlite:///{shared}"})
            servers.append(ServerProcess(data, "--backend", "extractive",
                                         "--rate-limit", "4/minute", env=env))
        for s in servers:
            s.wait_ready()
        assert [s.health()["rate_limit_store"] for s in servers] == ["shared", "shared"]
        codes = []
        for n in range(8):
            r = httpx.get(servers[n % 2].url + "/v1/books", timeout=60,
                          headers={"Authorization": "Bearer t0ken-for-the-class"})
            codes.append(r.status_code)
            if r.status_code == 429:
                assert 1 <= int(r.headers["Retry-After"]) <= 120
        assert codes == [200] * 4 + [429] * 4
        r = httpx.get(servers[1].url + "/v1/books", timeout=60,
                      headers={"Authorization": "Bearer t0ken-other"})
        assert r.status_code == 200
    finally:
        for s in servers:
            s.stop()


def test_an_unreachable_shared_store_is_a_clear_error(tmp_path):
    from bookreader.config import Settings
    from bookreader.errors import StoreError
    from bookreader.server.state import ServeConfig, _limiter

    settings = Settings(data_dir=tmp_path, audit_url="postgresql+psycopg://nobody@127.0.0.1:9/x")
    with pytest.raises(StoreError, match="rate-limit-store memory"):
        _limiter(settings, ServeConfig(rate_limit_store="shared"), 3, 60.0)
    memory = _limiter(settings, ServeConfig(rate_limit_store="memory"), 3, 60.0)
    assert not isinstance(memory, SharedRateLimiter)


def _open_limiter(url: str, go, results) -> None:
    from bookreader.server.shared_limits import SharedRateLimiter

    go.wait()
    try:
        SharedRateLimiter(url, 4, 60.0).close()
        results.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put(repr(exc))


def test_servers_starting_at_once_on_a_new_database_all_open_the_shared_limit(tmp_path):
    """Three processes creating the count table of a new SQLite file at the same instant
    (before the table was created under the write lock, 18 of 45 failed with 'table
    already exists')."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    outcomes = []
    for round_ in range(5):
        url = f"sqlite:///{tmp_path / f'limits{round_}.sqlite3'}"
        go, results = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_open_limiter, args=(url, go, results)) for _ in range(3)]
        for p in procs:
            p.start()
        time.sleep(0.3)
        go.set()
        outcomes += [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
    assert outcomes == ["ok"] * 15
