"""A learned support check: a cross-encoder that reads a passage and a claim together.

The window rules of :mod:`bookreader.core.grounding` compare a claim with the context
sentence by sentence (cosine, shared words, exact terms) and so accept mostly
near-copies.  This model reads the passage and the claim as one input (``[CLS] passage
[SEP] claim [SEP]``), so every word of the claim attends to every word of the passage,
and outputs the probability that the passage supports the claim.

It is the bundled MiniLM (:func:`bookreader.core.embedding.find_model_dir`) with low-rank
adapters on every linear layer of its six transformer layers, its layer norms re-trained
and a one-unit classification head on the first and mean token states.  Only the
trained parameters ship (``resources/cross_verifier.safetensors``, fp16, pinned by
:data:`DELTA_SHA256`); the base weights come from the bundled model package at load.
``tools/train_cross_verifier.py`` (``make train-cross-verifier``) trains them
reproducibly on data the project may tune on.

A context longer than the input limit is cut into runs of neighbouring sentences that
fit; the runs sharing most content words with the claim are scored and the best
probability counts.  A claim of a few words ("Tampa, Florida") is read with the question
before it, since alone it states nothing.

Status: off by default (``grounding.CROSS_BY_DEFAULT``).  Measured with
``bench/verifier.py --split test --cross ...`` on the report books, as the validator's
decision after its hard checks, it rejects far fewer correct syntheses than the window
rules and raises the balanced accuracy, but accepts more swapped terms and negations
(false accepts above the rules'), and does worse on the HaluEval test half; numbers
said of something else are its weak spot (the validator's count check catches many).
Trained for about 35 minutes on two cores; more steps and more varied paraphrase data
are the expected route to better figures.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Optional, Sequence

import torch
from torch import nn

from bookreader.core.claim_text import claim_terms
from bookreader.core.sentences import words
from bookreader.errors import ModelError

log = logging.getLogger(__name__)

RESOURCE = "cross_verifier.safetensors"
#: SHA-256 of the shipped trained parameters (``make train-cross-verifier`` prints it).
DELTA_SHA256 = "6ea7a28b69412922e2a0ff679c3f36e298b07c239d833beaad92877056feafb7"
#: Word pieces of one input (passage, claim and special tokens).
MAX_TOKENS = 192
#: Rank of the adapters added to every linear layer of the encoder.
RANK = 16
#: Encoder layers below this one stay as bundled (no adapters: cheaper to train and run).
FIRST_ADAPTED = 2
#: A claim of fewer words is read after the question.
SHORT_CLAIM_WORDS = 6
#: Passage runs scored per claim when the context does not fit whole.
TOP_RUNS = 2
_ADAPTED = ("query", "key", "value", "attention.output.dense", "intermediate.dense",
            "output.dense")


class LowRank(nn.Module):
    """``base(x) + B(A(x)) * scale``: a frozen linear layer with a trained low-rank term."""

    def __init__(self, base: nn.Linear, rank: int) -> None:
        super().__init__()
        self.base = base
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=5 ** 0.5)
        self.scale = 2.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * self.scale


class CrossEncoder(nn.Module):
    """MiniLM with adapters and a head: (input ids, mask, types) -> logit of support."""

    def __init__(self, model_dir: Path, rank: int = RANK,
                 first_adapted: int = FIRST_ADAPTED) -> None:
        super().__init__()
        from transformers import BertModel

        self.bert = BertModel.from_pretrained(str(model_dir), add_pooling_layer=False)
        for p in self.bert.parameters():
            p.requires_grad = False
        for layer in self.bert.encoder.layer[first_adapted:]:
            for name, module in list(layer.named_modules()):
                if any(name == a or name.endswith("." + a) for a in _ADAPTED) \
                        and isinstance(module, nn.Linear):
                    parent = layer.get_submodule(name.rsplit(".", 1)[0]) if "." in name \
                        else layer
                    setattr(parent, name.rsplit(".", 1)[-1], LowRank(module, rank))
        for layer in self.bert.encoder.layer[first_adapted:]:
            for name, p in layer.named_parameters():
                if "LayerNorm" in name or "lora_" in name:
                    p.requires_grad = True
        hidden = self.bert.config.hidden_size
        self.head = nn.Linear(4 * hidden + 2, 1)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids, attention_mask, token_type_ids) -> torch.Tensor:
        """The support logit from the first token's state, the claim's and the passage's
        mean states compared (product, difference) and how well each claim token is
        matched by its closest passage token (mean and minimum cosine)."""
        states = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).last_hidden_state
        mask = attention_mask.to(states.dtype)
        claim = (mask * token_type_ids.to(states.dtype)).unsqueeze(-1)
        passage = mask.unsqueeze(-1) - claim
        mean_c = (states * claim).sum(1) / claim.sum(1).clamp(min=1.0)
        mean_p = (states * passage).sum(1) / passage.sum(1).clamp(min=1.0)
        unit = nn.functional.normalize(states, dim=-1)
        sims = unit @ unit.transpose(1, 2)  # token by token cosine
        sims = sims.masked_fill(passage.transpose(1, 2) == 0, -1.0)
        best = sims.max(-1).values  # each token's closest passage token
        c = claim.squeeze(-1)
        match_mean = (best * c).sum(1) / c.sum(1).clamp(min=1.0)
        match_min = best.masked_fill(c == 0, 1.0).min(1).values
        feats = torch.cat([states[:, 0], mean_c, mean_c * mean_p, (mean_c - mean_p).abs(),
                           match_mean.unsqueeze(-1), match_min.unsqueeze(-1)], dim=-1)
        return self.head(feats).squeeze(-1)

    def trained_state(self) -> dict[str, torch.Tensor]:
        """The parameters that training changes (what the shipped file holds)."""
        return {n: p.detach() for n, p in self.named_parameters() if p.requires_grad}


def claim_text(claim: str, question: str = "") -> str:
    """The claim as the model reads it: after the question when it is a fragment."""
    if question.strip() and len(words(claim)) < SHORT_CLAIM_WORDS:
        return f"{question.strip()} {claim.strip()}"
    return claim.strip()


def passage_runs(sentences: Sequence[str], claim: str, lengths: Sequence[int], budget: int,
                 top: int = TOP_RUNS) -> list[str]:
    """The whole context when it fits ``budget`` word pieces, else the ``top`` runs of
    neighbouring sentences that fit and share most content words with ``claim``."""
    if sum(lengths) <= budget or len(sentences) <= 1:
        return [" ".join(sentences)]
    want = set(claim_terms(claim))
    runs: dict[tuple[int, int], float] = {}
    for i in range(len(sentences)):
        j, used = i, 0
        while j < len(sentences) and used + lengths[j] <= budget:
            used += lengths[j]
            j += 1
        j = max(j, i + 1)
        have: set[str] = set()
        for s in sentences[i:j]:
            have |= set(claim_terms(s))
        runs[(i, j)] = len(want & have) + 1e-3 * (j - i)
    best = sorted(runs, key=lambda r: (-runs[r], r))[:top]
    return [" ".join(sentences[i:j]) for i, j in best]


class CrossVerifier:
    """The trained cross-encoder: :meth:`probability` that a context supports a claim.

    Args:
        path: The trained parameters (``None``: the shipped package resource).
        expected_sha256: Their SHA-256 (``None``: :data:`DELTA_SHA256` for the shipped
            file, unchecked for a file given by path).

    Raises:
        ModelError: the file is missing, unreadable, not the expected one, or made for
            another model; or the bundled MiniLM is missing.
    """

    def __init__(self, path: Optional[Path] = None,
                 expected_sha256: Optional[str] = None) -> None:
        from safetensors.torch import load as load_safetensors
        from transformers import AutoTokenizer

        from bookreader.core.embedding import find_model_dir

        where = str(path) if path else f"bookreader/resources/{RESOURCE}"
        try:
            blob = (path.read_bytes() if path else
                    (resources.files("bookreader") / "resources" / RESOURCE).read_bytes())
        except OSError as exc:
            raise ModelError(f"The support checker's trained weights ({where}) cannot be "
                             f"read ({exc}). Reinstall BookReader, or run make "
                             "train-cross-verifier.") from exc
        want = DELTA_SHA256 if expected_sha256 is None and path is None else expected_sha256
        digest = hashlib.sha256(blob).hexdigest()
        if want and digest != want:
            raise ModelError(f"The support checker's trained weights ({where}) have SHA-256 "
                             f"{digest[:16]}..., not the expected {want[:16]}...: the file "
                             "is damaged or from another version. Reinstall BookReader.")
        try:
            meta = _metadata(blob)
            state = load_safetensors(blob)
        except Exception as exc:  # safetensors raises its own error types
            raise ModelError(f"The support checker's trained weights ({where}) are not a "
                             f"valid weights file ({exc}). Reinstall BookReader.") from exc
        model_dir = find_model_dir()
        self.threshold = float(meta.get("threshold", 0.5))
        self.max_tokens = int(meta.get("max_tokens", MAX_TOKENS))
        self.model = CrossEncoder(model_dir, int(meta.get("rank", RANK)),
                                  int(meta.get("first_adapted", FIRST_ADAPTED)))
        own = self.model.trained_state()
        if set(state) != set(own) or any(state[k].shape != own[k].shape for k in own):
            raise ModelError(f"The support checker's trained weights ({where}) were made "
                             "for another model than the bundled MiniLM. Reinstall "
                             "BookReader, or run make train-cross-verifier.")
        self.model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
        self.model.eval()
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self._lock = threading.Lock()

    def _lengths(self, sentences: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(list(sentences), add_special_tokens=False)
                ["input_ids"]]

    def probability(self, sentences: Sequence[str], claim: str, question: str = "") -> float:
        """P(the context, given as its ``sentences``, supports ``claim``)."""
        text = claim_text(claim, question)
        if not sentences or not text:
            return 0.0
        claim_len = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        budget = max(32, self.max_tokens - min(claim_len, self.max_tokens // 2) - 3)
        runs = passage_runs(sentences, text, self._lengths(sentences), budget)
        return max(self.score([(run, text) for run in runs]))

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(supported) of each (passage, claim) pair, read as given (truncated)."""
        batch = self.tokenizer([p for p, _ in pairs], [c for _, c in pairs], padding=True,
                               truncation="longest_first", max_length=self.max_tokens,
                               return_tensors="pt")
        with self._lock, torch.inference_mode():
            logits = self.model(batch["input_ids"], batch["attention_mask"],
                                batch["token_type_ids"])
        return [float(p) for p in torch.sigmoid(logits)]

    def supports(self, sentences: Sequence[str], claim: str, question: str = "") -> bool:
        """The decision at the threshold chosen on the tune data (stored with the weights)."""
        return self.probability(sentences, claim, question) >= self.threshold


def _metadata(blob: bytes) -> dict[str, str]:
    """The string metadata of a safetensors file (threshold, rank, input limit)."""
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + size])
    return dict(header.get("__metadata__") or {})


@lru_cache(maxsize=1)
def shipped() -> CrossVerifier:
    """The shipped support checker, loaded once (raises :class:`ModelError`)."""
    return CrossVerifier()
