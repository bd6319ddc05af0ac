"""The three ways to ask, as three strategies.

Every difference between whole book, selected text and highlight lives here, named:
what is searched (:meth:`Strategy.retrieve`), what ends a question before any model runs
(:meth:`Strategy.gate`), what an answer is checked and cited against
(:meth:`Strategy.sources`, :meth:`Strategy.checked_passages`) and which of the later
stages apply (the flags).  The stages ask the run's strategy (:func:`strategy`) instead of
testing the mode.

* **Whole book**: hybrid retrieval; below the confidence threshold the answer is "not
  covered" and no model runs.  Every claim must carry a verified citation.
* **Selected text**: the selection is the whole context.  This path never touches the
  store, the retriever or the audit database; the PDF is read only to place the
  citation's highlight.
* **Highlight**: the selection plus passages retrieved inside the selection's page range
  and its chapter(s); nothing outside that filter reaches the prompt.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Optional, Sequence

from bookreader.core import prompts, quotes
from bookreader.core.citations import CitationSource
from bookreader.core.focus import focus
from bookreader.core.model_output import (
    drop_prompt_tags,
    plain_code_marks,
)
from bookreader.core.retrieval import is_covered, search_question
from bookreader.core.types import Mode, Outcome, Passage, SearchFilter
from bookreader.errors import BookReaderError, InvalidInput

from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retrieved:
    """The retrieve stage's output: the run (now knowing its retrieval, chapter and the
    question part it answers) and the passages found, best first."""

    run: Run
    passages: tuple[Passage, ...]
    #: How sure retrieval is that the book covers the question (1.0 off the whole book).
    confidence: float


@dataclass(frozen=True)
class Early:
    """An end before any model runs: the text, its confidence and outcome."""

    text: str
    confidence: float
    outcome: Outcome


class Strategy:
    """What differs between the modes.  Subclasses set the flags and override the
    methods; the defaults are the selection modes'."""

    mode: ClassVar[Mode]
    #: The store is searched (the window says "searching").
    searches: ClassVar[bool] = True
    #: The model's text loses prompt tags and code marks.
    cleans_draft: ClassVar[bool] = False
    #: Every shown answer needs at least one verified citation.
    needs_citation: ClassVar[bool] = False
    #: An answer that is only lines of code, for a question that asks for none, is refused.
    refuses_only_code: ClassVar[bool] = False
    #: An answer whose first sentence is unsupported is refused (its rest explains it).
    refuses_first_unsupported: ClassVar[bool] = False
    #: A selection has sentences of its own to answer with ("Explain this").
    has_selection: ClassVar[bool] = True
    #: Quotes of the passages may replace an answer that cannot be shown.
    quotes: ClassVar[bool] = True
    #: Least score of a quoted sentence.
    quote_min_score: ClassVar[float] = 0.45
    #: Quotes are judged as answers about a selection (the passages around it).
    quotes_near_selection: ClassVar[bool] = True
    #: When no sentence scores, quotes fall back to the passages' best lines.
    quote_lines_if_none: ClassVar[bool] = False

    # --- retrieve ---------------------------------------------------------------------
    def prepare(self, run: Run) -> Run:
        """What is known before searching (the selection's chapter)."""
        return run

    def retrieve(self, run: Run, retriever: Any) -> Retrieved:
        raise NotImplementedError

    def gate(self, found: Retrieved) -> Optional[Early]:
        """The answer given before any model runs, or None to go on."""
        return None

    # --- context ----------------------------------------------------------------------
    def selection_shown(self, run: Run) -> str:
        """The part of the selection the model reads."""
        return focus(run.selection, run.question, run.spec.selection_chars,
                     embedder=run.validator.embedder)

    def sources(self, run: Run, passages: Sequence[Passage]) -> list[CitationSource]:
        """What citations may point at: the selection first, then the passages."""
        return ([CitationSource.for_selection(run.selection, run.page_range, run.pages)]
                + [CitationSource.from_chunk(p.chunk) for p in passages])

    def checked_passages(self, run: Run, shown: Sequence[Passage]) -> list[Passage]:
        """The passages an answer is checked and cited against."""
        return list(shown)

    def quoted_passages(self, run: Run, passages: Sequence[Passage]) -> Sequence[Passage]:
        """The passages quotes come from."""
        return passages

    # --- draft ------------------------------------------------------------------------
    def clean(self, text: str, question: str) -> str:
        """The model's text as the checks should see it."""
        return text

    def book_quote(self, run: Run) -> bool:
        """The book's best sentence is quoted beside a verified answer."""
        return False


    def rescues_from_selection(self, run: Run) -> bool:
        """The selection's answering sentence may stand in for (or beside) the model's."""
        return False

    # --- render -----------------------------------------------------------------------
    def in_selection(self, run: Run, text: str) -> Optional[bool]:
        """Whether a shown answer comes from the selection (None off the selection)."""
        return run.validator.validate(text, run.selection).passed

    def fallback_outcome(self) -> Outcome:
        return Outcome.NOT_IN_SELECTION

    def quotes_in_selection(self) -> Optional[bool]:
        return False

    def passage_scores(self, run: Run) -> Sequence[float]:
        return ()


class WholeBook(Strategy):
    mode = Mode.BOOK
    cleans_draft = True
    needs_citation = True
    refuses_only_code = True
    has_selection = False
    quote_min_score = 0.0
    quotes_near_selection = False
    quote_lines_if_none = True

    def retrieve(self, run: Run, retriever: Any) -> Retrieved:
        t = time.perf_counter()
        # "What is X? At the end, tell me a joke.": the instruction is data; the question
        # part may be what is searched and answered (the whole is recorded).
        retrieval, question = search_question(retriever, run.question, run.settings.top_k)
        run.timed("retrieval", t)
        chapter = retrieval.passages[0].chunk.chapter if retrieval.passages else ""
        run = replace(run, question=question, retrieval=retrieval, chapter=chapter)
        return Retrieved(run, tuple(retrieval.passages), retrieval.confidence)

    def gate(self, found: Retrieved) -> Optional[Early]:
        run = found.run
        if found.passages and run.retrieval is not None and is_covered(
                run.retrieval, run.settings.confidence_threshold):
            return None
        log.info("Not covered: retrieval confidence %.2f", found.confidence)
        return Early(prompts.NOT_COVERED, 1.0 - found.confidence, Outcome.NOT_COVERED)

    def selection_shown(self, run: Run) -> str:
        return run.selection

    def sources(self, run: Run, passages: Sequence[Passage]) -> list[CitationSource]:
        return [CitationSource.from_chunk(p.chunk) for p in passages]

    def checked_passages(self, run: Run, shown: Sequence[Passage]) -> list[Passage]:
        """Every retrieved passage, the ones the model read first: what a local tier says
        beyond its focused sentences is the book's when another retrieved passage says it,
        and is cited there (a wrong claim the shown ones do not contradict is caught by
        the others)."""
        if run.retrieval is None:
            return list(shown)
        ids = {id(p) for p in shown}
        return list(shown) + [p for p in run.retrieval.passages if id(p) not in ids]

    def quoted_passages(self, run: Run, passages: Sequence[Passage]) -> Sequence[Passage]:
        """Every retrieved passage, as the book's sentences beside an answer."""
        if run.retrieval is not None and run.retrieval.passages:
            return run.retrieval.passages
        return passages

    def clean(self, text: str, question: str) -> str:
        return plain_code_marks(drop_prompt_tags(text))

    def book_quote(self, run: Run) -> bool:
        return bool(run.spec.answer_quote)


    def in_selection(self, run: Run, text: str) -> Optional[bool]:
        return None

    def fallback_outcome(self) -> Outcome:
        return Outcome.NOT_COVERED

    def quotes_in_selection(self) -> Optional[bool]:
        return None

    def passage_scores(self, run: Run) -> Sequence[float]:
        return [p.score for p in run.retrieval.passages[:2]] if run.retrieval else ()


class SelectedText(Strategy):
    mode = Mode.SELECTED
    searches = False
    refuses_first_unsupported = True
    quotes = False
    quotes_near_selection = False

    def prepare(self, run: Run) -> Run:
        return replace(run, chapter=_chapter_of_selection(run))

    def retrieve(self, run: Run, retriever: Any) -> Retrieved:
        """No search: the selection is the context."""
        run.stage_ms["retrieval"] = 0.0
        return Retrieved(run, (), 1.0)

    def rescues_from_selection(self, run: Run) -> bool:
        """Not about the selection itself, not the extractive backend."""
        return quotes.task_kind(run.question) is None and run.spec.kind != "extractive"

    def in_selection(self, run: Run, text: str) -> Optional[bool]:
        return True


class Highlight(Strategy):
    mode = Mode.HIGHLIGHT

    def prepare(self, run: Run) -> Run:
        if run.page_range is None:
            return run
        chapters = _chapters(run, *run.page_range)
        return replace(run, chapter=chapters[0] if chapters else "")

    def retrieve(self, run: Run, retriever: Any) -> Retrieved:
        if run.page_range is None:  # ask() refuses a highlight question without one
            raise InvalidInput("Highlight questions need the pages of the selection.")
        t = time.perf_counter()
        a, b = run.page_range
        chapters = _chapters(run, a, b)
        flt = SearchFilter(page_start=a, page_end=b, chapters=tuple(chapters))
        query = f"{run.question}\n{run.selection[:500]}"
        retrieval = retriever.search(query, top_k=run.settings.highlight_top_k, flt=flt)
        # Belt and braces: nothing outside the filter may reach the prompt.
        kept = tuple(p for p in retrieval.passages if flt.accepts(p.chunk))
        if len(kept) != len(retrieval.passages):
            log.error("Retriever returned %d passages outside the filter; dropped",
                      len(retrieval.passages) - len(kept))
            retrieval = replace(retrieval, passages=kept)
        run.timed("retrieval", t)
        return Retrieved(replace(run, retrieval=retrieval), tuple(retrieval.passages), 1.0)


def _chapters(run: Run, a: int, b: int) -> list[str]:
    """Chapters of pages a..b, in order (empty when the PDF is not at hand)."""
    if run.pages is None:
        return []
    chapters: list[str] = []
    for i in range(a, b + 1):
        ch = run.pages.page(i).chapter
        if ch not in chapters:
            chapters.append(ch)
    return [c for c in chapters if c] if any(chapters) else []


def _chapter_of_selection(run: Run) -> str:
    if run.pages is None or run.page_range is None:
        return ""
    try:
        return run.pages.page(run.page_range[0]).chapter
    except (IndexError, ValueError, BookReaderError) as exc:
        log.warning("Selection page %s unknown: %s", run.page_range[0], exc)
        return ""


_STRATEGIES: dict[Mode, Strategy] = {s.mode: s for s in (WholeBook(), SelectedText(),
                                                         Highlight())}


def strategy(run: Run) -> Strategy:
    """The run's mode as a strategy."""
    return _STRATEGIES[run.mode]
