"""A language model asked whether a flashcard's back defines or answers its front.

The model reads a short yes/no question with three invented worked examples (none from a
book) and the card; the probability of "Yes" is read from its first answer step
(:meth:`~bookreader.core.llm.llama_cpp.LlamaCppBackend.choice_logprobs`), so nothing is
sampled and the same card always gets the same figure.  The instruction and examples come
first and stay the same, so llama.cpp reads them once and each further card costs only
its own tokens.
"""

from __future__ import annotations

import math
from typing import Any

from bookreader.core.types import Message
from bookreader.errors import ModelError

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
