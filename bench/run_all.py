"""Run every benchmark with its default inputs and collect the results in one markdown file.

Usage::

    python bench/run_all.py [--only NAME ...] [--timeout SECONDS]

Each benchmark runs in its own process (so one crash or memory peak does not affect the
next) with ``--json``; its JSON (from stdout, or else from the file it wrote under
``bench/results/``) goes into ``bench/results/summary.md`` as a table, and everything into
``bench/results/summary.json``.  A benchmark whose script does not exist yet, or whose
inputs in ``../shared/eval`` are absent, is skipped with a message.
"""

from __future__ import annotations

import argparse
import json
import re
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
EVAL_DIR = REPO_ROOT.parent / "shared" / "eval"
BOOKS = EVAL_DIR / "books"
RESULTS_DIR = BENCH_DIR / "results"
QUESTIONS = BENCH_DIR / "questions"
MAX_ROWS = 80


@dataclass
class Job:
    """One benchmark run: a script, its arguments, and the inputs it cannot run without."""

    name: str
    script: str
    args: list[str] = field(default_factory=list)
    needs: list[Path] = field(default_factory=list)
    result_file: Optional[str] = None  # under bench/results, read when stdout is not JSON
    #: patterns of the flattened result keys shown in summary.md (all when empty); see
    #: key_matches
    show: list[str] = field(default_factory=list)


def jobs() -> list[Job]:
    """Every benchmark with its default inputs, in the order they run."""
    tj = BOOKS / "thinkjava2.pdf"
    out = [
        Job("ingest", "ingest.py", ["--book", str(tj)], [tj], "ingest.json",
            ["pages", "chunks", "ingest_s", "model_load_s", "pages_per_s", "chunks_per_s", "load_avg_1m",
             "peak_rss_mb", "embed_only_s", "ingest_to_embed_ratio", "ingest_to_embed_cpu_ratio",
             "target_*"]),
    ]
    for stem in ("thinkjava2", "py4e", "physical_ai_textbook"):
        book, questions = BOOKS / f"{stem}.pdf", QUESTIONS / f"{stem}.jsonl"
        out.append(Job(f"retrieval:{stem}", "retrieval.py",
                       ["--book", str(book), "--questions", str(questions)],
                       [book, questions], f"retrieval_{stem}.json",
                       ["hybrid.*", "dense.*", "bm25.*", "threshold", "*_declined",
                        "search_ms_*", "questions_*", "hybrid_beats_both_recall5", "load_avg_1m"]))
    out.append(Job("calibrate", "calibrate.py", [],
                   [BOOKS / f"{s}.pdf" for s in ("thinkjava2", "py4e", "physical_ai_textbook")],
                   "calibration.json",
                   ["recommended_threshold", "prototype_recommended_threshold",
                    "books.*.in_scope", "books.*.out_of_scope_*", "books.*.*.auc.confidence",
                    "books.*.near.auc.prototype_held_out", "books.*.all.current_recommended.*",
                    "books.*.*.current_at_design.out_of_scope_declined",
                    "books.*.all.current_at_design.in_scope_accepted", "prototype.*"]))
    # Written by other helpers; run with their own defaults.
    out += [
        Job("robustness", "robustness.py", [], [EVAL_DIR / "pdfs"], "robustness.json"),
        Job("store", "store.py", [], [], "store.json"),
        Job("grounding", "grounding.py", ["--split", "test", "--json"],
            [EVAL_DIR / "grounding" / "halueval_qa.jsonl"], "grounding_halueval_qa_test.json"),
        Job("grounding:textbook", "grounding.py", ["--textbook", "--split", "test", "--json"],
            [BOOKS], "grounding_grounding_textbook_test.json"),
        Job("answer:selected:extractive", "answer.py", ["--backend", "extractive"],
            [EVAL_DIR / "qa"], "answer_selected_extractive.json"),
        Job("answer:selected:bundled", "answer.py", ["--backend", "bundled"],
            [EVAL_DIR / "qa"], "answer_selected_bundled.json"),
        Job("answerability", "answerability.py", ["--judge"], [EVAL_DIR / "qa"],
            "answerability.json"),
        Job("answer:book:bundled", "answer.py",
            ["--backend", "bundled", "--book", str(tj),
             "--questions", str(QUESTIONS / "thinkjava2.jsonl")],
            [tj], "answer_book_bundled.json"),
        Job("llm_backends", "llm_backends.py", [], [EVAL_DIR / "qa"], "llm_backends.json"),
        Job("audit", "audit.py", [], [], "audit.json"),
        Job("ui_latency", "ui_latency.py", [], [BOOKS / "thinkjava2.pdf"], "ui_latency.json"),
    ]
    return out


@dataclass
class Outcome:
    name: str
    status: str  # "ok", "failed", "skipped", "timeout"
    seconds: float = 0.0
    message: str = ""
    result: Any = None
    show: list[str] = field(default_factory=list)


def _parse_json(text: str) -> Any:
    """The JSON document printed on stdout (possibly after log lines), or None."""
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    for opener in ("{", "["):  # a JSON block at the end of other output
        start = text.find("\n" + opener)
        while start != -1:
            try:
                return json.loads(text[start + 1 :])
            except ValueError:
                start = text.find("\n" + opener, start + 1)
    return None


def run_job(job: Job, timeout: float) -> Outcome:
    script = BENCH_DIR / job.script
    if not script.is_file():
        return Outcome(job.name, "skipped", message=f"bench/{job.script} does not exist yet")
    missing = [p for p in job.needs if not p.exists()]
    if missing:
        return Outcome(job.name, "skipped", message=f"input absent: {missing[0]}")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    cmd = [sys.executable, str(script), *job.args, "--json"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode == 2 and "unrecognized arguments: --json" in proc.stderr:
            proc = subprocess.run(cmd[:-1], cwd=REPO_ROOT, env=env, capture_output=True,
                                  text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(job.name, "timeout", time.perf_counter() - t0,
                       f"no result within {timeout:.0f} s")
    seconds = time.perf_counter() - t0
    result = _parse_json(proc.stdout)
    if result is None and job.result_file and proc.returncode == 0:
        path = RESULTS_DIR / job.result_file
        if path.is_file():
            try:
                result = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                result = None
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or [""])[-1]
        return Outcome(job.name, "failed", seconds, f"exit {proc.returncode}: {tail}", result)
    return Outcome(job.name, "ok", seconds, "" if result is not None else "no JSON result",
                   result)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted key, short text) rows for a JSON value; long lists are summarised."""
    rows: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            rows += flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        if len(value) <= 6 and all(not isinstance(v, (dict, list)) for v in value):
            rows.append((prefix, ", ".join(_fmt(v) for v in value)))
        else:
            rows.append((prefix, f"[{len(value)} items]"))
    else:
        rows.append((prefix, _fmt(value)))
    return rows


def key_matches(key: str, pattern: str) -> bool:
    """Glob match of a dotted key where ``*`` stays within one dotted part."""
    rx = "".join("[^.]*" if ch == "*" else re.escape(ch) for ch in pattern)
    return re.fullmatch(rx, key) is not None


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def write_summary(outcomes: list[Outcome]) -> Path:
    lines = ["# Benchmark summary", "",
             f"Machine: {os.cpu_count()} CPU cores; Python {sys.version.split()[0]}; "
             f"run at {time.strftime('%Y-%m-%d %H:%M')}.", "",
             "| benchmark | status | seconds | note |", "|---|---|---|---|"]
    for o in outcomes:
        lines.append(f"| {o.name} | {o.status} | {o.seconds:.1f} | {_fmt(o.message)} |")
    for o in outcomes:
        if o.result is None:
            continue
        lines += ["", f"## {o.name}", "", "| measure | value |", "|---|---|"]
        shown = o.result
        if isinstance(shown, dict):
            shown = {k: v for k, v in shown.items() if k not in ("samples", "per_question")}
        rows = flatten(shown)
        if o.show:
            rows = [(k, v) for k, v in rows if any(key_matches(k, p) for p in o.show)]
        if len(rows) > MAX_ROWS:
            rows = rows[:MAX_ROWS] + [("...", f"{len(rows) - MAX_ROWS} more in summary.json")]
        lines += [f"| {k} | {v} |" for k, v in rows]
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / "summary.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (RESULTS_DIR / "summary.json").write_text(
        json.dumps([o.__dict__ for o in outcomes], indent=2, default=str) + "\n",
        encoding="utf-8")
    return path


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Run every benchmark and write summary.md.")
    ap.add_argument("--only", nargs="*", default=None,
                    help="names to run (e.g. ingest retrieval:py4e calibrate); default all")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per benchmark")
    args = ap.parse_args(argv)

    outcomes = []
    for job in jobs():
        if args.only and job.name not in args.only and job.name.split(":")[0] not in args.only:
            continue
        print(f"[{job.name}] running bench/{job.script} ...", flush=True)
        outcome = run_job(job, args.timeout)
        outcome.show = job.show
        note = f": {outcome.message}" if outcome.message else ""
        print(f"[{job.name}] {outcome.status} in {outcome.seconds:.1f} s{note}", flush=True)
        outcomes.append(outcome)
    path = write_summary(outcomes)
    print(f"Summary written to {path}")
    return 1 if any(o.status in ("failed", "timeout") for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
