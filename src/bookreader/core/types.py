"""The values that flow through the pipeline, as frozen dataclasses.

Pages are 0-based physical page indexes everywhere in code; ``*_label`` fields hold the
printed page label a reader sees ("xii", "37").  Rectangles are PDF points in PyMuPDF's
page coordinates (origin top-left): ``(x0, y0, x1, y1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Callable, Optional

Rect = tuple[float, float, float, float]

#: ``progress(done, total, message)``: called by slow core work.
ProgressFn = Callable[[int, int, str], None]
#: ``cancel()`` returns True once the user asked to stop.
CancelFn = Callable[[], bool]


def no_progress(done: int, total: int, message: str) -> None:
    """A progress callback that ignores its calls."""


def never_cancel() -> bool:
    """A cancel check that never cancels."""
    return False


def check_cancel(cancel: Optional[CancelFn]) -> None:
    """Raise :class:`~bookreader.errors.Cancelled` when ``cancel()`` says so."""
    if cancel is not None and cancel():
        from bookreader.errors import Cancelled

        raise Cancelled()


class Mode(str, Enum):
    """The three ways to ask."""

    BOOK = "book"
    SELECTED = "selected"
    HIGHLIGHT = "highlight"


class Outcome(str, Enum):
    """How a question ended.  ``fallback`` is true for every outcome but ``ANSWER``.

    * ``ANSWER``: a verified answer (every sentence passed the grounding check).
    * ``QUOTES``: no verified answer could be written although the book (or the selection's
      pages) covers the question: the one to three sentences that best address it, each
      with a verified citation.
    * ``NOT_COVERED``: whole-book retrieval found nothing above the threshold.
    * ``NOT_IN_SELECTION``: the selection (and, in highlight mode, its pages) does not
      answer the question.
    * ``TIMEOUT``: a time budget ran out before anything could be shown.
    * ``ERROR``: something failed (model missing, network, ...); ``Answer.error`` says what.
    """

    ANSWER = "answer"
    QUOTES = "quotes"
    NOT_COVERED = "not_covered"
    NOT_IN_SELECTION = "not_in_selection"
    TIMEOUT = "timeout"
    ERROR = "error"


class BookState(StrEnum):
    """Where a book's indexing stands."""

    INDEXING = "indexing"  # running, or interrupted (ingesting again resumes it)
    READY = "ready"
    FAILED = "failed"
    DAMAGED = "damaged"  # ready once, but its shard or BM25 file is missing or unreadable


class AnswerStage(StrEnum):
    """What an answer being prepared is doing, in order; reported through ``progress``
    (``done`` is the stage's place, ``total`` their number, ``message`` its value)."""

    SEARCHING = "searching"  # retrieving passages from the book
    READING = "reading"  # the model reads the passages and the question
    WRITING = "writing"  # the answer streams
    CHECKING = "checking"  # citations and grounding are checked against the book


class ConfidenceLevel(StrEnum):
    """How sure an answer is, as the card shows it."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True)
class Word:
    """One word of a page with its box, in reading order."""

    text: str
    rect: Rect
    block: int
    line: int
    index: int  # position of the word in the page's reading order
    # Extra boxes of the same word: the second half of a word hyphenated across a line end.
    more_rects: tuple[Rect, ...] = ()

    @property
    def rects(self) -> tuple[Rect, ...]:
        """Every box of the word (usually one)."""
        return (self.rect,) + self.more_rects


@dataclass(frozen=True)
class TocEntry:
    """One outline entry: level 1 is a chapter, deeper levels sections."""

    level: int
    title: str
    page: int  # 0-based physical page


@dataclass(frozen=True)
class Page:
    """The text of one page after cleaning, with what the reader and citations need."""

    index: int  # 0-based physical page
    label: str  # printed page label, else str(index + 1)
    text: str  # reading order, running headers/footers removed, ligatures and hyphens fixed
    chapter: str
    section: str
    width: float = 0.0
    height: float = 0.0
    has_text_layer: bool = True
    # Where a new chapter or section begins on this page: (offset into ``text``, chapter,
    # section in effect from there on).  ``chapter``/``section`` hold the values in effect
    # at the top of the page, before the first of these.
    section_starts: tuple[tuple[int, str, str], ...] = ()

    def section_at(self, offset: int) -> tuple[str, str]:
        """The (chapter, section) in effect at a character offset of ``text``."""
        current = (self.chapter, self.section)
        for start, chapter, section in self.section_starts:
            if start > offset:
                break
            current = (chapter, section)
        return current


@dataclass(frozen=True)
class BookInfo:
    """A book as the library knows it."""

    book_id: str  # hash of the file's bytes
    title: str
    path: str
    page_count: int
    chunk_count: int = 0
    state: BookState = BookState.READY
    message: str = ""  # e.g. the reason for "failed" or pages without text
    pages_without_text: tuple[int, ...] = ()


@dataclass(frozen=True)
class Chunk:
    """A retrieval unit.  ``chunk_id`` = hash of book id + position + text."""

    chunk_id: str
    book_id: str
    position: int  # order of the chunk within the book
    text: str
    page_start: int  # 0-based physical, inclusive
    page_end: int  # 0-based physical, inclusive
    label_start: str
    label_end: str
    chapter: str
    section: str
    char_start: int  # offset into page_start's Page.text
    char_end: int  # offset into page_end's Page.text (exclusive)

    @property
    def page_label(self) -> str:
        if self.label_start == self.label_end:
            return self.label_start
        return f"{self.label_start}-{self.label_end}"


@dataclass(frozen=True)
class SearchFilter:
    """Restricts retrieval to a page range (0-based, inclusive) and/or chapters."""

    page_start: Optional[int] = None
    page_end: Optional[int] = None
    chapters: tuple[str, ...] = ()

    def accepts(self, chunk: Chunk) -> bool:
        """True when the whole chunk lies inside the filter (used by BM25 and tests)."""
        if self.page_start is not None and chunk.page_start < self.page_start:
            return False
        if self.page_end is not None and chunk.page_end > self.page_end:
            return False
        if self.chapters and chunk.chapter not in self.chapters:
            return False
        return True


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk with its scores (normalised per query to [0, 1])."""

    chunk: Chunk
    score: float
    dense_score: float
    bm25_score: float


@dataclass(frozen=True)
class Retrieval:
    """What a search returned, and how sure it is that the book covers the question."""

    query: str
    passages: tuple[Passage, ...]
    confidence: float  # in [0, 1]
    latency_ms: float
    filter: Optional[SearchFilter] = None


@dataclass(frozen=True)
class Message:
    """One chat message for a language model."""

    role: str  # "system", "user", "assistant"
    content: str


@dataclass(frozen=True)
class Excerpt:
    """One numbered excerpt of the context, as shown to the model."""

    number: int
    section: str
    page_label: str
    text: str


@dataclass(frozen=True)
class AnswerRequest:
    """What one prompt asks, as values: a backend that does not read prose (the
    extractive one) takes this instead of parsing the rendered messages back.

    ``excerpts`` and ``selection`` hold exactly the text the messages show (focused for
    a small model's window); ``fallback`` is the fixed sentence the rules ask for when the
    context does not answer.
    """

    mode: Mode
    question: str
    excerpts: tuple[Excerpt, ...] = ()
    selection: Optional[str] = None  # selected and highlight modes
    selection_page_label: str = ""
    fallback: str = ""


@dataclass(frozen=True)
class Token:
    """One streamed piece of an answer; ``logprob`` where the backend reports it."""

    text: str
    logprob: Optional[float] = None


@dataclass(frozen=True)
class Citation:
    """``[Source: Section (Page X) - "excerpt"]``, checked against the page."""

    section: str
    page: int  # 0-based physical page (-1 when unknown, selected-text mode)
    page_label: str
    excerpt: str
    verified: bool
    repaired: bool = False
    rects: tuple[Rect, ...] = ()


@dataclass(frozen=True)
class Validation:
    """The grounding validator's verdict and scores."""

    similarity: float
    overlap: float
    passed: bool
    ms: float
    unsupported_sentences: tuple[str, ...] = ()
    missing_terms: tuple[str, ...] = ()  # numbers and names absent from the context


@dataclass(frozen=True)
class Answer:
    """The result of one question, with everything the UI and the audit log need."""

    query_id: str
    answer_id: str
    question: str
    mode: Mode
    text: str  # the answer shown
    fallback: bool
    in_selected_text: Optional[bool]  # selected/highlight modes; None in book mode
    confidence: float
    confidence_level: ConfidenceLevel | str  # a ConfidenceLevel; "" in old audit rows
    citations: tuple[Citation, ...] = ()
    validation: Optional[Validation] = None
    truncation_warning: str = ""
    backend: str = ""
    model: str = ""
    latency_ms: float = 0.0
    first_token_ms: Optional[float] = None
    generation_ms: float = 0.0
    retrieval: Optional[Retrieval] = None
    prompt: tuple[Message, ...] = ()
    raw_output: str = ""
    replaced_by_validator: bool = False
    error: str = ""
    book_id: str = ""
    book_title: str = ""
    selection: str = ""
    stage_ms: dict = field(default_factory=dict)  # retrieval, prompt, generation, validation
    # Where the question points in the book, for the audit report's per-chapter and
    # most-asked-pages charts: the selection's chapter/page in selected and highlight modes,
    # else the top passage's.  Left empty, the audit log derives them from the retrieval.
    chapter: str = ""
    selection_page: Optional[int] = None  # 0-based physical page where the selection starts
    created_at: str = ""  # UTC ISO-8601 time the audit log recorded it (set by history())
    #: How the question ended; derived from ``fallback``/``error``/``mode`` when not given
    #: (records written before outcomes existed, hand-built answers).
    outcome: Optional[Outcome] = None
    #: The signals the calibrated confidence was computed from (core.confidence.Signals).
    confidence_signals: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.outcome is None:
            object.__setattr__(self, "outcome", derive_outcome(self))
        elif not isinstance(self.outcome, Outcome):
            object.__setattr__(self, "outcome", Outcome(self.outcome))

    def citation_marks(self) -> list[tuple[int, int, int]]:
        """``(start, end, number)`` of every citation marker in ``text``.

        ``number`` is the 1-based place in ``citations`` of the citation the marker names,
        so the window can show ``[n]`` next to the chip ``n`` (the grammar of a marker is
        :mod:`bookreader.core.model_output`'s alone).
        """
        from bookreader.core.model_output import citation_numbers

        return citation_numbers(
            self.text, [(c.section, c.page_label, c.excerpt) for c in self.citations])


#: The timeout messages (core.prompts.TIMEOUT_MESSAGE and older wordings) start with this.
_TIMEOUT_PREFIXES = ("query processing timed out", "the answer took too long",
                     "no answer within")


def derive_outcome(answer: "Answer") -> Outcome:
    """The outcome of an answer that does not say (see :class:`Outcome`)."""
    if answer.error:
        low = answer.error.strip().lower()
        if any(low.startswith(p) for p in _TIMEOUT_PREFIXES) or "timed out" in low:
            return Outcome.TIMEOUT
        return Outcome.ERROR
    if not answer.fallback:
        return Outcome.ANSWER
    return Outcome.NOT_COVERED if Mode(answer.mode) is Mode.BOOK else Outcome.NOT_IN_SELECTION




def answer_to_dict(answer: Answer) -> dict:
    """An answer as plain JSON data (the command line's ``--json``, the server, benches)."""
    v = answer.validation
    return {
        "answer": answer.text,
        "mode": Mode(answer.mode).value,
        "outcome": Outcome(answer.outcome).value if answer.outcome is not None else None,
        "fallback": bool(answer.fallback),
        "in_selected_text": answer.in_selected_text,
        "confidence": round(float(answer.confidence), 4),
        "confidence_level": getattr(answer.confidence_level, "value", answer.confidence_level),
        "citations": [
            {"page": c.page, "page_label": c.page_label, "section": c.section,
             "excerpt": c.excerpt, "verified": bool(c.verified)}
            for c in answer.citations
        ],
        "validation": (
            {"similarity": round(float(v.similarity), 4), "overlap": round(float(v.overlap), 4),
             "passed": bool(v.passed)}
            if v is not None else None
        ),
        "truncation_warning": answer.truncation_warning,
        "backend": answer.backend,
        "model": answer.model,
        "latency_ms": round(float(answer.latency_ms), 1),
        "first_token_ms": (
            round(float(answer.first_token_ms), 1) if answer.first_token_ms is not None else None
        ),
    }
