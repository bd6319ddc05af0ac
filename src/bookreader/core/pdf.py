"""Reading a PDF with PyMuPDF: pages, words, labels, chapters; cleaned for retrieval.

:class:`PdfBook` is the only way the rest of BookReader touches a PDF.  It opens a file
(with a password where needed) and serves, page by page:

* the text in reading order, with running headers and footers removed, ligatures spelled
  out and words hyphenated across line ends joined;
* the words with their boxes, for selection and highlighting;
* the printed page label (``get_label()``-style rules, else the physical number);
* the chapter and section, from the outline or, when a book has none, from heading sizes.

Coordinates are those of the page as displayed (rotation applied), in PDF points, origin
top-left: a box times the render zoom is a box in the rendered image.

Damaged input ends in a :class:`~bookreader.errors.PdfError` naming the file and saying
what to do; a page that cannot be read is reported and treated as a page without text, so
the rest of the book stays usable.  MuPDF's own messages go to the ``bookreader.mupdf``
logger, never to stderr.  A document is not thread-safe in MuPDF, so every access goes
through one lock per book.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import fitz

from bookreader.core import pdf_layout as lay
from bookreader.core import pdf_outline as outline
from bookreader.core.types import (
    CancelFn,
    Page,
    ProgressFn,
    Rect,
    TocEntry,
    Word,
    check_cancel,
    never_cancel,
    no_progress,
)
from bookreader.errors import PasswordRequired, PdfError

log = logging.getLogger(__name__)
mupdf_log = logging.getLogger("bookreader.mupdf")

#: More pages than any real book; a larger declared count means a broken page tree.
MAX_PAGES = 100_000
#: Ligatures expanded (no PRESERVE_LIGATURES), whitespace kept, text outside the page dropped.
TEXT_FLAGS = fitz.TEXT_PRESERVE_WHITESPACE | fitz.TEXT_MEDIABOX_CLIP
#: Pages on each side compared when deciding whether a margin line is a running header.
HEADER_WINDOW = 6
#: Largest rendered image, in pixels (a 40 MP RGB image is 120 MB).
MAX_RENDER_PIXELS = 40_000_000
#: Pages whose extraction is kept in memory.
PAGE_CACHE_SIZE = 24
#: Pages sampled to learn the body and heading font sizes of a book without an outline.
HEADING_SAMPLE = 80


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
    """Send MuPDF's errors and warnings to logging instead of stderr (idempotent)."""
    fitz.TOOLS.mupdf_display_errors(False)
    fitz.TOOLS.mupdf_display_warnings(False)
    fitz.set_messages(pylogging=True, pylogging_name=mupdf_log.name, pylogging_level=logging.INFO)


def _flush_mupdf_messages(context: str) -> None:
    text = fitz.TOOLS.mupdf_warnings(reset=True)
    if text:
        mupdf_log.info("MuPDF (%s): %s", context, text.replace("\n", "; "))


@dataclass
class _Extracted:
    """One page as extracted: blocks of lines in reading order, before cleaning."""

    blocks: list[lay.TextBlock]
    top: float
    height: float
    width: float
    damaged: str = ""  # why the page could not be read, if it could not


class PdfBook:
    """An open PDF.  Use :meth:`open`; also a context manager that closes the file."""

    def __init__(self, doc: fitz.Document, path: Path, book_id: str) -> None:
        self._doc = doc
        self._lock = threading.RLock()
        self.path = path
        self.book_id = book_id
        self.page_count = doc.page_count
        self.title = self._read_title()
        self._labels: Optional[list[str]] = None
        self._label_index: Optional[dict[str, int]] = None
        self._toc: Optional[list[TocEntry]] = None
        self._outline: Optional[list[TocEntry]] = None
        self._sections: Optional[outline.SectionMap] = None
        self._extracted: OrderedDict[int, _Extracted] = OrderedDict()
        self._pages: OrderedDict[int, tuple[Page, list[Word]]] = OrderedDict()
        self._signatures: dict[int, frozenset[tuple[str, str]]] = {}
        self._has_text: dict[int, bool] = {}
        self._damaged: dict[int, str] = {}
        self._title_key_set: Optional[set[str]] = None
        self._image_pages: set[int] = set()
        self._closed = False

    # --- opening --------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, password: Optional[str] = None) -> "PdfBook":
        """Open a PDF, authenticating with ``password`` when the file is encrypted.

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
        with open(path, "rb") as fh:
            looks_like_pdf = b"%PDF" in fh.read(1024)
        try:
            doc = fitz.open(str(path), filetype="pdf")
        except Exception as exc:  # MuPDF raises several types; all mean "cannot open"
            _flush_mupdf_messages(name)
            log.info("Cannot open %s: %r", path, exc)
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
        try:
            cls._authenticate(doc, path, password)
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
            _flush_mupdf_messages(name)
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
        return cls(doc, path, book_id)

    @staticmethod
    def _authenticate(doc: fitz.Document, path: Path, password: Optional[str]) -> None:
        if not doc.needs_pass:
            return
        name = path.name
        if not password:
            raise PasswordRequired(
                f"'{name}' is protected by a password. Open it again and enter its password "
                "(on the command line: --password).",
                path=str(path),
            )
        if not any(doc.authenticate(v) for v in lay.password_variants(password)):
            raise PasswordRequired(
                f"The password for '{name}' is wrong. Check it (passwords are case-sensitive) "
                "and try again.",
                path=str(path),
                wrong_password=True,
            )

    def _read_title(self) -> str:
        try:
            title = (self._doc.metadata or {}).get("title") or ""
        except Exception as exc:
            log.info("Cannot read the metadata of %s: %r", self.path, exc)
            title = ""
        title = " ".join(lay.normalize_text(title).split())
        if not title or title.lower() in ("untitled", "none"):
            title = self.path.stem.replace("_", " ")
        return title

    # --- lifetime --------------------------------------------------------------------
    def close(self) -> None:
        """Close the file; the book cannot be used afterwards."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._doc.close()
                self._extracted.clear()
                self._pages.clear()

    def __enter__(self) -> "PdfBook":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PdfBook({str(self.path)!r}, pages={self.page_count}, id={self.book_id})"

    def _check_index(self, index: int) -> None:
        if self._closed:
            raise PdfError(f"'{self.path.name}' has been closed. Open the book again.")
        if not 0 <= index < self.page_count:
            raise PdfError(
                f"'{self.path.name}' has no page {index + 1}; it has {self.page_count} pages."
            )

    # --- labels ----------------------------------------------------------------------
    def _all_labels(self) -> list[str]:
        if self._labels is None:
            with self._lock:
                try:
                    rules = self._doc.get_page_labels() or []
                except Exception as exc:
                    log.info("Ignoring unreadable page labels in %s: %r", self.path, exc)
                    rules = []
                self._labels = outline.page_labels(rules, self.page_count)
        return self._labels

    def label(self, index: int) -> str:
        """The printed page label ("xii", "37"), else the physical page number."""
        self._check_index(index)
        return self._all_labels()[index]

    def find_label(self, label: str) -> Optional[int]:
        """The 0-based page printed with ``label`` (first match), or None."""
        if self._label_index is None:
            index: dict[str, int] = {}
            for i, lab in enumerate(self._all_labels()):
                index.setdefault(lab, i)
                index.setdefault(lab.lower(), i)
            self._label_index = index
        label = label.strip()
        found = self._label_index.get(label)
        return found if found is not None else self._label_index.get(label.lower())

    # --- outline, chapters, sections -------------------------------------------------
    @property
    def toc(self) -> list[TocEntry]:
        """The outline (0-based pages); from heading sizes when the PDF has none."""
        if self._toc is None:
            found = self._read_outline()
            if len(found) >= 2 or self.page_count <= 2:
                self._toc = found
            else:
                self._toc = self._headings_toc() or found
        return self._toc

    def _read_outline(self) -> list[TocEntry]:
        if self._outline is None:
            with self._lock:
                try:
                    raw = self._doc.get_toc(simple=True)
                except Exception as exc:
                    log.info("Ignoring the unreadable outline of %s: %r", self.path, exc)
                    raw = []
                finally:
                    _flush_mupdf_messages(self.path.name)
            entries = []
            for level, title, page in raw[:20_000]:
                title = " ".join(lay.normalize_text(str(title)).split())
                if title and 1 <= page <= self.page_count:
                    entries.append(TocEntry(level=int(level), title=title, page=page - 1))
            self._outline = entries
        return self._outline

    def _headings_toc(self) -> list[TocEntry]:
        """Headings found by font size: a synthetic outline for books without one."""

        def extract(i: int):
            ex = self._extract(i)
            return ex.blocks, ex.top, ex.height

        toc = outline.headings_toc(self.page_count, extract, HEADING_SAMPLE)
        log.info("%s has no outline; found %d headings by font size", self.path.name, len(toc))
        return toc

    def _section_map(self) -> outline.SectionMap:
        if self._sections is None:
            self._sections = outline.SectionMap(self.toc, self.page_count)
        return self._sections

    # --- extraction ------------------------------------------------------------------
    def _extract(self, index: int) -> _Extracted:
        with self._lock:
            cached = self._extracted.get(index)
            if cached is not None:
                self._extracted.move_to_end(index)
                return cached
            self._check_index(index)
            try:
                ex = self._extract_uncached(index)
            except Exception as exc:  # a damaged page must not take the book down
                log.warning("Cannot read page %d of %s: %s", index + 1, self.path, exc)
                ex = _Extracted([], 0.0, 792.0, 612.0, damaged=str(exc) or type(exc).__name__)
            finally:
                _flush_mupdf_messages(f"{self.path.name} page {index + 1}")
            self._extracted[index] = ex
            while len(self._extracted) > PAGE_CACHE_SIZE:
                self._extracted.popitem(last=False)
        return ex

    def _extract_uncached(self, index: int) -> _Extracted:
        page = self._doc.load_page(index)
        disp = lay.display_transform(tuple(page.rotation_matrix))  # pyright: ignore[reportArgumentType]
        prect = page.rect

        tp = page.get_textpage(flags=TEXT_FLAGS)
        info = page.get_text("dict", textpage=tp)
        line_style: dict[tuple[int, int], tuple[float, bool, Rect]] = {}
        block_boxes: dict[int, Rect] = {}
        for b, block in enumerate(info.get("blocks", [])):  # pyright: ignore[reportAttributeAccessIssue]
            if block.get("type", 0) != 0:
                continue
            block_boxes[b] = disp(block["bbox"])
            for ln, line in enumerate(block.get("lines", [])):
                spans = [s for s in line.get("spans", []) if s.get("text", "").strip()]
                size = max((s["size"] for s in spans), default=0.0)
                bold = bool(spans) and all(s.get("flags", 0) & 16 for s in spans)
                line_style[(b, ln)] = (round(size * 2) / 2, bold, disp(line["bbox"]))
        lines: OrderedDict[tuple[int, int], lay.TextLine] = OrderedDict()
        for x0, y0, x1, y1, text, b, ln, _w in page.get_text("words", textpage=tp):
            text = lay.normalize_text(text).strip()
            if not text:
                continue
            key = (b, ln)
            if key not in lines:
                size, bold, bbox = line_style.get(key, (0.0, False, disp((x0, y0, x1, y1))))  # pyright: ignore[reportArgumentType, reportCallIssue]
                lines[key] = lay.TextLine([], bbox, size, bold, b)  # pyright: ignore[reportArgumentType]
            for part, box in lay.split_word(text, (x0, y0, x1, y1)):
                lines[key].words.append(Word(part, disp(box), b, ln, -1))  # pyright: ignore[reportArgumentType]
        blocks: OrderedDict[int, lay.TextBlock] = OrderedDict()
        for (b, _ln), line in lines.items():
            blk = blocks.setdefault(b, lay.TextBlock([], block_boxes.get(b, line.bbox)))
            blk.lines.append(line)
        ordered = lay.reading_order(list(blocks.values()), prect.width)
        return _Extracted(ordered, prect.y0, prect.height, prect.width)

    def _margin_signatures(self, index: int) -> frozenset[tuple[str, str]]:
        sig = self._signatures.get(index)
        if sig is None:
            ex = self._extract(index)
            items = set()
            for block in ex.blocks:
                for line in block.lines:
                    band = lay.margin_band(line, ex.top, ex.height)
                    if band:
                        items.add((band, lay.line_signature(line.text)))
            sig = frozenset(items)
            self._signatures[index] = sig
        return sig

    def _title_keys(self) -> set[str]:
        if self._title_key_set is None:
            keys = {lay.title_key(e.title) for e in self.toc} | {lay.title_key(self.title)}
            self._title_key_set = {k for k in keys if len(k) >= 4}
        return self._title_key_set

    def _is_running_line(
        self, index: int, line: lay.TextLine, band: str, body_size: float
    ) -> bool:
        """A margin line that is a page number, a title in body size, or repeats nearby."""
        text = line.text
        if lay.is_page_number_line(text, self.label(index), index + 1):
            return True
        if line.size > body_size + 1.0:
            return False  # running headers are not set larger than the text
        if lay.matches_title(text, self._title_keys()):
            return True
        key = (band, lay.line_signature(text))
        need = 2 if self.page_count >= 4 else 1
        lo, hi = max(0, index - HEADER_WINDOW), min(self.page_count, index + HEADER_WINDOW + 1)
        seen = 0
        for j in range(lo, hi):
            if j != index and key in self._margin_signatures(j):
                seen += 1
                if seen >= need:
                    return True
        return False

    def _build(self, index: int) -> tuple[Page, list[Word]]:
        with self._lock:
            cached = self._pages.get(index)
            if cached is not None:
                self._pages.move_to_end(index)
                return cached
            return self._build_uncached(index)

    def _build_uncached(self, index: int) -> tuple[Page, list[Word]]:
        ex = self._extract(index)
        sizes: Counter = Counter()
        for block in ex.blocks:
            for line in block.lines:
                sizes[line.size] += len(line.text)
        body_size = lay.body_font_size(sizes)
        kept: list[lay.TextLine] = []
        block_of_line: list[int] = []
        dropped: list[tuple[int, lay.TextLine]] = []
        for b, block in enumerate(ex.blocks):
            for line in block.lines:
                band = lay.margin_band(line, ex.top, ex.height)
                if band and self._is_running_line(index, line, band, body_size):
                    dropped.append((b, line))
                    continue
                kept.append(line)
                block_of_line.append(b)
        if not kept:
            # A page whose only text repeats on its neighbours ("Slide 3", "Potato 3") is
            # content, not a running header on an empty page; keep all but page numbers.
            label = self.label(index)
            for b, line in dropped:
                if not lay.is_page_number_line(line.text, label, index + 1):
                    kept.append(line)
                    block_of_line.append(b)
        word_lines = lay.join_hyphenated(kept)
        words: list[Word] = []
        parts: list[str] = []
        offsets: list[int] = []  # where each kept line starts in the text
        length = 0
        prev_block = None
        for b, line_words in zip(block_of_line, word_lines):
            if not line_words:
                offsets.append(length)
                continue
            if prev_block is not None:
                sep = "\n\n" if b != prev_block else "\n"
                parts.append(sep)
                length += len(sep)
            prev_block = b
            offsets.append(length)
            for w in line_words:
                words.append(Word(w.text, w.rect, w.block, w.line, len(words), w.more_rects))
            line_text = " ".join(w.text for w in line_words)
            parts.append(line_text)
            length += len(line_text)
        text = "".join(parts)
        (chapter, section), starts = self._section_map().on_page(index, kept, offsets)
        page = Page(
            index=index,
            label=self.label(index),
            text=text,
            chapter=chapter,
            section=section,
            section_starts=starts,
            width=round(ex.width, 2),
            height=round(ex.height, 2),
            has_text_layer=any(line.words for block in ex.blocks for line in block.lines),
        )
        self._has_text[index] = page.has_text_layer
        if not page.has_text_layer and not ex.damaged and self._page_has_images(index):
            self._image_pages.add(index)
        if ex.damaged:
            self._damaged[index] = ex.damaged
        self._pages[index] = (page, words)
        while len(self._pages) > PAGE_CACHE_SIZE:
            self._pages.popitem(last=False)
        return page, words

    def _page_has_images(self, index: int) -> bool:
        with self._lock:
            try:
                return bool(self._doc.load_page(index).get_images(full=False))
            except Exception as exc:
                log.info("Cannot list the images of page %d of %s: %s", index + 1, self.path, exc)
                return False

    # --- pages -----------------------------------------------------------------------
    def page(self, index: int) -> Page:
        """One page, cleaned, with its label, chapter and section."""
        self._check_index(index)
        return self._build(index)[0]

    def page_size(self, index: int) -> tuple[float, float]:
        """The page's displayed (width, height) in points, without reading its text."""
        self._check_index(index)
        cached = self._pages.get(index)
        if cached is not None:
            return cached[0].width, cached[0].height
        with self._lock:
            try:
                rect = self._doc.load_page(index).rect
                return float(rect.width), float(rect.height)
            except Exception as exc:
                log.info("Cannot read the size of page %d of %s: %s", index + 1, self.path, exc)
                return 612.0, 792.0
            finally:
                _flush_mupdf_messages(self.path.name)

    def words(self, index: int) -> list[Word]:
        """The words of a page with their boxes, in the reading order of ``page().text``."""
        self._check_index(index)
        return list(self._build(index)[1])

    def iter_pages(
        self, progress: ProgressFn = no_progress, cancel: CancelFn = never_cancel
    ) -> Iterator[Page]:
        """Every page in order, holding only a few pages in memory at a time."""
        total = self.page_count
        for i in range(total):
            check_cancel(cancel)
            page = self.page(i)
            progress(i + 1, total, f"Read page {page.label} of {self.path.name}")
            yield page

    def pages_without_text(self) -> list[int]:
        """0-based pages with no extractable text (scanned, blank or unreadable)."""
        for i in range(self.page_count):
            if i not in self._has_text:
                self.page(i)
        return [i for i in range(self.page_count) if not self._has_text[i]]

    def damaged_pages(self) -> dict[int, str]:
        """Pages read so far that MuPDF could not read, with the reason."""
        return dict(self._damaged)

    def text_layer_message(self) -> str:
        """A message for the user about pages without text, or "" when every page has text."""
        missing = self.pages_without_text()
        if not missing:
            return ""
        scanned = bool(self._image_pages & set(missing))
        return lay.missing_text_message(self.path.name, missing, self.page_count, scanned)

    # --- highlighting ----------------------------------------------------------------
    def search_rects(self, index: int, text: str) -> list[Rect]:
        """Rectangles (display coordinates) covering ``text`` on a page, or [].

        Tries MuPDF's own search first (it copes with whitespace and hyphenation), then
        matches the excerpt's words against the page's words, which also survives small
        differences such as a cut word at either end.  Pieces separated by "..." are
        located separately.
        """
        self._check_index(index)
        rects: list[Rect] = []
        for piece in lay.excerpt_pieces(text):
            found = self._search_mupdf(index, piece)
            rects.extend(found or lay.locate_in_words(self._build(index)[1], piece))
        return rects

    def _search_mupdf(self, index: int, piece: str) -> list[Rect]:
        with self._lock:
            try:
                page = self._doc.load_page(index)
                hits = page.search_for(piece, flags=fitz.TEXTFLAGS_SEARCH & ~fitz.TEXT_PRESERVE_LIGATURES)
                disp = lay.display_transform(tuple(page.rotation_matrix))  # pyright: ignore[reportArgumentType]
                return [disp(tuple(r)) for r in hits]
            except Exception as exc:
                log.info("Search on page %d of %s failed: %r", index + 1, self.path, exc)
                return []
            finally:
                _flush_mupdf_messages(self.path.name)

    # --- rendering -------------------------------------------------------------------
    def render(self, index: int, zoom: float) -> tuple[bytes, int, int, int]:
        """The page as RGB samples: ``(samples, width, height, stride)``.

        ``zoom`` 1.0 is 72 dpi; it is reduced when the image would exceed
        :data:`MAX_RENDER_PIXELS`.
        """
        self._check_index(index)
        with self._lock:
            try:
                page = self._doc.load_page(index)
                zoom = min(max(float(zoom), 0.05), 16.0)
                area = max(page.rect.width * page.rect.height, 1.0)
                if area * zoom * zoom > MAX_RENDER_PIXELS:
                    zoom = (MAX_RENDER_PIXELS / area) ** 0.5
                pix = page.get_pixmap(matrix=fitz.Matrix(zoom, zoom), alpha=False)
                return bytes(pix.samples), pix.width, pix.height, pix.stride
            except Exception as exc:
                raise PdfError(
                    f"Page {index + 1} of '{self.path.name}' could not be drawn: it is "
                    "damaged. The other pages can still be read.",
                    details=repr(exc),
                ) from exc
            finally:
                _flush_mupdf_messages(f"{self.path.name} page {index + 1}")
