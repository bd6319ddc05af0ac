"""Ranking the units of retrieved passages as the extractive backend ranks its sentences:
the ``"answer"`` and ``"answer_split"`` rankings of :func:`bookreader.core.focus.focus_passages`.

A unit scores by keyword coverage and MiniLM similarity plus the extractive backend's
answer-type bonus and heading match; a heading, a bare lead-in to code, a contents line
or a stub ("Steps: 1.") is never shown for its own sake (:data:`UNUSABLE`).

Separate from :mod:`bookreader.core.focus`, which chooses what fits a character budget:
this module only scores units, so what a ranking prefers can be tested and measured
(``bench/focus_quality.py``) apart from how the budget is spent.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from typing import Any, Optional, Sequence

import numpy as np

from bookreader.core.code_text import is_code_line
from bookreader.core.llm import extractive as ex
from bookreader.core.llm.answer_type import (
    CODE_PENALTY,
    answer_type_bonus,
    asks_for_name,
    content_terms,
    heading_like,
    is_heading,
    looks_like_code,
    question_kind,
)
from bookreader.core.llm.extractive_candidates import heading_match
from bookreader.core.llm.extractive_context import split_sentences
from bookreader.core.llm.continuation import is_enumerator

log = logging.getLogger(__name__)

#: A unit scored at or below this by :func:`answer_scores` (a heading, a bare lead-in to
#: code, a contents line) is never shown for its own sake.
UNUSABLE = -0.5


def similarities(embedder: Any, sentences: Sequence[str],
                 question: str) -> Optional[list[float]]:
    """MiniLM cosine of each sentence to the question (None: the embedding failed)."""
    try:
        vectors = np.asarray(embedder.embed([question, *sentences]), dtype=np.float32)
    except Exception:  # keywords alone still rank; say why in the log
        log.exception("focus: embedding failed, ranking by keywords only")
        return None
    return [float(x) for x in vectors[1:] @ vectors[0]]


def answer_units(units: Sequence[str], joins: Sequence[str]) -> tuple[list[str], list[str]]:
    """``units`` split further where the extractive backend splits (a line ending in a
    colon, a glossary entry, a vocabulary list run together), line units kept whole."""
    out: list[str] = []
    out_joins: list[str] = []
    for unit, join in zip(units, joins):
        parts = [unit] if join == "\n" else split_sentences(unit) or [unit]
        for n, part in enumerate(parts):
            out.append(part)
            out_joins.append(join if n == 0 else " ")
    return out, out_joins


def sentence_answer_scores(units: Sequence[str], joins: Sequence[str], owner: Sequence[int],
                            question: str, embedder: Any, sections: Sequence[str]) -> list[float]:
    """:func:`answer_scores` of each unit's parts (a glossary entry, a lead-in and what
    follows it), the unit scored by its best part: a whole sentence is still what is
    shown (a list run together in one sentence, "input: Get data ... output: Display
    ...", stays whole), but it ranks as the extractive backend ranks its best piece."""
    parts, part_joins = answer_units(units, joins)
    part_owner: list[int] = []
    part_unit: list[int] = []
    for i, (unit, join) in enumerate(zip(units, joins)):
        n = 1 if join == "\n" else max(1, len(split_sentences(unit)))
        part_owner.extend([owner[i]] * n)
        part_unit.extend([i] * n)
    scores = answer_scores(parts, part_owner, question, embedder, sections)
    best = [UNUSABLE - 1.0] * len(units)
    for i, score in zip(part_unit, scores):
        best[i] = max(best[i], score)
    return best


#: The next list item's number at a unit's end ("Steps: 1.", "Assessment Questions 1.").
_TRAILING_ITEM = re.compile(r"(?:^|\s)\d{1,2}\.\s*$")
#: Words of a lead-in that says nothing but that a list follows ("Steps:", "We covered:").
STUB_LEAD_IN_WORDS = 3
#: A line of code cut after a dotted name's first part ("return cv2.", "img = cv2."):
#: the sentence splitter ends a sentence at "cv2.GaussianBlur(...)".
_CUT_NAME = re.compile(r"[A-Za-z_]\w*\.$")


def is_stub(unit: str) -> bool:
    """Nothing for a model to read: a bare lead-in or a heading holding only the next list
    item's number ("Steps: 1.", "We covered: 1.", "Assessment Questions 1."), or a line of
    code cut at a dotted name ("return cv2.").  Such a unit takes a local tier's prompt
    room, often a whole excerpt of its own ("Assessment Questions 1." shown as the first
    excerpt).  A statement that ends in a number ("The answer is 2.") is no stub."""
    m = _TRAILING_ITEM.search(unit)
    if m:
        body = unit[: m.start()].strip()
        bare_lead_in = body.endswith(":") and len(body.split()) <= STUB_LEAD_IN_WORDS
        if not body or bare_lead_in or all(w[:1].isupper() or w[:1].isdigit()
                                           for w in body.split()):
            return True
    return (len(unit.split()) <= 4 and is_code_line(unit)
            and bool(_CUT_NAME.search(unit.strip())))


def answer_scores(units: Sequence[str], owner: Sequence[int], question: str, embedder: Any,
                  sections: Sequence[str] = ()) -> list[float]:
    """The extractive backend's sentence score for every unit of several passages.

    The mean of IDF-weighted keyword coverage (question words such as "name" or "explain"
    left out) and MiniLM similarity, plus
    :func:`~bookreader.core.llm.extractive.answer_type_bonus` (a definition for "what
    is", a procedure for "how", a reason for "why"; a lead-in to code, a contents line or
    an exercise down) and the match between the heading a unit stands under (its
    passage's section until a heading line inside it) and the question.  A heading line
    itself scores :data:`UNUSABLE` less, and a bare list number ("2.") is never usable.
    A short line of a listing ("python -m venv env", "# Create virtual environment") is
    no heading: it scores as code (``CODE_PENALTY``).  Sentences ranked this way lie on a
    gold page more often than by keywords and similarity alone (``bench/focus_quality.py``).
    """
    query = list(dict.fromkeys(content_terms(question)))
    q_terms = set(query)
    terms = [set(content_terms(u)) for u in units]
    n = len(units)
    df: Counter = Counter()
    for t in terms:
        df.update(t & q_terms)
    idf = {q: math.log(1.0 + (n - df[q] + 0.5) / (df[q] + 0.5)) for q in query}
    total = sum(idf.values()) or 1.0
    coverage = [sum(idf[q] for q in query if q in t) / total for t in terms]
    sims = similarities(embedder, units, question) if embedder is not None else None
    kind = question_kind(question)
    asks_name = asks_for_name(question)
    scores: list[float] = []
    heading = ""
    for i, unit in enumerate(units):
        if i == 0 or owner[i] != owner[i - 1]:
            k = owner[i]
            heading = sections[k] if k < len(sections) else ""
        score = coverage[i] if sims is None else (coverage[i] + sims[i]) / 2
        score += answer_type_bonus(kind, unit, q_terms, asks_name=asks_name)
        if is_enumerator(unit) or is_stub(unit):
            score = UNUSABLE - 1.0  # a bare list number ("2.") says nothing on its own
        elif heading_like(unit) and is_code_line(unit):
            # a short line of a listing ("python -m venv env", "# Create
            # virtual environment") is no heading: it ranks as code does
            if not looks_like_code(unit):
                score += CODE_PENALTY
        elif heading_like(unit):
            if is_heading(unit):  # a short line of a listing is no section title
                heading = unit
            score += UNUSABLE - 1.0
        score += ex.HEADING_WEIGHT * heading_match(heading, q_terms)
        scores.append(score)
    return scores
