"""Build and check the gold pages of a question file from a book's outline.

Each in-scope line of a question file carries, besides ``question`` and ``gold_pages``,
the outline ``section`` it is about and a short ``evidence`` phrase (or a list of them)
that the answer's page must contain.  This script recomputes ``gold_pages`` from the
book's ``*.outline.json``:

* a section's pages are its start page through the page before the next outline entry
  that starts on a later page (the start page alone when the next entry shares it), plus
  that next entry's start page when the section's own text continues at its top (the
  next heading is further down that page), as BookReader's PDF reader places headings;
* because sections often start mid-page, when the evidence is not found in that range
  but is on the page right after it (where the section's tail ends), that page is added;
* ``"Chapter > Section"`` names a section whose title repeats in other chapters;
* every evidence phrase must be found on a gold page (case-insensitive, whitespace,
  ligatures and line-end hyphens normalised), else the line is reported as an error.

``evidence_pages`` (also written) are the gold pages that hold an evidence phrase: a
stricter gold that ``bench/answer_quality.py`` reports beside the section pages.

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
from typing import Optional

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


def continues_on(section: str, page_top_section: Optional[str]) -> bool:
    """Whether a section's text runs on at the top of the page after its range.

    ``page_top_section`` is the section in effect at the top of that page, as
    :class:`bookreader.core.pdf.PdfBook` reads it (the heading lines it finds in the page's
    text); ``None`` when it is not known (then the range stays as the outline gives it).
    """
    leaf = section.split(" > ")[-1].strip()
    return page_top_section is not None and page_top_section == leaf


def top_sections_of(book: Path) -> list[str]:
    """The section in effect at the top of each page, as BookReader's PDF reader sees it."""
    from bookreader.core.pdf import PdfBook

    pdf = PdfBook.open(book)
    try:
        return [pdf.page(i).section for i in range(pdf.page_count)]
    finally:
        pdf.close()


def gold_for(item: dict, outline, pages_text: list[str],
             top_sections: Optional[list[str]] = None) -> tuple[list[int], list[str]]:
    """Gold pages for one in-scope item and the list of problems found.

    ``top_sections[p]`` is the section in effect at the top of page ``p`` (see
    :func:`continues_on`).
    """
    idx = find_section(outline, item["section"])
    gold = section_pages(outline, idx, len(pages_text))
    nxt = gold[-1] + 1
    if (top_sections is not None and nxt < len(pages_text)
            and continues_on(item["section"], top_sections[nxt])):
        gold.append(nxt)
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


def evidence_pages(item: dict, pages_text: list[str]) -> list[int]:
    """The gold pages that hold one of the item's evidence phrases: a stricter gold, the
    pages where the answer's key words are rather than its whole section."""
    evidence = item.get("evidence") or []
    if isinstance(evidence, str):
        evidence = [evidence]
    needles = [normalise(phrase) for phrase in evidence]
    return [p for p in item["gold_pages"] if any(n in pages_text[p] for n in needles)]


def check_items(items: list[dict], outline, pages_text: list[str], fix: bool = False,
                top_sections: Optional[list[str]] = None) -> int:
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
            gold, problems = gold_for(item, outline, pages_text, top_sections)
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
        strict = evidence_pages(item, pages_text)
        if not fix and item.get("evidence_pages") != strict:
            print(f"line {n}: stored evidence pages {item.get('evidence_pages')} != computed {strict}")
            errors += 1
        item["evidence_pages"] = strict
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
    top_sections = top_sections_of(args.book)
    items = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    errors = check_items(items, outline, pages_text, fix=args.write, top_sections=top_sections)
    inscope = sum(1 for i in items if i["gold_pages"])
    print(f"{args.questions}: {len(items)} questions, {inscope} in scope, "
          f"{len(items) - inscope} out of scope, {errors} problems")
    if args.write:
        keys = ("question", "gold_pages", "evidence_pages", "section", "evidence")
        with args.questions.open("w", encoding="utf-8") as fh:
            for item in items:
                ordered = {k: item[k] for k in keys if k in item}
                ordered.update({k: v for k, v in item.items() if k not in keys})
                fh.write(json.dumps(ordered, ensure_ascii=False) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
