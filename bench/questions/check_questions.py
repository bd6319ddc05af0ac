"""Build and check the gold pages of a question file from a book's outline.

Each in-scope line of a question file carries, besides ``question`` and ``gold_pages``,
the outline ``section`` it is about and a short ``evidence`` phrase (or a list of them)
that the answer's page must contain.  This script recomputes ``gold_pages`` from the
book's ``*.outline.json``:

* a section's pages are its start page through the page before the next outline entry
  that starts on a later page (the start page alone when the next entry shares it);
* because sections often start mid-page, when the evidence is not found in that range
  but is on the page right after it (where the section's tail ends), that page is added;
* ``"Chapter > Section"`` names a section whose title repeats in other chapters;
* every evidence phrase must be found on a gold page (case-insensitive, whitespace,
  ligatures and line-end hyphens normalised), else the line is reported as an error.

Out-of-scope lines (no ``section``) must have ``gold_pages == []``; when they list
``absent`` terms (the near-domain files in ``near/``), none of them may occur anywhere in
the book.

Usage::

    python bench/questions/check_questions.py --book ../shared/eval/books/thinkjava2.pdf \
        --questions bench/questions/thinkjava2.jsonl [--write]

Without ``--write`` it only reports lines whose stored gold pages differ or whose
evidence is missing, and exits 1 when there are any.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2212": "-"}


def normalise(text: str) -> str:
    """Lower-case text with ligatures, quotes, line-end hyphens and spaces normalised."""
    for src, dst in {**_LIGATURES, **_QUOTES}.items():
        text = text.replace(src, dst)
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)
    return " ".join(text.split()).lower()


def load_outline(book: Path, doc=None) -> list[tuple[str, int]]:
    """(title, 0-based start page) for every outline entry, in outline order.

    Two formats exist in ../shared/eval/books: ``{"outline": [{"title", "page"}]}`` with
    1-based pages, and a list of ``{"title", "page_index"}`` with 0-based pages.  A book
    without an ``.outline.json`` file (the bundled sample guide) uses the PDF's own
    bookmarks (PyMuPDF's ``get_toc()``, 1-based pages).
    """
    path = book.with_suffix(".outline.json")
    if not path.is_file() and doc is not None:
        return [(title, page - 1) for _, title, page in doc.get_toc()]
    raw = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(raw, dict):
        return [(e["title"], int(e["page"]) - 1) for e in raw["outline"]]
    return [(e["title"], int(e["page_index"])) for e in raw]


def section_pages(outline: list[tuple[str, int]], index: int, page_count: int) -> list[int]:
    """The pages of outline entry ``index``: start through the page before the next start."""
    start = outline[index][1]
    later = [p for _, p in outline[index + 1 :] if p > start]
    end = (later[0] - 1) if later else page_count - 1
    return list(range(start, max(start, end) + 1))


def find_section(outline: list[tuple[str, int]], title: str) -> int:
    """Index of the entry titled ``title``; ``"Chapter > Section"`` picks the first entry
    titled ``Section`` after the entry titled ``Chapter`` (for repeated section titles)."""
    start = 0
    *parents, leaf = [part.strip() for part in title.split(" > ")]
    for parent in parents:
        start = find_section(outline[start:], parent) + start + 1
    matches = [i for i, (t, _) in enumerate(outline) if t == leaf and i >= start]
    if not matches:
        raise KeyError(f"section {title!r} is not in the outline")
    return matches[0]


def gold_for(item: dict, outline, pages_text: list[str]) -> tuple[list[int], list[str]]:
    """Gold pages for one in-scope item and the list of problems found."""
    idx = find_section(outline, item["section"])
    gold = section_pages(outline, idx, len(pages_text))
    evidence = item.get("evidence") or []
    if isinstance(evidence, str):
        evidence = [evidence]
    problems = []
    for phrase in evidence:
        needle = normalise(phrase)
        if any(needle in pages_text[p] for p in gold):
            continue
        nxt = gold[-1] + 1
        if nxt < len(pages_text) and needle in pages_text[nxt]:
            gold.append(nxt)
            continue
        problems.append(f"evidence {phrase!r} not on pages {gold}")
    if not evidence:
        problems.append("no evidence phrase")
    return gold, problems


def check_items(items: list[dict], outline, pages_text: list[str], fix: bool = False) -> int:
    """Check (and with ``fix`` rewrite) each item's gold pages; print and count problems."""
    errors = 0
    for n, item in enumerate(items, 1):
        if not item.get("section"):
            if item.get("gold_pages"):
                print(f"line {n}: out-of-scope item has gold pages: {item['question']}")
                errors += 1
            item["gold_pages"] = []
            present = [t for t in item.get("absent", []) if any(normalise(t) in p for p in pages_text)]
            if present:
                print(f"line {n}: 'absent' terms occur in the book {present}: {item['question']}")
                errors += 1
            continue
        try:
            gold, problems = gold_for(item, outline, pages_text)
        except KeyError as exc:
            print(f"line {n}: {exc}")
            errors += 1
            continue
        for p in problems:
            print(f"line {n}: {p}: {item['question']}")
        errors += bool(problems)
        if not fix and item.get("gold_pages") != gold:
            print(f"line {n}: stored gold {item.get('gold_pages')} != computed {gold}")
            errors += 1
        item["gold_pages"] = gold
    return errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--book", required=True, type=Path)
    ap.add_argument("--questions", required=True, type=Path)
    ap.add_argument("--write", action="store_true", help="rewrite gold_pages in place")
    args = ap.parse_args(argv)

    import pymupdf

    with pymupdf.open(args.book) as doc:
        pages_text = [normalise(page.get_text()) for page in doc]
        outline = load_outline(args.book, doc)
    items = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    errors = check_items(items, outline, pages_text, fix=args.write)
    inscope = sum(1 for i in items if i["gold_pages"])
    print(f"{args.questions}: {len(items)} questions, {inscope} in scope, "
          f"{len(items) - inscope} out of scope, {errors} problems")
    if args.write:
        keys = ("question", "gold_pages", "section", "evidence")
        with args.questions.open("w", encoding="utf-8") as fh:
            for item in items:
                ordered = {k: item[k] for k in keys if k in item}
                ordered.update({k: v for k, v in item.items() if k not in keys})
                fh.write(json.dumps(ordered, ensure_ascii=False) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
