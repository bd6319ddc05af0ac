"""The server's key store, rate limiter and answer pool, in process (no HTTP)."""

from __future__ import annotations

import json
import threading

import pytest

from bookreader.errors import InvalidInput
from bookreader.server.keys import KeyStore, parse_env_keys, token_hash
from bookreader.server.limits import AnswerPool, Busy, RateLimiter, parse_rate


def test_keys_store_hashes_only_and_revoke_takes_effect(tmp_path):
    store = KeyStore(tmp_path, env_keys="")
    token = store.add("class-7b")
    assert token.startswith("brk_") and len(token) > 40
    saved = json.loads((tmp_path / "api_keys.json").read_text())
    assert saved["keys"]["class-7b"]["sha256"] == token_hash(token)
    assert token not in (tmp_path / "api_keys.json").read_text()
    assert (tmp_path / "api_keys.json").stat().st_mode & 0o077 == 0
    assert store.client_for(token) == "class-7b"
    assert store.client_for(token + "x") is None
    with pytest.raises(InvalidInput, match="exists already"):
        store.add("class-7b")
    other = KeyStore(tmp_path, env_keys="")  # e.g. the `keys revoke` command
    other.revoke("class-7b")
    assert store.client_for(token) is None
    with pytest.raises(InvalidInput, match="no key named"):
        other.revoke("class-7b")


@pytest.mark.parametrize("bad", ["", "has space", "a/b", "x" * 65, "-lead"])
def test_key_names_are_checked(tmp_path, bad):
    with pytest.raises(InvalidInput, match="not a usable key name"):
        KeyStore(tmp_path, env_keys="").add(bad)


def test_env_keys(tmp_path):
    assert parse_env_keys(" a:t1 , b:t2,") == {"a": token_hash("t1"), "b": token_hash("t2")}
    with pytest.raises(InvalidInput, match="without a token"):
        parse_env_keys("a:t1,b")
    store = KeyStore(tmp_path, env_keys="deploy:tok-123")
    assert store.client_for("tok-123") == "deploy"
    assert [k["name"] for k in store.list()] == ["deploy"]


def test_rate_parse_and_sliding_window():
    assert parse_rate("100/minute") == (100, 60.0)
    assert parse_rate("5/s") == (5, 1.0)
    for bad in ("many", "0/minute", "3/fortnight"):
        with pytest.raises(InvalidInput):
            parse_rate(bad)
    now = [1000.0]
    limiter = RateLimiter(2, 60.0, clock=lambda: now[0])
    assert limiter.check("a") is None and limiter.check("a") is None
    assert limiter.check("a") == 60
    assert limiter.check("b") is None  # per key
    now[0] += 30
    assert limiter.check("a") == 30
    now[0] += 30.5
    assert limiter.check("a") is None


def test_pool_refuses_when_full_and_drops_a_job_that_waited_too_long():
    gate = threading.Event()
    pool = AnswerPool(workers=1, max_queue=1)
    try:
        first = pool.submit(gate.wait)
        assert first.started.wait(30)
        waiting = pool.submit(lambda: "second")
        with pytest.raises(Busy) as info:
            pool.submit(lambda: "third")
        assert info.value.retry_after >= 1
        assert pool.abandon(waiting)  # its request gave up: it never runs
        third = pool.submit(lambda: "third")  # and its place is free at once
        gate.set()
        assert third.future.result(30) == "third"
        assert first.future.result(30) is True
        later = pool.submit(lambda: "later")
        assert later.future.result(30) == "later"
        assert not waiting.future.done() and not waiting.started.is_set()
        assert not pool.abandon(later)  # it ran already
    finally:
        gate.set()
        pool.close()
