"""Real PDFs for tests, written with PyMuPDF, with text at known positions.

Import it from any test (``tests/`` is on ``sys.path``)::

    from pdf_factory import Line, make_pdf, book_pdf, planted_fact_pdf

Building blocks
    :class:`Line` places one line of text with its baseline at ``(x, y)`` in PDF points
    (origin top-left, Letter pages 612 x 792 unless ``size`` says otherwise).  Its box is
    known in advance: :meth:`Line.rect` and :meth:`Line.word_rects`, so tests can click on a
    word or check a highlight without reading the PDF back.
    :func:`make_pdf` writes pages of lines or of plain paragraphs (wrapped for you), with an
    optional outline, page labels, running header and footer, metadata and password.

Ready-made books
    :func:`book_pdf` (chapters and sections over many pages, :class:`BookSpec` tells where
    each section starts), :func:`planted_fact_pdf` (one distinctive sentence on a known
    page among filler), :func:`hyphenated_pdf`, :func:`compound_hyphen_pdf`, :func:`ligature_pdf`,
    :func:`two_column_pdf`, :func:`headings_pdf` (no outline, headings by size),
    :func:`scanned_pdf` (pages with no text layer), :func:`encrypted_pdf`,
    :func:`big_pdf` (1,000+ pages, written fast).

Broken files (raw bytes, the way real damaged files look)
    :func:`not_a_pdf`, :func:`truncated_pdf`, :func:`zero_page_pdf`,
    :func:`huge_page_count_pdf`, :func:`page_tree_loop_pdf`, :func:`outline_loop_pdf`.

Every function takes the output path first and returns it (or a spec holding it).
Text is drawn with PyMuPDF's ``TextWriter`` in Helvetica, so any Unicode Helvetica has a
glyph for (ligatures ``ﬁ ﬂ ﬀ``, accents, typographic quotes) is stored as such.
"""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import fitz

LETTER = (612.0, 792.0)
MARGIN = 72.0
BODY_SIZE = 11.0
LEADING = 15.0  # baseline to baseline for body text
WRAP_CHARS = 88  # characters per line of 11 pt Helvetica in a 468 pt column

_FONT_CACHE: dict[str, fitz.Font] = {}


def _font(name: str) -> fitz.Font:
    if name not in _FONT_CACHE:
        _FONT_CACHE[name] = fitz.Font(name)
    return _FONT_CACHE[name]


@dataclass(frozen=True)
class Line:
    """One line of text, baseline at ``(x, y)``.  ``font``: "helv", "hebo" (bold), "tiro"."""

    text: str
    x: float = MARGIN
    y: float = 100.0
    size: float = BODY_SIZE
    font: str = "helv"

    def rect(self) -> fitz.Rect:
        """The line's box as text extraction reports it (ascender to descender)."""
        f = _font(self.font)
        width = f.text_length(self.text, fontsize=self.size)
        return fitz.Rect(self.x, self.y - f.ascender * self.size, self.x + width,
                         self.y - f.descender * self.size)

    def word_rects(self) -> dict[str, fitz.Rect]:
        """Each word's box (the first occurrence of each word in the line)."""
        f = _font(self.font)
        out: dict[str, fitz.Rect] = {}
        r = self.rect()
        pos = 0
        for word in self.text.split(" "):
            if word and word not in out:
                x0 = self.x + f.text_length(self.text[:pos], fontsize=self.size)
                x1 = x0 + f.text_length(word, fontsize=self.size)
                out[word] = fitz.Rect(x0, r.y0, x1, r.y1)
            pos += len(word) + 1
        return out


PageContent = Union[str, Sequence[Line]]
HeaderFn = Callable[[int, str], Optional[str]]  # (0-based page, label) -> text or None


def lines_for(paragraphs: str | Sequence[str], *, top: float = 100.0, x: float = MARGIN,
              size: float = BODY_SIZE, leading: float = LEADING,
              wrap: int = WRAP_CHARS) -> list[Line]:
    """Paragraph text wrapped into :class:`Line` objects, a blank line between paragraphs."""
    if isinstance(paragraphs, str):
        paragraphs = [p for p in paragraphs.split("\n\n")]
    out: list[Line] = []
    y = top
    for para in paragraphs:
        for text in textwrap.wrap(" ".join(para.split()), wrap) or [""]:
            if text:
                out.append(Line(text, x, y, size))
            y += leading
        y += leading * 0.6
    return out


def styled_line(parts: Sequence[tuple[str, str]], y: float, *, x: float = MARGIN,
                size: float = BODY_SIZE) -> list[Line]:
    """One line set in several fonts: ``parts`` are (text, font) in order ("heit" is
    Helvetica-Oblique, "hebo" Helvetica-Bold), each :class:`Line` placed after the last."""
    out: list[Line] = []
    for text, font in parts:
        out.append(Line(text, x, y, size, font))
        x += _font(font).text_length(text, fontsize=size)
    return out


def _draw(page: fitz.Page, lines: Sequence[Line]) -> None:
    tw = fitz.TextWriter(page.rect)
    for ln in lines:
        tw.append((ln.x, ln.y), ln.text, font=_font(ln.font), fontsize=ln.size)
    tw.write_text(page)


def _text(spec: Optional[Union[str, HeaderFn]], index: int, label: str) -> Optional[str]:
    if spec is None:
        return None
    if callable(spec):
        return spec(index, label)
    return spec.format(page=index + 1, label=label)


def make_pdf(
    path: str | Path,
    pages: Sequence[PageContent],
    *,
    size: tuple[float, float] = LETTER,
    toc: Optional[Sequence[tuple[int, str, int]]] = None,
    page_labels: Optional[Sequence[dict]] = None,
    header: Optional[Union[str, HeaderFn]] = None,
    footer: Optional[Union[str, HeaderFn]] = None,
    metadata: Optional[dict] = None,
    password: Optional[str] = None,
    owner_password: Optional[str] = None,
) -> Path:
    """Write a PDF and return its path.

    Args:
        pages: One entry per page: a string (paragraphs separated by blank lines, wrapped
            and placed from y=100) or a sequence of :class:`Line`.
        toc: Outline entries ``(level, title, page)`` with **0-based** pages.
        page_labels: PyMuPDF label rules, e.g. ``[{"startpage": 0, "style": "r"},
            {"startpage": 2, "style": "D"}]`` (``prefix``/``firstpagenum`` optional).
        header, footer: Text drawn at y=40 / y=height-40 on every page: a format string
            with ``{page}`` (1-based physical) and ``{label}``, or a function
            ``(index, label) -> text or None``.
        metadata: e.g. ``{"title": "..."}``.
        password: User password (AES-256); ``owner_password`` defaults to it + "-owner".
    """
    path = Path(path)
    doc = fitz.open()
    for content in pages:
        page = doc.new_page(width=size[0], height=size[1])
        lines = lines_for(content) if isinstance(content, str) else list(content)
        _draw(page, lines)
    if page_labels:
        doc.set_page_labels([{"prefix": "", "firstpagenum": 1, **r} for r in page_labels])
    for i, page in enumerate(doc):
        label = page.get_label() or str(i + 1)
        extra = []
        head = _text(header, i, label)
        if head:
            extra.append(Line(head, MARGIN, 40, 9))
        foot = _text(footer, i, label)
        if foot:
            w = _font("helv").text_length(foot, fontsize=9)
            extra.append(Line(foot, (size[0] - w) / 2, size[1] - 40, 9))
        if extra:
            _draw(page, extra)
    if toc:
        doc.set_toc([[lvl, title, p + 1] for lvl, title, p in toc])
    if metadata:
        doc.set_metadata(metadata)
    kw: dict = {}
    if password is not None:
        kw = dict(encryption=fitz.PDF_ENCRYPT_AES_256, user_pw=password,
                  owner_pw=password + "-owner" if owner_password is None else owner_password)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=1, deflate=True, **kw)
    doc.close()
    return path


# --- ready-made books ---------------------------------------------------------------------

FILLER = [
    "The committee met on a grey morning to review the budget for the coming year.",
    "Rivers carry sediment downstream, building deltas where they meet the sea.",
    "A good recipe lists its ingredients in the order in which they are used.",
    "Migratory birds navigate by the sun, the stars and the magnetic field of the earth.",
    "The orchestra tuned to a single note before the conductor raised the baton.",
    "Early railways competed fiercely for passengers between neighbouring towns.",
    "Glaciers advance and retreat over centuries, shaping the valleys below them.",
    "The museum reopened after the renovation with a new wing for modern art.",
    "Farmers rotate their crops to keep the soil healthy and the yields steady.",
    "The lighthouse keeper recorded the weather in a leather notebook every evening.",
    "Volunteers planted hundreds of trees along the banks of the restored canal.",
    "A bridge must carry its own weight as well as the traffic that crosses it.",
    "The library extended its opening hours during the examination period.",
    "Tides follow the moon, rising and falling twice in a little more than a day.",
    "The market square filled with stalls selling bread, cheese and fresh flowers.",
    "Astronomers catalogued thousands of faint galaxies in a small patch of sky.",
]


def filler(n_sentences: int, seed: int = 0) -> str:
    """Deterministic, topic-mixed filler prose (no technical vocabulary)."""
    rng = random.Random(seed)
    return " ".join(rng.choice(FILLER) for _ in range(n_sentences))


@dataclass
class BookSpec:
    """What :func:`book_pdf` wrote: where every chapter and section starts (0-based)."""

    path: Path
    page_count: int
    chapter_pages: dict[str, int] = field(default_factory=dict)
    section_pages: dict[str, int] = field(default_factory=dict)
    front_pages: int = 0
    labels: list[str] = field(default_factory=list)


def book_pdf(
    path: str | Path,
    chapters: Sequence[tuple[str, Sequence[tuple[str, str]]]],
    *,
    front_pages: int = 0,
    outline: bool = True,
    running_header: bool = True,
    page_numbers: bool = True,
    lines_per_page: int = 40,
) -> BookSpec:
    """A book: each chapter starts on a new page with a 20 pt title, sections in 14 pt.

    Args:
        chapters: ``[(chapter title, [(section title, section text), ...]), ...]``; the
            section text is paragraphs separated by blank lines.
        front_pages: Pages before chapter 1, labelled i, ii, ...; chapter 1 is page "1".
        outline: Write an outline (chapters level 1, sections level 2).
        running_header: The book title on even pages and the chapter title on odd ones,
            at the top margin (not on a chapter's first page).
        page_numbers: The printed label centred in the footer.
    """
    pages: list[list[Line]] = [[Line(f"Front matter page {i + 1}", MARGIN, 120, 14)]
                               for i in range(front_pages)]
    spec = BookSpec(Path(path), 0, front_pages=front_pages)
    toc: list[tuple[int, str, int]] = []
    chapter_of: list[Optional[str]] = [None] * front_pages
    bottom = 100 + lines_per_page * LEADING
    for ch_title, sections in chapters:
        cur: list[Line] = [Line(ch_title, MARGIN, 110, 20, "hebo")]
        y = 150.0
        pages.append(cur)
        chapter_of.append(None)  # no running header on a chapter's first page
        spec.chapter_pages[ch_title] = len(pages) - 1
        toc.append((1, ch_title, len(pages) - 1))
        for sec_title, text in sections:
            if y + 3 * LEADING > bottom:
                cur = []
                pages.append(cur)
                chapter_of.append(ch_title)
                y = 100.0
            cur.append(Line(sec_title, MARGIN, y + 6, 14, "hebo"))
            spec.section_pages[sec_title] = len(pages) - 1
            toc.append((2, sec_title, len(pages) - 1))
            y += 2 * LEADING
            for para in text.split("\n\n"):
                for line_text in textwrap.wrap(" ".join(para.split()), WRAP_CHARS):
                    if y > bottom:
                        cur = []
                        pages.append(cur)
                        chapter_of.append(ch_title)
                        y = 100.0
                    cur.append(Line(line_text, MARGIN, y, BODY_SIZE))
                    y += LEADING
                y += LEADING * 0.6
    labels = ([{"startpage": 0, "style": "r"}] if front_pages else []) + [
        {"startpage": front_pages, "style": "D"}]
    title = "A Generated Test Book"

    def head(i: int, label: str) -> Optional[str]:
        if not running_header or chapter_of[i] is None:
            return None
        return title if (i - front_pages) % 2 else chapter_of[i]

    make_pdf(path, pages, toc=toc if outline else None, page_labels=labels,
             header=head, footer="{label}" if page_numbers else None,
             metadata={"title": title})
    with fitz.open(path) as doc:
        spec.page_count = doc.page_count
        spec.labels = [p.get_label() for p in doc]
    return spec


def planted_fact_pdf(path: str | Path, fact: str, fact_page: int, pages: int = 8,
                     *, seed: int = 1, outline: bool = True) -> Path:
    """``pages`` pages of filler with the sentence ``fact`` in the middle of ``fact_page``.

    The outline has one chapter per two pages ("Part 1", "Part 2", ...), so chapter
    filters can be tested too.
    """
    contents = []
    for i in range(pages):
        text = filler(14, seed + i)
        if i == fact_page:
            text = f"{filler(6, seed + 100)} {fact} {filler(6, seed + 200)}"
        contents.append(f"Page topic {i + 1}.\n\n{text}")
    toc = [(1, f"Part {k // 2 + 1}", k) for k in range(0, pages, 2)] if outline else None
    return make_pdf(path, contents, toc=toc, metadata={"title": "Planted Fact Book"})


def hyphenated_pdf(path: str | Path) -> Path:
    """One page whose lines end in words split by a hyphen (``informa-`` / ``tion``)."""
    lines = [
        Line("Reading order matters for the informa-", MARGIN, 100),
        Line("tion retrieval system that indexes textbooks.", MARGIN, 115),
        Line("A well-known example is the so-", MARGIN, 130),
        Line("called hybrid search with dense and sparse scores.", MARGIN, 145),
        Line("The range is 10 -", MARGIN, 160),
        Line("20 pages, and Chapter Two ends with a dash -", MARGIN, 175),
        Line("Then a new sentence starts here.", MARGIN, 190),
    ]
    return make_pdf(path, [lines])


#: Lines of :func:`compound_hyphen_pdf`: two compounds and one broken word split at line ends.
COMPOUND_LINES = [
    "Robots that work beside people need safe human-",
    "robot interaction, and their software has an object-",
    "oriented design in which every informa-",
    "tion channel is checked twice.",
]


def compound_hyphen_pdf(path: str | Path) -> Path:
    """One page whose line ends split compounds (``human-`` / ``robot``, ``object-`` /
    ``oriented``) and a broken word (``informa-`` / ``tion``); nowhere else on the page is
    either compound written, so only a word list can tell them apart."""
    lines = [Line(text, MARGIN, 100 + 15 * k) for k, text in enumerate(COMPOUND_LINES)]
    return make_pdf(path, [lines])


def draft_keys_pdf(path: str | Path) -> Path:
    """A page of a LaTeX draft build: cross-reference keys in Courier beside a heading (one
    cut at the page's left edge, as a margin key is) and an equation, with a code line and
    prose that use braces and colons of their own."""
    lines = [
        Line("2.2 The continuity equation", MARGIN, 100, 13, "hebo"),
        Line("{sec:continuity}", 260, 100, 9, "cour"),
        Line("ec:mass_balance}", 0.5, 130, 9, "cour"),
        Line("Mass is neither created nor destroyed in a control volume.", MARGIN, 130),
        Line("The balance reads dm/dt = 0 for a closed volume. (2.1)", MARGIN, 160),
        Line("{eq:continuity0}", 440, 160, 9, "cour"),
        Line('print(f"{rate:.2f}") # {note:done}', MARGIN, 190, 9, "cour"),
        Line("A set such as {a:b} pairs each key with its value.", MARGIN, 220),
    ]
    return make_pdf(path, [lines])


def ligature_pdf(path: str | Path) -> Path:
    """One page whose text is stored with ligature characters (U+FB00-FB04)."""
    lines = [
        Line("The \ufb01rst e\ufb00ect of the work\ufb02ow is an o\ufb03ce e\ufb04ux.", MARGIN, 100),
        Line("Ordinary text without ligatures follows on this line.", MARGIN, 115),
    ]
    return make_pdf(path, [lines])


def math_letters_pdf(path: str | Path) -> Path:
    """One page set as a maths font sets it: italic letters (U+1D449 and U+1D44A, the
    mathematical italic V and W) with no space character before the next word ("from
    𝑉to 𝑊is a function").  Written by hand: the text is Helvetica whose ToUnicode map
    reads the bytes "V" and "W" as those letters (MuPDF's own writer cannot map
    characters beyond U+FFFF)."""
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            b"/CMapName /MathLetters def /CMapType 2 def\n"
            b"1 begincodespacerange <00> <FF> endcodespacerange\n"
            b"2 beginbfrange <20> <55> <0020> <58> <7E> <0058> endbfrange\n"
            b"2 beginbfchar <56> <D835DC49> <57> <D835DC4A> endbfchar\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end\n")
    content = (b"BT /F1 11 Tf 72 700 Td (A linear map from Vto Wis a function with two "
               b"properties.) Tj 0 -15 Td (The product VW stays one word.) Tj ET\n")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    Path(path).write_bytes(bytes(out))
    return Path(path)


def two_column_pdf(path: str | Path) -> Path:
    """One page: a wide title, then two columns of eight numbered lines each."""
    lines = [Line("A Two Column Article Title", MARGIN, 80, 16, "hebo")]
    for k in range(8):
        lines.append(Line(f"Left column sentence number {k + 1}.", MARGIN, 130 + k * 15, 10))
        lines.append(Line(f"Right column sentence number {k + 1}.", 320, 130 + k * 15, 10))
    return make_pdf(path, [lines])


def headings_pdf(path: str | Path, chapters: int = 3, sections: int = 2) -> Path:
    """A book without an outline whose headings differ only by font size (20/14/11 pt)."""
    pages = []
    for c in range(1, chapters + 1):
        lines = [Line(f"Chapter {c} Topic {c}", MARGIN, 100, 20, "hebo")]
        y = 140.0
        for s in range(1, sections + 1):
            lines.append(Line(f"Section {c}.{s} Detail", MARGIN, y, 14, "hebo"))
            y += 25
            for ln in lines_for(filler(8, c * 10 + s), top=y, wrap=80):
                lines.append(ln)
                y = ln.y + LEADING
            y += 20
        pages.append(lines)
        pages.append(lines_for(filler(20, c)))
    return make_pdf(path, pages, metadata={"title": "Headings Only"})


def scanned_pdf(path: str | Path, pages: int = 3, text_pages: Sequence[int] = ()) -> Path:
    """Pages that are images of text (no text layer), except ``text_pages`` (real text)."""
    src = fitz.open()
    page = src.new_page(width=LETTER[0], height=LETTER[1])
    _draw(page, lines_for(filler(12, 5)))
    png = page.get_pixmap(dpi=50).tobytes("png")
    src.close()
    doc = fitz.open()
    for i in range(pages):
        p = doc.new_page(width=LETTER[0], height=LETTER[1])
        if i in text_pages:
            _draw(p, lines_for(f"This page {i + 1} has a real text layer. " + filler(5, i)))
        else:
            p.insert_image(p.rect, stream=png)
    path = Path(path)
    doc.save(path, garbage=1, deflate=True)
    doc.close()
    return path


def encrypted_pdf(path: str | Path, password: str = "s3cret", *,
                  owner_password: Optional[str] = None) -> Path:
    """Two pages of text protected with an AES-256 user password."""
    return make_pdf(path, ["Secret page one. " + filler(5, 1), "Secret page two. " + filler(5, 2)],
                    password=password, owner_password=owner_password)


def big_pdf(path: str | Path, pages: int = 1200) -> Path:
    """A long book, quickly: each page has a heading line and two lines of filler."""
    doc = fitz.open()
    font = _font("helv")
    for i in range(pages):
        page = doc.new_page(width=LETTER[0], height=LETTER[1])
        tw = fitz.TextWriter(page.rect)
        tw.append((MARGIN, 200), f"Page {i + 1} of the long book.", font=font, fontsize=11)
        tw.append((MARGIN, 215), FILLER[i % len(FILLER)], font=font, fontsize=11)
        tw.append((MARGIN, 230), FILLER[(i * 7) % len(FILLER)], font=font, fontsize=11)
        tw.write_text(page)
    path = Path(path)
    doc.save(path, garbage=1, deflate=True)
    doc.close()
    return path


# --- broken files -------------------------------------------------------------------------


def _raw_pdf(objects: Sequence[str], root: int = 1, extra_trailer: str = "") -> bytes:
    """A PDF from object bodies (object k+1 = objects[k]) with a correct xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for k, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root {root} 0 R {extra_trailer}>>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


_PAGE_CONTENT = "<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 700 Td (Hello page) Tj ET\nendstream"
_FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def not_a_pdf(path: str | Path) -> Path:
    """A text file with a .pdf name."""
    path = Path(path)
    path.write_bytes(b"This is not a PDF, just some text saved with the wrong name.\n")
    return path


def truncated_pdf(path: str | Path) -> Path:
    """A real PDF cut off after its first 40% of bytes (a broken download)."""
    path = Path(path)
    full = path.with_name(path.stem + "-full.pdf")
    make_pdf(full, ["First page. " + filler(30, 1), "Second page. " + filler(30, 2)])
    data = full.read_bytes()
    full.unlink()
    path.write_bytes(data[: int(len(data) * 0.4)])
    return path


def zero_page_pdf(path: str | Path) -> Path:
    """A valid PDF whose page tree has no pages (/Count 0)."""
    path = Path(path)
    path.write_bytes(_raw_pdf(["<< /Type /Catalog /Pages 2 0 R >>",
                               "<< /Type /Pages /Kids [] /Count 0 >>"]))
    return path


def huge_page_count_pdf(path: str | Path, count: int = 9_999_999_999) -> Path:
    """One real page, but the page tree declares ``count`` pages."""
    path = Path(path)
    path.write_bytes(_raw_pdf([
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [3 0 R] /Count {count} >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        _PAGE_CONTENT,
        _FONT,
    ]))
    return path


def page_tree_loop_pdf(path: str | Path) -> Path:
    """A page tree whose second kid points back at the root /Pages node."""
    path = Path(path)
    path.write_bytes(_raw_pdf([
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        _PAGE_CONTENT,
        _FONT,
    ]))
    return path


def outline_loop_pdf(path: str | Path) -> Path:
    """Two text pages whose outline items point at each other in a loop."""
    path = Path(path)
    path.write_bytes(_raw_pdf([
        "<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>",
        "<< /Type /Pages /Kids [3 0 R 8 0 R] /Count 2 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        _PAGE_CONTENT,
        _FONT,
        "<< /Type /Outlines /First 7 0 R /Last 9 0 R /Count 2 >>",
        "<< /Title (Loop A) /Parent 6 0 R /Next 9 0 R /Dest [3 0 R /Fit] >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        "<< /Title (Loop B) /Parent 6 0 R /Next 7 0 R /Prev 7 0 R /Dest [8 0 R /Fit] >>",
    ]))
    return path
