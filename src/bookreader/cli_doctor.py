"""``bookreader doctor`` and ``bookreader self-test``: is this installation healthy?

``doctor`` reports every component (data folder, embedding model, store, audit log,
answering backends, Qt) with a fix for whatever is missing; ``self-test`` (also the
``--self-test`` flag of the packaged app) runs the whole pipeline on the sample book.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Callable

from bookreader import __version__
from bookreader.cli import load_settings
from bookreader.logs import LOG_FILE
from bookreader.config import DATA_DIR_ENV
from bookreader.errors import BookReaderError


def register(subparsers) -> None:
    """Add ``doctor`` and ``self-test`` to the ``bookreader`` command line."""
    p = subparsers.add_parser("doctor", help="show folders, store and models, and check them")
    p.add_argument("--no-measure", action="store_true",
                   help="do not measure the installed model tiers' speed")
    p.set_defaults(func=cmd_doctor)
    p = subparsers.add_parser("self-test", help="check this installation end to end (offline)")
    p.add_argument("--backend", default="tiny", help="backend to test (default: tiny)")
    p.set_defaults(func=cmd_self_test)


def cmd_doctor(args: argparse.Namespace) -> int:
    """What BookReader uses on this machine, what works, and how to fix what does not."""
    settings = load_settings(args)
    rows: list[tuple[str, str]] = [
        ("BookReader", __version__),
        ("Python", sys.version.split()[0]),
        ("Data folder", f"{settings.data_dir} (override with {DATA_DIR_ENV})"),
        ("Logs", str(settings.log_dir / LOG_FILE)),
    ]
    problems: list[str] = []

    def check(label: str, probe: Callable[[], str]) -> None:
        try:
            rows.append((label, probe()))
        except BookReaderError as exc:
            rows.append((label, f"PROBLEM: {exc.user_message}"))
            problems.append(label)
        except Exception as exc:  # doctor reports, it never crashes
            rows.append((label, f"PROBLEM: {type(exc).__name__}: {exc}"))
            problems.append(label)

    def data_folder() -> str:
        settings.ensure_dirs()
        probe = settings.data_dir / ".doctor-write-test"
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
        return "writable"

    def embedding() -> str:
        from bookreader.core.embedding import find_model_dir

        return str(find_model_dir())

    def store() -> str:
        import shutil
        import tempfile

        from bookreader.core.store.base import open_store

        if settings.store_backend == "edge":
            tmp = Path(tempfile.mkdtemp(prefix="doctor-", dir=settings.books_dir))
            try:
                from bookreader.core.store.edge import EdgeStore

                s = EdgeStore(tmp / "shard", "doctor")
                count = s.count()
                s.close()
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            return f"Qdrant Edge opens in {settings.books_dir} ({count} points in a test shard)"
        s = open_store(settings, "doctor")
        s.drop()
        s.close()
        return f"Qdrant server at {settings.qdrant_url} answers"

    def audit() -> str:
        from bookreader.core.audit import AuditLog

        with AuditLog.from_settings(settings) as log_:
            result = log_.verify()
        state = "verifies" if result.ok else f"DOES NOT VERIFY: {result.message}"
        if not result.ok:
            problems.append("Audit log")
        return f"{settings.audit_db_url}: {result.n_records} records, {state}"

    def books() -> str:
        from bookreader.library import Library

        with Library(settings) as lib:
            listed = lib.books()
        return f"{len(listed)} in the library"

    check("Data folder is", data_folder)
    check("Embedding model", embedding)
    check("Vector store", store)
    check("Audit database", audit)
    check("Books", books)

    from bookreader.core.llm.registry import describe_backends

    def choose() -> str:
        from bookreader.core.llm.choose import basis, choose_tier

        name, reason, results = choose_tier(settings)
        for m in results:
            rows.append(("  measured", m.summary()))
        settings.updated(auto_tier=name, auto_reason=reason, auto_basis=basis(settings)).save()
        settings.auto_tier, settings.auto_reason = name, reason
        return f"{name}. {reason}"

    if not getattr(args, "no_measure", False):
        check("Default tier (auto)", choose)
    rows.append(("Answering backends", f"(selected: {settings.llm_backend})"))
    for entry in describe_backends(settings):
        mark = "ok" if entry["available"] else "unavailable"
        model = f" {entry['model']}" if entry.get("model") else ""
        budget = []
        if entry.get("first_token_s"):
            budget.append(f"first token within {entry['first_token_s']:.0f} s")
        if entry.get("total_s"):
            budget.append(f"answer within {entry['total_s']:.0f} s")
        line = f"{mark}:{model} {', '.join(budget)}".rstrip()
        if not entry["available"]:
            line += f" - {entry['problem']} {entry['fix']}".rstrip()
            if entry.get("selected"):
                problems.append(entry["name"])
        for warning in entry.get("warnings") or ():
            line += f" WARNING: {warning}"
        rows.append((f"  {entry['name']}" + (" *" if entry.get("selected") else ""), line))
    qt = importlib.util.find_spec("PySide6") is not None
    if not qt:
        window = "PySide6 is missing: pip install PySide6-Essentials"
    else:
        from bookreader.qt_platform import display_problem

        # Not counted as a problem: the command line works without a screen.
        problem = display_problem()
        window = "available" if problem is None else f"cannot open here: {problem}"
    rows.append(("Reader window (Qt)", window))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if problems:
        print(f"\n{len(problems)} problem(s): {', '.join(problems)}. See the fixes above.")
        return 1
    print("\nEverything BookReader needs is in place.")
    return 0


def cmd_self_test(args: argparse.Namespace) -> int:
    """Index the sample book and ask in all three modes in a throw-away data folder."""
    from bookreader.selftest import run_self_test

    backend = getattr(args, "backend", None) or "bundled"
    print(f"BookReader {__version__} self-test with the {backend} backend "
          "(your library and audit log are not touched)")
    report = run_self_test(backend, out=sys.stdout)
    if report.passed:
        print("Self-test passed.")
        return 0
    failed = [s.name for s in report.steps if not s.passed]
    print(f"Self-test FAILED: {', '.join(failed)}.")
    return 1
