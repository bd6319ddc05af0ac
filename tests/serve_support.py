"""Real ``bookreader serve`` processes on 127.0.0.1 for the server's tests (and the bench).

:class:`ServerProcess` starts ``python -m bookreader --data-dir D serve --port P ...`` as
a child process, waits until ``GET /health`` says ready, and stops it (SIGTERM, then
SIGKILL) at the end.  Each server gets its own copy of a prepared data folder: a book's
Qdrant Edge shard may be open in one process only.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def add_key(data_dir: Path, name: str) -> str:
    """``bookreader keys add NAME`` through the real entry point; returns the token."""
    done = subprocess.run(
        [sys.executable, "-m", "bookreader", "--data-dir", str(data_dir), "keys", "add", name],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert token.startswith("brk_") and "shown only now" in done.stderr
    return token


def copy_data(prepared: Path, target: Path, settings: Optional[dict] = None) -> Path:
    """A copy of a prepared data folder (books indexed, no keys, no audit log)."""
    shutil.copytree(prepared, target, ignore=shutil.ignore_patterns(
        "audit.sqlite3*", "api_keys.json", "logs", "*.lock"))
    if settings:
        path = target / "settings.json"
        current = json.loads(path.read_text()) if path.exists() else {}
        current.update(settings)
        path.write_text(json.dumps(current))
    return target


def _open_files_limit(n: Optional[int]):
    """A preexec_fn that sets the child's soft and hard open-file limit to ``n``."""
    if n is None:
        return None

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))

    return limit


class ServerProcess:
    """One ``bookreader serve`` child process."""

    def __init__(self, data_dir: Path, *args: str, env: Optional[dict] = None,
                 open_files: Optional[int] = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # by port: two servers may share one data folder
        self.log_path = self.data_dir / f"serve-test-{self.port}.log"
        argv = [sys.executable, "-m", "bookreader", "--data-dir", str(self.data_dir), "serve",
                "--port", str(self.port), *args]
        full_env = {**os.environ, **(env or {})}
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=full_env, preexec_fn=_open_files_limit(open_files))

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def health(self) -> dict:
        return httpx.get(self.url + "/health", timeout=10).json()

    def wait_ready(self, limit_s: float = 900) -> "ServerProcess":
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}):\n"
                                   f"{self.log_text()}")
            try:
                status = self.health()["status"]
            except httpx.HTTPError:
                status = "starting"
            if status == "ready":
                return self
            if status == "failed":
                raise RuntimeError(f"the server failed to load: {self.health()}\n"
                                   f"{self.log_text()}")
            time.sleep(0.2)
        raise RuntimeError(f"the server was not ready after {limit_s} s:\n{self.log_text()}")

    def wait_counter(self, name: str, value: int, limit_s: float = 120) -> dict:
        """Poll /health until ``counters[name] >= value``; returns the counters."""
        end = time.monotonic() + limit_s
        counters = {}
        while time.monotonic() < end:
            counters = self.health()["counters"]
            if counters[name] >= value:
                return counters
            time.sleep(0.1)
        raise AssertionError(f"counter {name} stayed at {counters.get(name)}: {counters}")

    def client(self, token: Optional[str] = None, timeout: float = 300) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
