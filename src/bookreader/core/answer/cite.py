"""The cite stages: the answer's citations checked against the book, in named passes.

:func:`bookreader.core.citations.verify_answer` checks every citation of a text and
rewrites it with the checked ones.  It runs on each text the answer becomes, once per
reason, each pass named:

1. ``as written`` (:func:`cite_as_written`): the model's own citations, none added.  The
   checks judge this text.
2. ``for display`` (:func:`cite_for_display`): what the checks kept, every sentence given
   its best supporting citation.
3. ``after repointing``: when a citation moved to the sentence that holds its claim, or
   was trimmed to the words for it.

Then :func:`with_book_sentences` puts the book's best sentence (or the selection's
answering sentence) beside a verified answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from bookreader.core import answer_quotes
from bookreader.core.citations import CitationSource, verify_answer
from bookreader.core.selection_answer import beside_answer
from bookreader.core.sentences import key_only
from bookreader.core.types import Citation

from bookreader.core.answer.modes import strategy
from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)

#: The named reasons :func:`verify_answer` runs (see the module doc).
AS_WRITTEN = "as written"
FOR_DISPLAY = "for display"
AFTER_REPOINTING = "after repointing"


@dataclass(frozen=True)
class Cited:
    """A text with its checked citations."""

    text: str
    citations: tuple[Citation, ...]
    #: ``(page, excerpt key)`` of the excerpts the model invented (found nowhere in the
    #: context, so replaced by the closest real sentence).
    invented: frozenset[tuple[int, str]] = frozenset()


def verify(reason: str, run: Run, text: str, sources: Sequence[CitationSource]) -> Cited:
    """One named pass of :func:`verify_answer` (citations are added only for display)."""
    add = reason in (FOR_DISPLAY, AFTER_REPOINTING)
    text, citations = verify_answer(text, sources, run.pages, add_missing=add)
    log.debug("Citations %s: %d", reason, len(citations))
    return Cited(text, citations)


def cite_as_written(run: Run, text: str, sources: Sequence[CitationSource]) -> Optional[Cited]:
    """``text`` with the model's citations checked, or None when nothing is left of it
    once its invented labels are dropped."""
    cited = verify(AS_WRITTEN, run, text, sources)
    invented = frozenset((c.page, key_only(c.excerpt)) for c in cited.citations if c.repaired)
    return replace(cited, invented=invented)


def cite_for_display(run: Run, text: str, sources: Sequence[CitationSource],
                     invented: frozenset[tuple[int, str]]) -> Cited:
    """The checked ``text`` with a citation for every sentence that has support.

    A citation quoting a sentence unrelated to its claim moves to the one that holds it;
    one quoting a whole paragraph keeps the words for its claim.  Excerpts the model
    invented stay marked as repaired."""
    cited = verify(FOR_DISPLAY, run, text, sources)
    moved = answer_quotes.trim_excerpts(
        answer_quotes.repoint_citations(cited.text, sources, run.pages))
    if moved != cited.text:
        cited = verify(AFTER_REPOINTING, run, moved, sources)
    citations = cited.citations
    if invented:  # the second pass finds the repaired excerpts verbatim (or a stretch)
        citations = tuple(replace(c, repaired=True) if any(
            key_only(c.excerpt) in key for page, key in invented if page == c.page)
            else c for c in citations)
    return Cited(cited.text, citations, invented)


def with_book_sentences(run: Run, cited: Cited,
                        sources: Sequence[CitationSource]) -> Cited:
    """A verified answer with the book's best sentence for the question beside it (a
    tier that quotes), or the selection's answering sentence (selected text)."""
    mode = strategy(run)
    text, citations = cited.text, cited.citations
    if mode.book_quote(run):
        # from every retrieved passage, not only the part the model read (which can miss
        # the page that explains it)
        every = mode.sources(run, run.retrieval.passages) if run.retrieval else sources
        text, citations = answer_quotes.with_best_quote(
            run.question, text, citations, every, "\n\n".join(s.text for s in every),
            run.validator, run.pages, embedder=run.parts.embedder)
    elif mode.rescues_from_selection(run):
        text, citations = beside_answer(run.question, text, citations, sources[0],
                                        run.validator, run.pages) or (text, citations)
    return Cited(text, citations, cited.invented)
