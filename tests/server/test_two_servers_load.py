"""Two ``bookreader serve`` processes on one PostgreSQL, under concurrent load: one key's
rate limit holds across both (exactly its limit answered, however the requests race), and
the audit log is one verifiable chain with exactly one record per answer."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from audit_support import pg_cluster  # noqa: F401 - the fixture
from serve_support import ServerProcess, copy_data

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SELECTION = ("The audit log records every question and answer. Each record is chained to the "
             "one before by a hash, so a changed record is found by verify.")
LIMIT = 20
CLASS, OTHER = "t0ken-class-under-load", "t0ken-other-under-load"


def test_two_servers_under_load_share_the_limit_and_one_audit_chain(
        tmp_path, prepared_data, pg_cluster):  # noqa: F811
    from bookreader.core.audit import AuditLog

    root, _ = prepared_data
    name = pg_cluster.create_database()
    url = pg_cluster.url(name)
    env = {"BOOKREADER_API_KEYS": f"class:{CLASS},other:{OTHER}"}
    servers = []
    try:
        for i in range(2):
            data = copy_data(root, tmp_path / f"data{i}", settings={
                "budgets": {"extractive": {"total_s": 300.0}}})
            # the audit database given as a deployment gives it (--audit-url)
            servers.append(ServerProcess(data, "--backend", "extractive", "--audit-url", url,
                                         "--rate-limit", f"{LIMIT}/minute", "--timeout", "300",
                                         "--queue-wait", "300", env=env))
        for s in servers:
            s.wait_ready()
        assert [s.health()["rate_limit_store"] for s in servers] == ["shared", "shared"]

        def ask(job: tuple[int, str, int]) -> tuple[str, int, str]:
            which, token, n = job
            with servers[which].client(token) as c:
                r = c.post("/query-selected-text", json={
                    "query": "What does each record of the audit log hold?",
                    "selected_text": SELECTION, "session_id": f"load-{which}-{n}"})
            answer_id = r.json().get("answer_id", "") if r.status_code == 200 else ""
            return token, r.status_code, answer_id

        jobs = [(n % 2, CLASS, n) for n in range(2 * LIMIT)]
        jobs += [(n % 2, OTHER, 100 + n) for n in range(LIMIT // 2)]
        with ThreadPoolExecutor(12) as pool:
            results = list(pool.map(ask, jobs))
        by_key = {t: Counter(code for k, code, _ in results if k == t) for t in (CLASS, OTHER)}
        # 504 is the library's own budget on a busy machine: answered (and audited) too
        assert by_key[CLASS][429] == LIMIT, by_key
        assert by_key[CLASS][200] + by_key[CLASS][504] == LIMIT, by_key
        assert by_key[OTHER][429] == 0 and set(by_key[OTHER]) <= {200, 504}, by_key
        answered = [a for _, code, a in results if code == 200]
        with AuditLog(url) as log:
            everything = list(log.iter_rows())
            result = log.verify()
        assert result.ok, result.message
        assert [r["seq"] for r in everything] == list(range(1, len(everything) + 1))
        records = Counter(r["answer_id"] for r in everything if r.get("status") != "pending")
        assert sum(records.values()) == sum(by_key[t][c] for t in by_key for c in (200, 504))
        assert all(records[a] == 1 for a in answered)
        assert {r["client_id"] for r in everything if r.get("status") != "pending"} <= \
            {"class", "other"}
    finally:
        for s in servers:
            s.stop()
        pg_cluster.drop_database(name)
