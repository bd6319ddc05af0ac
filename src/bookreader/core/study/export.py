"""Writing cards out: an Anki package, a spreadsheet-safe CSV, Markdown with citations.

* **Anki** (``.apkg``, with ``genanki``): one note type, "BookReader card", whose fields are
  Front, Back and Source (section, printed page, the excerpt); no media.  The note type's
  and the deck's ids are fixed (the deck's from the book id), and each note's GUID comes
  from its card id, so importing a newer export updates the notes instead of doubling them.
* **CSV**: the audit export's rules (UTF-8 with a byte-order mark, CRLF, RFC 4180 quoting,
  a formula sign at the start of a cell neutralised with
  :func:`~bookreader.core.audit.export.neutralise`).
* **Markdown**: one numbered card a block, its source as a quote under it.

Every writer writes to a temporary file and renames it into place.
"""

from __future__ import annotations

import csv
import html
import io
import logging
import os
from pathlib import Path
from typing import Callable, Sequence

from bookreader.core.audit.export import neutralise, refuse_special_file
from bookreader.core.study.model import StudyCard
from bookreader.core.types import Citation
from bookreader.errors import BookReaderError, InvalidInput

log = logging.getLogger(__name__)

FORMATS = ("anki", "csv", "markdown")
SUFFIXES = {"anki": ".apkg", "csv": ".csv", "markdown": ".md"}
#: The note type's id: fixed, so every export is the same note type to Anki.
ANKI_MODEL_ID = 1607392319_43
ANKI_MODEL_NAME = "BookReader card"
CSV_COLUMNS = ("front", "back", "kind", "chapter", "section", "page_label", "pdf_page",
               "excerpt", "card_id")

_CARD_CSS = """.card { font-family: sans-serif; font-size: 20px; text-align: left; }
.source { margin-top: 1em; font-size: 14px; color: #555; }
.source q { font-style: italic; }"""


def source_text(c: Citation) -> str:
    """A citation as one line: ``Section, page 12: "excerpt"``."""
    where = f"{c.section}, page {c.page_label}" if c.section else f"page {c.page_label}"
    return f"{where}: \u201c{c.excerpt}\u201d"


def _write(out: Path, write: Callable[[Path], object]) -> Path:
    out = Path(out).expanduser()
    refuse_special_file(out)
    tmp = out.with_name(out.name + ".part")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BookReaderError(
            f"Cannot write the study cards to {out}: {exc.strerror or exc}. Choose another "
            "file or folder.", details=repr(exc)) from exc
    return out


def anki_deck_id(book_id: str) -> int:
    """The deck's id for a book: stable, in genanki's positive 31-bit-plus range."""
    return (int(book_id[:12] or "0", 16) % (1 << 30)) + (1 << 30)


def _html(text: str) -> str:
    """A card's text as a note field: escaped, its lines (a code card's listing) kept."""
    return html.escape(text).replace("\n", "<br>")


def write_anki(cards: Sequence[StudyCard], out: Path, *, deck_name: str, book_id: str) -> Path:
    """An Anki package of ``cards``; returns its path."""
    import genanki

    model = genanki.Model(
        ANKI_MODEL_ID, ANKI_MODEL_NAME,
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Source"}],
        templates=[{
            "name": "Card 1",
            "qfmt": "{{Front}}",
            "afmt": '{{FrontSide}}<hr id="answer">{{Back}}<div class="source">{{Source}}</div>',
        }],
        css=_CARD_CSS)
    deck = genanki.Deck(anki_deck_id(book_id), deck_name)
    for card in cards:
        c = card.citation
        source = (f"{html.escape(c.section)}, page {html.escape(c.page_label)}: "
                  f"<q>{html.escape(c.excerpt)}</q>")
        deck.add_note(genanki.Note(
            model=model, fields=[_html(card.front), _html(card.back), source],
            guid=genanki.guid_for(book_id, card.card_id),
            tags=[card.kind]))
    return _write(out, lambda tmp: genanki.Package(deck).write_to_file(str(tmp)))


def csv_text(cards: Sequence[StudyCard]) -> str:
    """The cards as CSV text (without the byte-order mark)."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, dialect="excel", lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for card in cards:
        c = card.citation
        writer.writerow([neutralise(card.front), neutralise(card.back), card.kind,
                         neutralise(card.chapter), neutralise(c.section),
                         neutralise(c.page_label), c.page + 1, neutralise(c.excerpt),
                         card.card_id])
    return buf.getvalue()


def write_csv(cards: Sequence[StudyCard], out: Path) -> Path:
    text = csv_text(cards)
    return _write(out, lambda tmp: tmp.write_bytes(text.encode("utf-8-sig")))


def markdown_text(cards: Sequence[StudyCard], title: str) -> str:
    """The cards as Markdown, each with its citation."""
    lines = [f"# Flashcards: {title}", ""]
    for n, card in enumerate(cards, 1):
        c = card.citation
        first, *listing = card.front.split("\n")  # a code card's listing as a code block
        lines += [f"## {n}. {first}", ""]
        if listing:
            lines += ["```", *listing, "```", ""]
        lines += [card.back, "",
                  f"> {c.section}, page {c.page_label}: \u201c{c.excerpt}\u201d", ""]
    return "\n".join(lines)


def write_markdown(cards: Sequence[StudyCard], out: Path, *, title: str) -> Path:
    text = markdown_text(cards, title)
    return _write(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def export_cards(cards: Sequence[StudyCard], fmt: str, out: Path, *, title: str,
                 book_id: str) -> Path:
    """Write ``cards`` as ``fmt`` (anki, csv or markdown) to ``out``; returns the path."""
    if fmt not in FORMATS:
        raise InvalidInput(f"Unknown export format {fmt!r}: use one of {', '.join(FORMATS)}.")
    if not cards:
        raise InvalidInput("There are no cards to export: make flashcards for some pages "
                           "first.")
    if fmt == "anki":
        path = write_anki(cards, out, deck_name=title, book_id=book_id)
    elif fmt == "csv":
        path = write_csv(cards, out)
    else:
        path = write_markdown(cards, out, title=title)
    log.info("Exported %d study cards as %s to %s", len(cards), fmt, path)
    return path
