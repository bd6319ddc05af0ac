"""Code cards (``generate(..., code=True)``) for some chapters of programming books, printed
for reading.

Usage::

    python bench/code_cards.py thinkjava2:13,64,90 py4e:43,58,114 [--books-dir DIR]

Each argument is a book's file name in the evaluation books folder (without ``.pdf``) and
the outline places (0-based, as ``bookreader study --chapter`` numbers them after one) of
the chapters to read.  For each chapter it prints how many code cards were made and, per
card, its page, the listing's line count, the listing's first line and the back; then the
total.  It also checks that the chapter's other cards are the same with and without code
cards.  Judging the cards (does the back say what the listing does?) is left to the reader.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

BOOKS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "books"


def main(argv: list[str] | None = None) -> int:
    from bookreader.core.pdf import PdfBook
    from bookreader.core.study.generate import chapter_scope, generate
    from bookreader.core.study.model import CARD_CODE

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("books", nargs="+", metavar="BOOK:CHAPTERS")
    ap.add_argument("--books-dir", type=Path, default=BOOKS_DIR)
    args = ap.parse_args(argv)
    total = 0
    for spec in args.books:
        name, _, places = spec.partition(":")
        path = args.books_dir / f"{name}.pdf"
        if not path.exists():
            print(f"skipping {name}: {path} not found", file=sys.stderr)
            continue
        with PdfBook.open(path) as pdf:
            for place in (int(p) for p in places.split(",") if p):
                scope = chapter_scope(list(pdf.toc), place, pdf.page_count)
                asked = generate(pdf, pdf.book_id, "cards", scope, code=True)
                plain = generate(pdf, pdf.book_id, "cards", scope, code=False)
                codes = [c for c in asked.cards if c.kind == CARD_CODE]
                same = [c.card_id for c in plain.cards] == [
                    c.card_id for c in asked.cards if c.kind != CARD_CODE]
                total += len(codes)
                print(f"=== {name}: {scope.title} (pdf pages {scope.first + 1}-"
                      f"{scope.last + 1}): {len(codes)} code cards; other cards "
                      f"{'unchanged' if same else 'CHANGED'}")
                for c in codes:
                    lines = c.front.split("\n")[1:]
                    print(f"- page {c.citation.page_label} [{len(lines)} lines] "
                          f"{lines[0][:70]!r}\n    back: {c.back}")
    print(f"total code cards: {total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
