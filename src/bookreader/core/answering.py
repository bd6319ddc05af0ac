"""The three ways to ask: whole book, selected text, highlight.

One :meth:`Answerer.ask` runs the chain question -> (retrieval) -> prompt -> model ->
citations -> grounding -> answer, and returns an :class:`~bookreader.core.types.Answer`
with everything the UI and the audit log need.  The chain is the typed pipeline of
:mod:`bookreader.core.answer` (its stages, one module each, and the three modes as
strategies in :mod:`bookreader.core.answer.modes`); this module keeps the names the rest
of BookReader imports.

Every answer carries an :class:`~bookreader.core.types.Outcome`.  "Not covered" is said
only when whole-book retrieval finds nothing above the threshold; when retrieval is
confident but no verified answer can be written the outcome is ``quotes``.  Confidence of
an ``answer`` is a calibrated estimate of being correct
(:mod:`bookreader.core.confidence`); every other outcome is capped below "medium".

Timing: ``first_token_ms`` counts from the call (what the user waits for);
``stage_ms`` holds ``retrieval``, ``prompt``, ``first_token`` (from the start of
generation), ``generation`` and ``validation``.
"""

from __future__ import annotations

from bookreader.core.answer.answerer import Answerer
from bookreader.core.answer.check import INVENTED_MIN_SIMILARITY
from bookreader.core.answer.draft import (
    DEFAULT_GENERATION_CONFIDENCE,
    RETRIEVAL_WEIGHT,
    combine_confidence,
    declines,
    generation_confidence,
)
from bookreader.core.answer.render import confidence_level
from bookreader.core.inputs import (
    MAX_QUESTION_CHARS,
    MAX_SELECTION_CHARS,
    clean_question,
    clean_selection,
)
from bookreader.core.model_output import (
    drop_prompt_tags,
    drop_unclosed_citations,
    loop_start,
    only_self_quotes,
    parse_answer,
    plain_code_marks,
)

__all__ = [
    "DEFAULT_GENERATION_CONFIDENCE",
    "INVENTED_MIN_SIMILARITY",
    "MAX_QUESTION_CHARS",
    "MAX_SELECTION_CHARS",
    "RETRIEVAL_WEIGHT",
    "Answerer",
    "clean_question",
    "clean_selection",
    "combine_confidence",
    "confidence_level",
    "declines",
    "drop_prompt_tags",
    "drop_unclosed_citations",
    "generation_confidence",
    "loop_start",
    "only_self_quotes",
    "parse_answer",
    "plain_code_marks",
]
