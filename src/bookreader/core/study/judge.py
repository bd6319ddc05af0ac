"""A language model asked whether a flashcard's back defines or answers its front.

The model reads a short yes/no question with three invented worked examples (none from a
book) and the card; the probability of "Yes" is read from its first answer step
(:meth:`~bookreader.core.llm.llama_cpp.LlamaCppBackend.choice_logprobs`), so nothing is
sampled and the same card always gets the same figure.  The instruction and examples come
first and stay the same, so llama.cpp reads them once and each further card costs only
its own tokens.

Only models whose judgement was measured to separate good cards from bad ones
(:data:`JUDGING_MODELS`, ``bench/study_judge.py``) drop cards: a model that cannot tell
them apart would only throw good cards away.  A card is kept when P(Yes) is at least
:data:`KEEP_AT`, the threshold chosen on the books the rules were tuned on.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Mapping, Optional, Sequence

from bookreader.core.study.model import StudyCard
from bookreader.core.types import CancelFn, Message, ProgressFn, check_cancel, no_progress
from bookreader.errors import BookReaderError, ModelError

log = logging.getLogger(__name__)

#: Model tiers whose P(Yes) separates good cards from bad (ROC AUC 0.81 over 495 judged
#: cards; the small tier's 0.70 drops too many good cards to be worth it).
JUDGING_MODELS = frozenset({"better"})
#: Least P(Yes) of a kept card.
KEEP_AT = 0.5

SYSTEM = ("You check flashcards made from a textbook. Answer Yes when the back, read "
          "alone, tells a student what the front term is (its kind and what sets it "
          "apart, or its meaning) or directly answers the front question. Answer No when "
          "the back only mentions the front, praises it, gives an example of it, is a "
          "list item or code line that needs its context, or names a person or a book. "
          "Reply with Yes or No only.")
QUESTION = "Front: {front}\nBack: {back}\nDoes the back define or answer the front?"
#: Invented cards (front, back, answer) that show the reply's form.
EXAMPLES = (
    ("thermostat", "A thermostat is a device that measures a room's temperature and "
     "switches the heating on or off to keep it near a set value.", "Yes"),
    ("Delta Engine", "The Delta Engine is a versatile and widely admired tool that many "
     "practitioners enjoy using.", "No"),
    ("seed", "seed = 42 # try other values", "No"),
)
#: Words of a card back read at most (a long back says no more to the judge).
MAX_BACK_WORDS = 80


def messages(front: str, back: str) -> list[Message]:
    """The prompt that asks about one card (the fixed part first)."""
    out = [Message("system", SYSTEM)]
    for f, b, answer in EXAMPLES:
        out += [Message("user", QUESTION.format(front=f, back=b)),
                Message("assistant", answer)]
    short = " ".join(back.split()[:MAX_BACK_WORDS])
    out.append(Message("user", QUESTION.format(front=" ".join(front.split()), back=short)))
    return out


def yes_probability(backend: Any, front: str, back: str) -> float:
    """P(Yes) / (P(Yes) + P(No)) of ``backend`` judging the card ``front`` -> ``back``.

    Raises:
        ModelError: the backend cannot report token probabilities (not a local model),
            or the model failed.
    """
    reader = getattr(backend, "choice_logprobs", None)
    if reader is None:
        raise ModelError(f"The model {getattr(backend, 'name', backend)} cannot judge "
                         "cards: only a local model reports its answer's probabilities. "
                         "Pick a local model, or make the cards without one.")
    lp = reader(messages(front, back), ("Yes", "No"))
    top = max(lp["Yes"], lp["No"])
    yes, no = math.exp(lp["Yes"] - top), math.exp(lp["No"] - top)
    return yes / (yes + no)


def judges_cards(backend: Any) -> bool:
    """True when ``backend`` is a model whose card judgement was measured useful."""
    return (backend is not None and getattr(backend, "name", "") in JUDGING_MODELS
            and callable(getattr(backend, "choice_logprobs", None)))


def keep_judged(cards: Sequence[StudyCard], p_yes: Mapping[str, float],
                keep_at: float = KEEP_AT) -> list[StudyCard]:
    """The cards whose P(Yes) (by card id) is at least ``keep_at``; an unjudged card
    stays."""
    return [c for c in cards if p_yes.get(c.card_id, 1.0) >= keep_at]


def drop_undefined(cards: Sequence[StudyCard], backend: Any, *,
                   keep_at: float = KEEP_AT, progress: ProgressFn = no_progress,
                   cancel: Optional[CancelFn] = None) -> tuple[list[StudyCard], int]:
    """``cards`` without those ``backend`` judges not defined or answered by their back.

    Returns:
        The kept cards (same order) and how many were dropped.  A model that fails
        keeps every card not judged yet.
    """
    p_yes: dict[str, float] = {}
    for n, card in enumerate(cards):
        check_cancel(cancel)
        progress(n, len(cards), "Checking cards")
        try:
            p_yes[card.card_id] = yes_probability(backend, card.front, card.back)
        except BookReaderError as exc:
            log.warning("Study: the model could not judge cards (%s); the rest stay", exc)
            break
    progress(len(cards), len(cards), "Checking cards")
    kept = keep_judged(cards, p_yes, keep_at)
    log.info("Study: the model judged %d cards and dropped %d", len(p_yes),
             len(cards) - len(kept))
    return kept, len(cards) - len(kept)
