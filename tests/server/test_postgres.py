"""Two server processes writing one PostgreSQL audit log: every answer recorded once, the
hash chain intact, each record with its client id."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from audit_support import pg_cluster  # noqa: F401 - the fixture
from serve_support import ServerProcess, add_key, copy_data

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SELECTION = ("The audit log records every question and answer. Each record is chained to the "
             "one before by a hash, so a changed record is found by verify.")


def test_two_servers_share_one_postgres_audit_log(tmp_path, prepared_data, pg_cluster):  # noqa: F811
    from bookreader.core.audit import AuditLog

    root, _ = prepared_data
    name = pg_cluster.create_database()
    url = pg_cluster.url(name)
    servers, tokens = [], []
    try:
        for i in range(2):
            data = copy_data(root, tmp_path / f"data{i}", settings={"audit_url": url,
                                  "budgets": {"extractive": {"total_s": 300.0}}})
            tokens.append(add_key(data, f"server{i}-class"))
            # Generous budgets: this test is about the records, not the speed of a busy machine.
            servers.append(ServerProcess(data, "--backend", "extractive", "--timeout", "300",
                                         "--queue-wait", "300"))
        for s in servers:
            s.wait_ready()

        def ask(job: tuple[int, int]) -> int:
            which, n = job
            with servers[which].client(tokens[which]) as c:
                r = c.post("/query-selected-text", json={
                    "query": "What does each record of the audit log hold?",
                    "selected_text": SELECTION, "session_id": f"pg-{which}-{n}"})
            return r.status_code

        jobs = [(i % 2, i) for i in range(40)]
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(ask, jobs))
        # 504: the library's own generation budget ran out on a busy machine; such a
        # question is audited too, so every request has exactly one record either way.
        assert set(codes) <= {200, 504} and codes.count(200) >= len(jobs) // 2, codes
        with AuditLog(url) as log:
            # each question's write-ahead "pending" record precedes its answer record
            everything = list(log.iter_rows())
            rows = [r for r in everything if r.get("status") != "pending"]
            result = log.verify()
        assert result.ok, result.message
        assert len(rows) == len(jobs)
        assert sorted(r["session_id"] for r in rows) == sorted(f"pg-{w}-{n}" for w, n in jobs)
        assert [r["seq"] for r in everything] == list(range(1, len(everything) + 1))
        for r in rows:
            which = int(r["session_id"].split("-")[1])
            assert r["client_id"] == f"server{which}-class"
    finally:
        for s in servers:
            s.stop()
        pg_cluster.drop_database(name)
