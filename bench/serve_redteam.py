"""The red team's server reproductions, run against real ``bookreader serve`` processes.

Usage::

    python bench/serve_redteam.py [--json]

Runs whatever ``bookreader`` the Python path selects (so the same script measures an
older checkout: ``PYTHONPATH=OLD/src python bench/serve_redteam.py``) and prints one row
per reproduction with what the client saw:

* malformed requests: NaN / inf / 1e308 highlight, a mode that is a list, 30,000 nested
  ``[``, a 5,000-digit ``pages``;
* what leaks: a corrupt ``api_keys.json``, an audit database that cannot be written, the
  unauthenticated ``/health`` of a server whose book failed to load;
* 300 invalid tokens from one address; two servers on one data folder, 4/minute each key;
* an extractive server's peak memory and whether llama.cpp was loaded (with ``auto`` as
  the settings' backend and the small tier installed, when this machine has it);
* 1,500 half-open sockets on a server limited to 1,024 open files, then a real request.

Everything binds 127.0.0.1; every socket is closed before the script ends.  Writes
``bench/results/serve_redteam.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import socket
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the server-process helper the tests use

from serve_support import ServerProcess, add_key, copy_data  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "serve_redteam.json"
HALF_HEAD = b"GET /v1/books HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never-Finished: "


def prepare(root: Path) -> tuple[Path, str]:
    from bookreader.config import Settings
    from bookreader.core.samplebook import build_sample_book
    from bookreader.library import Library

    pdf = root / "guide.pdf"
    build_sample_book(pdf)
    data = root / "prepared"
    with Library(Settings(data_dir=data)) as lib:
        return data, lib.ingest(pdf).book_id


def seen(r: httpx.Response) -> str:
    kind = r.headers.get("content-type", "").split(";")[0]
    return f"{r.status_code} {kind} {r.text[:110]!r}"


def link_small_tier(data: Path) -> bool:
    from bookreader.config import default_data_dir
    from bookreader.core.llm import models, specs

    small = models.installed_path(specs.SMALL, default_data_dir() / "models")
    if small is None:
        return False
    (data / "models").mkdir(exist_ok=True)
    (data / "models" / small.name).symlink_to(small)
    return True


def memory_mb(pid: int) -> tuple[float, bool]:
    """(peak RSS in MB, llama.cpp mapped) of process ``pid``."""
    status = Path(f"/proc/{pid}/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines()
                if line.startswith("VmHWM:"))
    return peak / 1024, "libllama" in Path(f"/proc/{pid}/maps").read_text()


def malformed(server, token: str, book: str) -> dict:
    h = {"Authorization": f"Bearer {token}"}
    out = {}
    with httpx.Client(base_url=server.url, headers=h, timeout=60) as c:
        for hl in ("nan,nan,nan,nan", "inf,inf,inf,inf", "1e308,1e308,1e308,1e308"):
            try:
                out[f"highlight={hl}"] = seen(c.get(f"/v1/books/{book}/pages/0.png",
                                                    params={"zoom": "4", "highlight": hl}))
            except httpx.HTTPError as exc:
                out[f"highlight={hl}"] = f"dropped: {type(exc).__name__}"
        bodies = {"mode: [\"book\"]": b'{"question": "x", "mode": ["book"]}',
                  "30,000 nested [": b"[" * 30_000 + b"]" * 30_000,
                  "pages: 5,000 digits": b'{"question": "x", "pages": ' + b"9" * 5000 + b"}"}
        for name, body in bodies.items():
            try:
                out[name] = seen(c.post(f"/v1/books/{book}/query", content=body,
                                        headers={"Content-Type": "application/json"}))
            except httpx.HTTPError as exc:
                out[name] = f"dropped: {type(exc).__name__}"
    return out


def leaks(server, token: str, book: str) -> dict:
    out = {}
    with server.client(token, timeout=120) as c:
        r = c.post(f"/v1/books/{book}/query", json={"question": "How do I export the audit log?"})
        out["audit database unwritable"] = seen(r)
        keys = server.data_dir / "api_keys.json"
        saved = keys.read_bytes()
        keys.write_text('{"version": 1, "keys": {')
        try:
            out["corrupt api_keys.json"] = seen(c.get("/v1/books"))
        finally:
            keys.write_bytes(saved)
    path = str(server.data_dir)
    return {k: v + ("  [names the data folder]" if path in v or "sqlite:" in v else "")
            for k, v in out.items()}


def invalid_tokens(server) -> str:
    codes: dict[int, int] = {}
    with httpx.Client(base_url=server.url, timeout=60,
                      headers={"Authorization": "Bearer brk_guess"}) as c:
        for _ in range(300):
            code = c.get("/v1/books").status_code
            codes[code] = codes.get(code, 0) + 1
    return ", ".join(f"{n} x {code}" for code, n in sorted(codes.items()))


def half_open(server, token: str, n: int = 1500) -> str:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 300)), hard))
    try:
        with contextlib.ExitStack() as stack:
            for _ in range(n):
                s = stack.enter_context(socket.create_connection(
                    ("127.0.0.1", server.port), timeout=30))
                with contextlib.suppress(OSError):
                    s.sendall(HALF_HEAD)
            t0 = time.monotonic()
            try:
                r = httpx.get(server.url + "/v1/books", timeout=20,
                              headers={"Authorization": f"Bearer {token}"})
                return f"real request: {r.status_code} in {time.monotonic() - t0:.1f} s"
            except httpx.HTTPError as exc:
                return (f"real request failed after {time.monotonic() - t0:.1f} s: "
                        f"{type(exc).__name__}")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def run() -> dict:
    root = Path(tempfile.mkdtemp(prefix="serve-redteam-"))
    prepared, book = prepare(root)
    rows: dict = {}

    data = copy_data(prepared, root / "a",
                     settings={"audit_url": f"sqlite:///{root / 'a' / 'audit-folder'}"})
    (data / "audit-folder").mkdir()
    rows["small tier installed beside the bundled one"] = link_small_tier(data)
    token = add_key(data, "reader")
    t0 = time.monotonic()
    with ServerProcess(data, "--backend", "extractive", "--rate-limit-store", "memory",
                       "--rate-limit", "100000/minute", open_files=1024) as a:
        a.wait_ready()
        peak, llama = memory_mb(a.proc.pid)
        rows["extractive server start"] = (f"{time.monotonic() - t0:.0f} s to ready, peak RSS "
                                           f"{peak:.0f} MB, llama.cpp loaded: {llama}")
        rows.update(malformed(a, token, book))
        rows.update(leaks(a, token, book))
        rows["1,500 half-open sockets, 1,024 open files"] = half_open(a, token)
        rows["300 invalid tokens, one address"] = invalid_tokens(a)

    data = copy_data(prepared, root / "b")
    token = add_key(data, "class")
    servers = [ServerProcess(data, "--backend", "extractive", "--rate-limit", "4/minute")]
    try:
        servers[0].wait_ready()
        servers.append(ServerProcess(data, "--backend", "extractive", "--rate-limit",
                                     "4/minute"))
        try:
            servers[1].wait_ready()
        except RuntimeError:  # it stopped: say what it said
            text = " ".join(servers[1].log_path.read_text().split())
            rows["two servers, one data folder, 4/minute"] = f"second refused: {text[:200]}"
        else:
            codes = [httpx.get(servers[i % 2].url + "/v1/books", timeout=60,
                               headers={"Authorization": f"Bearer {token}"}).status_code
                     for i in range(8)]
            rows["two servers, one data folder, 4/minute"] = \
                "both serve; 8 requests: " + " ".join(map(str, codes))
    finally:
        for s in servers:
            s.stop()

    data = copy_data(prepared, root / "c")
    broken = data / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 this is not a PDF")
    with ServerProcess(data, "--backend", "extractive", "--book", str(broken)) as c:
        with contextlib.suppress(RuntimeError):
            c.wait_ready()
        health = c.health()
    rows["/health after a failed load (no key)"] = (
        f"{health['status']}: {health['message'][:150]!r}"
        + ("  [names the data folder]" if str(data) in health["message"] else ""))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    rows = run()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| reproduction | what the client saw |\n|---|---|")
        for k, v in rows.items():
            print(f"| {k} | {str(v).replace('|', '/')} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
