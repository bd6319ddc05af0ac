"""Named features of an extractive answer candidate, for a ranker learned from data.

The hand-weighted score of :meth:`bookreader.core.llm.extractive.ExtractiveBackend.rank`
adds up a few of these with weights chosen by hand; :func:`candidate_features` gives them
one by one, with the others that say whether a sentence *states* an answer (it asks, it
leads in, it restates the question's words and adds none, it points back, where in its
passage and in the retrieved order it stands), so that a linear ranker trained on the
tune books' questions (``tools/train_answer_ranker.py``) weighs them instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from bookreader.core.llm.answer_type import (
    _TASK_SECTION,
    META,
    TASK,
    answer_type_bonus,
    content_terms,
    form_penalty,
    is_glossary_entry,
    names_both,
)
from bookreader.core.llm.continuation import is_lead_in
from bookreader.core.llm.extractive_candidates import Candidate, heading_match, is_prose

#: The feature names, in vector order (the trained weights file records them).
FEATURES: tuple[str, ...] = (
    "coverage",        # IDF-weighted share of the question's words in the reading
    "similarity",      # MiniLM cosine of the reading to the question (0 without one)
    "bm25_share",      # BM25 over the pool's best
    "heading",         # heading_match of the heading the sentence stands under
    "section",         # heading_match of the passage's section
    "type_bonus",      # answer_type_bonus (the wanted kind of sentence, lead-ins down)
    "form",            # form_penalty (list fragments, title lines, imports)
    "both_sides",      # names both sides of a comparison question
    "task_section",    # stands in an exercise section
    "points_back",     # read with the sentence before ("This is ...")
    "asks",            # ends in a question mark
    "lead_in",         # ends in a colon (opens a list or a listing)
    "code",            # a listing's line or a comment
    "task_or_meta",    # an exercise's instruction or a sentence about the chapter
    "glossary",        # a vocabulary entry ("term: definition")
    "first_passage",   # stands in the passage the retriever ranked first
    "passage_rank",    # 1 / the passage's rank
    "position",        # 1 / (its index in the passage + 1)
    "log_words",       # log of its length in words
    "new_words",       # share of its content words the question does not hold
)


@dataclass(frozen=True)
class QuestionView:
    """What every candidate of one question is scored against."""

    kind: str
    q_terms: frozenset[str]
    sides: Optional[tuple[str, str]]
    first: Optional[int]  # the first excerpt's number
    best_bm25: float


def position_in_block(c: Candidate) -> int:
    n, p = 0, c.previous
    while p is not None:
        n, p = n + 1, p.previous
    return n


def candidate_features(c: Candidate, q: QuestionView) -> list[float]:
    """The :data:`FEATURES` of candidate ``c`` (scored by ``score_keywords`` and, with an
    embedder, ``score_similarity``) for the question ``q``."""
    s = c.sentence.strip()
    terms = set(c.terms)
    number = c.block.number
    return [
        c.coverage,
        c.similarity or 0.0,
        c.bm25 / q.best_bm25 if q.best_bm25 > 0 else 0.0,
        heading_match(c.heading, set(q.q_terms)),
        heading_match(c.block.section, set(q.q_terms)),
        answer_type_bonus(q.kind, s, set(q.q_terms)),
        form_penalty(s),
        1.0 if names_both(s, q.sides) else 0.0,
        1.0 if _TASK_SECTION.search(c.block.section) else 0.0,
        1.0 if c.antecedent is not None else 0.0,
        1.0 if s.endswith("?") else 0.0,
        1.0 if is_lead_in(s) else 0.0,
        0.0 if is_prose(s) else 1.0,
        1.0 if (TASK.match(s) or META.match(s)) else 0.0,
        1.0 if is_glossary_entry(s) else 0.0,
        1.0 if number is not None and number == q.first else 0.0,
        1.0 / number if number else 0.0,
        1.0 / (position_in_block(c) + 1),
        math.log(1 + len(s.split())),
        len(terms - q.q_terms) / len(terms) if terms else 0.0,
    ]


def question_view(question: str, kind: str, sides: Optional[tuple[str, str]],
                  first: Optional[int], ranked: Sequence[Candidate]) -> QuestionView:
    return QuestionView(kind, frozenset(content_terms(question)), sides, first,
                        max((c.bm25 for c in ranked), default=0.0))
