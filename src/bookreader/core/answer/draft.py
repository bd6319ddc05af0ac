"""The parse stage: the model's text read once into a :class:`Draft`.

A :class:`Generated` is what the model streamed; :func:`parse` reads it once
(:func:`bookreader.core.model_output.parse_answer`: no confidence line, no unclosed
citation, no loop), cleans it as the run's mode requires and scores how sure the model
was.  The later stages check and cite the draft's text; the Answer shows what is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from bookreader.core import confidence as calibration
from bookreader.core import prompts
from bookreader.core.model_output import Claim, ParsedAnswer, claims, parse_answer

from bookreader.core.answer.modes import strategy
from bookreader.core.answer.run import Run

#: Generation confidence when the model states none and gives no token probabilities.
DEFAULT_GENERATION_CONFIDENCE = 0.80
RETRIEVAL_WEIGHT = 0.6


def combine_confidence(retrieval: float, generation: float) -> float:
    """0.6 x retrieval + 0.4 x generation, clamped to [0, 1]."""
    value = RETRIEVAL_WEIGHT * retrieval + (1.0 - RETRIEVAL_WEIGHT) * generation
    return round(max(0.0, min(1.0, value)), 4)


def generation_confidence(stated: Optional[float], logprobs: Sequence[float]) -> float:
    """The model's stated confidence, else its mean token probability, else 0.80."""
    return calibration.generation_confidence(stated, logprobs)


def declines(text: str) -> bool:
    """True when the model said it cannot answer (either fixed sentence, anywhere)."""
    flat = " ".join(text.split()).lower()
    return any(s.lower().rstrip(".") in flat
               for s in (prompts.NOT_COVERED, prompts.NOT_IN_SELECTION))


@dataclass(frozen=True)
class Generated:
    """The generate stage's output: what the model streamed."""

    raw: str
    #: The first claims when the claim cap stopped generation (they are the answer).
    cut: Optional[str] = None
    logprobs: tuple[float, ...] = ()
    first_token_ms: Optional[float] = None
    generation_ms: float = 0.0

    def record(self) -> dict[str, Any]:
        """The Answer fields every outcome after generation carries."""
        return dict(raw_output=self.raw, first_token_ms=self.first_token_ms,
                    generation_ms=self.generation_ms)


@dataclass(frozen=True)
class Draft:
    """The model's answer, read once."""

    generated: Generated
    parsed: ParsedAnswer
    #: The answer text as the checks see it (cleaned for the mode).
    text: str
    #: How sure the model was (stated, else token probabilities).
    generation: float
    #: ``generation`` combined with the retrieval confidence.
    confidence: float

    @property
    def claims(self) -> tuple[Claim, ...]:
        """``text`` sentence by sentence, each with its citations."""
        return tuple(claims(self.text))

    @property
    def declined(self) -> bool:
        """Nothing written, or the model said it cannot answer."""
        return not self.text or declines(self.text)


def parse(run: Run, generated: Generated, retrieval_conf: float) -> Draft:
    """Read ``generated`` (its cut claims when the claim cap stopped it) into a Draft."""
    parsed = parse_answer(generated.raw if generated.cut is None else generated.cut)
    text = strategy(run).clean(parsed.text, run.question)
    gen_conf = generation_confidence(parsed.confidence, generated.logprobs)
    return Draft(generated, parsed, text, gen_conf,
                 combine_confidence(retrieval_conf, gen_conf))
