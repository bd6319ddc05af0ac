"""Making a study set for a range of pages, a chapter or a selection.

:func:`generate` reads the pages (:func:`~bookreader.core.study.source.read_sentences`),
keeps the sentences of the chapter or of the selection when one is given, and makes
cards, a quiz or a summary from them.  It is plain synchronous code with
``progress(done, total, message)`` and a cancel check (raises
:class:`~bookreader.errors.Cancelled`), like ingestion.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Optional

from bookreader.core.sentences import key_only
from bookreader.core.study.cards import make_cards
from bookreader.core.study.code_cards import code_cards
from bookreader.core.study.labels import repeated_labels
from bookreader.core.study.model import SET_CARDS, SET_QUIZ, SET_SUMMARY, StudySet
from bookreader.core.study.names import NameEvidence
from bookreader.core.study.judge import drop_undefined, judges_cards
from bookreader.core.study.phrasing import phrase_fronts
from bookreader.core.study.quiz import make_quiz
from bookreader.core.study.source import Citer, read_sentences
from bookreader.core.study.summary import key_sentences, summary_size
from bookreader.core.types import CancelFn, ProgressFn, TocEntry, no_progress
from bookreader.errors import InvalidInput

log = logging.getLogger(__name__)

KINDS = (SET_CARDS, SET_QUIZ, SET_SUMMARY)
#: Most pages one generation reads (a long chapter is fine; a whole book is not a deck).
MAX_PAGES = 120


@dataclass(frozen=True)
class StudyScope:
    """What to study: pages ``first``..``last`` (0-based, inclusive), optionally only one
    chapter's sentences or only those inside a selected passage."""

    first: int
    last: int
    chapter: str = ""
    selection: str = ""
    title: str = ""


def chapter_scope(toc: list[TocEntry], title: str | int, page_count: int) -> StudyScope:
    """The pages of the outline entry called ``title`` (exact, else the one entry that
    contains it; an int is the entry's place in the outline, as a picker knows it): from
    its page to the page before the next entry at its level or above."""
    if isinstance(title, int):
        if not 0 <= title < len(toc):
            raise InvalidInput(f"The outline has no entry number {title + 1}: choose one of "
                               f"its {len(toc)} entries.")
        hits = [title]
    else:
        wanted = " ".join(title.split()).casefold()
        exact = [i for i, e in enumerate(toc) if e.title.casefold() == wanted]
        partial = [i for i, e in enumerate(toc) if wanted and wanted in e.title.casefold()]
        hits = exact or partial
    if len(hits) != 1:
        names = "; ".join(e.title for e in toc[:25]) or "(the book has no outline)"
        what = f"matches {len(hits)} entries" if hits else "matches no entry"
        raise InvalidInput(f"'{title}' {what} of the book's outline. The entries are: {names}")
    i = hits[0]
    entry = toc[i]
    last = page_count - 1
    for later in toc[i + 1:]:
        if later.level <= entry.level:
            last = max(entry.page, later.page - (0 if later.page == entry.page else 1))
            break
    chapter = entry.title if entry.level == 1 else ""
    return StudyScope(entry.page, last, chapter=chapter, title=entry.title)


def _skipped_pages_note(pages: Any, missing: list[int]) -> list[str]:
    """The note on pages that were skipped for want of text: a scan (an image without a
    text layer) is named as one, with what to do; a blank page needs no note."""
    looks_scanned = getattr(pages, "looks_scanned", None)
    scanned = [i for i in missing if looks_scanned is None or looks_scanned(i)]
    if not scanned:
        return []
    shown = ", ".join(pages.page(i).label for i in scanned[:10])
    more = f" and {len(scanned) - 10} more" if len(scanned) > 10 else ""
    return [f"Pages without a text layer (scanned images) were skipped: {shown}{more}. "
            "They can be studied once the PDF has been run through OCR."]


def generate(pages: Any, book_id: str, kind: str, scope: StudyScope, *,
             limit: Optional[int] = None, backend: str = "rules", model: Any = None,
             code: bool = False, progress: ProgressFn = no_progress,
             cancel: Optional[CancelFn] = None) -> StudySet:
    """A study set of ``kind`` (cards, quiz or summary) for ``scope``.

    Args:
        pages: The book's page source (``PdfBook``: ``page(i)``, ``page_count``).
        limit: Most items (cards or quiz items); a summary's size follows its page count.
        backend: The name recorded as the set's maker.
        model: A language model backend that phrases the question cards' fronts
            (:func:`~bookreader.core.study.phrasing.phrase_fronts`); None: the rules' own.
            A model measured to judge cards well also leaves out the cards whose back it
            judges not to define or answer their front
            (:func:`~bookreader.core.study.judge.drop_undefined`).
        code: Flashcards also ask what the chapter's explained code listings do
            (:func:`~bookreader.core.study.code_cards.code_cards`; cards only, never
            quiz items; the model neither judges nor phrases them).
    """
    if kind not in KINDS:
        raise InvalidInput(f"Unknown study tool {kind!r}: use one of {', '.join(KINDS)}.")
    count = int(getattr(pages, "page_count", scope.last + 1))
    if not (0 <= scope.first <= scope.last < count):
        raise InvalidInput(f"Pages {scope.first + 1}-{scope.last + 1} are not in this book "
                           f"(it has {count} pages).")
    if scope.last - scope.first + 1 > MAX_PAGES:
        raise InvalidInput(f"{scope.last - scope.first + 1} pages are too many for one study "
                           f"set: choose a chapter or at most {MAX_PAGES} pages.")
    started = time.perf_counter()
    read = read_sentences(pages, scope.first, scope.last, progress=progress, cancel=cancel)
    sentences = read.sentences
    if scope.chapter:
        sentences = [s for s in sentences if s.chapter == scope.chapter] or sentences
    if scope.selection:
        chosen = key_only(scope.selection)
        sentences = [s for s in sentences if key_only(s.text) in chosen]
    citer = Citer(pages)
    notes: list[str] = []
    notes.extend(_skipped_pages_note(pages, read.pages_without_text))
    cards, quiz, summary = [], [], []
    if kind == SET_SUMMARY:
        summary = key_sentences(sentences, summary_size(scope.last - scope.first + 1), citer,
                                cancel=cancel)
    else:
        # how the book writes its words: judged on every page read, not only the chosen
        # sentences, with the whole outline's headings
        headings = [e.title for e in getattr(pages, "toc", None) or ()]
        headings += list(dict.fromkeys(h for s in read.sentences for h in (s.chapter, s.section)))
        names = NameEvidence((s.text for s in read.sentences), headings)
        cards = make_cards(sentences, citer, book_id, names=names,
                           labels=lambda: repeated_labels(pages), progress=progress,
                           cancel=cancel, limit=limit if kind == SET_CARDS else None)
        if kind == SET_QUIZ:
            quiz = make_quiz(cards, limit=limit)
            cards = []
        elif model is not None and cards:
            if judges_cards(model):  # judged on the rule-made fronts, as measured
                cards, dropped = drop_undefined(cards, model, progress=progress,
                                                cancel=cancel)
                notes.append(f"The model left out {dropped} cards whose back it judged "
                             "not to define or answer their front.")
            cards, phrased = phrase_fronts(cards, model, progress=progress, cancel=cancel)
            notes.append(f"The model phrased {phrased} of "
                         f"{sum(c.kind == 'question' for c in cards)} question fronts; the "
                         "backs are the book's words.")
        if code and kind == SET_CARDS:
            listed = code_cards(pages, scope.first, scope.last, citer, book_id,
                                chapter=scope.chapter, selection=scope.selection,
                                cancel=cancel)
            notes.append(f"Code cards were asked for: {len(listed)} listings had a sentence "
                         "on their page that says what they do.")
            # in reading order with the other cards (by page), at most ``limit`` in all
            cards = sorted([*cards, *listed], key=lambda c: c.citation.page)[:limit]
    made = len(cards) + len(quiz) + len(summary)
    if not made:
        notes.append("Nothing to study was found on these pages: no definitions, glossary "
                     "entries or key statements whose words could be found on their page.")
    first_label = pages.page(scope.first).label
    last_label = pages.page(scope.last).label
    title = scope.title or (f"pages {first_label}-{last_label}" if first_label != last_label
                            else f"page {first_label}")
    result = StudySet(
        kind=kind, book_id=book_id, page_start=scope.first, page_end=scope.last,
        label_start=first_label, label_end=last_label, title=title, cards=tuple(cards),
        quiz=tuple(quiz), summary=tuple(summary), backend=backend,
        pages_without_text=tuple(read.pages_without_text), rejected=citer.rejected,
        ms=(time.perf_counter() - started) * 1000, notes=tuple(notes))
    log.info("Study %s for %s, pages %d-%d: %d items, %d rejected, %.0f ms", kind, book_id,
             scope.first, scope.last, made, citer.rejected, result.ms)
    return result
