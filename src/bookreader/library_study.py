"""The library's study tools: flashcards, quizzes, summaries, spaced review and exports.

A mixin of :class:`~bookreader.library.Library` (kept apart so that file stays small):
:meth:`StudyMixin.study` makes a set for a page range, an outline entry or a selection
from the book's PDF (no index is needed: the cards are cited on the pages themselves) and
records it in the audit log (mode ``study``, its pages, the backend), so an instructor
sees what was studied beside what was asked.  Kept cards live per book in the data folder
(:class:`~bookreader.core.study.review.ReviewDeck`).
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, cast

from bookreader.core.study.generate import StudyScope, chapter_scope, generate
from bookreader.core.study.model import SET_CARDS, SET_QUIZ, StudyCard, StudySet
from bookreader.core.types import (
    Answer,
    BookInfo,
    CancelFn,
    Mode,
    Outcome,
    ProgressFn,
    TocEntry,
    never_cancel,
    no_progress,
)
from bookreader.errors import InvalidInput

if TYPE_CHECKING:
    from bookreader.core.study.review import ReviewDeck

log = logging.getLogger(__name__)

#: The audit log's mode for a generated study set (not one of the ways to ask).
STUDY_MODE = "study"
#: Most citations one audit record of a study set keeps (the text lists every item).
AUDIT_CITATIONS = 100
#: The backend name of sets made by rules alone, without a language model.
RULES_BACKEND = "rules"
#: ``phrase_with`` for the model the settings answer with.
DEFAULT_MODEL = "default"


def render_set(s: StudySet) -> str:
    """A study set as the audit record's answer text: one line an item, with its page."""
    lines: list[str] = []
    for c in s.cards:
        lines.append(f"{c.front} -> {c.back} (p. {c.citation.page_label})")
    for q in s.quiz:
        prompt = " ".join(q.prompt.split())
        lines.append(f"[{q.kind}] {prompt} -> {q.answer} (p. {q.citation.page_label})")
    for ln in s.summary:
        lines.append(f"{ln.text} (p. {ln.citation.page_label})")
    return "\n".join(lines) or "(nothing to study was found on these pages)"


class StudyMixin:
    """Study methods of the Library (see the module docstring)."""

    # Provided by Library.
    settings: Any
    session_id: str
    audit: Any
    _lock: Any

    if TYPE_CHECKING:
        def book(self, ref: str | Path) -> BookInfo: ...

        def open_pdf(self, ref: str | Path, password: Optional[str] = None) -> Any: ...

        def _book_dir(self, book_id: str) -> Path: ...

        def answerer_for(self, backend: Optional[str] = None) -> Any: ...

    # --- making sets -------------------------------------------------------------------
    def study_outline(self, ref: str | Path) -> list[TocEntry]:
        """The book's outline, for choosing a chapter or section to study."""
        return list(self.open_pdf(ref).toc)

    def study(
        self,
        ref: str | Path,
        kind: str = SET_CARDS,
        *,
        pages: Optional[tuple[int, int]] = None,
        chapter: Optional[str | int] = None,
        selection: Optional[str] = None,
        limit: Optional[int] = None,
        phrase_with: Optional[str] = None,
        code: bool = False,
        progress: ProgressFn = no_progress,
        cancel: CancelFn = never_cancel,
        client_id: Optional[str] = None,
    ) -> StudySet:
        """Flashcards, a quiz or a summary (``kind``) for pages ``pages`` (0-based,
        inclusive), an outline entry ``chapter`` (its title, or its place in the outline),
        or the sentences of ``selection`` on ``pages``; recorded in the audit log.
        ``phrase_with``: a backend name ("small", "auto"...; ``"default"``: the settings'
        answering backend) whose model phrases the question cards' fronts (the backs stay
        the book's words); None: rules only.  ``code``: flashcards also ask what the
        explained code listings do (the audit record's question says so).

        Raises:
            InvalidInput: no pages and no chapter, an unknown outline entry, too many pages.
            Cancelled: ``cancel()`` said so (nothing is recorded).
        """
        info = self.book(ref)
        pdf = self.open_pdf(info.book_id)
        if chapter is not None and chapter != "":
            scope = chapter_scope(list(pdf.toc), chapter, pdf.page_count)
        elif pages is not None:
            scope = StudyScope(pages[0], pages[1])
        else:
            raise InvalidInput("Say what to study: a page range (--pages A-B) or a chapter "
                               "(--chapter TITLE).")
        if selection:
            scope = StudyScope(scope.first, scope.last, selection=selection,
                               title="the selected passage")
        model, backend = None, RULES_BACKEND
        if phrase_with and kind == SET_CARDS:
            from bookreader.core.llm.registry import resolve_name
            from bookreader.core.llm.specs import spec_for

            wanted = None if phrase_with == DEFAULT_MODEL else phrase_with
            name = resolve_name(wanted, self.settings)
            if spec_for(name).kind != "extractive":  # it quotes; it cannot phrase
                backend = name
                model = self.answerer_for(wanted).backend(name)
        made = generate(pdf, info.book_id, kind, scope, limit=limit, backend=backend,
                        model=model, code=code, progress=progress, cancel=cancel)
        self._record_study(info, made, selection or "", client_id,
                           code=code and kind == SET_CARDS)
        return made

    def _record_study(self, info: BookInfo, s: StudySet, selection: str,
                      client_id: Optional[str], *, code: bool = False) -> None:
        citations = [c.citation for c in s.cards] + [q.citation for q in s.quiz] + [
            ln.citation for ln in s.summary]
        answer = Answer(
            query_id=str(uuid.uuid4()), answer_id=str(uuid.uuid4()),
            question=f"Study {s.kind}{' with code cards' if code else ''}: {s.title} "
                     f"(pages {s.page_label})",
            mode=cast(Mode, STUDY_MODE), text=render_set(s), fallback=not s.items,
            in_selected_text=None, confidence=1.0 if s.items else 0.0, confidence_level="",
            citations=tuple(citations[:AUDIT_CITATIONS]), backend=s.backend,
            latency_ms=s.ms, book_id=info.book_id, book_title=info.title,
            selection=selection, stage_ms={"study": round(s.ms, 1)},
            chapter=s.title, selection_page=s.page_start,
            outcome=Outcome.ANSWER if s.items else Outcome.NOT_COVERED)
        self.audit.record(answer, session_id=self.session_id, client_id=client_id)

    # --- kept cards and review --------------------------------------------------------
    def _deck(self, book_id: str) -> "ReviewDeck":
        from bookreader.core.study.review import ReviewDeck

        with self._lock:
            decks: dict[str, ReviewDeck] = self.__dict__.setdefault("_study_decks", {})
            deck = decks.get(book_id)
            if deck is None:
                deck = ReviewDeck(self._book_dir(book_id))
                decks[book_id] = deck
            return deck

    def study_keep(self, ref: str | Path, cards: Sequence[StudyCard]) -> int:
        """Keep ``cards`` for spaced review; returns how many were new."""
        return self._deck(self.book(ref).book_id).add(cards)

    def study_cards(self, ref: str | Path) -> list[StudyCard]:
        """Every kept card of the book."""
        return self._deck(self.book(ref).book_id).cards()

    def study_due(self, ref: str | Path, now: Optional[datetime] = None) -> list[StudyCard]:
        """The kept cards due for review at ``now`` (default: now)."""
        return self._deck(self.book(ref).book_id).due(now)

    def study_rate(self, ref: str | Path, card_id: str, rating: int,
                   now: Optional[datetime] = None) -> datetime:
        """Record a review (1 again, 2 hard, 3 good, 4 easy); returns the next due time."""
        return self._deck(self.book(ref).book_id).rate(card_id, rating, now)

    def study_export(self, ref: str | Path, fmt: str, out: Path, *,
                     cards: Optional[Sequence[StudyCard]] = None) -> Path:
        """Write ``cards`` (default: the kept ones) as anki, csv or markdown to ``out``."""
        from bookreader.core.study.export import export_cards

        info = self.book(ref)
        chosen = list(cards) if cards is not None else self._deck(info.book_id).cards()
        return export_cards(chosen, fmt, Path(out), title=info.title, book_id=info.book_id)


__all__ = ["RULES_BACKEND", "SET_CARDS", "SET_QUIZ", "STUDY_MODE", "StudyMixin", "render_set"]
