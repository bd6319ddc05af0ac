"""The book on screen: a PdfBook that lives on the ``document`` worker thread.

PyMuPDF is not thread-safe, so one thread owns the open :class:`PdfBook` and does every
open, render, word lookup and search for the page view.  The GUI asks for pages with
:meth:`DocumentService.set_wanted_pages`; renders run one at a time, most wanted first, and
pages that scrolled away before their turn are simply dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from bookreader.core.types import Rect, TocEntry, Word
from bookreader.errors import BookReaderError, Cancelled
from bookreader.ui.workers import Task, TaskControl, TaskRunner

if TYPE_CHECKING:
    from bookreader.core.pdf import PdfBook

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocumentMeta:
    """What the window needs to lay out a book before any page is rendered."""

    path: str
    title: str
    page_count: int
    sizes: tuple[tuple[float, float], ...]
    labels: tuple[str, ...]
    toc: tuple[TocEntry, ...] = ()
    password: Optional[str] = field(default=None, repr=False)

    def find_label(self, label: str) -> Optional[int]:
        """The physical page whose printed label is ``label`` (case-insensitive)."""
        want = label.strip().lower()
        for i, lab in enumerate(self.labels):
            if lab.lower() == want:
                return i
        return None


#: Pages one find task searches before a waiting render may run.
FIND_BATCH = 8


@dataclass(eq=False)
class FindRun:
    """One search of the whole book, run a batch of pages at a time."""

    query: str
    order: list[int]  # pages in search order (from the page shown, wrapping around)
    gen: int  # the document generation it searches
    pos: int = 0  # next place in ``order``
    hits: int = 0
    waiting: bool = False  # paused for a render
    cancelled: bool = False
    task: Optional[Task] = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()


@dataclass(frozen=True)
class RenderedPage:
    """A render result: the image and, the first time, the page's words."""

    page: int
    key: int  # device pixels per 1000 PDF points; identifies the zoom level
    image: QImage
    words: Optional[list[Word]]


def _page_sizes(book) -> tuple[tuple[float, float], ...]:
    """Every page's displayed size in points, read from the page tree (no text extraction)."""
    return tuple((float(w), float(h)) for w, h in map(book.page_size, range(book.page_count)))


def _open_book(path: str, password: Optional[str], settings=None) -> tuple["PdfBook", str]:
    """Open a PDF only after the sandbox has read it in a capped child process; the book
    and its title (the metadata's, else the one printed on its first pages, which the
    sandbox read).

    A file that crashes or exhausts the child raises a clear PdfError here (the window
    stays up); pages the sandbox flagged are never parsed in this process and show a
    placeholder saying why.
    """
    from bookreader.core import sandbox  # PyMuPDF is imported on the worker only
    from bookreader.core.pdf import PdfBook

    limits = sandbox.SandboxLimits.from_settings(settings) if settings else sandbox.SandboxLimits()
    scan = sandbox.scan_pdf(path, password, limits=limits)
    book = PdfBook.open(path, password=password, blocked=scan.flagged,
                        max_page_chars=limits.max_page_chars)
    return book, scan.title or book.title


class DocumentService(QObject):
    """Owns the open book on its worker thread and answers the page view's requests."""

    opened = Signal(object)  # DocumentMeta
    open_failed = Signal(str, object)  # path, exception
    page_rendered = Signal(object)  # RenderedPage
    find_progressed = Signal(str, int, list)  # query, page, rects on that page
    find_finished = Signal(str, int)  # query, number of hits
    excerpt_located = Signal(int, list)  # page, rects
    page_failed = Signal(int, str)  # page, what went wrong (a damaged page)

    def __init__(self, runner: TaskRunner, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._book: Optional[PdfBook] = None  # touched on the document thread only
        self._generation = 0
        self.meta: Optional[DocumentMeta] = None
        self._wanted: list[tuple[int, int, float]] = []  # (page, key, zoom)
        self._in_flight: Optional[tuple[int, int]] = None
        self._have_words: set[int] = set()
        self._find_run: Optional[FindRun] = None
        #: Settings holding the caps of the sandbox that reads a file before it is opened.
        self.settings = None

    # --- open and close -------------------------------------------------------------------
    def open(self, path: str | Path, password: Optional[str] = None) -> Task:
        """Open a PDF (closing the current one); emits ``opened`` or ``open_failed``."""
        path = str(path)
        self._generation += 1
        gen = self._generation
        self._wanted.clear()
        self._have_words.clear()
        self.meta = None
        self.cancel_find()

        def work(ctl: TaskControl) -> DocumentMeta:
            self._close_book()
            book, title = _open_book(path, password, self.settings)
            try:
                n = book.page_count
                sizes = _page_sizes(book)
                labels = tuple(book.label(i) or str(i + 1) for i in range(n))
                toc = tuple(book.toc or ())
                title = title or Path(path).stem
            except BaseException:
                book.close()
                raise
            self._book = book
            return DocumentMeta(path=path, title=title, page_count=n, sizes=sizes,
                                labels=labels, toc=toc, password=password)

        def done(meta: DocumentMeta) -> None:
            if gen == self._generation:
                self.meta = meta
                self.opened.emit(meta)

        def failed(exc: BaseException) -> None:
            if gen == self._generation:
                self.open_failed.emit(path, exc)

        return self.runner.submit("document", work, name=f"open {Path(path).name}",
                                  on_success=done, on_failure=failed)

    def close(self) -> None:
        """Close the current book (on its thread)."""
        self._generation += 1
        self.meta = None
        self._wanted.clear()
        self.cancel_find()
        self.runner.submit("document", lambda ctl: self._close_book(), name="close book")

    def _close_book(self) -> None:  # document thread
        book, self._book = self._book, None
        if book is not None:
            book.close()

    # --- rendering ------------------------------------------------------------------------
    def set_wanted_pages(self, wanted: list[tuple[int, int, float]]) -> None:
        """Replace the render queue with ``(page, key, zoom)`` items, most urgent first."""
        self._wanted = [w for w in wanted if (w[0], w[1]) != self._in_flight]
        self._start_next_render()

    def _start_next_render(self) -> None:
        if self._in_flight is not None or not self._wanted or self.meta is None:
            return
        page, key, zoom = self._wanted.pop(0)
        gen = self._generation
        need_words = page not in self._have_words
        self._in_flight = (page, key)

        def work(ctl: TaskControl) -> Optional[RenderedPage]:
            book = self._book
            if book is None or gen != self._generation:
                return None
            data, w, h, stride = book.render(page, zoom)
            # RGB32 is what the raster painter draws fastest; convert here, off the GUI thread.
            image = QImage(data, w, h, stride, QImage.Format.Format_RGB888).convertToFormat(
                QImage.Format.Format_RGB32)
            words = list(book.words(page)) if need_words else None
            return RenderedPage(page=page, key=key, image=image, words=words)

        def done(result: Optional[RenderedPage]) -> None:
            if result is not None and gen == self._generation:
                if result.words is not None:
                    self._have_words.add(page)
                self.page_rendered.emit(result)

        def failed(exc: BaseException) -> None:
            if gen != self._generation:
                return
            if not isinstance(exc, BookReaderError):
                log.error("Rendering page %d failed", page + 1, exc_info=exc)
            message = getattr(exc, "user_message", "") or f"Page {page + 1} could not be drawn."
            self.page_failed.emit(page, message)

        def ended() -> None:
            self._in_flight = None
            self._start_next_render()
            self._resume_find()

        self.runner.submit("document", work, name=f"render p{page + 1}",
                           on_success=done, on_failure=failed, on_end=ended)

    # --- find --------------------------------------------------------------------------------
    def find(self, query: str, start_page: int = 0) -> Optional[FindRun]:
        """Search every page for ``query``, starting at ``start_page`` and wrapping around;
        hits arrive page by page through ``find_progressed``.

        The pages are searched :data:`FIND_BATCH` at a time, and a page waiting to be drawn
        goes first: the page a hit jumps to is drawn at once, not after the whole book
        was searched (on a long book, and with indexing busy, that took seconds)."""
        self.cancel_find()
        query = query.strip()
        if not query or self.meta is None:
            return None
        n = self.meta.page_count
        run = FindRun(query, [(start_page + k) % n for k in range(n)], self._generation)
        self._find_run = run
        self._find_batch(run)
        return run

    def _find_batch(self, run: FindRun) -> None:
        """Search the next pages of ``run``, unless a render is waiting or running."""
        if run.cancelled or run is not self._find_run or run.gen != self._generation:
            return
        if self._in_flight is not None or self._wanted:
            run.waiting = True  # the render's end resumes it (_resume_find)
            return
        run.waiting = False
        pages, run.pos = run.order[run.pos:run.pos + FIND_BATCH], run.pos + FIND_BATCH
        if not pages:
            self._find_run = None
            self.find_finished.emit(run.query, run.hits)
            return

        def work(ctl: TaskControl) -> int:
            hits = 0
            for page in pages:
                if ctl.cancel() or run.cancelled or self._book is None:
                    raise Cancelled()
                rects = [tuple(r) for r in self._book.search_rects(page, run.query)]
                if rects:
                    hits += len(rects)
                    ctl.emit((page, rects))
            return hits

        def partial(value) -> None:
            if not run.cancelled and run.gen == self._generation:
                page, rects = value
                self.find_progressed.emit(run.query, page, rects)

        def done(hits: int) -> None:
            run.hits += hits

        run.task = self.runner.submit("document", work, name="find", on_partial=partial,
                                      on_success=done, on_end=lambda: self._find_batch(run))

    def _resume_find(self) -> None:
        run = self._find_run
        if run is not None and run.waiting and self._in_flight is None and not self._wanted:
            self._find_batch(run)

    def cancel_find(self) -> None:
        run, self._find_run = self._find_run, None
        if run is not None:
            run.cancel()

    def locate_excerpt(self, page: int, excerpt: str) -> None:
        """Find an excerpt's rectangles on a page (for citations that came without any)."""
        gen = self._generation
        words = excerpt.split()

        def work(ctl: TaskControl) -> list[Rect]:
            if self._book is None or not words:
                return []
            # Long excerpts rarely match verbatim across line breaks; try shrinking prefixes.
            for n in (len(words), 12, 8, 5, 3):
                if n > len(words):
                    continue
                rects = self._book.search_rects(page, " ".join(words[:n]))
                if rects:
                    return list(rects)
            return []

        def done(rects: list[Rect]) -> None:
            if gen == self._generation:
                self.excerpt_located.emit(page, rects)

        self.runner.submit("document", work, name="locate excerpt", on_success=done)
