"""Page layout helpers for :mod:`bookreader.core.pdf`: no file access, no Qt.

PyMuPDF hands us blocks, lines and word boxes; this module turns them into what a reader
expects: blocks in reading order (columns read left to right), running headers and footers
recognised by repetition, ligatures spelled out, words hyphenated across a line end joined
(compounds keep their hyphen, see :mod:`bookreader.core.hyphenation`),
and heading candidates found by font size for books without an outline.

Everything here works on the small dataclasses below, so it can be tested without a PDF.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from bookreader.core.code_text import prose_words
from bookreader.core.hyphenation import line_end_hyphen, page_spellings
from bookreader.core.types import Rect, Word

#: Share of the page height at the top and bottom where running headers and footers live
#: (textbooks with wide margins put them as low as 13% from the top edge).
MARGIN_BAND = 0.15

_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
    "\u0132": "IJ",
    "\u0133": "ij",
    "\u0152": "OE",
    "\u0153": "oe",
    "\ua732": "AA",
    "\ua733": "aa",
}
_SEPARATORS = dict.fromkeys(map(ord, "\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x1f\x85"), " ")
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff\ufffd"), None)
_SPACES = dict.fromkeys(map(ord, "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                                 "\u2009\u200a\u202f\u205f\u3000\t"), " ")
_TRANSLATE = {
    **{ord(k): v for k, v in _LIGATURES.items()}, **_INVISIBLE, **_SPACES, **_SEPARATORS
}
_HYPHENS = ("-", "\u2010", "\u00ad")
_ROMAN = re.compile(r"^(?=[mdclxvi]+$)m{0,4}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER_LINE = re.compile(
    r"^(page\s+)?[-\u2013\u2014\s]*(\d+|[ivxlcdm]+)[-\u2013\u2014\s]*((of|/)\s*\d+)?$", re.I
)


def normalize_text(text: str) -> str:
    """Spell out ligatures, drop soft hyphens and invisible characters, unify spaces."""
    text = text.translate(_TRANSLATE)
    if not text.isascii():
        # Compatibility forms a PDF font may produce (full-width letters, ``ﬅ`` ...),
        # but keep the text otherwise as it is (CJK, Arabic).
        text = "".join(
            unicodedata.normalize("NFKC", ch) if "\uff01" <= ch <= "\uff5e" else ch for ch in text
        )
    return text


#: Where a mathematical letter (the Unicode block of italic, bold and script letters a
#: maths font sets variables in) meets a word of plain letters: a PDF typeset this way
#: often has no space character there ("a function 𝑇∶𝑉→𝑊with", "𝑊is"), so the two
#: read as one word and "𝑊is a function" is not "W is a function".
_MATH_LETTER_GLUE = re.compile(r"(?<=[\U0001D400-\U0001D7FF])(?=[A-Za-z]{2})"
                               r"|(?<=[A-Za-z]{2})(?=[\U0001D400-\U0001D7FF])")


def split_word(text: str, box: tuple) -> list[tuple[str, tuple]]:
    """A "word" that still holds spaces after cleaning (odd separators in the PDF), or a
    mathematical letter glued to a plain word (:data:`_MATH_LETTER_GLUE`), split into
    words, its box shared out by character count."""
    if not text.isascii():
        text = _MATH_LETTER_GLUE.sub(" ", text)
    parts = text.split()
    if len(parts) == 1:
        return [(text, box)]
    x0, y0, x1, y1 = box[:4]
    per_char = (x1 - x0) / max(len(text), 1)
    out, pos = [], 0
    for part in parts:
        start = text.index(part, pos)
        out.append((part, (x0 + start * per_char, y0, x0 + (start + len(part)) * per_char, y1)))
        pos = start + len(part)
    return out


@dataclass
class TextLine:
    """One line of a page as extracted, before cleaning decisions."""

    words: list[Word]
    bbox: Rect
    size: float  # largest font size in the line
    bold: bool
    block: int

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


@dataclass
class TextBlock:
    """A block of lines; blocks are what reading order sorts."""

    lines: list[TextLine] = field(default_factory=list)
    bbox: Rect = (0.0, 0.0, 0.0, 0.0)


# --- reading order ------------------------------------------------------------------------


def reading_order(blocks: list[TextBlock], page_width: float) -> list[TextBlock]:
    """Blocks in the order a person reads them.

    Single-column pages keep the order of the content stream, which is right for nearly
    every producer.  When the page has two (or more) columns of blocks side by side,
    blocks are read band by band: wide blocks (titles, figures spanning the page) cut the
    page into bands, and inside a band the columns are read left to right, each top to
    bottom.  This avoids the classic failure of sorting by y alone, which interleaves lines
    of the two columns.  Side-by-side blocks of one or two lines each are table cells, not
    columns, and keep their order.
    """
    blocks = [part for b in blocks for part in split_side_by_side(b)]
    if len(blocks) < 2:
        return blocks
    x0 = min(b.bbox[0] for b in blocks)
    x1 = max(b.bbox[2] for b in blocks)
    width = max(x1 - x0, 1.0)
    mid = (x0 + x1) / 2
    left = [b for b in blocks if b.bbox[2] <= mid + 0.02 * width]
    right = [b for b in blocks if b.bbox[0] >= mid - 0.02 * width]
    if not left or not right or not _columns_overlap(left, right):
        return blocks
    line_counts = sorted(len(b.lines) for b in left + right)
    if line_counts[len(line_counts) // 2] < 3:
        return blocks
    wide = [b for b in blocks if b not in left and b not in right]
    wide.sort(key=lambda b: b.bbox[1])
    ordered: list[TextBlock] = []
    remaining = [b for b in blocks if b in left or b in right]
    for w in wide + [None]:
        limit = w.bbox[1] if w is not None else float("inf")
        band = [b for b in remaining if b.bbox[1] < limit]
        remaining = [b for b in remaining if b.bbox[1] >= limit]
        ordered.extend(_columns_then_rows(band, mid))
        if w is not None:
            ordered.append(w)
    return ordered


def split_side_by_side(block: TextBlock) -> list[TextBlock]:
    """A block whose lines stand in two columns split into a left and a right block.

    MuPDF merges columns whose baselines line up.  Two columns of body text are split
    at the first gap no line bridges when each side has 3+ lines (fewer, side by side,
    are table cells and keep their order).  Two sides of words set in different type
    sizes are split at any such gap, whatever their length: a note in the margin beside
    a heading or a paragraph's last line is another text, and joined to it the note
    reads as the heading's or the paragraph's continuation.
    """
    lines = block.lines
    if len(lines) < 2:
        return [block]
    by_x = sorted(lines, key=lambda ln: ln.bbox[0])
    reach = by_x[0].bbox[2]
    first = True
    for k in range(1, len(by_x)):
        if by_x[k].bbox[0] > reach + 5:  # a gap no line bridges
            left_set = {id(ln) for ln in by_x[:k]}
            left = [ln for ln in lines if id(ln) in left_set]
            right = [ln for ln in lines if id(ln) not in left_set]
            columns = first and len(lines) >= 6 and len(left) >= 3 and len(right) >= 3
            if columns or _other_texts(left, right):
                return [_block_of(left)] + split_side_by_side(_block_of(right))
            first = False
        reach = max(reach, by_x[k].bbox[2])
    return [block]


def _other_texts(left: list[TextLine], right: list[TextLine]) -> bool:
    """Whether two sides of a block are two texts: no type size in common, a word (of
    three letters or more) on each side and six in all, not the figures of a table."""
    if {ln.size for ln in left} & {ln.size for ln in right}:
        return False
    words = [prose_words(" ".join(ln.text for ln in side)) for side in (left, right)]
    return min(words) >= 1 and sum(words) >= 6


def _block_of(lines: list[TextLine]) -> TextBlock:
    return TextBlock(
        list(lines),
        (min(ln.bbox[0] for ln in lines), min(ln.bbox[1] for ln in lines),
         max(ln.bbox[2] for ln in lines), max(ln.bbox[3] for ln in lines)),
    )


def _columns_overlap(left: list[TextBlock], right: list[TextBlock]) -> bool:
    """True when left and right blocks share a good part of their vertical extent."""
    ly0, ly1 = min(b.bbox[1] for b in left), max(b.bbox[3] for b in left)
    ry0, ry1 = min(b.bbox[1] for b in right), max(b.bbox[3] for b in right)
    overlap = min(ly1, ry1) - max(ly0, ry0)
    return overlap > 0.3 * min(ly1 - ly0, ry1 - ry0)


def _columns_then_rows(band: list[TextBlock], mid: float) -> list[TextBlock]:
    left = sorted((b for b in band if (b.bbox[0] + b.bbox[2]) / 2 < mid), key=_top_left)
    right = sorted((b for b in band if (b.bbox[0] + b.bbox[2]) / 2 >= mid), key=_top_left)
    return left + right


def _top_left(b: TextBlock) -> tuple[float, float]:
    return (round(b.bbox[1], 0), b.bbox[0])


# --- running headers and footers ----------------------------------------------------------


def margin_band(line: TextLine, page_top: float, page_height: float) -> str:
    """``"top"``, ``"bottom"`` or ``""`` depending on where the line sits on the page."""
    if line.bbox[3] <= page_top + MARGIN_BAND * page_height:
        return "top"
    if line.bbox[1] >= page_top + (1 - MARGIN_BAND) * page_height:
        return "bottom"
    return ""


def line_signature(text: str) -> str:
    """The text of a line with its numbers blanked, so page numbers may change."""
    tokens = []
    for tok in text.lower().split():
        tok = _DIGITS.sub("#", tok)
        if _ROMAN.match(tok.strip(".,:;()[]")):
            tok = "#"
        tokens.append(tok)
    return " ".join(tokens)


def title_key(text: str) -> str:
    """Letters only, lower-case: ``"1.7. Using Escape Sequences"`` -> ``"using escape sequences"``."""
    return " ".join(re.sub(r"[^\w]+|[\d_]+", " ", text.lower()).split())


def matches_title(text: str, title_keys: set[str]) -> bool:
    """True when a line repeats a chapter, section or book title (a running header)."""
    key = title_key(text)
    if len(key) < 4:
        return False
    if key in title_keys:
        return True
    return any(len(t) >= 8 and t in key and len(t) >= 0.6 * len(key) for t in title_keys)


def is_page_number_line(text: str, label: str, physical: int) -> bool:
    """True for a line that is only this page's number ("17", "- 17 -", "Page 17 of 90")."""
    stripped = text.strip()
    if not stripped:
        return False
    if stripped in (label, str(physical)):
        return True
    m = _PAGE_NUMBER_LINE.match(stripped)
    return bool(m) and m.group(2).lower() in (label.lower(), str(physical))


# --- hyphenation --------------------------------------------------------------------------


def join_hyphenated(lines: list[TextLine], words: Collection[str] = frozenset()) -> list[list[Word]]:
    """Words of each line, with words split by a hyphen at a line end joined.

    ``informa-`` at the end of a line followed by ``tion`` at the start of the next
    becomes one word ``information`` on the first line; ``object-`` followed by
    ``oriented`` becomes ``object-oriented`` (see :func:`line_end_hyphen`, which reads
    ``words``).  The second box is kept in ``more_rects`` so highlighting still covers
    both halves.  This happens only when the hyphen follows a letter and the next line
    starts with a lower-case letter, so dashes and "-" signs are left alone.
    """
    out: list[list[Word]] = [list(line.words) for line in lines]
    seen: set[str] | None = None
    for i in range(len(out) - 1):
        if not out[i] or not out[i + 1]:
            continue
        last, nxt = out[i][-1], out[i + 1][0]
        t = last.text
        if (
            len(t) >= 2
            and t.endswith(_HYPHENS)
            and t[-2].isalpha()
            and nxt.text[:1].islower()
        ):
            if seen is None:
                seen = page_spellings(lines)
            hyphen = "" if t[-1] == "\u00ad" else line_end_hyphen(t[:-1], nxt.text, words, seen)
            if hyphen is None:
                continue
            joined = Word(
                text=t[:-1] + hyphen + nxt.text,
                rect=last.rect,
                block=last.block,
                line=last.line,
                index=last.index,
                more_rects=(nxt.rect,) + tuple(last.more_rects) + tuple(nxt.more_rects),
            )
            out[i][-1] = joined
            out[i + 1] = out[i + 1][1:]
    return out


# --- headings by font size ----------------------------------------------------------------


@dataclass(frozen=True)
class HeadingCandidate:
    """A short line set in a larger font than the body text."""

    page: int
    size: float
    text: str


def body_font_size(size_chars: Counter) -> float:
    """The font size that carries most characters (sizes rounded to half points)."""
    if not size_chars:
        return 0.0
    return size_chars.most_common(1)[0][0]


def heading_sizes(
    candidates: list[HeadingCandidate], body_size: float, page_count: int
) -> dict[float, int]:
    """Font size -> outline level (1 chapter, 2 section) for a book without an outline.

    Sizes clearly above the body size are heading sizes; the largest becomes level 1
    (chapters), the next level 2 (sections).  A size used on one of the first two pages
    only (a title page) is skipped, and so is any size that appears on most pages (a
    running header set in a large font is not a heading).

    Args:
        candidates: Short lines with their font sizes, from the pages examined.
        body_size: The size that carries most of the text.
        page_count: How many pages were examined.
    """
    if not candidates or body_size <= 0:
        return {}
    threshold = body_size + max(1.0, 0.12 * body_size)
    by_size: dict[float, set[int]] = {}
    per_page: Counter = Counter()
    for c in candidates:
        if c.size >= threshold:
            by_size.setdefault(c.size, set()).add(c.page)
            per_page[(c.size, c.page)] += 1
    sizes = sorted(by_size, reverse=True)
    kept: list[float] = []
    for s in sizes:
        pages = by_size[s]
        if len(pages) > max(3, 0.6 * page_count):
            continue  # on most pages: not a heading
        if max(per_page[(s, p)] for p in pages) > 6:
            continue  # a page full of it: large text (a poster, a slide), not headings
        if not kept and len(sizes) > 1 and page_count > 3 and len(pages) == 1 and min(pages) <= 1:
            continue  # the title on the title page
        kept.append(s)
        if len(kept) == 2:
            break
    return {s: k + 1 for k, s in enumerate(kept)}


def is_heading_text(text: str) -> bool:
    """Short enough and wordy enough to be a heading."""
    t = text.strip()
    return 2 <= len(t) <= 120 and any(ch.isalpha() for ch in t)


# --- matching excerpts to words -----------------------------------------------------------

_TOKEN = re.compile(r"\w+", re.UNICODE)


def match_tokens(text: str) -> list[str]:
    """Lower-case word tokens used to match an excerpt against a page's words."""
    return [t.lower() for t in _TOKEN.findall(normalize_text(text))]


def _exact_run(page_tokens: list[str], wanted: list[str]) -> tuple[int, int] | None:
    """The first span ``[start, end)`` of page tokens equal to ``wanted``, or None."""
    m = len(wanted)
    if not m:
        return None
    for s in range(len(page_tokens) - m + 1):
        if page_tokens[s : s + m] == wanted:
            return s, s + m
    return None


def find_token_run(page_tokens: list[str], wanted: list[str]) -> tuple[int, int] | None:
    """The span ``[start, end)`` of page tokens that best matches ``wanted``.

    Exact contiguous matches win.  Otherwise the longest run of consecutive equal tokens
    is taken if it covers at least 60% of the excerpt (the excerpt may be cut mid-word at
    either end or differ in a word or two).
    """
    n, m = len(page_tokens), len(wanted)
    if not m or not n:
        return None
    exact = _exact_run(page_tokens, wanted)
    if exact is not None:
        return exact
    # Trim partial words at the excerpt's ends (an excerpt often starts mid-word).
    inner = wanted[1:-1] if m > 4 else wanted
    best: tuple[int, int, int] | None = None  # (length, page_start, wanted_start)
    prev = [0] * (len(inner) + 1)
    for i in range(1, n + 1):
        cur = [0] * (len(inner) + 1)
        for j in range(1, len(inner) + 1):
            if page_tokens[i - 1] == inner[j - 1]:
                cur[j] = prev[j - 1] + 1
                if best is None or cur[j] > best[0]:
                    best = (cur[j], i - cur[j], j - cur[j])
        prev = cur
    if best is None or best[0] < max(1, 0.6 * len(inner)):
        return None
    length, start, _ = best
    return start, start + length


def excerpt_pieces(text: str) -> list[str]:
    """An excerpt split at "..." into pieces worth searching, quotes and spacing tidied."""
    flat = " ".join(normalize_text(text).split()).replace("\u2026", "...")
    pieces = [p.strip(" \"'\u201c\u201d\u2018\u2019") for p in flat.split("...")]
    return [p for p in pieces if len(p) >= 3]


def locate_in_words(words: list[Word], piece: str) -> list[Rect]:
    """Rectangles of the run of ``words`` that best matches ``piece`` ([] if none does).

    The words must agree exactly, else their letters and digits run together must
    ("humanrobot" quoted for the page's "human-robot", or the other way round), else the
    longest run of agreeing words is taken (see :func:`find_token_run`).
    """
    tokens: list[str] = []
    owner: list[int] = []
    for k, w in enumerate(words):
        for t in match_tokens(w.text):
            tokens.append(t)
            owner.append(k)
    wanted = match_tokens(piece)
    span = _exact_run(tokens, wanted)
    run = None if span is not None else _letters_run(words, "".join(wanted))
    if run is None:
        span = span or find_token_run(tokens, wanted)
        if span is None:
            return []
        run = owner[span[0]], owner[span[1] - 1]
    return merge_rects_by_line(words[run[0] : run[1] + 1])


def _letters_run(words: list[Word], key: str) -> tuple[int, int] | None:
    """The first and last of the words whose letters and digits, run together, are
    exactly ``key`` (from the start of a word to the end of one), or None."""
    if len(key) < 3:
        return None
    keys = ["".join(match_tokens(w.text)) for w in words]
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    pos = 0
    for k, wk in enumerate(keys):
        if wk:
            starts[pos] = k
            pos += len(wk)
            ends[pos] = k
    page = "".join(keys)
    at = page.find(key)
    while at >= 0:
        if at in starts and at + len(key) in ends:
            return starts[at], ends[at + len(key)]
        at = page.find(key, at + 1)
    return None


def merge_rects_by_line(words: list[Word]) -> list[Rect]:
    """One rectangle per line covered by ``words`` (plus second halves of joined words)."""
    rects: list[Rect] = []
    current: Rect | None = None
    key = None
    for w in words:
        if (w.block, w.line) != key or current is None:
            if current is not None:
                rects.append(current)
            current = (w.rect[0], w.rect[1], w.rect[2], w.rect[3])
            key = (w.block, w.line)
        else:
            current = (
                min(current[0], w.rect[0]),
                min(current[1], w.rect[1]),
                max(current[2], w.rect[2]),
                max(current[3], w.rect[3]),
            )
    if current is not None:
        rects.append(current)
    for w in words:
        rects.extend(w.more_rects)
    return rects


def format_page_list(pages: list[int], limit: int = 20) -> str:
    """``[0, 1, 2, 6]`` -> ``"pages 1-3, 7"`` (1-based), shortened after ``limit`` ranges."""
    ranges: list[tuple[int, int]] = []
    for p in sorted(pages):
        if ranges and p == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], p)
        else:
            ranges.append((p, p))
    parts = [f"{a + 1}" if a == b else f"{a + 1}-{b + 1}" for a, b in ranges[:limit]]
    more = f" and {len(ranges) - limit} more" if len(ranges) > limit else ""
    word = "page" if len(pages) == 1 else "pages"
    return f"{word} {', '.join(parts)}{more}"


def missing_text_message(name: str, missing: list[int], page_count: int, scanned: bool) -> str:
    """The user's message about pages without text ("" when there are none).

    Args:
        name: The PDF's file name.
        missing: 0-based pages without a text layer.
        page_count: Pages in the book.
        scanned: Whether any of those pages shows an image (a scan) rather than nothing.
    """
    if not missing:
        return ""
    if len(missing) == page_count and not scanned:
        return (
            f"'{name}' contains no text at all (its pages are blank or drawn as "
            "graphics), so there is nothing to search or ask about. Use a PDF with "
            "selectable text."
        )
    if len(missing) == page_count:
        return (
            f"'{name}' has no text layer on any page: it looks like a scanned book. "
            "BookReader cannot search or answer questions about it because OCR "
            "(reading text from images) is not available. Use a PDF with selectable text."
        )
    return (
        f"{len(missing)} of {page_count} pages of '{name}' have no text layer "
        f"(scanned images, blank or damaged pages): {format_page_list(missing)}. "
        "OCR is not available, so BookReader cannot search or answer questions about "
        "these pages; the rest of the book works normally."
    )


def display_transform(matrix: tuple[float, ...]):
    """A function mapping an extraction box to display coordinates (page rotation applied).

    ``matrix`` is the page's ``rotation_matrix``; the identity is the common, fast case.
    """
    a, b, c, d, e, f = matrix
    if (a, b, c, d, e, f) == (1, 0, 0, 1, 0, 0):
        return lambda r: (r[0], r[1], r[2], r[3])

    def disp(r) -> Rect:
        xs, ys = [], []
        for x, y in ((r[0], r[1]), (r[2], r[3]), (r[0], r[3]), (r[2], r[1])):
            xs.append(a * x + c * y + e)
            ys.append(b * x + d * y + f)
        return (round(min(xs), 2), round(min(ys), 2), round(max(xs), 2), round(max(ys), 2))

    return disp


def password_variants(password: str) -> list[str]:
    """The password as typed, then SASLprep-normalised (AES-256 R6 files need that)."""
    mapped = "".join(
        " " if unicodedata.category(ch) == "Zs" else ch
        for ch in password
        if ch not in "\u00ad\u034f\u1806\u180b\u180c\u180d\u200b\u200c\u200d\u2060\ufeff"
        and not "\ufe00" <= ch <= "\ufe0f"
    )
    variants = [password, unicodedata.normalize("NFKC", mapped), password.strip()]
    return list(dict.fromkeys(variants))
