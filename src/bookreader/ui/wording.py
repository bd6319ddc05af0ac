"""The words a student reads: model names, who wrote an answer, tidied answer text.

One table of names (:data:`MODEL_WORDS`) serves the answer cards and Settings; a backend
that is not in it is shown with its own label from the library, so a new backend needs a
row here only to get friendlier words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bookreader.core.types import Answer, Outcome


@dataclass(frozen=True)
class ModelWords:
    """How the window names one answering backend to a student."""

    #: "the Small model": what follows "Answered by".
    name: str
    #: The Settings choice's title.
    title: str
    #: What it is good for on a computer like this one, and how an answer feels.
    good_for: str


#: Keyed by backend name (``auto`` and ``gguf`` are Settings choices, not backends).
MODEL_WORDS: dict[str, ModelWords] = {
    "auto": ModelWords("the model chosen for this computer", "Let BookReader choose",
                       "Picks the most careful model that still answers quickly on this "
                       "computer."),
    "tiny": ModelWords("the Tiny model", "Tiny model (always installed)",
                       "Quick, but often wrong: most of its answers end up as quotes from "
                       "the book."),
    "small": ModelWords("the Small model", "Small model",
                        "Good for most questions on an ordinary laptop; often answers in "
                        "the book's own words."),
    "better": ModelWords("the Better model", "Better model",
                         "Writes the best local answers, but needs a fast computer "
                         "(four or more cores) to answer in reasonable time."),
    "extractive": ModelWords("the book's own sentences", "The book's own words (no model)",
                             "Answers at once with the book's sentences that best match "
                             "your question. Nothing is written by a model."),
    "claude": ModelWords("Claude (online)", "Claude (online)",
                         "The best answers, but it needs the internet and an API key, and "
                         "your question and the book's passages are sent to Anthropic."),
    "openai": ModelWords("your model server", "Your model server",
                         "A model server you already run (Ollama, LM Studio, llama.cpp, "
                         "vLLM): as good and as fast as the model it serves."),
    "gguf": ModelWords("your own model file", "Another model file",
                       "A model file you downloaded yourself; how good and how fast it is "
                       "depends on the file."),
}

#: How ``Answer.model`` starts when the book's sentences replaced the model's answer.
BOOK_SENTENCES = "book sentences"


def model_words(backend: str, label: str = "") -> ModelWords:
    """The words for ``backend`` (a ``gguf:PATH`` is "your own model file"); an unknown
    backend is named by ``label`` (the library's), else by its name."""
    key = (backend or "").strip()
    if key.startswith("gguf:") or key.lower().endswith(".gguf"):
        key = "gguf"
    if key.startswith("openai"):
        key = "openai"
    key = {"bundled": "tiny"}.get(key, key)  # the tiny tier's old name
    words = MODEL_WORDS.get(key)
    if words is not None:
        return words
    name = label or key or "the model"
    return ModelWords(name, name, "")


def answered_by(answer: Answer) -> tuple[str, str]:
    """(what the card says, its tooltip): who wrote the answer, in a student's words, and
    the technical detail (the model file, why the book's sentences were shown)."""
    model = answer.model or ""
    detail = [f"Model: {model or answer.backend or 'none'}"]
    if answer.backend and answer.backend != model:
        detail.append(f"Backend: {answer.backend}")
    outcome = answer.outcome or Outcome.ANSWER
    if outcome is Outcome.QUOTES:
        tried = model_words(answer.backend).name
        return ("Quotes from the book",
                f"No answer by {tried} could be checked against the book, so these are the "
                "book's own sentences that address the question.\n\n" + "\n".join(detail))
    if outcome is not Outcome.ANSWER:  # nothing was answered: nobody to name
        return "", "\n".join(detail)
    if model.startswith(BOOK_SENTENCES):
        who = model_words(answer.backend).name
        reason = model.split(":", 1)[-1].strip() if ":" in model else ""
        why = f" {who[0].upper()}{who[1:]}'s answer was not used: {reason}." if reason else ""
        return ("In the book's own words",
                "The book's own sentences that best answer the question." + why + "\n\n"
                + "\n".join(detail))
    if answer.backend == "extractive" or model == "extractive":
        return "In the book's own words", ("The book's own sentences that best answer the "
                                           "question; no model wrote them.\n\n"
                                           + "\n".join(detail))
    if not (model or answer.backend):
        return "", ""
    return f"Answered by {model_words(answer.backend).name}", "\n".join(detail)


#: Not before "?" or ":" (code's "a ? b : c" keeps its spaces).
_SPACE_BEFORE = re.compile(r"[ \t]+(?=[,;)\]}]|\.(?:\s|$))")
_SPACE_AFTER = re.compile(r"(?<=[(\[{])[ \t]+")
_RUNS = re.compile(r"[ \t]{2,}")


def tidy_text(text: str) -> str:
    """Text as a student should read it: the stray spaces PDF extraction leaves before
    punctuation and inside brackets removed ("Y , but" -> "Y, but", "( ¯R2)" -> "(¯R2)"),
    runs of spaces made one.  For display only: the citations' excerpts, which are checked
    against the page, are never changed."""
    text = _SPACE_BEFORE.sub("", text)
    text = _SPACE_AFTER.sub("", text)
    return _RUNS.sub(" ", text)
