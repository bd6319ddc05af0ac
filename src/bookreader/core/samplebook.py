"""The bundled sample book: the BookReader user guide, laid out as a real PDF.

The guide's text lives in ``bookreader/resources/guide/`` as small markdown-ish files (one
per chapter; ``#`` chapter, ``##`` section, blank lines between paragraphs, ``- `` list
items, fenced code).  :func:`build_sample_book` lays it out with PyMuPDF's ``Story``:

* a title page and a contents page labelled i and ii, then chapters from page 1;
* every chapter starting on a new page, with numbered sections;
* an outline (bookmarks) with chapters at level 1 and sections at level 2;
* running headers (the guide's title on even pages, the chapter on odd pages, none on a
  chapter's first page) and the printed page label centred in the footer.

The output is deterministic: fixed dates, no random document id, so the same text gives
the same bytes and therefore the same book id on every run and every machine with the
same PyMuPDF.  :func:`sample_book_path` builds it once into the data folder and reuses it.
"""

from __future__ import annotations

import hashlib
import html
import io
import logging
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import fitz

from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

SAMPLE_FILE_NAME = "bookreader-guide.pdf"
#: Bump when the layout code changes, so data folders rebuild their copy.
LAYOUT_VERSION = "1"
PAGE_WIDTH, PAGE_HEIGHT = 396.0, 612.0  # 5.5 x 8.5 inches, a "digest" book
BODY_RECT = fitz.Rect(44, 70, PAGE_WIDTH - 44, PAGE_HEIGHT - 58)
HEADER_BASELINE = 42.0
FOOTER_BASELINE = PAGE_HEIGHT - 34.0
FRONT_PAGES = 2  # title page (i) and contents (ii)
FIXED_DATE = "D:20250101000000+00'00'"

CSS = """
body { font-family: serif; font-size: 10pt; line-height: 1.32; }
p { margin: 0 0 6pt 0; text-align: justify; }
h1 { font-family: sans-serif; font-size: 19pt; margin: 36pt 0 18pt 0; }
h1 span.num { font-size: 11pt; }
h2 { font-family: sans-serif; font-size: 12.5pt; margin: 12pt 0 5pt 0; }
ul { margin: 0 0 6pt 0; padding-left: 14pt; }
li { margin: 0 0 3pt 0; text-align: justify; }
pre { font-family: monospace; font-size: 8.5pt; margin: 4pt 0 8pt 10pt; }
code { font-family: monospace; font-size: 9.5pt; }
"""


@dataclass
class Section:
    number: str  # "2.4"
    title: str  # "Citations"
    blocks: list[tuple[str, object]] = field(default_factory=list)  # (kind, content)

    @property
    def heading(self) -> str:
        return f"{self.number} {self.title}"


@dataclass
class Chapter:
    number: int
    title: str
    intro: list[tuple[str, object]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return f"{self.number} {self.title}"


@dataclass
class Guide:
    meta: dict[str, str]
    chapters: list[Chapter]


def guide_dir():
    """The folder (a Traversable) holding the guide's text inside the installed package."""
    return resources.files("bookreader") / "resources" / "guide"


def _guide_files() -> list[tuple[str, str]]:
    folder = guide_dir()
    files = sorted((p.name, p) for p in folder.iterdir() if p.name.endswith(".md"))
    if not files:
        raise BookReaderError(
            f"The sample book's text is missing from {folder}. Reinstall BookReader."
        )
    return [(name, p.read_text(encoding="utf-8")) for name, p in files]


def source_digest() -> str:
    """A hash of the guide's text and the layout version: changes when the PDF would."""
    h = hashlib.sha256(LAYOUT_VERSION.encode())
    for name, text in _guide_files():
        h.update(name.encode() + b"\0" + text.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]


def parse_guide() -> Guide:
    """Read the guide's files into chapters, sections and blocks."""
    files = _guide_files()
    meta: dict[str, str] = {}
    chapters: list[Chapter] = []
    for name, text in files:
        if name.startswith("00-"):
            for line in text.splitlines():
                if ":" in line:
                    k, v = line.split(":", 1)
                    meta[k.strip()] = v.strip()
            continue
        chapters.append(_parse_chapter(len(chapters) + 1, text, name))
    return Guide(meta=meta, chapters=chapters)


def _parse_chapter(number: int, text: str, name: str) -> Chapter:
    chapter: Chapter | None = None
    target: list[tuple[str, object]] = []
    para: list[str] = []
    items: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if para:
            target.append(("p", " ".join(para)))
            para.clear()
        if items:
            target.append(("ul", list(items)))
            items.clear()

    for raw in text.splitlines():
        line = raw.rstrip()
        if code is not None:
            if line.startswith("```"):
                target.append(("pre", "\n".join(code)))
                code = None
            else:
                code.append(line)
            continue
        if line.startswith("```"):
            flush()
            code = []
        elif line.startswith("# "):
            flush()
            chapter = Chapter(number, line[2:].strip())
            target = chapter.intro
        elif line.startswith("## "):
            flush()
            if chapter is None:
                raise BookReaderError(f"Sample book file {name}: a section comes before '# '.")
            m = re.match(r"(\d+(?:\.\d+)*)\s+(.*)", line[3:].strip())
            num, title = (m.group(1), m.group(2)) if m else (f"{number}.{len(chapter.sections) + 1}", line[3:].strip())
            chapter.sections.append(Section(num, title))
            target = chapter.sections[-1].blocks
        elif line.startswith("- "):
            if para:
                target.append(("p", " ".join(para)))
                para.clear()
            items.append(line[2:].strip())
        elif not line.strip():
            flush()
        elif items and raw.startswith("  "):
            items[-1] += " " + line.strip()
        else:
            if items:
                flush()
            para.append(line.strip())
    flush()
    if chapter is None:
        raise BookReaderError(f"Sample book file {name} has no '# ' chapter title.")
    return chapter


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", out)


def _blocks_html(blocks: list[tuple[str, object]]) -> str:
    parts = []
    for kind, content in blocks:
        if kind == "p":
            parts.append(f"<p>{_inline(str(content))}</p>")
        elif kind == "ul" and isinstance(content, list):
            parts.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in content) + "</ul>")
        elif kind == "pre":
            parts.append(f"<pre>{html.escape(str(content), quote=False)}</pre>")
    return "\n".join(parts)


def _chapter_html(ch: Chapter) -> str:
    parts = [f'<h1 id="c{ch.number}"><span class="num">Chapter {ch.number}</span><br/>'
             f"{_inline(ch.title)}</h1>", _blocks_html(ch.intro)]
    for k, sec in enumerate(ch.sections):
        parts.append(f'<h2 id="s{ch.number}-{k}">{_inline(sec.heading)}</h2>')
        parts.append(_blocks_html(sec.blocks))
    return f"<body>{''.join(parts)}</body>"


def _layout_body(guide: Guide) -> tuple[bytes, dict[str, int], list[int]]:
    """Chapters laid out page by page: (pdf bytes, heading id -> body page, chapter starts)."""
    buf = io.BytesIO()
    writer = fitz.DocumentWriter(buf)
    positions: dict[str, int] = {}
    chapter_starts: list[int] = []
    page_no = 0

    def record(pos) -> None:
        if pos.id and pos.open_close & 1 and pos.id not in positions:
            positions[pos.id] = pos.page_no

    for ch in guide.chapters:
        story = fitz.Story(html=_chapter_html(ch), user_css=CSS, em=10)
        chapter_starts.append(page_no)
        more = True
        while more:
            device = writer.begin_page(fitz.Rect(0, 0, PAGE_WIDTH, PAGE_HEIGHT))
            more, _filled = story.place(BODY_RECT)
            story.element_positions(record, {"page_no": page_no})
            story.draw(device)
            writer.end_page()
            page_no += 1
    writer.close()
    return buf.getvalue(), positions, chapter_starts


def _centered(page: fitz.Page, y: float, text: str, size: float, font: str = "helv") -> None:
    width = fitz.get_text_length(text, fontname=font, fontsize=size)
    page.insert_text(((PAGE_WIDTH - width) / 2, y), text, fontsize=size, fontname=font)


def _title_page(page: fitz.Page, meta: dict[str, str]) -> None:
    _centered(page, 190, meta.get("title", "BookReader User Guide"), 22, "hebo")
    sub = fitz.Rect(60, 210, PAGE_WIDTH - 60, 260)
    page.insert_textbox(sub, meta.get("subtitle", ""), fontsize=11, fontname="helv", align=1)
    _centered(page, 300, meta.get("edition", ""), 10)
    _centered(page, 318, meta.get("author", ""), 10)
    note = fitz.Rect(60, 420, PAGE_WIDTH - 60, PAGE_HEIGHT - 70)
    page.insert_textbox(note, meta.get("note", ""), fontsize=8.5, fontname="tiro", align=3)


def _contents_page(page: fitz.Page, entries: list[tuple[int, str, str]]) -> None:
    page.insert_text((48, 96), "Contents", fontsize=18, fontname="hebo")
    y = 124.0
    right = PAGE_WIDTH - 48
    for level, title, label in entries:
        font, size, x = ("hebo", 9.5, 48.0) if level == 1 else ("helv", 9.0, 62.0)
        if level == 1 and y > 124:
            y += 3
        page.insert_text((x, y), title, fontsize=size, fontname=font)
        w = fitz.get_text_length(label, fontname=font, fontsize=size)
        page.insert_text((right - w, y), label, fontsize=size, fontname=font)
        y += 11.6


def build_sample_book(out_path: str | Path) -> Path:
    """Lay out the user guide as a PDF at ``out_path`` (deterministic) and return the path."""
    out_path = Path(out_path)
    guide = parse_guide()
    body_bytes, positions, chapter_starts = _layout_body(guide)
    body = fitz.open("pdf", body_bytes)
    doc = fitz.open()
    for _ in range(FRONT_PAGES):
        doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
    doc.insert_pdf(body)
    body.close()

    toc: list[list] = []  # PyMuPDF wants 1-based pages
    contents: list[tuple[int, str, str]] = []
    toc.append([1, "Contents", 2])
    for ch in guide.chapters:
        p = positions.get(f"c{ch.number}", chapter_starts[ch.number - 1])
        toc.append([1, ch.heading, FRONT_PAGES + p + 1])
        contents.append((1, ch.heading, str(p + 1)))
        for k, sec in enumerate(ch.sections):
            sp = positions.get(f"s{ch.number}-{k}", p)
            toc.append([2, sec.heading, FRONT_PAGES + sp + 1])
            contents.append((2, sec.heading, str(sp + 1)))

    _title_page(doc[0], guide.meta)
    _contents_page(doc[1], contents)
    _centered(doc[1], FOOTER_BASELINE, "ii", 8.5)
    book_title = guide.meta.get("title", "BookReader User Guide")
    starts = set(chapter_starts)
    chapter_of_page: list[str] = []
    for idx, start in enumerate(chapter_starts):
        end = chapter_starts[idx + 1] if idx + 1 < len(chapter_starts) else doc.page_count - FRONT_PAGES
        chapter_of_page += [guide.chapters[idx].title] * (end - start)
    for k in range(doc.page_count - FRONT_PAGES):
        page = doc[FRONT_PAGES + k]
        label = str(k + 1)
        _centered(page, FOOTER_BASELINE, label, 8.5)
        if k in starts:
            continue
        if (k + 1) % 2 == 0:
            page.insert_text((44, HEADER_BASELINE), book_title, fontsize=8, fontname="heit")
        else:
            text = chapter_of_page[k]
            w = fitz.get_text_length(text, fontname="heit", fontsize=8)
            page.insert_text((PAGE_WIDTH - 44 - w, HEADER_BASELINE), text, fontsize=8, fontname="heit")
        page.draw_line((44, HEADER_BASELINE + 5), (PAGE_WIDTH - 44, HEADER_BASELINE + 5), width=0.4)

    doc.set_toc(toc)
    doc.set_page_labels([
        {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
        {"startpage": FRONT_PAGES, "prefix": "", "style": "D", "firstpagenum": 1},
    ])
    doc.set_metadata({
        "title": book_title,
        "author": guide.meta.get("author", ""),
        "subject": guide.meta.get("subtitle", ""),
        "keywords": "BookReader, user guide, sample book",
        "creator": "BookReader sample book builder",
        "producer": "PyMuPDF",
        "creationDate": FIXED_DATE,
        "modDate": FIXED_DATE,
    })
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".tmp")
    doc.save(tmp, garbage=4, deflate=True, no_new_id=True)
    doc.close()
    os.replace(tmp, out_path)
    log.info("Built the sample book at %s", out_path)
    return out_path


def sample_book_path(data_dir: str | Path) -> Path:
    """The sample book in ``data_dir/sample/``, built on first use and rebuilt only when
    the guide's text or layout changed (so its book id stays the same between runs)."""
    folder = Path(data_dir) / "sample"
    out = folder / SAMPLE_FILE_NAME
    stamp = folder / (SAMPLE_FILE_NAME + ".source")
    digest = source_digest()
    try:
        if out.is_file() and stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == digest:
            return out
        folder.mkdir(parents=True, exist_ok=True)
        build_sample_book(out)
        stamp.write_text(digest + "\n", encoding="utf-8")
    except OSError as exc:
        raise BookReaderError(
            f"Cannot write the sample book to {folder}: {exc.strerror or exc}. "
            "Choose a data folder you may write to (BOOKREADER_DATA_DIR or the settings)."
        ) from exc
    return out
