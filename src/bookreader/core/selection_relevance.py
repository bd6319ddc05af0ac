"""Where a model's selected-text answer was taken from.

:func:`answer_span` reads a model's answer as an extractive span (the words it adds to
the question); :func:`answered_from` finds the selection sentence it was taken from.
"""

from __future__ import annotations

import logging

from bookreader.core.citations import strip_citations
from bookreader.core.sentences import content_terms, split_sentences

log = logging.getLogger(__name__)


def _terms(text: str) -> set[str]:
    return set(content_terms(text))


#: What a model's answer adds to the question must be at least this many content words ...
MIN_SPAN_TERMS = 1


def answer_span(question: str, answer: str) -> tuple[str, set[str]]:
    """``(first sentence, span)`` of a model's selected-text ``answer``: its first sentence
    and that sentence's content words the question does not hold.

    A small model often answers by restating the question with the answer put in ("Full
    size working engines on *ships* sometimes use ..." for "... on what vehicles ...?"),
    or by copying the words of one selection sentence.  The words it adds to the question
    are then its answer, read as an extractive span."""
    from bookreader.core.model_output import parse_answer

    text = strip_citations(parse_answer(answer).text) if answer else ""
    sentences = split_sentences(text)
    if not sentences:
        return "", set()
    first = " ".join(sentences[0].split())
    return first, set(content_terms(first)) - _terms(question)


#: A span of at least this many words still points at a sentence that lacks one of them.
LONG_SPAN_TERMS = 6


def answered_from(span: set[str], sentence: str) -> bool:
    """True when every word of a model answer's ``span`` (see :func:`answer_span`) is in
    ``sentence``: the model found its answer there.  A long span (:data:`LONG_SPAN_TERMS`
    words) may lack one: a copy with one word re-inflected ("... *becoming* a major
    factor" for "... became a major factor") or one word of the model's own is still a
    copy of that sentence."""
    if len(span) < MIN_SPAN_TERMS:
        return False
    lacking = len(span - _terms(sentence))
    return lacking == 0 or (lacking == 1 and len(span) >= LONG_SPAN_TERMS)
