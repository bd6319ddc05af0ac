"""Calibrated confidence: the estimated chance that a shown answer is correct.

The design's levels read "high > 0.85: nearly always right", "medium 0.70-0.85: usually
right", "low: flagged".  The old figure (0.6 x retrieval confidence + 0.4 x the model's
stated confidence) did not mean that: a tautology, an irrelevant extractive sentence and a
card replaced by the grounding check all showed High.  Now the confidence of an
``answer`` outcome is a logistic model of signals that predict correctness:

* ``retrieval``: the retrieval confidence (1.0 in selected-text and highlight modes, where
  the student chose the context);
* ``margin``: the top passage's hybrid score minus the second one's;
* ``similarity`` / ``overlap``: the grounding check's weakest sentence;
* ``relevance``: MiniLM cosine between the answer (citations removed) and the question;
* ``coverage``: the share of the question's content words the answer contains
  (:func:`question_coverage`);
* ``generation``: the model's stated confidence, else its mean token probability, else
  0.80 (:data:`DEFAULT_GENERATION`);
* ``extractive``: 1 for the extractive backend (its "stated confidence" is its own
  keyword/similarity score, a different quantity);
* ``length``: the answer's words without citations over 60, at most 1
  (:func:`answer_length`: the gold answers name several points, and a one-line answer
  holds fewer of them);
* ``answer_type``: whether the answer's best sentence has the shape the question asks
  for (:func:`answer_type`: a definition for "what is", a procedure for "how").

The coefficients (:data:`COEFFICIENTS`) are fitted by ``bench/answer_quality.py --fit`` on
the tune split of the question sets (every other in-scope question of
``bench/questions/*.jsonl``, judged against the hand-written gold answers) and reported
on the held-out split.  There is one set per kind of backend (:func:`kind_of`, read from
the ``extractive`` signal): the extractive backend quotes the book, a language model
writes its own sentences, and the same signal does not mean the same for both (the
answer-type score, the generation figure: a keyword score for one, token probabilities
for the other).  A single set with a backend indicator would only move the intercept;
two small sets are as simple and fit both.  A set's ``ceiling`` caps the estimate where
the held-out answers did not earn a higher level.

Extractive set (``bench/answer_quality.py --fit`` on every report book's
``bench/results/answer_quality_<book>_extractive.json``, ``--features generation,
answer_type,relevance,coverage,length``, L2 0.01).  The features are the signals whose
ROC AUC on the tune split was at least 0.60; retrieval, margin and the grounding check's
similarity and overlap tell nothing here: an extractive answer quotes the book, so the
check passes every one.  Held-out ECE about
0.07 (target 0.10); nothing reaches "high": the highest it can give (every signal at its
best) is 0.81, "medium".

Language-model set (``--kind model``, the default features, L2 0.01), fitted on the
default ``small`` tier's answers; the other language models use it too.  Every book is in
the fit: a fit on some books alone calibrated well on them but badly on a book whose
answers are less often right.  Adding retrieval to the features fitted the tune split
better and the held-out split worse.  No answer earned "high", so the ceiling stays 0.85.

Book-sentences set (the extractive backend's answer shown in place of a language
model's, :mod:`bookreader.core.answer.choose`): fitted on the questions where the language
model gave no verified answer, with every such question given the book's sentences
(``bench/answer_quality.py --replay RUN --book-min 0 --book-margin -5``), same five
features.  Those questions are harder than the extractive backend's average, so the
extractive set overstates their chance.

Recalibration.  The pipeline improved after those fits (focus, quotes, book sentences),
and its answers became more often right than their estimates said: most answers were
"low" although most of them were right.  A single logit shift of both sets' intercepts
(:data:`RECALIBRATION`: the one parameter fitted by log-loss on the tune answers; fitted
apart the two shifts were nearly equal, and one value keeps the comparison of the two sets
in :mod:`bookreader.core.answer.choose` unchanged) brings the held-out ECE from about 0.10
to 0.02.  A full refit of the coefficients on the same answers did worse held out, and
gave "high" to answers that were often wrong.  Measured with ``bench/answer_quality.py
--rescore``.  The selected-text and highlight answers of a language model use the "model"
set too; they were never in its fit.

Selected text.  With the "model" set a language model's selected-text answers were right
far more often than it said.  The signals hardly tell the right ones from the wrong ones
there (the student chose the context, and the check already removed what the selection
does not support), so the "selected" set is the "model" set with one more logit shift,
:data:`SELECTED_SHIFT` (fitted by log-loss on the tune half of ``bench/answer.py``'s
cases), under the same ceiling: held-out ECE about 0.15 -> 0.10.  Highlight mode keeps the
"model" set (its passages come from the book; not measured).  Measured with
``bench/answer.py --backend small --replay RUN`` (``answers_by_level``, ``answers_ece``).

Every other outcome (quotes, not covered, timeout, error) is capped below the "high"
level: no such card ever shows "High confidence".
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping, Optional, Sequence

log = logging.getLogger(__name__)

#: Generation confidence when the model states none and gives no token probabilities.
DEFAULT_GENERATION = 0.80
#: The highest confidence a non-answer outcome may show (just below "medium"/"high").
NON_ANSWER_CAP = 0.69

#: Added to the fitted intercepts of the "model" and "book" sets: one logit
#: shift for both, fitted on the tune split (see "Recalibration" in the module docstring).
RECALIBRATION = 0.48
#: Added on top for a language model's selected-text answers (see "Selected
#: text" in the module docstring).
SELECTED_SHIFT = 1.5

#: Intercept and weights of the logistic model, one set per kind of backend (see the module
#: docstring for the fits).  ``ceiling``, where present, is the highest estimate the set may
#: give: the held-out answers did not earn a higher level.
COEFFICIENTS: dict[str, dict[str, float]] = {
    "extractive": {
        "intercept": -2.722,
        "relevance": 0.925,
        "coverage": 0.832,
        "generation": 0.896,
        "length": 1.297,
        "answer_type": 0.795,
    },
    "model": {
        "intercept": -0.681 + RECALIBRATION,  # fitted, then recalibrated
        "generation": 0.46,
        "answer_type": 0.485,
        "relevance": 0.646,
        "coverage": -0.163,
        "length": 1.079,
        "ceiling": 0.85,
    },
    "book": {
        "intercept": -2.632 + RECALIBRATION,  # fitted, then recalibrated
        "relevance": 1.076,
        "coverage": 0.526,
        "generation": 0.396,
        "length": 1.977,
        "answer_type": -0.188,
    },
}
# A language model's answer in selected-text mode: the "model" set, shifted (see
# "Selected text" in the module docstring).
COEFFICIENTS["selected"] = dict(
    COEFFICIENTS["model"], intercept=COEFFICIENTS["model"]["intercept"] + SELECTED_SHIFT)
#: Kinds of backend with their own coefficients: the extractive backend, every language model.
KINDS: tuple[str, ...] = tuple(COEFFICIENTS)


@dataclass(frozen=True)
class Signals:
    """The inputs of :func:`calibrated` (each roughly in [0, 1])."""

    retrieval: float = 0.0
    margin: float = 0.0
    similarity: float = 0.0
    overlap: float = 0.0
    relevance: float = 0.0
    coverage: float = 0.0
    generation: float = DEFAULT_GENERATION
    extractive: float = 0.0
    length: float = 0.0
    answer_type: float = 0.0
    #: 1 for the book's sentences shown in place of a language model's answer
    #: (core/answer/choose.py): they are judged on the questions the model did not answer
    #: well, harder than the extractive backend's questions on average.
    in_place: float = 0.0
    #: 1 for a language model's answer from the student's selection alone (selected-text
    #: mode): its own set (``"selected"``), fitted on selected-text cases.
    selected: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {k: round(float(v), 4) for k, v in asdict(self).items()}


#: The signals' names, in the order of :class:`Signals`.
FEATURES: tuple[str, ...] = tuple(f.name for f in fields(Signals))


def level(confidence: float) -> str:
    """"high" above 0.85, "medium" from 0.70 to 0.85, "low" below 0.70."""
    if confidence > 0.85:
        return "high"
    if confidence >= 0.70:
        return "medium"
    return "low"


def generation_confidence(stated: Optional[float], logprobs: Sequence[float]) -> float:
    """The model's stated confidence, else its mean token probability, else 0.80."""
    if stated is not None:
        return float(stated)
    if logprobs:
        return float(math.exp(sum(logprobs) / len(logprobs)))
    return DEFAULT_GENERATION


def kind_of(signals: Signals | Mapping[str, float]) -> str:
    """"book" for the book's sentences in place of a model's answer, "extractive" for the
    extractive backend's answers, "selected" for a language model's selected-text
    answers, else "model" (a language model)."""
    values = signals.as_dict() if isinstance(signals, Signals) else signals
    if float(values.get("in_place", 0.0) or 0.0) >= 0.5:
        return "book"
    if float(values.get("extractive", 0.0) or 0.0) >= 0.5:
        return "extractive"
    return "selected" if float(values.get("selected", 0.0) or 0.0) >= 0.5 else "model"


def calibrated(signals: Signals | Mapping[str, float],
               coefficients: Optional[Mapping[str, float]] = None) -> float:
    """The estimated probability (0-1, four decimals) that the answer is correct.

    Without ``coefficients``, the set of the answer's kind of backend (:func:`kind_of`).
    """
    values = signals.as_dict() if isinstance(signals, Signals) else dict(signals)
    coef = COEFFICIENTS[kind_of(values)] if coefficients is None else coefficients
    z = coef.get("intercept", 0.0)
    for name in FEATURES:
        z += coef.get(name, 0.0) * float(values.get(name, 0.0) or 0.0)
    z = max(-30.0, min(30.0, z))
    return round(min(coef.get("ceiling", 1.0), 1.0 / (1.0 + math.exp(-z))), 4)


def recalibrated(estimate: float) -> float:
    """An estimate of the scale before :data:`RECALIBRATION` on today's scale (four
    decimals): a threshold chosen on the old scale keeps choosing the same answers."""
    z = math.log(estimate / (1.0 - estimate)) + RECALIBRATION
    return round(1.0 / (1.0 + math.exp(-z)), 4)


def cap_non_answer(confidence: float) -> float:
    """A non-answer outcome's confidence, never at the "medium" or "high" level."""
    return round(max(0.0, min(NON_ANSWER_CAP, confidence)), 4)


def question_coverage(question: str, answer: str) -> float:
    """Share of the question's content words (stemmed) that the answer contains."""
    from bookreader.core.citations import strip_citations
    from bookreader.core.sentences import content_terms

    asked = set(content_terms(question))
    if not asked:
        return 0.0
    return round(len(asked & set(content_terms(strip_citations(answer)))) / len(asked), 4)


#: Words of an answer (citations removed) at which ``length`` reaches 1.
FULL_LENGTH_WORDS = 60


def answer_length(answer: str) -> float:
    """Words of the answer without its citations, as a share of FULL_LENGTH_WORDS (<= 1)."""
    from bookreader.core.citations import strip_citations

    return round(min(1.0, len(strip_citations(answer).split()) / FULL_LENGTH_WORDS), 4)


def answer_type(question: str, answer: str) -> float:
    """How well the answer's best sentence has the shape the question asks for (a
    definition for "what is", a procedure for "how", a reason for "why"): the extractive
    backend's answer-type score of its best sentence, from -1 (a lead-in to code, a contents
    line) to 0.3 (the book's own glossary entry for the asked term)."""
    from bookreader.core.citations import strip_citations
    from bookreader.core.llm.extractive import (
        answer_type_bonus,
        asks_for_name,
        question_kind,
        split_sentences,
    )
    from bookreader.core.sentences import content_terms

    kind = question_kind(question)
    q_terms = set(content_terms(question))
    asks_name = asks_for_name(question)
    scores = [answer_type_bonus(kind, s, q_terms, asks_name=asks_name)
              for s in split_sentences(strip_citations(answer)) if s.strip()]
    return round(max(scores), 4) if scores else 0.0


def margin_of(scores: Sequence[float]) -> float:
    """Top score minus the second (0 with fewer than two)."""
    ranked = sorted((float(s) for s in scores), reverse=True)
    if len(ranked) < 2:
        return 0.0
    return max(0.0, ranked[0] - ranked[1])


def answer_signals(
    question: str,
    text: str,
    validation: Any,
    *,
    retrieval: float,
    passage_scores: Sequence[float] = (),
    generation: float = DEFAULT_GENERATION,
    extractive: bool = False,
    selected: bool = False,
    embedder: Any = None,
) -> Signals:
    """The signals of a verified answer (``text`` with its citations)."""
    from bookreader.core.citations import strip_citations

    relevance = 0.0
    if embedder is not None:
        try:
            v = embedder.embed([question, strip_citations(text)])
            relevance = float(sum(a * b for a, b in zip(v[0], v[1])))
        except Exception:  # the other signals still stand; the log says why
            log.exception("Relevance for the confidence could not be computed")
    return Signals(
        retrieval=retrieval,
        margin=margin_of(passage_scores),
        similarity=float(validation.similarity) if validation is not None else 0.0,
        overlap=float(validation.overlap) if validation is not None else 0.0,
        relevance=relevance,
        coverage=question_coverage(question, text),
        generation=generation,
        extractive=1.0 if extractive else 0.0,
        selected=1.0 if selected else 0.0,
        length=answer_length(text),
        answer_type=answer_type(question, text),
    )
