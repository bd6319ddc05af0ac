"""``bookreader history``: a book's questions and answers.

``bookreader history export BOOK [--out FILE]`` writes the conversation as Markdown with its
citations (the window's File > Export conversation does the same), for sharing with peers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_history_export(args: argparse.Namespace) -> int:
    from bookreader.cli import load_settings, open_library

    with open_library(load_settings(args)) as lib:
        info = lib.book(args.book)
        out = Path(args.out) if args.out else Path.cwd() / default_file_name(info.title)
        path = lib.export_conversation(info.book_id, out)
        count = len(lib.history(info.book_id, limit=100_000))
    sys.stderr.write(f"Exported {count} question{'s' if count != 1 else ''} about "
                     f"'{info.title}' to {path}.\n")
    return 0


def default_file_name(title: str) -> str:
    """``questions-<title>.md`` with only safe characters."""
    safe = "".join(c if c.isalnum() else "-" for c in title.casefold()).strip("-")
    while "--" in safe:
        safe = safe.replace("--", "-")
    return f"questions-{safe[:60] or 'book'}.md"


def register(sub) -> None:
    p = sub.add_parser("history", help="a book's questions and answers")
    hsub = p.add_subparsers(dest="history_command", metavar="ACTION", required=True)
    e = hsub.add_parser("export", help="write a book's conversation as Markdown, with citations")
    e.add_argument("book", help="book id, unique id prefix, or the PDF's path")
    e.add_argument("--out", metavar="FILE",
                   help="where to write (default: questions-<title>.md here)")
    e.set_defaults(func=cmd_history_export)
