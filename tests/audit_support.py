"""Fixtures for the audit-log tests: the database URLs they run against.

``audit_url`` gives every core audit test a fresh SQLite file, and, when PostgreSQL's
``initdb`` and ``pg_ctl`` can be found, a fresh database in a throw-away PostgreSQL cluster:
started once per session in a temp dir on a free port, removed at the end.  Running as root
(CI, containers), the cluster belongs to the ``postgres`` system user (else ``nobody``),
because PostgreSQL refuses to run as root.  Without PostgreSQL those tests skip and say why.

Test modules import the fixtures: ``from audit_support import audit_url, pg_cluster  # noqa``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Optional

import pytest

PG_MISSING = (
    "PostgreSQL not found (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin): "
    "install Debian's 'postgresql' package to run the audit log's PostgreSQL tests"
)


def find_pg_bin() -> Optional[Path]:
    """The folder holding initdb and pg_ctl, newest version first."""
    for name in ("initdb",):
        found = shutil.which(name)
        if found:
            real = Path(found).resolve().parent
            if (real / "pg_ctl").exists():
                return real
    for cand in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(cand, "initdb").exists() and Path(cand, "pg_ctl").exists():
            return Path(cand)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayPostgres:
    """A PostgreSQL cluster in a temp dir, trusting local connections, on a free port."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.base = Path(tempfile.mkdtemp(prefix="bookreader-pg-"))
        self.data = self.base / "data"
        self.port = free_port()
        self.user: Optional[str] = None
        if os.geteuid() == 0:  # postgres refuses to run as root: hand the dir to a system user
            for name in ("postgres", "nobody"):
                try:
                    pw = pwd.getpwnam(name)
                except KeyError:
                    continue
                self.user = name
                os.chown(self.base, pw.pw_uid, pw.pw_gid)
                break
            else:
                raise RuntimeError("running as root and no 'postgres' or 'nobody' user")

    def _run(self, *cmd: str) -> subprocess.CompletedProcess:
        argv = [str(self.bin_dir / cmd[0]), *cmd[1:]]
        if self.user:
            argv = ["runuser", "-u", self.user, "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=self.base)

    def start(self) -> None:
        r = self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                      "-E", "UTF8", "--locale=C", "--no-sync")
        if r.returncode:
            raise RuntimeError(f"initdb failed: {r.stderr or r.stdout}")
        opts = (f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c full_page_writes=off -c max_connections=50")
        r = self._run("pg_ctl", "-D", str(self.data), "-o", opts,
                      "-l", str(self.base / "server.log"), "-w", "-t", "60", "start")
        if r.returncode:
            log = (self.base / "server.log")
            raise RuntimeError(f"pg_ctl start failed: {r.stderr}\n"
                               f"{log.read_text() if log.exists() else ''}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = "audit_" + uuid.uuid4().hex[:12]
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster():
    """A running throw-away PostgreSQL cluster for the session (skips when absent)."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip(PG_MISSING)
    pytest.importorskip("psycopg", reason="psycopg (the dev extra) is needed for PostgreSQL")
    cluster = ThrowawayPostgres(bin_dir)
    try:
        cluster.start()
    except Exception:
        cluster.stop()
        raise
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def audit_url(request, tmp_path):
    """A fresh, empty audit database: SQLite always, PostgreSQL when it can be started."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'audit.sqlite3'}"
        return
    cluster = request.getfixturevalue("pg_cluster")
    name = cluster.create_database()
    yield cluster.url(name)
    cluster.drop_database(name)
