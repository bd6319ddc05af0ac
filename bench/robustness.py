"""Robustness run: every PDF of the shared corpus opens and reads, or fails clearly, fast.

Usage::

    python bench/robustness.py [--pdfs ../shared/eval/pdfs] [--timeout 30] [--json]

Each file is opened with its password (from the corpus's ``INDEX.csv``) and every page is
read as ingestion reads it (cleaned text and word boxes), in a child process killed after
``--timeout`` seconds.  A file passes when it ends in success or in a ``BookReaderError``
(whose message is printed) within the time limit; a timeout, a crash of the child process
or any other exception fails it.  Encrypted files are also opened without a password, which
must end in ``PasswordRequired``.

With ``--hostile`` it also builds the hostile set of issue 12 (``tests/faults/
hostile_pdfs.py``: an outline 60,000 levels deep, the same at 5,000, decompression bombs of
300 and 600 MB, 50 pages sharing a 100 MB stream, a truncated file, a PNG named .pdf) and
reads each the way ingestion now does: the sandbox check, then page-by-page extraction in
capped child processes.  Per file it prints the outcome, the seconds and the peak RSS of
the child.  Targets: no process death, no traceback, peak RSS <= 2 GB, <= 60 s a file.
``--sandbox`` reads the shared corpus through the same sandboxed path as well.

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

#: Issue 12's targets for the hostile set.
HOSTILE_MAX_SECONDS = 60.0
HOSTILE_MAX_RSS_MB = 2048.0


def sandboxed(path: Path, password: str | None = None, limits=None, label: str = "") -> dict:
    """Read ``path`` as ingestion does (sandbox scan, then capped page-by-page extraction)."""
    from bookreader.core import sandbox
    from bookreader.errors import BookReaderError

    limits = limits or sandbox.SandboxLimits()
    start = time.perf_counter()
    row = {"file": path.name + label, "outcome": "", "pages": 0, "flagged": 0, "message": "",
           "seconds": 0.0, "peak_child_rss_mb": 0.0}
    try:
        scan = sandbox.scan_pdf(path, password, limits=limits)
        got = sandbox.Extraction()
        pages = list(sandbox.extract_pages(path, password, scan.flagged, scan.page_count,
                                           into=got, limits=limits))
        row.update(outcome="ok", pages=len(pages), flagged=len(got.flagged),
                   peak_child_rss_mb=max(scan.peak_rss_mb, got.peak_rss_mb),
                   message=" ".join(sandbox.describe_flagged(got.flagged) + got.notes)[:200])
    except BookReaderError as exc:
        row.update(outcome="error", message=f"{type(exc).__name__}: {exc.user_message}")
    except Exception as exc:  # a traceback: what the targets forbid
        row.update(outcome="traceback", message=f"{type(exc).__name__}: {exc}")
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def hostile_passed(row: dict) -> bool:
    return (row["outcome"] in ("ok", "error") and row["seconds"] <= HOSTILE_MAX_SECONDS
            and row["peak_child_rss_mb"] <= HOSTILE_MAX_RSS_MB)


def run_hostile(folder: Path) -> list[dict]:
    sys.path.insert(0, str(REPO / "tests" / "faults"))
    from hostile_pdfs import build_hostile_set

    from bookreader.core.sandbox import GB, SandboxLimits

    rows = []
    files = build_hostile_set(folder)
    for name, path in files.items():
        rows.append(sandboxed(path))
        print(f"  {name}: {rows[-1]['outcome']} in {rows[-1]['seconds']} s", file=sys.stderr)
    # The same bomb with the content-size check switched off: the 2 GB memory cap stops it.
    rows.append(sandboxed(files["bomb-300mb.pdf"], limits=SandboxLimits(page_content_bytes=64 * GB),
                          label=" (size check off)"))
    return rows


def print_hostile(rows: list[dict], title: str) -> None:
    print(f"\n{title}\n")
    print("| file | outcome | pages | flagged | seconds | peak child RSS MB | message |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        mark = "" if hostile_passed(r) else " FAIL"
        msg = r["message"].replace("|", "/")
        msg = msg[:120] + ("..." if len(msg) > 120 else "")
        print(f"| {r['file']} | {r['outcome']}{mark} | {r['pages']} | {r['flagged']} | "
              f"{r['seconds']:.2f} | {r['peak_child_rss_mb']:.0f} | {msg} |")
    bad = [r["file"] for r in rows if not hostile_passed(r)]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} within targets (success or clear error, "
          f"<= {HOSTILE_MAX_SECONDS:.0f} s, <= {HOSTILE_MAX_RSS_MB:.0f} MB child RSS, no "
          f"traceback); slowest {max((r['seconds'] for r in rows), default=0):.2f} s; "
          f"largest child {max((r['peak_child_rss_mb'] for r in rows), default=0):.0f} MB")
    if bad:
        print("FAILED:", ", ".join(bad))


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
    ap.add_argument("--hostile", action="store_true",
                    help="also build and read issue 12's hostile set through the sandbox")
    ap.add_argument("--sandbox", action="store_true",
                    help="also read the corpus through the sandboxed ingestion path")
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
    failed = bool(data["summary"]["failed"])
    if args.hostile:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
            data["hostile"] = run_hostile(Path(folder))
        failed |= not all(hostile_passed(r) for r in data["hostile"])
    if args.sandbox:
        passwords = corpus_passwords(args.pdfs)
        names = args.files or sorted(p.name for p in args.pdfs.glob("*.pdf"))
        data["sandboxed_corpus"] = [sandboxed(args.pdfs / n, passwords.get(n) or None)
                                    for n in names]
        failed |= not all(hostile_passed(r) for r in data["sandboxed_corpus"])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print_table(results, args.timeout)
        if args.hostile:
            print_hostile(data["hostile"], "Hostile set (sandboxed ingestion path)")
        if args.sandbox:
            print_hostile(data["sandboxed_corpus"], "Shared corpus through the sandbox")
        print(f"wrote {RESULTS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
