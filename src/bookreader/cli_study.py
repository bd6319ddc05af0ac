"""``bookreader study``: flashcards, quizzes and summaries with a citation on every item.

    bookreader study cards BOOK --pages 12-31 [--keep] [--json]
    bookreader study quiz BOOK --chapter "Recursion" [--json]
    bookreader study summary BOOK --pages 12-31
    bookreader study export BOOK --format anki|csv|markdown [--pages A-B | --chapter T] --out F
    bookreader study due BOOK

``--pages`` takes printed page numbers as the book shows them (or ``pdf:6-8``), like
``search``.  ``export`` writes the cards kept for review (``cards --keep``), or, with
``--pages``/``--chapter``, fresh cards for those pages.  Every generated set is recorded in
the audit log (mode "study").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bookreader.errors import InvalidInput

_SUFFIX = {"anki": ".apkg", "csv": ".csv", "markdown": ".md"}


def _scope(lib: Any, args: argparse.Namespace) -> dict[str, Any]:
    from bookreader.cli import book_pages

    if getattr(args, "chapter", None):
        return {"chapter": args.chapter}
    pages = book_pages(lib, args.book, getattr(args, "pages", None))
    if pages is None:
        raise InvalidInput("Say which pages to study: --pages A-B (printed page numbers) or "
                           "--chapter TITLE.")
    return {"pages": pages}


def _print_set(s: Any) -> None:
    out = sys.stdout
    out.write(f"{s.title} ({s.kind}, pages {s.page_label}): {s.items} item"
              f"{'s' if s.items != 1 else ''}\n\n")
    for n, c in enumerate(s.cards, 1):
        front = c.front.replace("\n", "\n   ")  # a code card's listing, indented
        out.write(f"{n}. {front}\n   {c.back}\n   [{c.citation.section}, page "
                  f"{c.citation.page_label}]\n")
    for n, q in enumerate(s.quiz, 1):
        prompt = q.prompt.replace("\n", "\n   ")
        out.write(f"{n}. {prompt}\n")
        if q.options and q.kind == "choice":
            out.write("   " + "   ".join(f"({chr(97 + i)}) {o}" for i, o in
                                         enumerate(q.options)) + "\n")
        out.write(f"   Answer: {q.answer}  [{q.citation.section}, page "
                  f"{q.citation.page_label}: \u201c{q.citation.excerpt}\u201d]\n")
    for ln in s.summary:
        out.write(f"- {ln.text} [{ln.citation.section}, page {ln.citation.page_label}]\n")
    for note in s.notes:
        out.write(f"\n{note}\n")


def cmd_study(args: argparse.Namespace) -> int:
    from bookreader.cli import CancelOnInterrupt, ProgressBar, _print_json, load_settings, \
        open_library
    from bookreader.core.study.model import study_set_to_dict

    kind = {"cards": "cards", "quiz": "quiz", "summary": "summary"}[args.study_command]
    with open_library(load_settings(args)) as lib, CancelOnInterrupt() as cancel:
        bar = ProgressBar()
        try:
            made = lib.study(args.book, kind, limit=args.limit, progress=bar, cancel=cancel,
                             phrase_with=getattr(args, "phrase_with", None),
                             code=getattr(args, "code", False), **_scope(lib, args))
        finally:
            bar.finish()
        kept = lib.study_keep(args.book, made.cards) if getattr(args, "keep", False) else 0
        if args.json:
            _print_json({**study_set_to_dict(made), "kept": kept})
        else:
            _print_set(made)
            if kept:
                sys.stderr.write(f"Kept {kept} new card{'s' if kept != 1 else ''} for "
                                 "review.\n")
    return 0


def cmd_study_export(args: argparse.Namespace) -> int:
    from bookreader.cli import load_settings, open_library

    with open_library(load_settings(args)) as lib:
        info = lib.book(args.book)
        cards = None
        if args.pages or args.chapter:
            cards = lib.study(info.book_id, "cards", code=args.code,
                              **_scope(lib, args)).cards
        out = Path(args.out) if args.out else Path.cwd() / (
            "cards-" + "".join(ch if ch.isalnum() else "-" for ch in info.title)[:60].strip("-")
            + _SUFFIX[args.format])
        path = lib.study_export(info.book_id, args.format, out, cards=cards)
        count = len(cards) if cards is not None else len(lib.study_cards(info.book_id))
    sys.stderr.write(f"Exported {count} card{'s' if count != 1 else ''} to {path}.\n")
    return 0


def cmd_study_due(args: argparse.Namespace) -> int:
    from bookreader.cli import _print_json, load_settings, open_library

    with open_library(load_settings(args)) as lib:
        due = lib.study_due(args.book)
        total = len(lib.study_cards(args.book))
    if args.json:
        _print_json({"due": [{"card_id": c.card_id, "front": c.front} for c in due],
                     "cards": total})
    else:
        sys.stdout.write(f"{len(due)} of {total} kept cards are due.\n")
        for c in due:
            sys.stdout.write(f"- {c.front} (page {c.citation.page_label})\n")
    return 0


def _code_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--code", action="store_true",
                   help="also make code cards: a listing the page explains on the front, "
                        "the book's sentence that says what it does on the back")


def _scope_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("book", help="book id, unique id prefix, or the PDF's path")
    p.add_argument("--pages", metavar="A-B", help="pages A to B: printed page numbers "
                   "(129-131, xii-xv), or PDF page numbers with pdf: (pdf:6-8)")
    p.add_argument("--chapter", help="an outline entry (its title, or a unique part of it)")


def register(sub) -> None:
    p = sub.add_parser("study", help="flashcards, quizzes and summaries, each item cited")
    ssub = p.add_subparsers(dest="study_command", metavar="TOOL", required=True)
    for name, text in (("cards", "flashcards: term -> definition, question -> answer"),
                       ("quiz", "a quiz: fill in the blank, multiple choice, true/false"),
                       ("summary", "the key sentences of the pages, in reading order")):
        s = ssub.add_parser(name, help=text)
        _scope_args(s)
        s.add_argument("--limit", type=int, help="at most this many cards or quiz items")
        s.add_argument("--json", action="store_true", help="print the set as JSON")
        if name == "cards":
            s.add_argument("--keep", action="store_true", help="keep the cards for review")
            s.add_argument("--phrase-with", metavar="BACKEND",
                           help="let this model (small, tiny, auto, or default: the one "
                                "you answer with) phrase the question cards' fronts; the "
                                "backs stay the book's words")
            _code_arg(s)
        s.set_defaults(func=cmd_study)
    e = ssub.add_parser("export", help="write cards as an Anki deck, CSV or Markdown")
    _scope_args(e)
    e.add_argument("--format", choices=("anki", "csv", "markdown"), default="anki")
    e.add_argument("--out", metavar="FILE", help="where to write (default: cards-<title> here)")
    _code_arg(e)
    e.set_defaults(func=cmd_study_export)
    d = ssub.add_parser("due", help="the kept cards due for review")
    d.add_argument("book", help="book id, unique id prefix, or the PDF's path")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_study_due)
