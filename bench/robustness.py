"""Robustness run: every PDF of the shared corpus opens and reads, or fails clearly, fast.

Usage::

    python bench/robustness.py [--pdfs ../shared/eval/pdfs] [--timeout 30] [--json]

Each file is opened with its password (from the corpus's ``INDEX.csv``) and every page is
read as ingestion reads it (cleaned text and word boxes), in a child process killed after
``--timeout`` seconds.  A file passes when it ends in success or in a ``BookReaderError``
(whose message is printed) within the time limit; a timeout, a crash of the child process
or any other exception fails it.  Encrypted files are also opened without a password, which
must end in ``PasswordRequired``.

Prints a table (or JSON with ``--json``) and writes ``bench/results/robustness.json``.
Exit status 1 when any file fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PDFS = REPO.parent / "shared" / "eval" / "pdfs"
RESULTS = Path(__file__).resolve().parent / "results" / "robustness.json"
sys.path.insert(0, str(REPO / "src"))

import bookreader.core.pdf  # noqa: E402,F401  (imported once, before the children fork)
from bookreader.core.pdf_probe import ProbeResult, probe_pdf  # noqa: E402


def corpus_passwords(pdf_dir: Path) -> dict[str, str]:
    """File name -> user password, from the corpus's INDEX.csv (empty: none)."""
    index = pdf_dir / "INDEX.csv"
    if not index.exists():
        return {}
    with open(index, newline="", encoding="utf-8") as fh:
        return {row["file"]: row.get("password", "") or "" for row in csv.DictReader(fh)}


def corpus_encrypted(pdf_dir: Path) -> set[str]:
    """Files INDEX.csv marks as needing a user password."""
    index = pdf_dir / "INDEX.csv"
    if not index.exists():
        return set()
    with open(index, newline="", encoding="utf-8") as fh:
        return {row["file"] for row in csv.DictReader(fh) if row.get("password")}


def run(pdf_dir: Path, timeout: float, files: list[str] | None = None) -> list[ProbeResult]:
    """Probe every PDF in ``pdf_dir`` (or just ``files``), one child process each."""
    passwords = corpus_passwords(pdf_dir)
    names = files or sorted(p.name for p in pdf_dir.glob("*.pdf"))
    results = []
    for name in names:
        results.append(
            probe_pdf(pdf_dir / name, passwords.get(name) or None, timeout=timeout, start_method="fork")
        )
    for name in sorted(corpus_encrypted(pdf_dir) & set(names)):
        r = probe_pdf(pdf_dir / name, None, timeout=timeout, start_method="fork")
        r.file = f"{name} (no password)"
        results.append(r)
    return results


def passed(r: ProbeResult, timeout: float) -> bool:
    if r.file.endswith("(no password)"):
        return r.outcome == "error" and r.error_type == "PasswordRequired"
    return r.clear and r.seconds < timeout


def summary(results: list[ProbeResult], timeout: float) -> dict:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    return {
        "files": len(results),
        "outcomes": counts,
        "passed": sum(passed(r, timeout) for r in results),
        "failed": [r.file for r in results if not passed(r, timeout)],
        "max_seconds": round(max((r.seconds for r in results), default=0.0), 3),
        "total_seconds": round(sum(r.seconds for r in results), 2),
        "timeout_s": timeout,
    }


def print_table(results: list[ProbeResult], timeout: float) -> None:
    print("| file | outcome | pages | message | seconds |")
    print("|---|---|---|---|---|")
    for r in results:
        msg = r.message.replace("|", "/")
        if len(msg) > 110:
            msg = msg[:107] + "..."
        mark = "" if passed(r, timeout) else " FAIL"
        detail = f"{r.error_type}: {msg}" if r.error_type else msg
        print(f"| {r.file} | {r.outcome}{mark} | {r.pages} | {detail} | {r.seconds:.2f} |")
    s = summary(results, timeout)
    print()
    print(
        f"{s['passed']}/{s['files']} passed; outcomes {s['outcomes']}; slowest {s['max_seconds']:.2f} s; "
        f"total {s['total_seconds']:.1f} s"
    )
    if s["failed"]:
        print("FAILED:", ", ".join(s["failed"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdfs", type=Path, default=DEFAULT_PDFS, help="folder of PDFs")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per file")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("files", nargs="*", help="only these file names")
    args = ap.parse_args(argv)
    if not args.pdfs.is_dir():
        print(f"No PDF corpus at {args.pdfs}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = run(args.pdfs, args.timeout, args.files or None)
    data = {
        "summary": summary(results, args.timeout),
        "wall_seconds": round(time.perf_counter() - started, 2),
        "results": [r.to_json() for r in results],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_table(results, args.timeout)
        print(f"wrote {RESULTS}")
    return 0 if not data["summary"]["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
