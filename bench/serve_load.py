"""Load on ``bookreader serve``: N concurrent clients on 127.0.0.1 for a bounded time.

Usage::

    python bench/serve_load.py [--clients 50] [--seconds 20] [--backend extractive]
                               [--backend bundled --clients 8] [--think S] [--json]
                               [--processes 2] [--backend llama-server]

``--processes N`` runs N server processes (each with its own copy of the indexed book)
writing one audit log, a throw-away PostgreSQL cluster's when PostgreSQL is installed
(else one SQLite file), with the keys shared through ``BOOKREADER_API_KEYS``; the clients
spread over them.  ``--backend llama-server`` starts llama.cpp's OpenAI-compatible server
(``python -m llama_cpp.server``) on the bundled model and serves with
``--backend openai:URL``.  Afterwards every 200 answer must have exactly one complete
audit record (found by its ``answer_id``) and the chain must verify.

For each ``--backend`` (default: ``extractive`` with 50 clients, then ``bundled``, the
default local tier, with 8): a fresh data folder with the sample book, one real server
process on a free loopback port, one API key per client (as a class has), and clients
that ask in a loop (selected-text and whole-book questions in turn, drawn from the sample
guide's 31 questions and passages of the sample book) until the time is up, each waiting
0.5-1.5 x ``--think`` seconds after an answer, starting at a random moment of the first
such wait (default 0: a closed loop, all at once, the hardest load).  Before
the clock starts every question is asked once with the extractive backend (``--cold``
skips that): a server that has
run for a while has the passages' sentence vectors cached, and the first answer about a
passage costs several times the later ones.
Prints requests/s, p50/p95/p99 latency of answered requests, counts per status (429 are
the rate limit, 503 the bounded queue, each with ``Retry-After``), whether every 429/503
carried ``Retry-After``, and checks that the audit log holds exactly one record per
request the server answered (200, and 504 which is audited too).  Writes
``bench/results/serve_load.json``.  Nothing leaves the machine: the server binds
127.0.0.1 and the clients call only it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the server-process helper the tests use

from serve_support import ServerProcess, copy_data  # noqa: E402

RESULTS_DIR = ROOT / "bench" / "results"
QUESTIONS_FILE = ROOT / "bench" / "questions" / "sample_guide.jsonl"
SELECTION_CHARS = 600


def load_questions() -> list[str]:
    """The sample guide's 31 in-scope questions: clients draw from them in turn, so
    requests differ as a class's do (and repeat, as a class's do)."""
    with QUESTIONS_FILE.open(encoding="utf-8") as fh:
        return [json.loads(line)["question"] for line in fh if line.strip()]


def selections_of(book: Path) -> list[str]:
    """Passages of the sample book a student might select: each page's text in pieces of
    about ``SELECTION_CHARS`` characters, cut at sentence ends."""
    import fitz

    out: list[str] = []
    with fitz.open(book) as doc:
        for page in doc:
            text = " ".join(page.get_text().split())
            piece = ""
            for sentence in text.replace(". ", ".\n").splitlines():
                piece = f"{piece} {sentence}".strip()
                if len(piece) >= SELECTION_CHARS:
                    out.append(piece)
                    piece = ""
            if len(piece) > 80:
                out.append(piece)
    return out


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * pct / 100.0
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def prepare(data: Path) -> tuple[str, list[str]]:
    from bookreader.config import Settings
    from bookreader.core.samplebook import sample_book_path
    from bookreader.library import Library

    book = sample_book_path(data)
    with Library(Settings(data_dir=data)) as lib:
        return lib.ingest(book).book_id, selections_of(book)


async def client_loop(i: int, url: str, token: str, book_id: str, until: float,
                      results: list, questions: list[str], selections: list[str],
                      think: float, answer_ids: list | None = None,
                      timeout_s: float = 120.0) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(i)
    if think:
        # students do not all press Ask at the same instant: each starts at a random
        # moment of the first reading time, and reads for 0.5-1.5 x --think after that
        await asyncio.sleep(rng.uniform(0.0, think))
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout_s) as c:
        n = 0
        while time.monotonic() < until:
            n += 1
            if (i + n) % 2:
                path = "/query-selected-text"
                body = {"query": questions[(i + 5 * n) % len(questions)],
                        "selected_text": selections[(3 * i + n) % len(selections)],
                        "session_id": f"load-{i}"}
            else:
                path = f"/v1/books/{book_id}/query"
                body = {"question": questions[(7 * i + n) % len(questions)],
                        "session_id": f"load-{i}"}
            t0 = time.perf_counter()
            answer_id = None
            try:
                r = await c.post(path, json=body)
                status, retry = r.status_code, r.headers.get("Retry-After")
                if status == 200:
                    answer_id = r.json().get("answer_id")
            except (httpx.HTTPError, ValueError) as exc:
                status, retry = f"{type(exc).__name__}", None
            results.append((status, (time.perf_counter() - t0) * 1000.0, retry))
            if answer_ids is not None and status == 200:
                answer_ids.append(answer_id)
            if status in (429, 503) and retry:
                await asyncio.sleep(min(float(retry), max(0.0, until - time.monotonic())))
            elif think:
                # a student reads the answer before the next question
                await asyncio.sleep(min(rng.uniform(0.5, 1.5) * think,
                                        max(0.0, until - time.monotonic())))


async def warm_up(url: str, token: str, book_id: str, questions: list[str],
                  selections: list[str]) -> int:
    """Each question once, whole-book and about a selection, one at a time: the state of
    a server that has run for a while (its sentence vectors cached).  Returns the count."""
    async with httpx.AsyncClient(base_url=url, timeout=300,
                                 headers={"Authorization": f"Bearer {token}"}) as c:
        for q in questions:
            await c.post(f"/v1/books/{book_id}/query", json={"question": q,
                                                           "session_id": "warm-up"})
        for n in range(len(selections)):
            await c.post("/query-selected-text", json={
                "query": questions[n % len(questions)], "selected_text": selections[n],
                "session_id": "warm-up"})
    return len(questions) + len(selections)


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds a process has used (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def audit_check(url: str, answer_ids: list) -> dict:
    """Every 200 answer's record, exactly once and complete, and the chain verified."""
    from bookreader.core.audit import AuditLog

    with AuditLog(url) as log:
        rows = [row for row in log.iter_rows() if row.get("status") != "pending"
                and row.get("session_id") != "warm-up"]
        verified = log.verify().ok
    per_answer = Counter(row.get("answer_id") for row in rows)
    complete = {row.get("answer_id") for row in rows if row.get("answer_text")
                and row.get("backend") and row.get("record_hash")}
    ok_ids = set(answer_ids)
    return {"audit_records": len(rows), "audit_chain_ok": verified,
            # what the records are: complete (an answer), interrupted (a pending record
            # that no process completed), and whether they belong to 200 answers
            "audit_by_status": dict(Counter(str(row.get("status")) for row in rows)),
            "audit_records_not_of_a_200": sum(1 for row in rows
                                               if row.get("answer_id") not in ok_ids),
            "answers_without_record": sum(1 for a in answer_ids if per_answer.get(a, 0) == 0),
            "answers_with_several_records": sum(1 for a in answer_ids
                                                if per_answer.get(a, 0) > 1),
            "answers_with_incomplete_record": sum(1 for a in answer_ids if a not in complete)}


def start_llama_server(data: Path):
    """llama.cpp's server on the bundled model (tests/llama_server.py), or exit."""
    from llama_server import start_llama_server as start
    from llama_server import why_not

    server = start(data, threads=1, n_ctx=4096)
    if server is None:
        raise SystemExit(f"serve_load: {why_not()}")
    return server


def shared_audit(data: Path, processes: int):
    """(audit URL, cleanup) for several processes: PostgreSQL when installed, else SQLite."""
    if processes < 2:
        return None, lambda: None
    from audit_support import ThrowawayPostgres, find_pg_bin

    bin_dir = find_pg_bin()
    if bin_dir is None:
        return f"sqlite:///{data / 'shared-audit.sqlite3'}", lambda: None
    cluster = ThrowawayPostgres(bin_dir)
    cluster.start()
    return cluster.url(cluster.create_database()), cluster.stop


def run_one(backend: str, clients: int, seconds: float, rate: str, think: float = 0.0,
            warm: bool = True, workers: int = 0, processes: int = 1) -> dict:
    data = Path(tempfile.mkdtemp(prefix=f"serve-load-{backend.split(':')[0]}-"))
    book_id, selections = prepare(data)
    questions = load_questions()
    tokens = [f"load-token-{i:02d}-{os.urandom(8).hex()}" for i in range(clients)]
    warm_token = f"warm-token-{os.urandom(8).hex()}"
    env = {"BOOKREADER_API_KEYS": ",".join(
        [f"student{i:02d}:{t}" for i, t in enumerate(tokens)] + [f"warm-up:{warm_token}"])}
    extra: tuple[str, ...] = ("--workers", str(workers)) if workers else ()
    engine, label = None, backend
    if backend == "llama-server":
        engine = start_llama_server(data)
        backend = f"openai:{engine.url}"
        extra += ("--model", engine.alias)
    audit_url, cleanup = shared_audit(data, processes)
    servers = []
    try:
        for p in range(processes):
            folder = data if processes == 1 else copy_data(
                data, data.parent / f"{data.name}-p{p}",
                settings={"audit_url": audit_url} if audit_url else None)
            servers.append(ServerProcess(folder, "--backend", backend, "--rate-limit", rate,
                                         *extra, env=env))
        for server in servers:
            server.wait_ready()
        health = servers[0].health()
        # A local model's answer costs seconds either way; warming it up would take minutes.
        warmed = sum(asyncio.run(warm_up(s.url, warm_token, book_id, questions, selections))
                     for s in servers) if warm and backend == "extractive" else 0
        results: list = []
        answer_ids: list = []
        # longer than the server's wait for a worker plus its answer budget (it waits as
        # long as its budget by default): a slow answer ends as the server's 503/504, not
        # as the client giving up
        client_timeout = 2 * float(health["timeout_s"]) + 30.0
        until = time.monotonic() + seconds
        t0 = time.monotonic()
        server_cpu0 = [process_cpu_s(s.proc.pid) for s in servers]
        client_cpu0 = time.process_time()

        async def main() -> None:
            await asyncio.gather(*(client_loop(i, servers[i % processes].url, tokens[i],
                                               book_id, until, results, questions,
                                               selections, think, answer_ids,
                                               client_timeout)
                                   for i in range(clients)))

        asyncio.run(main())
        elapsed = time.monotonic() - t0
        server_cpu1 = [process_cpu_s(s.proc.pid) for s in servers]
        client_cpu = time.process_time() - client_cpu0
        counters = [s.health()["counters"] for s in servers]
    finally:
        for server in servers:
            server.stop()
        if engine is not None:
            engine.stop()
    statuses = Counter(str(s) for s, _, _ in results)
    ok = [ms for s, ms, _ in results if s == 200]
    audited_expected = statuses.get("200", 0) + statuses.get("504", 0) + statuses.get("502", 0)
    try:
        audit = audit_check(audit_url or f"sqlite:///{data / 'audit.sqlite3'}", answer_ids)
    finally:
        cleanup()
    missing_retry = sum(1 for s, _, r in results if s in (429, 503) and not r)
    errors = sum(c for s, c in statuses.items() if s not in ("200", "429", "503"))
    server_cpu = sum(b - a for a, b in zip(server_cpu0, server_cpu1)) \
        if None not in server_cpu0 + server_cpu1 else None
    return {
        "backend": label, "processes": processes,
        "audit_db": (audit_url or "sqlite").split(":")[0],
        "clients": clients, "think_s": think, "warm_up_requests": warmed,
        "seconds": round(elapsed, 1),
        "requests": len(results), "requests_per_s": round(len(results) / elapsed, 1),
        "answered_per_s": round(len(ok) / elapsed, 1),
        "p50_ms": round(percentile(ok, 50), 1), "p95_ms": round(percentile(ok, 95), 1),
        "p99_ms": round(percentile(ok, 99), 1), "statuses": dict(statuses),
        "errors_other_than_429_503": errors, "retry_after_missing": missing_retry,
        **audit, "audit_expected": audited_expected,
        "audit_lost_or_extra": audit["audit_records"] - audited_expected,
        "budget_s": health["timeout_s"], "workers": health["workers"],
        "max_queue": health["max_queue"], "server_counters": counters,
        # CPU per request: what the answers cost, whatever else the machine is doing
        # (the clients run on the same cores; a class's would not)
        "server_cpu_ms_per_request": round(1000 * server_cpu / max(len(results), 1), 1)
        if server_cpu is not None else None,
        "client_cpu_ms_per_request": round(1000 * client_cpu / max(len(results), 1), 1),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", action="append",
                        help="backend to load (repeatable; default extractive and bundled)")
    parser.add_argument("--clients", type=int, action="append",
                        help="concurrent clients per backend, in the same order "
                        "(default 50 for extractive, 8 otherwise)")
    parser.add_argument("--seconds", type=float, default=20.0, help="load time per backend")
    parser.add_argument("--rate-limit", default="100/minute", help="per-key limit of the server")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds each client waits after an answer before its next "
                        "question (default 0: every client asks again at once)")
    parser.add_argument("--cold", action="store_true",
                        help="measure from a fresh start (default: first ask every question "
                        "once, as a server that has run for a while)")
    parser.add_argument("--workers", type=int, default=0,
                        help="answering threads of the server (default: its own choice)")
    parser.add_argument("--processes", type=int, default=1,
                        help="server processes sharing one audit log (default 1)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    backends = args.backend or ["extractive", "bundled"]
    clients = args.clients or []
    runs = []
    for i, backend in enumerate(backends):
        n = clients[i] if i < len(clients) else (50 if backend == "extractive" else 8)
        runs.append(run_one(backend, n, args.seconds, args.rate_limit, args.think,
                           warm=not args.cold, workers=args.workers,
                           processes=args.processes))
    load = os.getloadavg()
    out = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "loadavg": [round(x, 2) for x in load]}, "runs": runs}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "serve_load.json").write_text(json.dumps(out, indent=2))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"bookreader serve under load, 127.0.0.1, {os.cpu_count()} CPUs, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("| backend | processes, audit | clients | think s | warm-up | s | req/s | answered/s | p50 ms | p95 ms | p99 ms | budget s "
          "| statuses | other errors | Retry-After missing | audit records / expected "
          "| CPU ms/request server, client |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        st = " ".join(f"{k}:{v}" for k, v in sorted(r["statuses"].items()))
        print(f"| {r['backend']} | {r['processes']}, {r['audit_db']} | {r['clients']} | {r['think_s']} | {r['warm_up_requests']} | "
              f"{r['seconds']} | {r['requests_per_s']} | "
              f"{r['answered_per_s']} | {r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | "
              f"{r['budget_s']} | {st} | {r['errors_other_than_429_503']} | "
              f"{r['retry_after_missing']} | {r['audit_records']} / {r['audit_expected']}"
              f"{' (chain ok)' if r['audit_chain_ok'] else ' (CHAIN BROKEN)'}; 200s without "
              f"/ with several / incomplete record: {r['answers_without_record']} / "
              f"{r['answers_with_several_records']} / {r['answers_with_incomplete_record']}; "
              f"records by status {r['audit_by_status']}, not of a 200: "
              f"{r['audit_records_not_of_a_200']} | "
              f"{r['server_cpu_ms_per_request']}, {r['client_cpu_ms_per_request']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
