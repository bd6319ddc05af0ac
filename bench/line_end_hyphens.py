"""How every hyphen at a line end of a book is read: joined, kept or left alone.

Usage::

    python bench/line_end_hyphens.py [BOOK.pdf ...] [--all] [--json]

Reads each book with the project's own ``core/pdf.py`` and records every decision of
:func:`bookreader.core.hyphenation.line_end_hyphen` with its reason (``page-hyph``: the
page writes the compound with a hyphen elsewhere; ``page-joined``: the page writes the
joined word; ``prefix``; ``code``; ``joined-listed``: the joined word is in the word list;
``both-listed``: both halves are and the joined word is not; ``default``: none of these,
joined; ``leave``: a suspended hyphen or code, not joined).  Prints the counts per book
and a table of every decision other than ``joined-listed`` and ``page-joined`` (all of
them with ``--all``), with how often the book writes the joined and the hyphenated form
elsewhere, to read for errors.  Writes ``bench/results/line_end_hyphens.json``.
Default books: the three of ``../shared/eval/books``.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path

from bookreader.core import hyphenation as hy
from bookreader.core import pdf_layout as lay
from bookreader.core.pdf import PdfBook

BOOKS = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "books"
DEFAULT = [BOOKS / f"{b}.pdf" for b in ("thinkjava2", "py4e", "physical_ai_textbook")]
RESULTS = Path(__file__).resolve().parent / "results"


def _reason(head: str, tail: str, reading: str | None, words, seen) -> str:
    m, n = hy._LETTERS_AT_END.search(head), hy._LETTERS_AT_START.match(tail)
    a, b = (m.group().lower() if m else ""), (n.group().lower() if n else "")
    whole = head.strip(hy._EDGE_PUNCTUATION).lower()
    if reading is None:
        return "leave"
    if f"{a}-{b}" in seen or f"{whole}-{b}" in seen:
        return "page-hyph"
    if a + b in seen or whole + b in seen:
        return "page-joined"
    if a == whole and a in hy._SOLID_PREFIXES | hy._HYPHENATED_PREFIXES:
        return "prefix"
    if hy._CODE_LIKE.search(tail.strip(hy._EDGE_PUNCTUATION)):
        return "code"
    if hy.is_listed(a + b, words):
        return "joined-listed"
    return "both-listed" if reading else "default"


def decisions(path: Path) -> list[dict]:
    """Every line-end hyphen of the book, with its reading and reason."""
    found: list[dict] = []
    page = [0]
    real = lay.line_end_hyphen

    def spy(head, tail, words, seen=()):
        reading = real(head, tail, words, seen)
        found.append({"page": page[0] + 1, "head": head, "tail": tail, "reading": reading,
                      "why": _reason(head, tail, reading, words, seen)})
        return reading

    lay.line_end_hyphen = spy
    try:
        with PdfBook.open(path) as book:
            texts = []
            for i in range(book.page_count):
                page[0] = i
                texts.append(book.page(i).text)
    finally:
        lay.line_end_hyphen = real
    counts = collections.Counter(re.findall(r"[a-z]+(?:-[a-z]+)*", "\n".join(texts).lower()))
    for d in found:
        m, n = hy._LETTERS_AT_END.search(d["head"]), hy._LETTERS_AT_START.match(d["tail"])
        a, b = (m.group().lower() if m else ""), (n.group().lower() if n else "")
        d["joined_in_book"], d["hyphenated_in_book"] = counts[a + b], counts[f"{a}-{b}"]
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("books", nargs="*", type=Path)
    ap.add_argument("--all", action="store_true", help="print every decision")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {}
    for path in args.books or DEFAULT:
        rows = decisions(path)
        out[path.name] = rows
        if args.json:
            continue
        readings = collections.Counter({"": "joined", "-": "kept", None: "left"}[r["reading"]]
                                       for r in rows)
        print(f"== {path.name}: {len(rows)} line-end hyphens: {dict(readings)}; "
              f"reasons {dict(collections.Counter(r['why'] for r in rows))}")
        for r in rows:
            if args.all or r["why"] not in ("joined-listed", "page-joined"):
                sep = {"": "", "-": "-", None: "- "}[r["reading"]]
                print(f"  p{r['page']:<4} {r['why']:13} {r['head'] + '-|' + r['tail']:32} -> "
                      f"{r['head'] + sep + r['tail']:30} (in the book, this one included: joined "
                      f"{r['joined_in_book']}, hyphenated {r['hyphenated_in_book']})")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "line_end_hyphens.json").write_text(json.dumps(out, indent=1))
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
