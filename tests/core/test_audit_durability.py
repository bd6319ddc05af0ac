"""Nothing shown is lost: a record is committed before record() returns, even under SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
import sqlalchemy as sa
from audit_support import audit_url, pg_cluster  # noqa: F401 (fixtures)

from bookreader.core.audit import AuditLog

# Records answers forever, printing each record id only after record() has returned, the
# way the UI reports an answer complete only after it is logged.
WRITER = r"""
import sys; sys.path.insert(0, __import__("os").environ["BOOKREADER_TEST_TOOLS"])
import random, sys
from bookreader.core.audit import AuditLog
from audit_samples import make_answer
log = AuditLog(sys.argv[1])
rng = random.Random(11)
print("ready", flush=True)
while True:
    rid = log.record(make_answer(rng), session_id="kill-test")
    print(rid, flush=True)
"""


def test_sigkill_mid_run_loses_no_reported_answer(audit_url):
    proc = subprocess.Popen([sys.executable, "-c", WRITER, audit_url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported = []
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        while len(reported) < 40:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            reported.append(line.strip())
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # while it is busy writing the next records
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    # Lines it printed before dying are reported answers too.
    reported += [line.strip() for line in proc.stdout.read().splitlines() if line.strip()]
    proc.stdout.close()
    proc.stderr.close()

    if audit_url.startswith("sqlite"):
        engine = sa.create_engine(audit_url)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        engine.dispose()
    log = AuditLog(audit_url)  # opens cleanly
    try:
        stored = {r["record_id"] for r in log.iter_rows()}
        missing = [rid for rid in reported if rid not in stored]
        assert not missing, f"{len(missing)} reported answers were lost"
        assert len(stored) >= len(reported)
        result = log.verify()
        assert result.ok, result.message
        log.record_many([], session_id="after")  # and it is writable again
    finally:
        log.close()


def test_journal_rows_commit_without_fsync_and_chained_records_still_with_it(tmp_path):
    """The journal of a streaming answer (scratch rows, for a killed app) is committed with
    SQLite's synchronous=NORMAL; every chained record keeps FULL."""
    from bookreader.core.audit import AuditLog

    log = AuditLog(f"sqlite:///{tmp_path / 'audit.sqlite3'}")
    try:
        with log._write(durable=False) as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        with log._write() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL again
    finally:
        log.close()


def test_switching_a_new_database_to_wal_waits_for_another_process_switching_it(tmp_path):
    """CI saw one of 15 servers starting at once on a new shared-limit database fail with
    "database is locked": SQLite refuses the journal-mode switch at once while another
    connection holds the file, without its busy timeout.  The switch is retried."""
    import sqlite3
    import threading

    from bookreader.core.audit.log import _journal_wal

    path = tmp_path / "new.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE t (x)")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA busy_timeout=0")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("PRAGMA journal_mode=WAL")  # what happened before the retry
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    cur = other.cursor()
    _journal_wal(cur)
    release.join()
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other.close()
    holder.close()
