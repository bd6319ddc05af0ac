"""``bookreader audit ...``: export, verify, report and prune the audit log.

``cli.py`` calls :func:`register` with its subparsers.  Every handler is self-contained:
``args.func(args)`` loads the settings itself (``args.func(args, settings)`` passes them in),
opens the audit log, and returns the process exit code.  Messages go to stderr so that an
export written to stdout stays clean.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Optional

from bookreader.errors import BookReaderError

EXIT_OK, EXIT_TAMPERED, EXIT_ERROR = 0, 1, 2


def _settings(args: argparse.Namespace, settings=None):
    if settings is not None:
        return settings
    from bookreader.config import Settings

    return Settings.load(getattr(args, "data_dir", None))


def _open(settings):
    from bookreader.core.audit import AuditLog

    return AuditLog.from_settings(settings)


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _guarded(fn: Callable[..., int]) -> Callable[..., int]:
    """Turn a BookReaderError into its message on stderr and exit code 2."""

    def run(args: argparse.Namespace, settings=None) -> int:
        try:
            return fn(args, _settings(args, settings))
        except BookReaderError as exc:
            _err(f"Error: {exc.user_message}")
            return EXIT_ERROR

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _filters(args: argparse.Namespace) -> dict:
    return {"since": args.since, "until": args.until, "book": args.book, "mode": args.mode}


@_guarded
def cmd_export(args: argparse.Namespace, settings) -> int:
    """Write the audit records as CSV, JSONL or JSON."""
    with _open(settings) as audit:
        n = audit.export(args.format, args.out, **_filters(args))
    _err(f"Exported {n} records as {args.format} to {args.out or 'standard output'}.")
    return EXIT_OK


@_guarded
def cmd_verify(args: argparse.Namespace, settings) -> int:
    """Check the hash chain of the live log or of an exported file."""
    extra = {"extends": args.extends, "expect_head": args.expect_head}
    if args.file is not None:
        from bookreader.core.audit.verify import verify_file

        result = verify_file(args.file, **extra)  # a file needs no database
    else:
        with _open(settings) as audit:
            result = audit.verify(**extra)
    print(result.message)
    if not result.ok:
        if result.first_bad_record_id:
            print(f"First bad record: {result.first_bad_record_id}"
                  + (f" (#{result.first_bad_seq})" if result.first_bad_seq else ""))
        return EXIT_TAMPERED
    if result.head_hash:
        print(f"Last record hash: {result.head_hash}")
    return EXIT_OK


@_guarded
def cmd_report(args: argparse.Namespace, settings) -> int:
    """Write the one-page HTML report for instructors."""
    with _open(settings) as audit:
        out = audit.report(args.out, **_filters(args))
    _err(f"Wrote the report to {out}.")
    print(out)
    return EXIT_OK


@_guarded
def cmd_prune(args: argparse.Namespace, settings) -> int:
    """Archive records past the hot window and delete those past the retention period."""
    with _open(settings) as audit:
        result = audit.prune(dry_run=args.dry_run)
    print(("Dry run: " if result.dry_run else "") + result.message)
    for path in result.archive_files:
        print(f"  archive: {path}")
    return EXIT_OK


def _add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--since", metavar="DATE", help="only records from this date (YYYY-MM-DD)")
    p.add_argument("--until", metavar="DATE", help="only records up to this date, inclusive")
    p.add_argument("--book", metavar="BOOK", help="only this book (id, or part of its title)")
    p.add_argument("--mode", choices=("book", "selected", "highlight"), help="only this mode")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``audit`` and its subcommands to the main parser's ``subparsers``."""
    audit = subparsers.add_parser(
        "audit", help="export, verify, report on and prune the question log",
        description="The audit log of every question and answer: export it, check it for "
        "tampering, make an instructor's report, archive old records.",
    )
    sub = audit.add_subparsers(dest="audit_command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("export", help="write the records as CSV, JSONL or JSON")
    p.add_argument("--format", choices=("csv", "jsonl", "json"), default="jsonl")
    p.add_argument("--out", type=Path, metavar="FILE", help="output file (default: stdout)")
    _add_filters(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("verify", help="check the hash chain; exit 1 naming the first bad record")
    p.add_argument("file", nargs="?", type=Path, metavar="FILE",
                   help="an exported .jsonl/.json file or archive (default: the live log)")
    p.add_argument("--extends", type=Path, metavar="EARLIER",
                   help="an earlier export: every record of it must be here, unchanged")
    p.add_argument("--expect-head", metavar="HASH",
                   help="a head hash noted earlier: the chain must pass through it")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("report", help="write a one-page HTML report with charts")
    p.add_argument("--out", type=Path, metavar="FILE", default=Path("audit-report.html"))
    _add_filters(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("prune", help="archive old records and apply the retention period")
    p.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    p.set_defaults(func=cmd_prune)
    return audit


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m bookreader.cli_audit ...``: the audit commands on their own."""
    parser = argparse.ArgumentParser(prog="bookreader")
    parser.add_argument("--data-dir", type=Path, default=None, help=argparse.SUPPRESS)
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
