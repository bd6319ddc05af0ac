"""Where a model's selected-text answer was taken from, and whether the question names a
number the selection never writes.

:func:`answer_span` reads a model's answer as an extractive span (the words it adds to
the question); :func:`answered_from` finds the selection sentence it was taken from.

:func:`names_absent_number` is a check made before any model runs: a question that names
a number (a year, a count) the selection never writes asks about something the selection
does not state ("Who passed the Scotland Act of 1988?" over a text about the 1998 act;
"Who did the Normans besiege in the 11th century?" over a siege of 1107).  On the 200
SQuAD 2.0 cases of ``bench/make_squad_cases.py`` it holds for 8 unanswerable questions and
no answerable one.
"""

from __future__ import annotations

import logging
import re

from bookreader.core.citations import strip_citations
from bookreader.core.sentences import content_terms, numbers, split_sentences

log = logging.getLogger(__name__)


def _terms(text: str) -> set[str]:
    return set(content_terms(text))


_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.I)
_SPELLED = ("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
            "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
            "nineteenth twentieth twenty-first").split()


def _holds_ordinal(selection: str, digits: str) -> bool:
    low = selection.lower()
    n = int(digits)
    return bool(re.search(r"\b%s(?:st|nd|rd|th)\b" % n, low)) or (
        n < len(_SPELLED) and re.search(r"\b%s\b" % _SPELLED[n], low) is not None)


def names_absent_number(question: str, selection: str) -> bool:
    """True when ``question`` names a number written with digits ("1988", "231") or an
    ordinal ("the 11th century") that the selection does not hold (a number inside one of
    its words counts: "1980s"; an ordinal may be spelled out: "eleventh")."""
    ordinals = _ORDINAL.findall(question)
    wanted = {n.replace(",", "") for n in numbers(_ORDINAL.sub(" ", question))}
    if not wanted and not ordinals:
        return False
    held = {n.replace(",", "") for n in numbers(selection)}
    flat = selection.replace(",", "")
    missing = [n for n in wanted if n not in held and n not in flat]
    missing += [n for n in ordinals if not _holds_ordinal(selection, n)]
    if missing:
        log.info("Selected text: the question names a number the selection does not hold")
        return True
    return False


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
