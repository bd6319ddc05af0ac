"""Citations: read them from a model's answer, check them against the page, fix or drop.

A citation reads ``[Source: Section (Page X) - "excerpt"]`` (written and read by
:mod:`bookreader.core.model_output`, re-exported here).  Every one the model writes is
verified: its excerpt must occur on the cited page once both are reduced to letters and
digits (see :func:`bookreader.core.sentences.match_key`), which makes the check immune to
whitespace, quote styles, ligatures and hyphenation while still demanding the words
verbatim.  A citation whose excerpt is found in another excerpt of the context is moved
there; one that is not found anywhere is repaired with the best matching sentence of the
cited chunk (or, failing that, of any chunk) when that sentence shares at least half of
its content words, and dropped otherwise.  Each surviving citation carries the physical
page and the rectangles the reader highlights.

In selected-text mode the source is the selection itself: citations are checked against
it, and carry the selection's page when it is known (else page -1).
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from bookreader.core.model_output import (  # noqa: F401 - the format, as citations' API
    RawCitation,
    claim_units,
    format_citation,
    has_citation,
    parse_citations,
    strip_citations,
)
from bookreader.core.injection import finished_part, in_instruction, instruction_start
from bookreader.core.prompts import SELECTION_SECTION
from bookreader.core.sentences import (
    content_terms,
    key_only,
    match_key,
    split_sentences,
    words,
)
from bookreader.core.types import Chunk, Citation, Rect
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=512)
def _page_match_key(text: str) -> tuple[str, list[int]]:
    """``match_key`` of a page's text, kept for the pages cited last: every answer
    verifies its citations against whole pages, and a class asks about the same ones.
    (Callers only read the offsets list.)"""
    return match_key(text)

#: An excerpt shorter than this (letters and digits) proves nothing and is repaired.
MIN_KEY_CHARS = 12
#: Share of an excerpt's content words a repair sentence must contain.
REPAIR_MIN_OVERLAP = 0.5
#: Longest excerpt kept when a sentence is used as a repair.
MAX_EXCERPT_CHARS = 300

@dataclass(frozen=True)
class CitationSource:
    """A piece of the context a citation may point at: a chunk or the selection."""

    text: str
    section: str
    page_start: int  # 0-based physical, -1 when unknown (a selection without a page)
    page_end: int
    label_start: str
    label_end: str
    is_selection: bool = False

    @classmethod
    def from_chunk(cls, chunk: Chunk) -> "CitationSource":
        return cls(
            text=chunk.text,
            section=chunk.section or chunk.chapter,
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            label_start=chunk.label_start,
            label_end=chunk.label_end,
        )

    @classmethod
    def for_selection(
        cls, text: str, page_range: Optional[tuple[int, int]] = None, pages: Any = None
    ) -> "CitationSource":
        """The selection as a source; pages known from ``page_range`` (labels via ``pages``)."""
        if page_range is None:
            return cls(text, SELECTION_SECTION, -1, -1, "", "", is_selection=True)
        a, b = page_range
        la, lb = _label(pages, a), _label(pages, b)
        return cls(text, SELECTION_SECTION, a, b, la, lb, is_selection=True)

    @property
    def page_label(self) -> str:
        if self.label_start == self.label_end:
            return self.label_start
        return f"{self.label_start}-{self.label_end}"

    def page_indexes(self) -> list[int]:
        if self.page_start < 0:
            return []
        return list(range(self.page_start, self.page_end + 1))


def _label(pages: Any, index: int) -> str:
    if pages is not None:
        try:
            return pages.page(index).label
        except (IndexError, ValueError, KeyError, BookReaderError) as exc:
            log.warning("No label for page %d: %s", index, exc)
    return str(index + 1)


class CitationChecker:
    """Verifies, repairs and locates the citations of one answer.

    Args:
        sources: The context the model saw (selection first, then chunks in prompt order).
        pages: Optional page source (``PdfBook``) with ``page(i) -> Page`` and
            ``search_rects(i, text) -> list[Rect]``; without it, excerpts are checked
            against the chunk text and carry no rectangles.
    """

    def __init__(self, sources: Sequence[CitationSource], pages: Any = None) -> None:
        self.sources = list(sources)
        self.pages = pages
        self._page_text: dict[int, str] = {}
        self._last_offset: Optional[int] = None  # page offset of the last excerpt located

    # --- page access ------------------------------------------------------------------
    def _text_of_page(self, index: int) -> Optional[str]:
        if self.pages is None or index < 0:
            return None
        if index not in self._page_text:
            try:
                self._page_text[index] = self.pages.page(index).text
            except (IndexError, ValueError, KeyError, BookReaderError) as exc:
                log.warning("Cannot read page %d to verify a citation: %s", index, exc)
                self._page_text[index] = ""
        return self._page_text[index]

    def _key_of_page(self, index: int) -> tuple[str, list[int]]:
        return _page_match_key(self._text_of_page(index) or "")

    def _label_pages(self, src: CitationSource) -> list[tuple[int, str]]:
        """(physical page, printed label) for every page a source covers."""
        idx = src.page_indexes()
        if not idx:
            return []
        if len(idx) == 1:
            return [(idx[0], src.label_start)]
        out = []
        for i in idx:
            if i == src.page_start:
                out.append((i, src.label_start))
            elif i == src.page_end:
                out.append((i, src.label_end))
            else:
                out.append((i, _label(self.pages, i)))
        return out

    # --- locating an excerpt --------------------------------------------------------
    def _section(self, src: CitationSource, page: int, original: str) -> str:
        """The section the excerpt really sits in.

        A chunk is named after its first section, but it may run on into the next one;
        the page knows where each section starts, so the excerpt's own offset decides.
        """
        offset, self._last_offset = self._last_offset, None
        if src.is_selection or self.pages is None or page < 0 or not original or offset is None:
            return src.section
        try:
            section_at = getattr(self.pages.page(page), "section_at", None)
            if section_at is None:
                return src.section
            chapter, section = section_at(offset)
        except (IndexError, ValueError, KeyError, BookReaderError):
            return src.section
        return section or chapter or src.section

    def _locate(self, src: CitationSource, key: str, prefer_label: str) -> Optional[tuple[int, str, str]]:
        """Find ``key`` in ``src``: ``(page, label, text as on the page)`` or None.

        The page is -1 when the excerpt is in the source but its page cannot be told.
        """
        self._last_offset = None
        if key not in key_only(src.text):
            return None
        pages = self._label_pages(src)
        pages.sort(key=lambda p: p[1] != prefer_label)
        if self.pages is not None:
            for page, label in pages:
                pkey, pindex = self._key_of_page(page)
                pos = pkey.find(key)
                if pos >= 0:
                    text = self._text_of_page(page) or ""
                    original = text[pindex[pos] : pindex[pos + len(key) - 1] + 1]
                    self._last_offset = pindex[pos]
                    return page, label, original
            # Across a page break: the part on the first page is what can be highlighted.
            for page, label in pages[:-1] if len(pages) > 1 else []:
                pkey, pindex = self._key_of_page(page)
                nkey = self._key_of_page(page + 1)[0]
                joined = pkey + nkey
                pos = joined.find(key)
                if 0 <= pos < len(pkey):
                    text = self._text_of_page(page) or ""
                    self._last_offset = pindex[pos]
                    return page, label, text[pindex[pos] :]
        if pages:
            page, label = pages[0]
            if src.is_selection and len(pages) > 1:
                return -1 if self.pages is None else page, label, ""
            return page, label, ""
        return -1, src.page_label, ""

    def _rects(self, page: int, text: str) -> tuple[Rect, ...]:
        if self.pages is None or page < 0 or not text.strip():
            return ()
        finder = getattr(self.pages, "search_rects", None)
        if finder is None:
            return ()
        try:
            return tuple(tuple(r) for r in finder(page, text))
        except Exception as exc:  # noqa: BLE001 - highlighting is best effort, but logged
            log.warning("Cannot locate a citation on page %d for highlighting: %s", page, exc)
            return ()

    # --- the checks -----------------------------------------------------------------
    def _cited_sources(self, raw: RawCitation) -> list[CitationSource]:
        """Sources in the order to try: those matching the cited page/section first."""
        label = raw.page_label.replace("\u2013", "-")
        first = label.split("-")[0].strip() if label else ""
        section = raw.section.lower()

        def rank(src: CitationSource) -> int:
            labels = {lb for _, lb in self._label_pages(src)} | {src.label_start, src.label_end}
            page_hit = bool(first) and (first in labels or label == src.page_label)
            section_hit = bool(section) and (
                section == src.section.lower()
                or (src.is_selection and "select" in section)
            )
            return 0 if page_hit and section_hit else 1 if page_hit else 2 if section_hit else 3

        return sorted(self.sources, key=rank)

    def check(self, raw: RawCitation) -> Optional[Citation]:
        """The verified (possibly repaired) citation, or None when it must be dropped."""
        if not self.sources:
            return None
        ordered = self._cited_sources(raw)
        label_hint = raw.page_label.split("-")[0].strip()
        key = key_only(raw.excerpt)
        if len(key) >= MIN_KEY_CHARS:
            for n, src in enumerate(ordered):
                hit = self._locate(src, key, label_hint)
                if hit is None:
                    continue
                if in_instruction(key, src.text):
                    log.info("Dropped a citation quoting a planted instruction: %r",
                             raw.excerpt[:80])
                    return None
                page, label, original = hit
                moved = n > 0 and (label_hint and label != label_hint)
                excerpt = " ".join((original or raw.excerpt).split())
                return Citation(
                    section=self._section(src, page, original),
                    page=page,
                    page_label=label,
                    excerpt=excerpt,
                    verified=True,
                    repaired=bool(moved),
                    rects=self._rects(page, original),
                )
        return self._repair(raw, ordered)

    def _repair(self, raw: RawCitation, ordered: list[CitationSource]) -> Optional[Citation]:
        probe = raw.excerpt if len(content_terms(raw.excerpt)) >= 2 else raw.claim
        want = set(content_terms(probe))
        if not want:
            return None
        best: Optional[tuple[float, int, CitationSource, str]] = None
        for rank, src in enumerate(ordered):
            for sent in split_sentences(src.text):
                sent = finished_part(" ".join(sent.split()))
                start = instruction_start(sent)
                if start is not None:  # a planted instruction is never support
                    sent = sent[:start]
                have = set(content_terms(sent))
                if not have:
                    continue
                score = len(want & have) / len(want)
                # Prefer the cited source on ties (lower rank), then shorter sentences.
                if best is None or score > best[0] + 1e-9:
                    best = (score, rank, src, sent)
        if best is None or best[0] < REPAIR_MIN_OVERLAP:
            log.info("Dropped an unverifiable citation: %r", raw.excerpt[:80])
            return None
        _, _, src, sent = best
        if len(sent) > MAX_EXCERPT_CHARS:
            sent = sent[:MAX_EXCERPT_CHARS].rsplit(" ", 1)[0]
        hit = self._locate(src, key_only(sent), raw.page_label.split("-")[0].strip())
        page, label, original = hit if hit else (src.page_start, src.label_start, "")
        return Citation(
            section=self._section(src, page, original),
            page=page,
            page_label=label,
            excerpt=" ".join(sent.split()),
            verified=True,
            repaired=True,
            rects=self._rects(page, original or sent),
        )

    def support_for(self, claim: str) -> Optional[Citation]:
        """A citation for an uncited claim: its best matching context sentence, if any."""
        raw = RawCitation("", "", "", 0, 0, claim)
        return self._repair(raw, list(self.sources))


def verify_answer(
    text: str,
    sources: Sequence[CitationSource],
    pages: Any = None,
    *,
    add_missing: bool = True,
) -> tuple[str, tuple[Citation, ...]]:
    """Check every citation of ``text`` and rewrite it with the checked ones.

    Args:
        text: The model's answer (without the confidence line).
        sources: What the model saw.
        pages: Optional ``PdfBook`` for page text and highlight rectangles.
        add_missing: Give every uncited sentence of the answer its best supporting context
            sentence as a repaired citation (when one shares half its content words).

    Returns:
        The answer with its citation markers replaced by the verified ones (dropped ones
        removed) and the tuple of unique verified citations, in order.
    """
    checker = CitationChecker(sources, pages)
    raws = parse_citations(text)
    pieces: list[str] = []
    cites: list[Citation] = []
    seen: set[tuple[int, str]] = set()
    pos = 0
    for raw in raws:
        pieces.append(text[pos : raw.start])
        pos = raw.end
        cit = checker.check(raw)
        if cit is None:
            continue
        ident = (cit.page, key_only(cit.excerpt))
        if ident not in seen:  # listed once, but each sentence keeps its marker
            seen.add(ident)
            cites.append(cit)
        pieces.append(format_citation(cit.section, cit.page_label, cit.excerpt))
    pieces.append(text[pos:])
    out = "".join(pieces)
    out = re.sub(r"[ \t]+\n", "\n", re.sub(r"[ \t]{2,}", " ", out)).strip()
    if add_missing and out:
        units = claim_units(out)
        added = False
        rebuilt: list[str] = []
        for claim, full in units:
            if words(claim) and not has_citation(full):
                cit = checker.support_for(claim)
                if cit is not None:
                    ident = (cit.page, key_only(cit.excerpt))
                    if ident not in seen:
                        seen.add(ident)
                        cites.append(cit)
                    full = f"{full} {format_citation(cit.section, cit.page_label, cit.excerpt)}"
                    added = True
            rebuilt.append(full)
        if added:
            out = " ".join(rebuilt)
            # in the order the answer cites them, so the window's [1] [2] read in order
            # (a citation added to the first sentence came after the second's own)
            order = {id(c): out.find(format_citation(c.section, c.page_label, c.excerpt))
                     for c in cites}
            cites.sort(key=lambda c: order[id(c)] if order[id(c)] >= 0 else len(out))
    return out, tuple(cites)
