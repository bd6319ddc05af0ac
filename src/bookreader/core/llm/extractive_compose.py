"""Composing an extractive answer: which further sentences join its best one, and how
each chosen sentence is shown.

Beside the best sentence (and its continuation) an answer takes sentences of prose that
add question words and score at least :data:`ADD_SHARE` of the best one, the other side
of a comparison answered for one side only (:func:`other_side`), and for a question that
asks for code, a lead-in with the short example after it (:func:`code_example`).  Each
chosen sentence is shown with its citation and a verbatim quote (:func:`render`).

Separate from :mod:`bookreader.core.llm.extractive`, whose ``select`` decides whether the
context answers and which sentence is best: the rules here only add to an answer already
found, and shape how it reads.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from bookreader.core.llm.answer_type import (
    is_claiming_lead_in,
    is_comment,
    names_both,
    names_side,
    shown_sentence,
    unmarked,
    without_list_number,
)
from bookreader.core.llm.extractive_candidates import Candidate, is_prose, may_join
from bookreader.core.model_output import format_citation

#: Least score, as a share of the best sentence's, of a sentence of prose added to the
#: answer for the question's words the others lack (a comment or a listing line needs
#: :data:`CODE_ADD_SHARE`).  On the tune halves 0.5-0.65 answered more questions
#: correctly than 0.75, and 0.8 fewer.
ADD_SHARE = 0.65
CODE_ADD_SHARE = 0.75


def other_side(chosen: list[Candidate], ranked: list[Candidate],
               sides: tuple[str, str] | None, best: Candidate) -> Optional[Candidate]:
    """For a comparison answered for one side only, the best sentence of prose naming
    the other side, when it scores at least :data:`ADD_SHARE` of the best one ("What is
    the difference between a stack and a queue?" answered by "A stack is last in,
    first out ..." alone needs "A queue is first in, first out ...")."""
    if sides is None or any(names_both(c.sentence, sides) for c in chosen):
        return None
    named = [s for s in sides if any(names_side(c.sentence, s, sides) for c in chosen)]
    if len(named) != 1:
        return None
    missing = sides[1] if named[0] == sides[0] else sides[0]
    return next((c for c in ranked if c not in chosen and may_join(c) and is_prose(c.sentence)
                 and names_side(c.sentence, missing, sides)
                 and c.score >= ADD_SHARE * best.score), None)


#: Most words of a code example shown after its lead-in for a question that asks for
#: code (:func:`~bookreader.core.llm.answer_type.wants_code`): a declaration or a call,
#: not a listing.
CODE_EXAMPLE_WORDS = 25


def code_example(ranked: Sequence[Candidate], best_score: float) -> list[Candidate]:
    """The best lead-in that claims something ("Of course, you can also declare the
    variable and create the array with a single line of code:") scoring at least
    :data:`ADD_SHARE` of the best sentence, with the short, whole code after it (not the
    first line of a block: "for (int i = 0; i < values.length; i++) {"); empty when there
    is none."""
    for c in ranked:
        if c.score < ADD_SHARE * best_score:
            break
        after = c.following[0].sentence if c.following else ""
        if (after and is_claiming_lead_in(c.sentence) and not is_prose(after)
                and not is_comment(after) and not after.rstrip().endswith(("{", ":"))
                and len(after.split()) <= CODE_EXAMPLE_WORDS):
            return [c, c.following[0]]
    return []


def render(c: Candidate) -> str:
    """``sentence [Source: Section (Page X) - "quote"]``, or the sentence in quotes when
    the block carries no page; without the next list item's number that PDF text leaves
    at a sentence's end (as the quotes card shows it)."""
    sentence = without_list_number(c.sentence)  # "... their environment: 1." shows no "1."
    if not c.block.page_label:
        return f"\u201c{unmarked(sentence)}\u201d"
    shown = shown_sentence(sentence)
    return f"{shown} {format_citation(c.block.section, c.block.page_label, quote(sentence))}"


def quote(sentence: str, max_words: int = 30) -> str:
    """A verbatim piece of ``sentence`` without double quotes or comment marks, at most
    ``max_words`` long."""
    parts = [p.strip() for p in re.split(r'["“”]', unmarked(sentence))]
    best = max(parts, key=lambda p: len(p.split()))
    words = best.split()
    return " ".join(words[:max_words])
