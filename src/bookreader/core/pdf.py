"""Reading a PDF with PyMuPDF: pages, words, labels, chapters; cleaned for retrieval.

:class:`PdfBook` is the only way the rest of BookReader touches a PDF.  It opens a file
(with a password where needed) and serves, page by page:

* the text in reading order, with running headers and footers removed, ligatures spelled
  out and words hyphenated across line ends joined (compounds such as "object-oriented"
  keep their hyphen: :func:`~bookreader.core.hyphenation.line_end_hyphen`);
* the words with their boxes, for selection and highlighting;
* the printed page label (``get_label()``-style rules, else the physical number);
* the chapter and section, from the outline or, when a book has none, from heading sizes.

Coordinates are those of the page as displayed (rotation applied), in PDF points, origin
top-left: a box times the render zoom is a box in the rendered image.

Damaged input ends in a :class:`~bookreader.errors.PdfError` naming the file and saying
what to do; a page that cannot be read is reported and treated as a page without text, so
the rest of the book stays usable.  MuPDF's own messages go to the ``bookreader.mupdf``
logger, never to stderr.  A document is not thread-safe in MuPDF, so every access goes
through one lock per book.  Opening the file and reading a page's raw lines live in
:mod:`bookreader.core.pdf_document`; the layout rules in :mod:`bookreader.core.pdf_layout`
and the outline in :mod:`bookreader.core.pdf_outline`.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any, Iterator, Optional, cast

import fitz

from bookreader.core import pdf_layout as lay
from bookreader.core import pdf_outline as outline
from bookreader.core.emphasis import code_runs, emphasised_runs
from bookreader.core.hyphenation import english_words
from bookreader.core.pdf_forms import cap_page_work
from bookreader.core.pdf_document import (  # noqa: F401 - part of this module's API
    MAX_PAGES,
    TEXT_FLAGS,
    Extracted,
    extract_page,
    file_book_id,
    mupdf_log,
    open_document,
    read_title,
    rotation_of,
    route_mupdf_messages,
)
from bookreader.core.pdf_document import flush_mupdf_messages as _flush_mupdf_messages
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
from bookreader.errors import PdfError

log = logging.getLogger(__name__)

#: Pages on each side compared when deciding whether a margin line is a running header.
HEADER_WINDOW = 6
#: Largest rendered image, in pixels (a 40 MP RGB image is 120 MB).
MAX_RENDER_PIXELS = 40_000_000
#: Pages whose extraction is kept in memory.
PAGE_CACHE_SIZE = 24
#: Located excerpts kept per book ((page, excerpt) -> rectangles).
RECTS_CACHE_SIZE = 4096
#: Pages sampled to learn the body and heading font sizes of a book without an outline.
HEADING_SAMPLE = 80


class PdfBook:
    """An open PDF.  Use :meth:`open`; also a context manager that closes the file."""

    def __init__(self, doc: fitz.Document, path: Path, book_id: str, *,
                 blocked: Optional[dict[int, str]] = None,
                 max_page_chars: Optional[int] = None) -> None:
        self._doc = doc
        #: Pages never parsed in this process (the sandbox found them dangerous): why.
        self.blocked: dict[int, str] = dict(blocked or {})
        self.max_page_chars = max_page_chars
        self._notes: dict[int, str] = {}
        self._lock = threading.RLock()
        self.path = path
        self.book_id = book_id
        self.page_count = doc.page_count
        #: The metadata's title, else the file name (``title_from_metadata`` says which).
        self.title, self.title_from_metadata = read_title(doc, path)
        self._labels: Optional[list[str]] = None
        self._label_index: Optional[dict[str, int]] = None
        self._toc: Optional[list[TocEntry]] = None
        self._outline: Optional[list[TocEntry]] = None
        self._sections: Optional[outline.SectionMap] = None
        self._extracted: OrderedDict[int, Extracted] = OrderedDict()
        self._pages: OrderedDict[int, tuple[Page, list[Word]]] = OrderedDict()
        self._rects_cache: OrderedDict[tuple[int, str], tuple[Rect, ...]] = OrderedDict()
        self._signatures: dict[int, frozenset[tuple[str, str]]] = {}
        self._has_text: dict[int, bool] = {}
        self._damaged: dict[int, str] = {}
        self._title_key_set: Optional[set[str]] = None
        self._image_pages: set[int] = set()
        self._work_capped: set[int] = set()
        self._closed = False
        self._last_type: Optional[tuple[int, tuple[list[str], list[str]]]] = None

    # --- opening --------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, password: Optional[str] = None, *,
             blocked: Optional[dict[int, str]] = None,
             max_page_chars: Optional[int] = None) -> "PdfBook":
        """Open a PDF, authenticating with ``password`` when the file is encrypted.

        ``blocked`` pages (0-based, with the reason) are never parsed: they read as pages
        without text and render as an error naming the reason.  Page text longer than
        ``max_page_chars`` is cut, with a note in :meth:`page_notes`.

        Raises:
            PasswordRequired: encrypted and no password, or a wrong one, was given.
            PdfError: missing, not a PDF, damaged beyond repair, no pages, absurd size.
        """
        doc, path, book_id = open_document(path, password)
        return cls(doc, path, book_id, blocked=blocked, max_page_chars=max_page_chars)

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
    def _extract(self, index: int) -> Extracted:
        with self._lock:
            cached = self._extracted.get(index)
            if cached is not None:
                self._extracted.move_to_end(index)
                return cached
            self._check_index(index)
            if index in self.blocked:
                return Extracted([], 0.0, 792.0, 612.0, damaged=self.blocked[index])
            try:
                self._cap_work(index)
                ex = extract_page(self._doc, index)
            except Exception as exc:  # a damaged page must not take the book down
                log.warning("Cannot read page %d of %s: %s", index + 1, self.path, exc)
                ex = Extracted([], 0.0, 792.0, 612.0, damaged=str(exc) or type(exc).__name__)
            finally:
                _flush_mupdf_messages(f"{self.path.name} page {index + 1}")
            self._extracted[index] = ex
            while len(self._extracted) > PAGE_CACHE_SIZE:
                self._extracted.popitem(last=False)
        return ex

    def _cap_work(self, index: int) -> None:
        """Trim a page whose nested forms ask for too much drawing, once, before MuPDF
        runs it (:mod:`bookreader.core.pdf_forms`); the page's note says so."""
        if index in self._work_capped:
            return
        self._work_capped.add(index)
        try:
            note = cap_page_work(self._doc, index)
        except Exception as exc:  # a damaged page: reading it reports that
            log.info("Cannot count the drawing of page %d of %s: %r", index + 1, self.path, exc)
            return
        if note:
            self._notes[index] = note

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
        word_lines = lay.join_hyphenated(kept, english_words())
        words: list[Word] = []
        parts: list[str] = []
        offsets: list[int] = []  # where each kept line starts in the text
        length = 0
        prev_block = None
        limit = self.max_page_chars
        for b, line_words in zip(block_of_line, word_lines):
            if not line_words:
                offsets.append(length)
                continue
            if limit and length + sum(len(w.text) + 1 for w in line_words) > limit:
                self._notes[index] = (
                    f"Page {index + 1}: text cut at {limit:,} characters (the page holds more "
                    "text than a printed page can); the rest of the page is not searched."
                )
                offsets.extend([length] * (len(word_lines) - len(offsets)))
                break
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

    def emphasis(self, index: int) -> list[str]:
        """The page's italic or bold runs inside running text
        (:func:`~bookreader.core.emphasis.emphasised_runs`); [] for a page that cannot be read."""
        return self._type_runs(index)[0]

    def code(self, index: int) -> list[str]:
        """The page's runs of program text inside running text
        (:func:`~bookreader.core.emphasis.code_runs`); [] for a page that cannot be read."""
        return self._type_runs(index)[1]

    def _type_runs(self, index: int) -> tuple[list[str], list[str]]:
        self._check_index(index)
        if index in self.blocked:
            return [], []
        with self._lock:
            if self._last_type is not None and self._last_type[0] == index:
                return self._last_type[1]  # emphasis and code are read one after the other
            try:
                self._cap_work(index)
                info = cast(dict[str, Any],
                            self._doc.load_page(index).get_text("dict", flags=TEXT_FLAGS))
                self._last_type = (index, (emphasised_runs(info), code_runs(info)))
                return self._last_type[1]
            except Exception as exc:  # a damaged page has no emphasis to offer
                log.info("Cannot read the type of page %d of %s: %r", index + 1, self.path, exc)
                return [], []
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

    def plain_text(self, index: int) -> str:
        """MuPDF's own text of a page, uncleaned and uncached (a quick pass over a whole
        book); "" for a page the sandbox blocked or that cannot be read."""
        self._check_index(index)
        if index in self.blocked:
            return ""
        with self._lock:
            try:
                return str(self._doc.load_page(index).get_text())
            except Exception as exc:  # a damaged page reads as empty here
                log.info("Cannot read page %d of %s: %s", index + 1, self.path, exc)
                return ""
            finally:
                _flush_mupdf_messages(self.path.name)

    def pages_without_text(self) -> list[int]:
        """0-based pages with no extractable text (scanned, blank or unreadable)."""
        for i in range(self.page_count):
            if i not in self._has_text:
                self.page(i)
        return [i for i in range(self.page_count) if not self._has_text[i]]

    def looks_scanned(self, index: int) -> bool:
        """Whether page ``index`` shows an image but has no text layer (a scan, not a blank
        page); reads the page if it was not read yet."""
        self._check_index(index)
        if index not in self._has_text:
            self.page(index)
        return index in self._image_pages

    def page_notes(self) -> dict[int, str]:
        """Pages read so far whose text was cut at ``max_page_chars``, with a note."""
        return dict(self._notes)

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
        if index in self.blocked:
            return []
        key = (index, text)
        cached = self._rects_cache.get(key)
        if cached is not None:
            return list(cached)
        rects: list[Rect] = []
        for piece in lay.excerpt_pieces(text):
            found = self._search_mupdf(index, piece)
            rects.extend(found or lay.locate_in_words(self._build(index)[1], piece))
        # A served book is asked about the same passages again and again; MuPDF's search
        # holds the interpreter lock, so it is done once per page and excerpt.
        with self._lock:
            self._rects_cache[key] = tuple(rects)
            if len(self._rects_cache) > RECTS_CACHE_SIZE:
                self._rects_cache.popitem(last=False)
        return rects

    def _search_mupdf(self, index: int, piece: str) -> list[Rect]:
        with self._lock:
            try:
                self._cap_work(index)
                page = self._doc.load_page(index)
                hits = page.search_for(piece, flags=fitz.TEXTFLAGS_SEARCH & ~fitz.TEXT_PRESERVE_LIGATURES)
                disp = lay.display_transform(rotation_of(page))
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
        if index in self.blocked:
            raise PdfError(
                f"Page {index + 1} of '{self.path.name}' is not shown: {self.blocked[index]}. "
                "The other pages can still be read."
            )
        with self._lock:
            try:
                self._cap_work(index)
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
