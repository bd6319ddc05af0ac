"""Audit log speed: what an answer pays for its record, and export/verify at 100,000 records.

Usage::

    python bench/audit.py [--n 100000] [--samples 1000] [--passage-chars 1000] [--json]
                          [--url URL] [--keep DIR]

Measures, on SQLite in WAL mode (or ``--url``):

* the latency of one ``AuditLog.record()`` call (p50/p95/p99, records a second), with
  ``synchronous=FULL`` (the default: a record survives a power cut) and ``NORMAL`` (it
  survives a killed process only), on an empty log and again on the full log;
* filling the log to ``--n`` records in batches (``record_many``);
* export time and file size for CSV, JSONL and JSON; verify time for the live database and
  for the JSONL and JSON exports; the HTML report's time.

Records are realistic: five passages of ``--passage-chars`` characters in the prompt, answers
of several lines, citations, validation (see ``tools/audit_samples.py``).  The table
is printed (JSON with ``--json``) and written to ``bench/results/audit.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bookreader.core.audit import AuditLog
from bookreader.core.audit.report import percentile
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from audit_samples import make_answer  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
TARGET_MS = 20.0


def latency(log: AuditLog, pool, n: int) -> dict:
    times = []
    for i in range(n):
        answer = pool[i % len(pool)]
        t0 = time.perf_counter()
        log.record(answer, session_id="bench")
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {
        "n": n,
        "p50_ms": round(percentile(times, 50), 3),
        "p95_ms": round(percentile(times, 95), 3),
        "p99_ms": round(percentile(times, 99), 3),
        "max_ms": round(times[-1], 3),
        "records_per_s": round(n / (sum(times) / 1000), 1),
    }


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, round(time.perf_counter() - t0, 3)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="records for export/verify")
    ap.add_argument("--samples", type=int, default=1000, help="timed record() calls")
    ap.add_argument("--passage-chars", type=int, default=1000)
    ap.add_argument("--url", default=None, help="SQLAlchemy URL (default: SQLite in a tmp dir)")
    ap.add_argument("--keep", type=Path, default=None, help="work in DIR and keep the files")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--out", type=Path, default=RESULTS_DIR / "audit.json")
    args = ap.parse_args(argv)

    work = args.keep or Path(tempfile.mkdtemp(prefix="bookreader-audit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(42)
    pool = [make_answer(rng, passage_chars=args.passage_chars) for _ in range(500)]
    res: dict = {"n": args.n, "passage_chars": args.passage_chars, "target_ms": TARGET_MS,
                 "python": platform.python_version(), "machine": platform.machine(),
                 "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()[0]}
    try:
        # 1. What one answer pays, on an empty log, per durability setting.
        for sync in ("FULL", "NORMAL"):
            url = args.url or f"sqlite:///{work / f'latency_{sync.lower()}.sqlite3'}"
            log = AuditLog(url, synchronous=sync)
            latency(log, pool, 20)  # warm up
            res[f"record_{sync.lower()}"] = latency(log, pool, args.samples)
            log.close()
            if args.url:
                break

        # 2. Fill to n records.
        url = args.url or f"sqlite:///{work / 'audit.sqlite3'}"
        log = AuditLog(url, archive_dir=work / "archive")
        t0 = time.perf_counter()
        done = log.count()
        while done < args.n:
            k = min(1000, args.n - done)
            log.record_many([pool[(done + i) % len(pool)] for i in range(k)], session_id="fill")
            done += k
        fill_s = time.perf_counter() - t0
        res["fill"] = {"records": args.n, "seconds": round(fill_s, 2),
                       "records_per_s": round(args.n / fill_s, 1) if fill_s else None}
        if not args.url:
            db = work / "audit.sqlite3"
            res["db_bytes"] = db.stat().st_size + sum(
                p.stat().st_size for p in work.glob("audit.sqlite3-*"))

        # 3. One answer's cost on the full log.
        res["record_full_log"] = latency(log, pool, max(100, args.samples // 5))

        # 4. Export, verify, report.
        res["export"], res["verify"] = {}, {}
        for fmt in ("csv", "jsonl", "json"):
            out = work / f"export.{fmt}"
            n, secs = timed(log.export, fmt, out)
            res["export"][fmt] = {"records": n, "seconds": secs, "bytes": out.stat().st_size,
                                  "records_per_s": round(n / secs, 1) if secs else None}
        result, secs = timed(log.verify)
        assert result.ok, result.message
        res["verify"]["live"] = {"records": result.n_records, "seconds": secs}
        for fmt in ("jsonl", "json"):
            result, secs = timed(log.verify, work / f"export.{fmt}")
            assert result.ok, result.message
            res["verify"][fmt] = {"records": result.n_records, "seconds": secs}
        _, secs = timed(log.report, work / "report.html")
        res["report"] = {"seconds": secs, "bytes": (work / "report.html").stat().st_size}
        log.close()
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    p95 = res["record_full"]["p95_ms"] if "record_full" in res else res["record_full_log"]["p95_ms"]
    res["load_avg_end"] = os.getloadavg()[0]  # fsync and CPU times grow with machine load
    res["meets_target"] = max(p95, res["record_full_log"]["p95_ms"]) <= TARGET_MS
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(table(res))
    return 0


def table(res: dict) -> str:
    rows = [("measure", "value")]
    for key, name in (("record_full", "record(), synchronous=FULL, empty log"),
                      ("record_normal", "record(), synchronous=NORMAL, empty log"),
                      ("record_full_log", f"record(), FULL, log of {res['n']:,}")):
        if key in res:
            r = res[key]
            rows.append((name, f"p50 {r['p50_ms']:.2f} ms · p95 {r['p95_ms']:.2f} ms · "
                               f"p99 {r['p99_ms']:.2f} ms · {r['records_per_s']:,.0f}/s"))
    f = res["fill"]
    rows.append((f"fill to {f['records']:,} (batches of 1,000)",
                 f"{f['seconds']:.1f} s · {f['records_per_s']:,.0f}/s"))
    if "db_bytes" in res:
        rows.append(("database size", f"{res['db_bytes'] / 1e6:,.0f} MB"))
    for fmt, e in res["export"].items():
        rows.append((f"export {fmt}", f"{e['seconds']:.1f} s · {e['bytes'] / 1e6:,.0f} MB"))
    for what, v in res["verify"].items():
        rows.append((f"verify {what}", f"{v['seconds']:.1f} s ({v['records']:,} records)"))
    rows.append(("HTML report", f"{res['report']['seconds']:.1f} s · "
                                f"{res['report']['bytes'] / 1e3:.0f} kB"))
    rows.append(("machine load (1-min average, start/end)",
                 f"{res['load_avg_start']:.1f} / {res['load_avg_end']:.1f} on {res['cpus']} CPUs"))
    rows.append((f"target: record adds ≤ {TARGET_MS:.0f} ms (p95)",
                 "met" if res["meets_target"] else "NOT met"))
    w = max(len(a) for a, _ in rows)
    lines = [f"| {a.ljust(w)} | {b} |" for a, b in rows]
    lines.insert(1, f"|{'-' * (w + 2)}|{'-' * 60}|")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
