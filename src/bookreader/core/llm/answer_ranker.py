"""The learned answer ranker: does this sentence state the answer to the question?

Keyword and embedding scores favour the sentence that shares the question's words, and
that is often the one that raises or restates the question ("You might wonder why ..."),
introduces it ("To see ... in action, we look at ...") or labels it, not the one after it
that answers.  This model reads the question and the sentence together (the bundled
MiniLM with low-rank adapters and a head: :class:`bookreader.core.cross_verifier.
CrossEncoder`, the sentence with its heading as the first segment, the question as the
second) and gives the probability that the sentence states the answer.  It is trained by
``tools/train_answer_ranker.py`` (``make train-answer-ranker``) on SQuAD 2.0 questions
and on the tune books' bench questions, and ships as its trained parameters only
(``resources/answer_ranker.safetensors``, pinned by :data:`SHA256`).

The extractive answer adds :data:`~bookreader.core.llm.extractive.RANKER_WEIGHT` times
this probability to each candidate's score
(:meth:`bookreader.core.llm.extractive.ExtractiveBackend.rank`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Optional, Sequence

from bookreader.errors import ModelError

log = logging.getLogger(__name__)

RESOURCE = "answer_ranker.safetensors"
#: SHA-256 of the shipped trained parameters (``make train-answer-ranker`` prints it).
SHA256 = ""
#: Word pieces of one input (heading, sentence, question and special tokens).
MAX_TOKENS = 128


def ranker_text(sentence: str, heading: str = "") -> str:
    """The sentence as the ranker reads it: after the heading it stands under."""
    sentence = " ".join(sentence.split())
    heading = " ".join((heading or "").split())
    return f"{heading}: {sentence}" if heading and heading != sentence else sentence


class AnswerRanker:
    """The trained ranker: :meth:`probabilities` that sentences state a question's answer.

    Raises:
        ModelError: the weights are missing, damaged, or made for another model.
    """

    def __init__(self, path: Optional[Path] = None,
                 expected_sha256: Optional[str] = None) -> None:
        import torch
        from safetensors.torch import load as load_safetensors
        from transformers import AutoTokenizer

        from bookreader.core.cross_verifier import FIRST_ADAPTED, RANK, CrossEncoder, _metadata
        from bookreader.core.embedding import find_model_dir

        where = str(path) if path else f"bookreader/resources/{RESOURCE}"
        try:
            blob = (path.read_bytes() if path else
                    (resources.files("bookreader") / "resources" / RESOURCE).read_bytes())
        except OSError as exc:
            raise ModelError(f"The answer ranker's trained weights ({where}) cannot be read "
                             f"({exc}). Reinstall BookReader, or run make "
                             "train-answer-ranker.") from exc
        want = SHA256 if expected_sha256 is None and path is None else expected_sha256
        digest = hashlib.sha256(blob).hexdigest()
        if want and digest != want:
            raise ModelError(f"The answer ranker's trained weights ({where}) have SHA-256 "
                             f"{digest[:16]}..., not the expected {want[:16]}...: the file "
                             "is damaged or from another version. Reinstall BookReader.")
        try:
            meta = _metadata(blob)
            state = load_safetensors(blob)
        except Exception as exc:  # safetensors raises its own error types
            raise ModelError(f"The answer ranker's trained weights ({where}) are not a "
                             f"valid weights file ({exc}). Reinstall BookReader.") from exc
        model_dir = find_model_dir()
        self.max_tokens = int(meta.get("max_tokens", MAX_TOKENS))
        self.model = CrossEncoder(model_dir, int(meta.get("rank", RANK)),
                                  int(meta.get("first_adapted", FIRST_ADAPTED)))
        own = self.model.trained_state()
        if set(state) != set(own) or any(state[k].shape != own[k].shape for k in own):
            raise ModelError(f"The answer ranker's trained weights ({where}) were made for "
                             "another model than the bundled MiniLM. Reinstall BookReader.")
        self.model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
        self.model.eval()
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self._torch = torch
        self._lock = threading.Lock()

    def probabilities(self, question: str, sentences: Sequence[tuple[str, str]]
                      ) -> list[float]:
        """P(states the answer) of each (sentence, heading) for ``question``."""
        if not sentences or not question.strip():
            return [0.0] * len(sentences)
        torch = self._torch
        batch = self.tokenizer([ranker_text(s, h) for s, h in sentences],
                               [question] * len(sentences), padding=True,
                               truncation="longest_first", max_length=self.max_tokens,
                               return_tensors="pt")
        with self._lock, torch.inference_mode():
            logits = self.model(batch["input_ids"], batch["attention_mask"],
                                batch["token_type_ids"])
        return [float(p) for p in torch.sigmoid(logits)]


@lru_cache(maxsize=1)
def shipped() -> Optional[AnswerRanker]:
    """The shipped ranker, loaded once; None (logged) when it cannot be loaded, so answers
    fall back to the hand-weighted score instead of failing."""
    try:
        return AnswerRanker()
    except ModelError as exc:
        log.warning("answer ranker unavailable, ranking by keywords and meaning: %s", exc)
        return None
