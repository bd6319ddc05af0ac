"""The sentences study tools are made from, and the citations that prove them.

:func:`read_sentences` reads a range of pages into :class:`StudySentence` s in reading
order, each with its page, printed label, chapter, section and offset on the page.  It
leaves out what a student does not revise from: exercises and other apparatus sections
(the retrieval's own :data:`~bookreader.core.retrieval_priors.APPARATUS_SECTION` minus
summaries and glossaries), code listings (:func:`~bookreader.core.code_text.is_code_paragraph`),
captions and figure text, contents lines, and pages without a text layer (listed, so the
caller can say so).

:class:`Citer` cites a piece of text on its page with the answering pipeline's own
:class:`~bookreader.core.citations.CitationChecker`: the citation is made only when the
excerpt is found verbatim on that page (letters and digits compared), never repaired.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Optional

from bookreader.core.citations import CitationChecker, CitationSource
from bookreader.core.code_text import is_code_paragraph
from bookreader.core.llm.answer_type import (
    TOC_LINE,
    is_alt_text,
    is_import_line,
    looks_like_code,
)
from bookreader.core.model_output import RawCitation
from bookreader.core.sentences import STOPWORDS, key_only, split_sentences, words
from bookreader.core.types import CancelFn, Citation, ProgressFn, check_cancel, no_progress
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

#: Sections nobody revises from: exercises, quizzes, references, objectives.  Summaries,
#: glossaries and vocabularies are kept (they hold the book's own key sentences and terms).
SKIPPED_SECTION = re.compile(
    r"exercise|problem\s+set|assessment|\bquiz|review\s+question|further\s+reading|"
    r"learning\s+(?:objective|outcome|goal)|references|bibliography|\bindex\b|"
    r"\bcontents\b|acknowledg|\bpreface\b|copyright|\banswers?\b|\bsolutions?\b", re.IGNORECASE)
#: Sections that list terms with their definitions.
GLOSSARY_SECTION = re.compile(r"glossary|vocabulary|key\s+terms|definitions|terminology",
                              re.IGNORECASE)
#: A caption or figure label: "Figure 3.2: ...", "Fig. 4", "Table 1.", "Listing 2.3".
CAPTION = re.compile(r"^\s*(?:figure|fig\.|table|listing|chart|diagram|image|photo)\s*"
                     r"[\dIVXivx]+(?:[.\-]\d+)*\s*[:.\-\u2013\u2014]?", re.IGNORECASE)
#: An exercise opening inside running text ("Exercise 3.1", "Question 4:").
EXERCISE = re.compile(r"^\s*(?:exercise|problem|question)\s+\d+(?:\.\d+)*\b", re.IGNORECASE)
#: Fewest and most words of a sentence worth studying.
MIN_WORDS = 4
MAX_WORDS = 80


@dataclass(frozen=True)
class StudySentence:
    """One sentence (or glossary entry) of a page, where it stands, and its context."""

    text: str  # whitespace normalised; the words as on the page
    page: int  # 0-based physical
    label: str  # printed page label
    chapter: str
    section: str
    offset: int  # start in the page's text
    position: int  # reading order within the range
    glossary: bool = False  # inside a glossary or vocabulary section
    paragraph: int = 0  # which paragraph of the page (entries of a list share none)
    #: Italic or bold runs of the page set inside this sentence (a term where it is defined).
    emphasis: tuple[str, ...] = ()
    #: Program text set in a monospaced font inside this sentence (identifiers, calls).
    code: tuple[str, ...] = ()


@dataclass
class PageRead:
    """What :func:`read_sentences` found."""

    sentences: list[StudySentence]
    pages_without_text: list[int]
    chapters: list[str]


#: The first line of a glossary entry: a lower-case term of up to four words (with what
#: it is of, in brackets: "depth (of a tree)") or an abbreviation in capitals ("FIFO"),
#: then a capitalised definition ("bug An error in a program."), or "term:
#: definition".
_ENTRY_START = re.compile(
    r"^\s*(?:(?:[a-z\u00e0-\u024f][\w'\u2019\-]*(?:\s[a-z][\w'\u2019\-]*){0,3}"
    r"(?:\s\([^)\n]{1,40}\))?|[A-Z][A-Z0-9]+)\s+"
    r"[A-Z\u201c\"](?:[a-z]|\s)|[^:\n]{1,50}:\s+\S)")


def glossary_entries(block: str) -> list[str]:
    """A glossary paragraph's entries: each starts a line (:data:`_ENTRY_START`) and runs
    on over the lines after it.  Fewer than two entries: the block's sentences."""
    lines = block.split("\n")
    # an entry starts a line after one that ended a definition ("... a computer." then
    # "newline: ..."); a wrapped line ("... enables a computer" / "to run Java programs.")
    # does not start one, even when it opens with lower-case words and a capital
    starts = [i for i, ln in enumerate(lines) if _ENTRY_START.match(ln) and (
        i == 0 or lines[i - 1].rstrip().endswith((".", "!", "?", ")", "\u201d", '"')))
        and ln.split(" ", 1)[0].lower() not in STOPWORDS]
    if len(starts) < 2:
        return split_sentences(block)
    out = [" ".join(lines[:starts[0]]).strip()] if starts[0] > 0 else []
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        out.append(" ".join(ln.strip() for ln in lines[a:b]))
    return [e for e in out if e]


#: What a reference-list entry holds: a year in brackets or after a comma, pages, "et al.",
#: a volume and issue ("30(7):073110"), a DOI, an ISBN, a URL, a publisher's word.
_CITATION_MARK = re.compile(
    r"\((?:19|20)\d\d[a-z]?\)|,\s*(?:19|20)\d\d[a-z]?\b|\bpp?\.\s*\d|\bet\s+al\b|"
    r"\bvol\.\s*\d|\d+\s*\(\d+\)\s*:\s*\d+|\bdoi\b|\bisbn\b|\bissn\b|https?:|"
    r"\b(?:publisher|press|edition|proceedings|journal)\b", re.IGNORECASE)
#: A numbered reference-list entry's opening: "[4] ", "4. Smith, J." .
_REFERENCE_OPENING = re.compile(r"^\s*(?:\[\d{1,3}\]\s|\d{1,3}\.\s+[A-Z][\w\-']*,\s+[A-Z])")


def reference_entry(block: str) -> bool:
    """True for a paragraph of a reference list: a numbered entry ("[4] Chatterjee ...")
    or text with two or more citation marks (:data:`_CITATION_MARK`), few words between
    them and no "is"/"are" (prose that cites a work, "Dobzhansky (1951) defined ... (p. 16)",
    has more words or a verb of its own).  Such a paragraph names works, it says nothing
    a card can teach; its "Publisher: ..." and "Chaos: An Interdisciplinary Journal ..."
    read like entries."""
    if _REFERENCE_OPENING.match(block):
        return True
    marks = len(_CITATION_MARK.findall(block))
    return (marks >= 2 and len(words(block)) <= 8 * marks
            and not re.search(r"\b(?:is|are)\b", block))


def skipped_page(text: str) -> bool:
    """True for a page that opens with a heading of a section nobody revises from
    (:data:`SKIPPED_SECTION`, "Bibliography", "Index"), when the outline does not have it."""
    for line in text.split("\n"):
        if line.strip():
            return len(line.split()) <= 3 and bool(SKIPPED_SECTION.fullmatch(
                line.strip().rstrip(":").strip()) or re.fullmatch(
                r"(?:\d+(?:\.\d+)*\s+)?(?:references|bibliography|index|further\s+reading)",
                line.strip(), re.IGNORECASE))
    return False


#: A footnote mark after a sentence's full stop, before the next sentence: "... of the
#: sample.1 Our sample is ...".
_FOOTNOTE_MARK = re.compile(r"(?<=[a-z]\.)\d{1,2}\s+(?=[A-Z][a-z])")


def footnote_split(unit: str) -> list[str]:
    """``unit`` cut where a footnote mark follows a full stop, the mark left out: the
    footnote's text is printed elsewhere on the page, so a sentence read across the mark
    is not one the page holds in that order."""
    parts = _FOOTNOTE_MARK.split(unit)
    return [p for p in (q.strip() for q in parts) if p]


def _skip_paragraph(block: str) -> bool:
    lines = [ln for ln in block.split("\n") if ln.strip()]
    if not lines:
        return True
    if is_code_paragraph(lines) or reference_entry(block):
        return True
    first = lines[0]
    return bool(CAPTION.match(first) or EXERCISE.match(first) or is_alt_text(first))


def studyable(sentence: str) -> bool:
    """A sentence a card or a quiz can be made from: prose, not code, a caption, a
    contents line or a question."""
    n = len(words(sentence))
    if n < MIN_WORDS or n > MAX_WORDS:
        return False
    s = sentence.strip()
    if s.rstrip("\"'\u201d)").endswith("?"):
        return False
    if (CAPTION.match(s) or EXERCISE.match(s) or TOC_LINE.search(s) or looks_like_code(s)
            or is_import_line(s) or is_alt_text(s)):
        return False
    letters = sum(ch.isalpha() for ch in s)
    return letters >= 0.6 * len(s.replace(" ", ""))


def read_sentences(pages: Any, first: int, last: int, *,
                   progress: ProgressFn = no_progress,
                   cancel: Optional[CancelFn] = None) -> PageRead:
    """The studyable sentences of pages ``first``..``last`` (0-based, inclusive).

    Args:
        pages: A page source (``PdfBook``): ``page(i) -> Page``.
        progress: Called once a page as ``(done, total, "Reading pages")``.
        cancel: Polled once a page; raises :class:`~bookreader.errors.Cancelled`.
    """
    out: list[StudySentence] = []
    empty: list[int] = []
    chapters: dict[str, None] = {}
    total = last - first + 1
    for n, index in enumerate(range(first, last + 1)):
        check_cancel(cancel)
        progress(n, total, "Reading pages")
        try:
            page = pages.page(index)
        except (IndexError, ValueError, KeyError, BookReaderError) as exc:
            log.warning("Study: cannot read page %d: %s", index, exc)
            empty.append(index)
            continue
        text = page.text or ""
        if skipped_page(text):
            continue
        if not page.has_text_layer:
            empty.append(index)
            continue
        if len(words(text)) < MIN_WORDS:  # a part title or an almost empty page
            continue
        runs = _page_emphasis(pages, index)
        code = _page_runs(pages, "code", index)
        pos = 0
        for p_no, block in enumerate(re.split(r"\n\s*\n", text)):
            start = text.find(block, pos)
            pos = start + len(block) if start >= 0 else pos
            if start < 0 or _skip_paragraph(block):
                continue
            cursor = start
            in_glossary = bool(GLOSSARY_SECTION.search(" ".join(page.section_at(start))))
            units = glossary_entries(block) if in_glossary else split_sentences(block)
            for sent in (part for unit in units for part in footnote_split(unit)):
                at = _find(text, sent, cursor)
                if at < 0:
                    continue
                cursor = at + len(sent)
                chapter, section = page.section_at(at)
                chapters.setdefault(chapter, None)
                where = section or chapter
                if SKIPPED_SECTION.search(where or ""):
                    continue
                flat = unglued(" ".join(sent.split()))
                if not studyable(flat):
                    continue
                out.append(StudySentence(
                    text=flat, page=index, label=page.label, chapter=chapter, section=where,
                    offset=at, position=len(out), paragraph=p_no,
                    glossary=bool(GLOSSARY_SECTION.search(where or "")),
                    emphasis=emphasis_in(flat, runs), code=emphasis_in(flat, code)))
    progress(total, total, "Reading pages")
    return PageRead(out, empty, [c for c in chapters if c])


#: A mathematical letter (U+1D400-1D7FF: italic, bold, script ... letters and digits)
#: that a PDF's text layer runs into the next word ("a list of length 𝑛is").
_GLUED_MATH = re.compile("([\U0001D400-\U0001D7FF])(?=[A-Za-z\u00c0-\u024f]{2})")


def unglued(text: str) -> str:
    """``text`` with a space between a mathematical letter and the word the PDF ran into
    it; the letters stay the same, so a citation is still found on the page."""
    return _GLUED_MATH.sub(r"\1 ", text)


#: An emphasised run worth matching: two letters running, at most six words.
_RUN_WORTH = re.compile(r"[^\W\d_]{2}")


def _page_emphasis(pages: Any, index: int) -> list[str]:
    """The page's italic or bold runs inside running text (``pages.emphasis``, when the
    page source reads type; [] otherwise)."""
    found = _page_runs(pages, "emphasis", index)
    return [r for r in found if _RUN_WORTH.search(r) and len(r.split()) <= 6]


def _page_runs(pages: Any, kind: str, index: int) -> list[str]:
    """The page's runs of one kind of type, ``pages.emphasis`` or ``pages.code``, once
    each ([] when the page source does not read type)."""
    read = getattr(pages, kind, None)
    if read is None:
        return []
    try:
        found = read(index)
    except (IndexError, ValueError, KeyError, BookReaderError) as exc:
        log.info("Study: cannot read the type of page %d: %s", index, exc)
        return []
    return [r for r in dict.fromkeys(found) if any(ch.isalpha() for ch in r)]


def emphasis_in(sentence: str, runs: list[str]) -> tuple[str, ...]:
    """The runs set inside ``sentence`` as whole words, but not the whole sentence."""
    out = []
    for run in runs:
        if len(run) >= len(sentence) - 2:
            continue
        if re.search(r"(?<![\w\-])" + re.escape(run) + r"(?![\w\-])", sentence):
            out.append(run)
    return tuple(out)


def _find(text: str, unit: str, start: int) -> int:
    """Where ``unit`` (a sentence, or an entry whose lines were joined) starts in ``text``."""
    at = text.find(unit, start)
    if at < 0:
        first = unit.split(" ", 1)[0]
        at = text.find(first, start) if first else -1
    return at


class Citer:
    """Cites text on its page with the answering pipeline's citation check.

    A citation is returned only when the excerpt is found on that very page (verified,
    not repaired); ``rejected`` counts the texts that were not.
    """

    def __init__(self, pages: Any) -> None:
        self.pages = pages
        self.rejected = 0
        self._checkers: dict[int, CitationChecker] = {}

    def _checker(self, s: StudySentence) -> CitationChecker:
        checker = self._checkers.get(s.page)
        if checker is None:
            text = self.pages.page(s.page).text
            src = CitationSource(text=text, section=s.section, page_start=s.page,
                                 page_end=s.page, label_start=s.label, label_end=s.label)
            checker = CitationChecker([src], self.pages)
            self._checkers[s.page] = checker
        return checker

    def cite(self, s: StudySentence, excerpt: Optional[str] = None,
             must_hold: str = "") -> Optional[Citation]:
        """The verified citation of ``excerpt`` (default: the sentence) on its page, or None.

        ``must_hold``: text (a card's back) that must lie inside the cited excerpt.
        """
        excerpt = excerpt or s.text
        try:
            cit = self._checker(s).check(RawCitation(s.section, s.label, excerpt, 0, 0, excerpt))
        except (IndexError, ValueError, KeyError, BookReaderError) as exc:
            log.warning("Study: cannot cite on page %d: %s", s.page, exc)
            cit = None
        ok = (cit is not None and cit.verified and not cit.repaired and cit.page == s.page
              and key_only(excerpt) in key_only(cit.excerpt)
              and (not must_hold or key_only(must_hold) in key_only(cit.excerpt)))
        if not ok:
            self.rejected += 1
            return None
        return cit
