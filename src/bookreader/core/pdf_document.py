"""The MuPDF document under a :class:`~bookreader.core.pdf.PdfBook`: opening it safely,
routing its messages into logging, and reading the raw lines of one page.

Opening checks what a user can get wrong or a broken file can hide (a folder, an empty file,
not a PDF, a password, a page tree that declares no or absurdly many pages) and says so in a
:class:`~bookreader.errors.PdfError`.  :func:`extract_page` returns a page's words grouped into
lines and blocks in reading order, in display coordinates; cleaning them (running headers,
hyphenation, sections) is :class:`~bookreader.core.pdf.PdfBook`'s job.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Optional, cast

import fitz

from bookreader.core import pdf_layout as lay
from bookreader.core.pdf_forms import cap_page_work
from bookreader.core.types import Rect, Word
from bookreader.errors import PasswordRequired, PdfError

log = logging.getLogger(__name__)
mupdf_log = logging.getLogger("bookreader.mupdf")

#: More pages than any real book; a larger declared count means a broken page tree.
MAX_PAGES = 100_000
#: Ligatures expanded (no PRESERVE_LIGATURES), whitespace kept, text outside the page dropped.
TEXT_FLAGS = fitz.TEXT_PRESERVE_WHITESPACE | fitz.TEXT_MEDIABOX_CLIP
#: A cross-reference key as LaTeX's draft packages (showkeys, showlabels) print it beside
#: an equation or heading: ``{eq:continuity}``, ``{sec:notation}``, ``{fig:flow-past}``.
#: A prefix of letters, a colon and an identifier, braced, nothing else in the span; a key
#: printed in the margin may lose its start at the page's edge (``ec:vorticity}``).
LABEL_KEY = re.compile(r"(\{[A-Za-z]+|[A-Za-z]*):[A-Za-z][\w:.\-/+]*\}")
#: How close to the page's edge (points) a key without its opening brace must start.
EDGE = 3.0
#: MuPDF's span flag for a monospaced font; the draft packages set keys in typewriter type.
MONOSPACED = 8


def label_key_boxes(info: dict[str, Any], page_x0: float = 0.0
                    ) -> list[tuple[float, float, float, float]]:
    """Boxes of spans that hold only a cross-reference key printed by a draft build
    (:data:`LABEL_KEY` in a monospaced font): a typesetting aid, not the book's text.
    A key inside running prose or code (``f"{x:.2f}"``, ``{label}``) is not alone in its
    span or has no letter after the colon, so it stays."""
    boxes = []
    for block in info.get("blocks", []):
        for line in block.get("lines", []):
            for span in line.get("spans", []):
                text = span.get("text", "").strip()
                font = span.get("font", "")
                if not (text and LABEL_KEY.fullmatch(text)):
                    continue
                if not (span.get("flags", 0) & MONOSPACED or "TT" in font or "Mono" in font):
                    continue
                if text.startswith("{") or span["bbox"][0] <= page_x0 + EDGE:
                    boxes.append(tuple(span["bbox"]))
    return boxes


def _inside(box: tuple[float, float, float, float],
            boxes: list[tuple[float, float, float, float]]) -> bool:
    """Whether the centre of ``box`` lies in one of ``boxes``."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in boxes)


def file_book_id(path: str | Path) -> str:
    """The book id: first 16 hex digits of the SHA-256 of the file's bytes (streamed)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise PdfError(
            f"Cannot read {path}: {exc.strerror or exc}. Check that the file exists and "
            "that you may read it."
        ) from exc
    return digest.hexdigest()[:16]


def route_mupdf_messages() -> None:
    """Send MuPDF's errors and warnings to logging instead of stderr (idempotent); bad
    bytes in them become U+FFFD."""
    from bookreader.core.storage import ValidTextFilter

    if not any(isinstance(f, ValidTextFilter) for f in mupdf_log.filters):
        mupdf_log.addFilter(ValidTextFilter())
    fitz.TOOLS.mupdf_display_errors(False)
    fitz.TOOLS.mupdf_display_warnings(False)
    fitz.set_messages(pylogging=True, pylogging_name=mupdf_log.name, pylogging_level=logging.INFO)


def flush_mupdf_messages(context: str) -> None:
    text = fitz.TOOLS.mupdf_warnings(reset=True)
    if text:
        mupdf_log.info("MuPDF (%s): %s", context, text.replace("\n", "; "))


@dataclass
class Extracted:
    """One page as extracted: blocks of lines in reading order, before cleaning."""

    blocks: list[lay.TextBlock]
    top: float
    height: float
    width: float
    damaged: str = ""  # why the page could not be read, if it could not


def open_document(path: str | Path, password: Optional[str] = None) -> tuple[fitz.Document, Path, str]:
    """Open a PDF with MuPDF, authenticating with ``password`` when it is encrypted.

    Returns:
        ``(document, path, book id)``.

    Raises:
        PasswordRequired: encrypted and no password, or a wrong one, was given.
        PdfError: missing, not a PDF, damaged beyond repair, no pages, absurd size.
    """
    path = Path(path)
    name = path.name
    route_mupdf_messages()
    if not path.is_file():
        what = "is a folder, not a PDF file" if path.is_dir() else "does not exist"
        raise PdfError(f"{path} {what}. Check the path and choose a PDF file.")
    book_id = file_book_id(path)
    if path.stat().st_size == 0:
        raise PdfError(f"'{name}' is empty (0 bytes). Choose another copy of the book.")
    from bookreader.core.sandbox import check_file_type

    check_file_type(path)
    looks_like_pdf = True
    try:
        doc = fitz.open(str(path), filetype="pdf")
    except Exception as exc:  # MuPDF raises several types; all mean "cannot open"
        flush_mupdf_messages(name)
        log.info("Cannot open %s: %r", path, exc)
        doc = _open_encrypted_elsewhere(path, password)
        if doc is not None:
            return _checked(doc, path, book_id, password)
        if "number of pages" in str(exc).lower():
            reason = "declares an impossible number of pages (its page tree is broken)"
        elif looks_like_pdf:
            reason = "is damaged beyond repair"
        else:
            reason = "is not a PDF file"
        raise PdfError(
            f"'{name}' {reason}. Open it in another PDF viewer and save a new copy, "
            "or choose another file.",
            details=repr(exc),
        ) from exc
    return _checked(doc, path, book_id, password)


def _checked(doc: fitz.Document, path: Path, book_id: str,
             password: Optional[str]) -> tuple[fitz.Document, Path, str]:
    """``doc`` authenticated and its page count checked (closed on any failure)."""
    name = path.name
    try:
        doc = _authenticate(doc, path, password)
        count = doc.page_count
    except PdfError:
        doc.close()
        raise
    except Exception as exc:
        doc.close()
        log.info("Cannot count the pages of %s: %r", path, exc)
        what = (
            "declares an impossible number of pages (its page tree is broken)"
            if "number of pages" in str(exc).lower()
            else "could not be read: its structure is damaged"
        )
        raise PdfError(
            f"'{name}' {what}. Save a new copy from another PDF viewer and try again.",
            details=repr(exc),
        ) from exc
    finally:
        flush_mupdf_messages(name)
    if count <= 0:
        doc.close()
        raise PdfError(
            f"'{name}' has no pages BookReader can find (the file is empty or its page "
            "tree is broken). Open it in another PDF viewer and save a new copy."
        )
    if count > MAX_PAGES:
        doc.close()
        raise PdfError(
            f"'{name}' declares {count:,} pages, more than any real book; its page tree "
            "is broken. Save a new copy from another PDF viewer and try again."
        )
    return doc, path, book_id


def _open_encrypted_elsewhere(path: Path, password: Optional[str]) -> Optional[fitz.Document]:
    """An encrypted file MuPDF cannot open at all, decrypted by the second decryptor (qpdf)
    and opened from memory; None when the file is not encrypted or qpdf cannot open it.

    Raises:
        PasswordRequired: qpdf needs a password for it.
        PdfError: its encryption is not supported.
    """
    from bookreader.core.pdf_decrypt import decrypt_in_memory, has_encrypt_entry

    if not has_encrypt_entry(path):
        return None
    data = decrypt_in_memory(path, password or "")
    if data is None:
        return None
    try:
        return fitz.open(stream=data, filetype="pdf")
    except Exception as exc:
        log.info("Cannot open the decrypted copy of %s: %r", path, exc)
        return None


def _authenticate(doc: fitz.Document, path: Path, password: Optional[str]) -> fitz.Document:
    """``doc`` opened for reading: as it is, authenticated with ``password``, or (where
    MuPDF refuses but the file opens by the standard, e.g. an empty owner password) the
    copy the second decryptor made (:mod:`bookreader.core.pdf_decrypt`)."""
    if not doc.needs_pass:
        return doc
    name = path.name
    if password and any(doc.authenticate(v) for v in lay.password_variants(password)):
        return doc
    from bookreader.core.pdf_decrypt import decrypt_in_memory

    data = decrypt_in_memory(path, password or "")  # PdfError: encryption not supported
    if data is not None:
        doc.close()
        return fitz.open(stream=data, filetype="pdf")
    if not password:
        raise PasswordRequired(
            f"'{name}' is protected by a password. Open it again and enter its password "
            "(on the command line: --password).",
            path=str(path),
        )
    raise PasswordRequired(
        f"The password for '{name}' is wrong. Check it (passwords are case-sensitive) "
        "and try again.",
        path=str(path),
        wrong_password=True,
    )


#: Pages searched for a title printed on them when the metadata has none.
TITLE_PAGES = 3
#: A printed title is set at least this much larger than the body text around it.
TITLE_SIZE_RATIO = 1.3
#: A metadata "title" that is really a file name ("Microsoft Word - notes.docx", "ch1.tex").
_FILE_NAME_TITLE = re.compile(r"\.(?:pdf|docx?|odt|rtf|tex|dvi|ps|indd|qxd)$|^microsoft \w+ - ",
                              re.IGNORECASE)
_LETTER = re.compile(r"[^\W\d_]")


def read_title(doc: fitz.Document, path: Path) -> tuple[str, bool]:
    """The book's title from its metadata, else the file name; and whether it came from
    the metadata.  Reads no page: the title printed on the first pages
    (:func:`printed_title`) is read in the sandbox, which knows the pages not to parse."""
    try:
        title = (doc.metadata or {}).get("title") or ""
    except Exception as exc:
        log.info("Cannot read the metadata of %s: %r", path, exc)
        title = ""
    title = " ".join(lay.normalize_text(title).split())
    if _is_real_title(title, path):
        return title, True
    return path.stem.replace("_", " "), False


def _is_real_title(title: str, path: Path) -> bool:
    if len(_LETTER.findall(title)) < 3 or title.lower() in ("untitled", "none", "title"):
        return False
    if _FILE_NAME_TITLE.search(title):
        return False
    return lay.title_key(title) != lay.title_key(path.stem.replace("_", " "))


#: Headings of the front matter that are never a book's title.
_NOT_TITLES = frozenset({"contents", "table of contents", "license", "licence", "copyright",
                         "preface", "foreword", "credits", "acknowledgements",
                         "acknowledgments", "dedication", "about this book"})


def printed_title(doc: fitz.Document, blocked: Collection[int] = (),
                  pages: int = TITLE_PAGES) -> str:
    """The title printed on the first of the first ``pages`` pages that has text set
    larger than the body (:data:`TITLE_SIZE_RATIO` times the size most of their text is
    set in): its largest lines, a title set over up to three lines.  "" when none."""
    by_page: list[list[tuple[float, str]]] = []
    for index in range(min(pages, doc.page_count)):
        by_page.append([] if index in blocked else _sized_lines(doc, index))
    chars: dict[float, int] = {}
    for size, text in (line for lines in by_page for line in lines):
        chars[round(size)] = chars.get(round(size), 0) + len(text)
    if not chars:
        return ""
    body = max(chars, key=lambda k: chars[k])
    for lines in by_page:
        top = max((size for size, _ in lines), default=0.0)
        if top < body * TITLE_SIZE_RATIO:
            continue
        largest = [text for size, text in lines if size >= top - 0.5][:3]
        title = " ".join(lay.normalize_text(" ".join(largest)).split())
        if lay.title_key(title) not in _NOT_TITLES:
            return title[:150].rstrip()
    return ""


def _sized_lines(doc: fitz.Document, index: int) -> list[tuple[float, str]]:
    """(font size, text) of each line of a page with three letters or more."""
    try:
        cap_page_work(doc, index)  # nested forms: read as far as extraction reads them
        info = cast(dict[str, Any], doc.load_page(index).get_text("dict"))
    except Exception as exc:  # a damaged page: the title is looked for on the others
        log.info("Cannot read page %d of %s for its title: %r", index + 1, doc.name, exc)
        return []
    lines: list[tuple[float, str]] = []
    for block in info.get("blocks", ()):
        for line in block.get("lines", ()):
            spans = line.get("spans", ())
            text = " ".join("".join(str(sp.get("text", "")) for sp in spans).split())
            sizes = [float(sp.get("size", 0.0)) for sp in spans
                     if str(sp.get("text", "")).strip()]  # a space's size says nothing
            if sizes and len(_LETTER.findall(text)) >= 3:
                lines.append((max(sizes), text))
    return lines


def rotation_of(page: fitz.Page) -> tuple[float, ...]:
    """The page's rotation matrix as six numbers (for :func:`pdf_layout.display_transform`)."""
    m = page.rotation_matrix
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def extract_page(doc: fitz.Document, index: int) -> Extracted:
    """The words of one page grouped into lines and blocks, in reading order (uncleaned)."""
    page = doc.load_page(index)
    disp = lay.display_transform(rotation_of(page))
    prect = page.rect

    tp = page.get_textpage(flags=TEXT_FLAGS)
    # get_text's return type depends on its option, which PyMuPDF's hints do not say.
    info = cast(dict[str, Any], page.get_text("dict", textpage=tp))
    words = cast(list[tuple[float, float, float, float, str, int, int, int]],
                 page.get_text("words", textpage=tp))
    keys = label_key_boxes(info, prect.x0)
    line_style: dict[tuple[int, int], tuple[float, bool, Rect]] = {}
    block_boxes: dict[int, Rect] = {}
    for b, block in enumerate(info.get("blocks", [])):
        if block.get("type", 0) != 0:
            continue
        block_boxes[b] = disp(block["bbox"])
        for ln, line in enumerate(block.get("lines", [])):
            spans = [s for s in line.get("spans", []) if s.get("text", "").strip()]
            size = max((s["size"] for s in spans), default=0.0)
            bold = bool(spans) and all(s.get("flags", 0) & 16 for s in spans)
            line_style[(b, ln)] = (round(size * 2) / 2, bold, disp(line["bbox"]))
    lines: OrderedDict[tuple[int, int], lay.TextLine] = OrderedDict()
    for x0, y0, x1, y1, text, b, ln, _w in words:
        text = lay.normalize_text(text).strip()
        if not text or (keys and _inside((x0, y0, x1, y1), keys)):
            continue
        key = (b, ln)
        if key not in lines:
            size, bold, bbox = line_style.get(key, (0.0, False, disp((x0, y0, x1, y1))))
            lines[key] = lay.TextLine([], bbox, size, bold, b)
        for part, box in lay.split_word(text, (x0, y0, x1, y1)):
            lines[key].words.append(Word(part, disp(box), b, ln, -1))
    blocks: OrderedDict[int, lay.TextBlock] = OrderedDict()
    for (b, _ln), line in lines.items():
        blk = blocks.setdefault(b, lay.TextBlock([], block_boxes.get(b, line.bbox)))
        blk.lines.append(line)
    ordered = lay.reading_order(list(blocks.values()), prect.width)
    return Extracted(ordered, prect.y0, prect.height, prect.width)
