"""Sentence-aware chunks sized in the embedding model's own word pieces.

all-MiniLM-L6-v2 reads at most 256 word pieces *including* its ``[CLS]`` and ``[SEP]``
markers and silently drops the rest, so a chunk holds at most ``max_tokens - 2`` word
pieces of text (254 with the default setting).  The seed design's 512-token chunks would
have lost half of every chunk before it was ever embedded.

How a book becomes chunks (streaming: only the pages of the current chunk are held):

1. Each page's text is cut into paragraphs (blank lines) and each paragraph into sentences
   (:class:`SentenceSplitter`: a regular expression that knows common abbreviations).  A sentence that runs over the end of a page (no closing punctuation)
   is joined to the first sentence of the next page of the same chapter.
2. A sentence longer than a whole chunk is cut at word boundaries.
3. Sentences fill a chunk until the next one would not fit.  The next chunk starts with the
   last sentences of the previous one, about ``overlap`` (20 %) of a chunk, so an answer
   that straddles a cut is still found whole in one chunk.
4. Chunks never cross a chapter boundary.  A chapter's last chunk that would be tiny (under
   a quarter of a chunk of new text) is merged into the chunk before it when both fit in
   one chunk, or else takes more of the preceding text so it is no longer tiny.
5. A chunk does not cross an outline section boundary either (``section_breaks``): a new
   section starts a new chunk with its heading, and a section's tail follows rule 4.  The
   exception is a tiny start (a chapter title, a two-line section such as "Target
   Audience"): it shares its chunk with the next section instead of standing alone.
   Without this rule a chunk runs on into the next section, so that section's heading
   sits at the end of a chunk labelled with the previous section, split from the text it
   introduces; with it, retrieval finds the gold chunk first more often, for about 3 %
   more chunks.

6. A code listing keeps its line breaks.  A paragraph of the page (one PDF
   text block) that is a listing (``code_text.is_code_paragraph``: at least half of its lines
   read as code, and it does not end a sentence as prose does) gives one unit per line
   (a docstring whose quotes stand on lines of their own is one unit), never joined to
   the next page's text.  In the chunk's text a listing's lines are joined by single line
   breaks, the only ones a chunk's text holds (prose is whitespace-collapsed), and a
   blank line sets the listing apart from the prose around it, so the extractive backend
   can quote a comment or docstring line of it (the docstring "Return the average of
   the readings"; ``code_text.listing_units``).  A listing read as one long "sentence"
   leaves a section that is a heading over a listing nothing quotable, and the answer
   cites a prose sentence of another page instead (a chapter summary's one-line
   restatement of the section).  A statement and its output (``>>> int('32')``
   ``32``) stay one unit: one unit per line, tried first, did no better and cut them apart.

Word-piece counts are additive over whitespace-joined text (BERT's pre-tokenizer splits
on whitespace and punctuation first), so a chunk's count is the sum of its sentences'.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Sequence

from bookreader.core.code_text import code_units, is_code_paragraph, is_maths, prose_words
from bookreader.core.types import Chunk, Page

log = logging.getLogger(__name__)

#: Word pieces the model adds around every input ([CLS] ... [SEP]).
SPECIAL_TOKENS = 2
#: A chapter's last chunk with fewer new word pieces than this share of a chunk is a "tiny tail".
TINY_TAIL_SHARE = 0.25

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?:;\"'\u201d\u2019)\]]\s*$")
_ABBREVIATIONS = {
    "e.g", "i.e", "etc", "vs", "cf", "fig", "figs", "eq", "eqs", "sec", "ch", "chap", "no",
    "vol", "pp", "p", "al", "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "approx",
    "ref", "dept", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "a.m", "p.m", "ph.d",
}


_OPEN_END = re.compile(r"[a-z,]\s*$")


def _is_display(paragraph: str) -> bool:
    """A displayed formula: maths (:func:`is_maths`) on a few lines, hardly a word."""
    return (is_maths(paragraph) and paragraph.strip().count("\n") <= 3
            and prose_words(paragraph) < 3)


def chunk_id_for(book_id: str, position: int, text: str) -> str:
    """The stable id of a chunk: a UUID-shaped hash of book id, position and text.

    UUID-shaped so that vector stores which only accept UUIDs or integers as point ids
    (Qdrant) can use it directly.
    """
    digest = hashlib.sha256(f"{book_id}\x00{position}\x00{text}".encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16]))


#: A heading's numbering ("3.10. ", "Chapter 6: ", "II "): no words a question uses.
_HEADING_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|part|section)\s+)?(?:\d+(?:\.\d+)*|[IVX]+)\.?:?\s+(?=\S)",
    re.IGNORECASE)


def heading_path(chunk: Chunk) -> str:
    """The chunk's chapter and section titles, numbering left out ("Graphs > Connected
    graphs"); one title when they are the same, "" when the book has no outline."""
    parts: list[str] = []
    for title in (chunk.chapter, chunk.section):
        title = " ".join((title or "").split())
        bare = _HEADING_NUMBER.sub("", title)
        if bare and bare.lower() not in (p.lower() for p in parts):
            parts.append(bare)
    return " > ".join(parts)


def embedding_text(chunk: Chunk) -> str:
    """What a chunk's vector is made from: its heading path, then its text.

    A question is often asked in the words of the section that answers it ("How do I
    override toString?" of a section "The toString method") while only the section's
    first chunk holds its heading line: the chunks after it are matched by their text
    alone.  With the path in front, every chunk of a section is.  The path costs a few of
    the model's 256 word pieces, cut from the chunk's end, which the next chunk repeats
    (its ``overlap``)."""
    path = heading_path(chunk)
    return f"{path}\n{chunk.text}" if path else chunk.text


@dataclass(frozen=True)
class Segment:
    """A sentence (or a piece of a long one) with where it lies in the pages' texts."""

    text: str  # whitespace collapsed
    tokens: int
    page_start: int
    label_start: str
    char_start: int  # into page_start's text
    page_end: int
    label_end: str
    char_end: int  # into page_end's text, exclusive
    chapter: str
    section: str
    #: 0: prose; 1: a line of a code listing; 2: the first line of a listing's paragraph.
    code: int = 0


def _runs_through(before: str, before_kind: int, text: str, through: bool) -> bool:
    """Whether ``text`` goes on the sentence of ``before`` through a displayed formula:
    "The two frequencies of a perfect fifth are in the ratio", the display "f2 / f1 =
    3 / 2" and "whatever the pitch of the lower note." are one sentence, which the
    page's blank lines around the display cut in three.  A display goes on a prose
    segment of five words or more that ends open (a small letter or a comma); once
    ``through`` (``before`` is such a display), another display or a segment in small
    letters ("where ...", "is ...") goes on it."""
    if through:
        return _is_display(text) or text.lstrip()[:1].islower()
    return (not before_kind and _is_display(text) and _OPEN_END.search(before) is not None
            and len(before.split()) >= 5)


def join_segments(texts: Sequence[str], code: Sequence[int] = ()) -> str:
    """A chunk's text: its sentences joined by spaces, with a paragraph break after a
    segment that does not end a sentence (a heading such as "4.6 Retention and archiving").

    Without the break the heading would read as the start of the next sentence, and every
    later sentence split (citation excerpts, the extractive answer, the grounding check)
    would quote "4.6 Retention and archiving Records are kept ...".  Whitespace is the
    same to the tokenizers, so embeddings, BM25 and word-piece counts do not change.

    A sentence that runs through a displayed formula is joined by spaces, so that it
    reads as one sentence (:func:`_runs_through`).

    ``code`` gives each text's :attr:`Segment.code`: the lines of one listing paragraph
    are joined by a line break (the only single line breaks of a chunk's text, so readers
    of chunk text can split a listing into its lines), and a listing is set apart from the
    prose around it by a blank line.
    """
    kinds = list(code) + [0] * (len(texts) - len(code))
    out: list[str] = []
    through = False  # inside a sentence that runs through a displayed formula
    for i, t in enumerate(texts):
        if i:
            through = _runs_through(texts[i - 1], kinds[i - 1], t, through)
            if through:
                out.append(" ")
                through = _is_display(t)
            elif kinds[i] == 1 and kinds[i - 1]:
                out.append("\n")
            elif kinds[i] or kinds[i - 1]:
                out.append("\n\n")
            else:
                out.append(" " if _SENTENCE_END.search(texts[i - 1]) else "\n\n")
        out.append(t)
    return "".join(out)


class SentenceSplitter:
    """Sentence boundaries by a careful regular expression, with offsets.

    A sentence ends at ``.``, ``!`` or ``?`` (plus closing quotes or brackets) followed by
    whitespace and a capital letter, a digit or an opening quote or bracket, unless the
    word before the full stop is a known abbreviation ("e.g.", "Fig.", "Dr.") or a single
    initial ("J. Smith").  Code such as ``System.out.println`` or ``3.14`` has no space
    after its dots and is never cut.  NLTK's Punkt (constructed without trained data) was
    over ten times slower on a 370-page book, most of all chunking time, and where the
    two disagreed it mostly cut the contents pages' dot leaders into one-dot "sentences".
    """

    _END = re.compile(
        r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9\u00c0-\u024f])"
    )
    _LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)$")

    def _is_abbreviation(self, before: str) -> bool:
        m = self._LAST_WORD.search(before)
        if m is None:
            return False
        word = m.group(1).rstrip(".")
        return len(word) == 1 and word.isupper() or word.lower() in _ABBREVIATIONS

    def _sentences(self, part: str) -> Iterator[tuple[int, int]]:
        start = 0
        for m in self._END.finditer(part):
            if part[m.start()] == "." and self._is_abbreviation(part[start : m.start()]):
                continue
            yield start, m.end()
            start = m.end()
        yield start, len(part)

    def spans(self, text: str, cuts: Iterable[int] = ()) -> list[tuple[int, int]]:
        """``(start, end)`` offsets of the sentences of ``text``, in order, none empty.

        Args:
            text: The page text.
            cuts: Offsets where a sentence must end anyway (a chapter or section that
                starts mid-page, possibly after a heading without a full stop).
        """
        return [(s, e) for s, e, _code in self.units(text, cuts)]

    def units(self, text: str, cuts: Iterable[int] = ()) -> list[tuple[int, int, int]]:
        """:meth:`spans` with each unit's kind, ``(start, end, code)``: a paragraph that is
        a code listing (:func:`is_code_paragraph`) gives one unit per line, ``code`` 2 for
        its first line and 1 for the others; a sentence of prose has ``code`` 0."""
        bounds = sorted({0, len(text), *(c for c in cuts if 0 < c < len(text))})
        out: list[tuple[int, int, int]] = []
        for lo, hi in zip(bounds, bounds[1:]):
            region = text[lo:hi]
            pos = 0
            for part in _PARAGRAPH_BREAK.split(region):
                start = region.find(part, pos) if part else pos
                pos = start + len(part)
                if not part.strip():
                    continue
                if is_code_paragraph(part.split("\n")):
                    pieces = code_units(part)
                    kinds = [2] + [1] * (len(pieces) - 1)
                else:
                    pieces = list(self._sentences(part))
                    kinds = [0] * len(pieces)
                for (s, e), kind in zip(pieces, kinds):
                    sentence = part[s:e]
                    if sentence.strip():
                        s += len(sentence) - len(sentence.lstrip())
                        e -= len(sentence) - len(sentence.rstrip())
                        out.append((lo + start + s, lo + start + e, kind))
        return out


class Chunker:
    """Turns a stream of pages into a stream of chunks.

    Args:
        count_tokens: Word pieces of a text without special tokens (the embedder's
            ``count_tokens``).
        max_tokens: The model's input limit including special tokens (256 for MiniLM).
        overlap: Share of a chunk repeated at the start of the next one.
        section_breaks: Start a new chunk at each outline section (rule 5 above); False
            gives the chunks of chunker version 2, which only broke at chapters.
    """

    def __init__(
        self,
        count_tokens: Callable[[str], int],
        *,
        max_tokens: int = 256,
        overlap: float = 0.2,
        section_breaks: bool = True,
    ) -> None:
        if max_tokens <= SPECIAL_TOKENS + 8:
            raise ValueError(f"max_tokens={max_tokens} is too small for a chunk")
        self._count = count_tokens
        self.budget = max_tokens - SPECIAL_TOKENS
        self.overlap_tokens = int(self.budget * min(max(overlap, 0.0), 0.5))
        self.tiny_tokens = int(self.budget * TINY_TAIL_SHARE)
        self.section_breaks = section_breaks
        self._splitter = SentenceSplitter()

    # --- public ------------------------------------------------------------------------
    def chunks(self, pages: Iterable[Page], book_id: str) -> Iterator[Chunk]:
        """Yield the book's chunks in order; ``position`` counts from 0."""
        position = 0
        chapter_segments: Optional[_ChapterWindow] = None
        current: Optional[tuple[str, str]] = None
        for segment in self._segments(pages):
            key = (segment.chapter, segment.section if self.section_breaks else "")
            if key != current:
                # A new chapter always starts a new window; a new section does unless the
                # open window is only a tiny start (a chapter title, a two-line section).
                if (chapter_segments is None or current is None or segment.chapter != current[0]
                        or chapter_segments.substantial()):
                    if chapter_segments is not None:
                        for chunk_segs in chapter_segments.finish():
                            yield self._make_chunk(book_id, position, chunk_segs)
                            position += 1
                    chapter_segments = _ChapterWindow(self)
                current = key
            assert chapter_segments is not None
            for chunk_segs in chapter_segments.add(segment):
                yield self._make_chunk(book_id, position, chunk_segs)
                position += 1
        if chapter_segments is not None:
            for chunk_segs in chapter_segments.finish():
                yield self._make_chunk(book_id, position, chunk_segs)
                position += 1

    # --- sentences ---------------------------------------------------------------------
    def _segments(self, pages: Iterable[Page]) -> Iterator[Segment]:
        """Sentences of every page; a sentence cut by a page break is joined back."""
        # The last sentence of the previous page when it did not end, with its raw text.
        pending: Optional[tuple[Segment, str]] = None
        for page in pages:
            starts = getattr(page, "section_starts", ())
            cuts = [start for start, _chapter, _section in starts]  # 0 included
            cut_set = set(cuts)
            spans = self._splitter.units(page.text, cuts) if page.text else []
            for i, (s, e, code) in enumerate(spans):
                raw: Optional[str] = page.text[s:e]
                chapter, section = _section_at(page, s)
                seg = Segment(
                    " ".join(page.text[s:e].split()), -1, page.index, page.label, s,
                    page.index, page.label, e, chapter, section, code,
                )
                if pending is not None:
                    prev = pending[0]
                    continues = (
                        i == 0
                        and not code
                        and (prev.chapter, prev.section) == (chapter, section)
                        and not any(c <= s for c in cuts)
                    )
                    if continues:
                        seg = Segment(
                            f"{prev.text} {seg.text}", -1, prev.page_start, prev.label_start,
                            prev.char_start, page.index, page.label, e, prev.chapter,
                            prev.section,
                        )
                        raw = None  # spans two pages: no single raw text
                    else:
                        yield from self._fit(*pending)
                    pending = None
                # A section's heading at the foot of a page is not a sentence that the
                # next page finishes (it would read "2.2 Asking about ... Select a ...").
                heading = s in cut_set and len(seg.text.split()) <= 12
                # A line of a listing is whole: it never runs on to the next page's text.
                if (i == len(spans) - 1 and raw is not None and not heading and not code
                        and not _SENTENCE_END.search(raw)):
                    pending = (seg, raw)
                else:
                    yield from self._fit(seg, raw)
            if not spans and pending is not None:
                yield from self._fit(*pending)
                pending = None
        if pending is not None:
            yield from self._fit(*pending)

    def _fit(self, seg: Segment, raw: Optional[str]) -> Iterator[Segment]:
        """The segment with its token count, cut at word boundaries if over budget.

        Args:
            seg: The sentence.
            raw: Its text exactly as on the page (for exact offsets of the pieces), or
                None for a sentence joined across a page break.
        """
        n = self._count(seg.text)
        if n <= self.budget:
            yield _with_tokens(seg, n)
            return
        if raw is None:
            # Rare: a long sentence across a page break.  Each piece keeps the page span
            # and offsets of the whole sentence.
            for k, (text, tokens, _s, _e) in enumerate(self._split_words(seg.text)):
                yield Segment(
                    text, tokens, seg.page_start, seg.label_start, seg.char_start,
                    seg.page_end, seg.label_end, seg.char_end, seg.chapter, seg.section,
                    min(seg.code, 1) if k else seg.code,
                )
            return
        for k, (text, tokens, start, end) in enumerate(self._split_words(raw)):
            yield Segment(
                text, tokens, seg.page_start, seg.label_start, seg.char_start + start,
                seg.page_end, seg.label_end, seg.char_start + end, seg.chapter, seg.section,
                min(seg.code, 1) if k else seg.code,
            )

    def _split_words(self, text: str) -> list[tuple[str, int, int, int]]:
        """Greedy pieces of ``text`` of at most ``budget`` word pieces, cut between words.

        Returns:
            ``(piece text, word pieces, start, end)`` with offsets into ``text``.
        """
        pieces: list[tuple[str, int, int, int]] = []
        words: list[str] = []
        tokens = 0
        start = end = 0
        for m in _WORD.finditer(text):
            word = m.group(0)
            n = self._count(word)
            if n > self.budget:  # one absurd "word" (a URL, base64...): cut it by characters
                if words:
                    pieces.append((" ".join(words), tokens, start, end))
                    words, tokens = [], 0
                step = max(1, len(word) * self.budget // (2 * n))
                for i in range(0, len(word), step):
                    part = word[i : i + step]
                    a = m.start() + i
                    pieces.append((part, self._count(part), a, a + len(part)))
                continue
            if words and tokens + n > self.budget:
                pieces.append((" ".join(words), tokens, start, end))
                words, tokens = [], 0
            if not words:
                start = m.start()
            words.append(word)
            tokens += n
            end = m.end()
        if words:
            pieces.append((" ".join(words), tokens, start, end))
        return pieces

    # --- chunks ------------------------------------------------------------------------
    @staticmethod
    def _make_chunk(book_id: str, position: int, segs: list[Segment]) -> Chunk:
        text = join_segments([s.text for s in segs], [s.code for s in segs])
        first = segs[0]
        page_end = max(s.page_end for s in segs)
        end_seg = next(s for s in reversed(segs) if s.page_end == page_end)
        return Chunk(
            chunk_id=chunk_id_for(book_id, position, text),
            book_id=book_id,
            position=position,
            text=text,
            page_start=first.page_start,
            page_end=page_end,
            label_start=first.label_start,
            label_end=end_seg.label_end,
            chapter=first.chapter,
            section=first.section,
            char_start=first.char_start,
            char_end=end_seg.char_end,
        )


def _section_at(page: Page, offset: int) -> tuple[str, str]:
    """(chapter, section) in effect at ``offset`` of the page (sections may start mid-page)."""
    section_at = getattr(page, "section_at", None)
    if section_at is None:
        return page.chapter, page.section
    return section_at(offset)


def _with_tokens(seg: Segment, n: int) -> Segment:
    return Segment(
        seg.text, n, seg.page_start, seg.label_start, seg.char_start,
        seg.page_end, seg.label_end, seg.char_end, seg.chapter, seg.section, seg.code,
    )


class _ChapterWindow:
    """Packs one chapter's sentences into overlapping chunks, holding one chunk back so a
    tiny last chunk can be merged into it."""

    def __init__(self, chunker: Chunker) -> None:
        self.c = chunker
        self.window: list[Segment] = []  # segments of the chunk being filled
        self.new_from = 0  # index in window of the first segment not in the previous chunk
        self.held: Optional[list[Segment]] = None  # last full chunk, not yet emitted

    def _tokens(self, segs: list[Segment]) -> int:
        return sum(s.tokens for s in segs)

    def substantial(self) -> bool:
        """True once the window holds more than a tiny start (see ``tiny_tokens``)."""
        return self.held is not None or self._tokens(self.window) >= self.c.tiny_tokens

    def add(self, seg: Segment) -> Iterator[list[Segment]]:
        if self.window and self._tokens(self.window) + seg.tokens > self.c.budget:
            if self.new_from < len(self.window):
                full = self.window
                if self.held is not None:
                    yield self.held
                self.held = full
                carry = self._overlap(full, seg.tokens)
            else:  # window is only overlap: drop the overlap, it cannot fit with seg
                carry = []
            self.window = carry
            self.new_from = len(carry)
        self.window.append(seg)

    def _overlap(self, segs: list[Segment], incoming: int) -> list[Segment]:
        """The trailing sentences of ``segs`` worth about ``overlap_tokens``."""
        room = self.c.budget - incoming
        carry: list[Segment] = []
        total = 0
        for s in reversed(segs):
            if total >= self.c.overlap_tokens or total + s.tokens > room:
                break
            if total + s.tokens > self.c.overlap_tokens * 1.5 and carry:
                break
            carry.insert(0, s)
            total += s.tokens
        if len(carry) == len(segs):  # never repeat a whole chunk
            carry = carry[1:]
        return carry

    def finish(self) -> Iterator[list[Segment]]:
        tail_new = self.window[self.new_from :]
        if not tail_new:
            if self.held is not None:
                yield self.held
            return
        if self.held is None:
            yield self.window
            return
        new_tokens = self._tokens(tail_new)
        if new_tokens >= self.c.tiny_tokens:
            yield self.held
            yield self.window
            return
        # Tiny tail: merge into the held chunk if it fits ...
        merged = self.held + tail_new
        if self._tokens(merged) <= self.c.budget:
            yield merged
            return
        # ... else let the tail take more of the preceding text so it is not tiny.
        yield self.held
        tail = list(tail_new)
        total = new_tokens
        for s in reversed(self.held):
            if total + s.tokens > self.c.budget:
                break
            tail.insert(0, s)
            total += s.tokens
        yield tail
