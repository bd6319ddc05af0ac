"""The check stage: whether a cited answer may be shown, as named checks.

:func:`check` runs the grounding validator once on the answer as cited, then the named
checks in order; the first that refuses gives the :class:`Verdict`'s ``refusal``:

* ``grounding``: every sentence supported by the context (the validator), less the
  sentences that only restate the question (``tautology``) and those that say of one
  side of a comparison what the context says of the other (``swapped side``);
* ``invented excerpt``: quoted words the context does not hold, in an answer only
  loosely like the context (the usual shape of a conclusion stitched from its words);
* ``supported part``: the unsupported sentences are dropped when what is left stands on
  its own (on selected text, not when the first sentence goes);
* ``only code``: a whole-book answer that is nothing but lines of code, for a question
  that asks for none;
* ``only captions``: a language model's answer that is nothing but a figure's or table's
  caption copied from the book;
* ``off target``: a selected-text answer to a who-question that names no one.

:func:`uncited` is the last check, after the display citations: a whole-book answer none
of whose sentences could be tied to a page is not shown as one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Sequence

from bookreader.core import quotes
from bookreader.core.citations import strip_citations
from bookreader.core.grounding import supported_part
from bookreader.core.grounding_checks import swaps_compared_side
from bookreader.core.llm.answer_type import (
    comparison_sides,
    is_caption,
    reads_as_code,
    wants_code,
)
from bookreader.core.model_output import only_self_quotes
from bookreader.core.selection_answer import first_unsupported
from bookreader.core.selection_types import names_nobody
from bookreader.core.sentences import split_sentences, words
from bookreader.core.types import Citation, Mode, Validation

from bookreader.core.answer.cite import Cited
from bookreader.core.answer.modes import strategy
from bookreader.core.answer.run import Run

log = logging.getLogger(__name__)

#: Below this grounding similarity an answer whose citation excerpt the model invented is
#: rejected even when its words are all in the context.
INVENTED_MIN_SIMILARITY = 0.70

#: Refusals (the reason the quotes or the fallback record).
REJECTED = "rejected"
OFF_TARGET = "off target"


@dataclass(frozen=True)
class Verdict:
    """The check stage's output: the text that may be shown, the grounding validation,
    and why it may not be shown ("" when it may)."""

    text: str
    validation: Validation
    refusal: str = ""


def grounding(run: Run, text: str, context: str) -> Validation:
    """The validator's verdict on ``text`` over ``context``, with the sentences that only
    restate the question and those that swap the sides of a comparison unsupported."""
    sentences = run.validator.answer_sentences(text)
    validation = run.validator.validate(text, context, question=run.question)
    validation = quotes.mark_tautologies(validation, sentences, run.question, run.selection)
    # a sentence that holds an instruction to the assistant is never shown, whatever the
    # words around it support (a planted aside inside a book sentence, "... float, (when
    # asked, say ...) because ...", or a model that repeats one)
    planted = [s for s in sentences if quotes.instruction_like(s)]
    validation = quotes.with_unsupported(validation, planted)
    return swapped_sides(run, text, validation, context)


def swapped_sides(run: Run, text: str, validation: Validation, context: str) -> Validation:
    """``validation`` with the sentences that say of one side of a comparison what the
    context says only of the other marked unsupported ("The important difference is that
    lists are immutable." over "... that tuples are immutable.")."""
    sides = comparison_sides(run.question)
    if sides is None:
        return validation
    context_sentences = split_sentences(context)
    swapped = tuple(s for s in run.validator.answer_sentences(text)
                    if s not in validation.unsupported_sentences
                    and swaps_compared_side(s, context_sentences, sides))
    if swapped:
        log.info("Said of the other side of the comparison: %s", swapped[0][:80])
    return quotes.with_unsupported(validation, swapped)


def invented_excerpt(cited: Cited, validation: Validation, written: str,
                     context: str) -> bool:
    """The model quoted words the context does not hold (``written``: its text before the
    citations were checked), and its answer is only loosely like the context."""
    if (cited.invented and validation.passed
            and validation.similarity < INVENTED_MIN_SIMILARITY
            and not only_self_quotes(written, context)):
        log.info("Rejected: an invented citation excerpt and similarity %.2f",
                 validation.similarity)
        return True
    return False


def only_code(run: Run, text: str) -> bool:
    """A language model's answer that is nothing but lines of code, for a question that
    does not ask for code."""
    if run.spec.kind == "extractive" or wants_code(run.question):
        return False
    sentences = [s for s in run.validator.answer_sentences(text) if s.strip()]
    # Judged line by line: a sentence that introduces a listing runs on into the lines
    # under it, and the whole read as code.  A lead-in (a line ending in ":") says
    # nothing by itself.
    lines = [ln.strip().lstrip("-*\u2022 ") for s in sentences for ln in s.splitlines()]
    body = [ln for ln in lines if words(ln) and not ln.endswith(":")] or sentences
    return bool(body) and all(reads_as_code(s) for s in body)


def only_captions(run: Run, text: str) -> bool:
    """A language model's answer whose every sentence is a figure's or table's caption
    (:func:`~bookreader.core.llm.answer_type.is_caption`): copied from the book, so it
    verifies, but it labels a picture and states nothing."""
    if run.spec.kind == "extractive":
        return False
    sentences = [s for s in run.validator.answer_sentences(strip_citations(text)) if s.strip()]
    return bool(sentences) and all(is_caption(s) for s in sentences)


def check(run: Run, cited: Cited, context: str, written: str) -> Verdict:
    """Whether ``cited`` may be shown (the module doc lists the checks in order)."""
    mode = strategy(run)
    validation = grounding(run, cited.text, context)
    if invented_excerpt(cited, validation, written, context):
        return Verdict(cited.text, replace(validation, passed=False), REJECTED)
    text = cited.text
    if not validation.passed:
        kept = supported_part(text, validation)
        if kept is None:
            return Verdict(text, validation, REJECTED)
        if mode.refuses_first_unsupported and first_unsupported(
                run.validator.answer_sentences(text), validation):
            return Verdict(text, validation, REJECTED)  # the rest explains what is not shown
        log.info("Dropped %d unsupported sentence(s)", len(validation.unsupported_sentences))
        text = kept
    if mode.refuses_only_code and only_code(run, text):
        log.info("Only lines of code left for a question that asks for none")
        return Verdict(text, validation, REJECTED)
    if only_captions(run, text):
        log.info("Only a caption left: it states nothing")
        return Verdict(text, validation, REJECTED)
    if mode.mode is Mode.SELECTED and names_nobody(run.question, strip_citations(text)):
        # A who-question answered with no one named.
        return Verdict(text, validation, OFF_TARGET)
    return Verdict(text, validation)


def uncited(run: Run, citations: Sequence[Citation]) -> bool:
    """Every claim of a whole-book answer carries a citation a student can follow: one
    with no verified citation at all is not shown as an answer."""
    return strategy(run).needs_citation and not any(c.verified for c in citations)
