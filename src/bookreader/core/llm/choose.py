"""Choose the default local tier for this machine by measuring it.

The best tier is the largest installed one whose *expected* whole-book answer meets the
project's speed targets: first token p50 <= 3 s and p95 <= 6 s, complete answer p95 <= 15 s.
Each installed tier is measured in a couple of seconds: load it, read a ~100-token
prompt (prompt tokens per second) and write 16 tokens (generated tokens per second).
The expected times follow from those speeds and what the tier's prompt really costs:
``spec.prompt_tokens``, the tokens a whole-book question reads after the cached rules
prefix (p50 and p95), and ``spec.answer_tokens``, counted with the tier's own tokenizer
on real questions by ``bench/prompt_tokens.py`` (a tier without counts is estimated from
its ``context_chars``, about 3.5 characters a token, plus the question).  The first token
also waits two generation steps (the backend streams each token one step late, with its
probability).  Before the model reads anything, the question itself costs time on this
machine too (:func:`question_overhead_s`): its query embedding for retrieval, the search,
and ranking the retrieved passages' sentences for focus (the int8 MiniLM embeds the
question and the 40-60 sentences of five passages); it is measured with the tiers and
added to every estimate.  p95 reads the p95 prompt and writes the p95
answer, times :data:`P95_FACTOR` for a machine busier than in the seconds it was
measured.  The tiny tier is the fallback when no tier meets the targets.

Runs at first start when ``llm_backend`` is ``auto`` and more than one tier is
installed (a single installed tier needs no measurement), again whenever the installed
tiers or :data:`ESTIMATE_VERSION` differ from those of the stored choice
(:func:`basis`, kept in ``auto_basis``), and in ``bookreader doctor``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Optional

from bookreader.core.llm import models as model_files
from bookreader.core.llm.specs import TIERS, TINY, BackendSpec
from bookreader.core.types import Message
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

FIRST_P50_S = 3.0
FIRST_P95_S = 6.0
TOTAL_P95_S = 15.0
P95_FACTOR = 1.6
CHARS_PER_TOKEN = 3.5
#: Prompt tokens of a question and its framing, besides the passages.
QUESTION_TOKENS = 60
#: Changes whenever the estimate is computed differently: a stored choice made by an
#: older estimate is measured again (2: the question's own overhead is included).
ESTIMATE_VERSION = 2
#: The dense and BM25 search of a whole-book question besides its query embedding
#: (30-40 ms on a 370-page book, two cores: the retrieval stage minus the embedding).
SEARCH_S = 0.035
_PROBE_QUESTIONS = ("What does a recursive method need so that it stops calling itself?",
                    "Can the length of an array change after it is created?")
_PROBE_TEXT = (
    "A method that calls itself is recursive. Every recursive method needs a base case, "
    "a condition under which it returns without calling itself again; otherwise the "
    "calls never end and the program runs out of stack space. Arrays store several "
    "values of the same type, and their length is fixed when they are created. "
)


@dataclass
class Measurement:
    tier: str
    prompt_tps: float
    gen_tps: float
    load_s: float
    first_p50_s: float
    first_p95_s: float
    total_p95_s: float
    overhead_s: float = 0.0

    @property
    def fits(self) -> bool:
        return (self.first_p50_s <= FIRST_P50_S and self.first_p95_s <= FIRST_P95_S
                and self.total_p95_s <= TOTAL_P95_S)

    def summary(self) -> str:
        return (f"{self.tier}: reads {self.prompt_tps:.0f} prompt tok/s, writes "
                f"{self.gen_tps:.1f} tok/s; expected whole-book first token "
                f"{self.first_p50_s:.1f} s (p95 {self.first_p95_s:.1f} s), answer p95 "
                f"{self.total_p95_s:.1f} s (question overhead {self.overhead_s:.2f} s)")


def first_token_s(prompt_tokens: float, prompt_tps: float, gen_tps: float) -> float:
    """Seconds to the first streamed token: read the prompt, then two generation steps
    (the backend streams each token one step late, with its probability)."""
    return prompt_tokens / max(prompt_tps, 1e-6) + 2.0 / max(gen_tps, 1e-6)


def prompt_tokens(spec: BackendSpec) -> tuple[float, float]:
    """(p50, p95) tokens a whole-book question reads after the cached rules prefix.

    The tier's counted figures (``spec.prompt_tokens``, from ``bench/prompt_tokens.py``)
    when there are some, else an estimate from its passage budget.
    """
    p50, p95 = spec.prompt_tokens
    if p50 > 0:
        return float(p50), float(max(p95, p50))
    guess = spec.context_chars / CHARS_PER_TOKEN + QUESTION_TOKENS
    return guess, guess


def expected(spec: BackendSpec, prompt_tps: float, gen_tps: float,
             overhead_s: float = 0.0) -> tuple[float, float, float]:
    """(first p50, first p95, total p95) seconds of a whole-book answer at these speeds.

    ``overhead_s`` is what the question costs before the model reads its prompt
    (:func:`question_overhead_s`).  p50 reads the median prompt; p95 reads the
    95th-percentile prompt and writes the 95th-percentile answer, both slowed by
    :data:`P95_FACTOR` (the machine is never as quiet as the couple of seconds it was
    measured in).
    """
    p50_tokens, p95_tokens = prompt_tokens(spec)
    first = overhead_s + first_token_s(p50_tokens, prompt_tps, gen_tps)
    first95 = overhead_s + first_token_s(p95_tokens, prompt_tps, gen_tps)
    answer95 = spec.answer_tokens[1] / max(gen_tps, 1e-6)
    return first, first95 * P95_FACTOR, (first95 + answer95) * P95_FACTOR


def question_overhead_s(embedder: Any = None) -> float:
    """Seconds a whole-book question takes on this machine before the model starts
    reading: the query embedding (full MiniLM), the search (:data:`SEARCH_S`) and
    focus's ranking of five passages' sentences (the int8 copy embeds them with the
    question, none of them cached).  Measured on probe passages of the size retrieval
    returns; the models are loaded first, as they are before any question."""
    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.focus import focus_passages

    full = embedder if embedder is not None else MiniLMEmbedder()
    small = full.quantized_copy()
    full.warm_up()
    small.warm_up()
    sentences = [x.strip() for x in _PROBE_TEXT.split(". ") if x.strip()]
    best = float("inf")
    for round_, question in enumerate(_PROBE_QUESTIONS):  # the better of two
        # Five passages of ten distinct sentences, about 90 characters each (a textbook's
        # passages average about 8 sentences of 90 characters), and one long unit each (a
        # listing or run-on text: the batch it lands in is padded to its length, which
        # made real passages cost twice the probe's plain sentences).
        passages = [" ".join([f"{sentences[i % len(sentences)].rstrip('.')}, as example "
                              f"{round_}.{k}.{i} shows." for i in range(10)]
                             + [" ".join(f"value{k}{j} = value{j} + {round_}" for j in range(12))
                                + "."]) for k in range(5)]
        t = time.perf_counter()
        full.embed([question], cache=False)
        focus_passages(passages, question, 600, embedder=_Uncached(small))
        best = min(best, time.perf_counter() - t)
    return best + SEARCH_S


class _Uncached:
    """An embedder's vectors without its cache (the probe must pay for every sentence)."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder

    def embed(self, texts: Any, batch_size: int = 32, **_kwargs: Any) -> Any:
        return self._embedder.embed(texts, batch_size, cache=False)


def measure(spec: BackendSpec, settings: Any, *, overhead_s: float = 0.0) -> Measurement:
    """Load the tier and time a short prompt and 16 generated tokens (a few seconds)."""
    from bookreader.core.llm.registry import create_backend

    backend: Any = create_backend(spec.name, settings)
    t = time.perf_counter()
    backend.warm_up()
    load_s = time.perf_counter() - t
    llm = backend._ensure_loaded()
    # One throw-away token first: the first evaluation after a load also sets up
    # llama.cpp's compute buffers, which no later question pays.
    for _token in backend.stream([Message("user", "Hi")], max_tokens=1, temperature=0.0):
        pass
    text = _PROBE_TEXT * 2
    question = "Say in one sentence what a base case is."
    # The chat template adds a few tokens around the message; counted approximately.
    n_prompt = len(llm.tokenize(f"{text}\n{question}".encode())) + 10
    messages = [Message("user", f"{text}\n{question}")]
    t0 = time.perf_counter()
    first: Optional[float] = None
    n = 0
    for _token in backend.stream(messages, max_tokens=16, temperature=0.0):
        n += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    first = first or end
    prompt_tps = n_prompt / max(first - t0, 1e-6)
    gen_tps = (n - 1) / max(end - first, 1e-6) if n > 1 else prompt_tps / 5
    f50, f95, t95 = expected(spec, prompt_tps, gen_tps, overhead_s)
    return Measurement(spec.name, prompt_tps, gen_tps, load_s, f50, f95, t95, overhead_s)


def installed_tiers(settings: Any) -> list[BackendSpec]:
    return [s for s in TIERS if model_files.installed_path(s, settings.models_dir) is not None]


def basis(settings: Any) -> str:
    """What a choice depends on besides the machine: the estimate's version and the
    installed tiers.  A stored choice made on another basis is made again."""
    names = ",".join(s.name for s in installed_tiers(settings)) or "none"
    return f"estimate {ESTIMATE_VERSION}; tiers {names}"


def needs_choice(settings: Any) -> bool:
    """True when ``auto`` has no stored choice, or one made on another :func:`basis`
    (an older version's estimate, or before a tier was installed or removed)."""
    if (getattr(settings, "llm_backend", "") or "").strip().lower() != "auto":
        return False
    return not settings.auto_tier or getattr(settings, "auto_basis", "") != basis(settings)


def choose_tier(settings: Any, *, measure_fn=measure,
                overhead_fn=question_overhead_s) -> tuple[str, str, list[Measurement]]:
    """(tier name, reason, measurements): the best installed tier that fits the targets."""
    tiers = installed_tiers(settings)
    if not tiers:
        return TINY.name, "No local model is installed; the tiny tier would be used.", []
    if len(tiers) == 1:
        return tiers[0].name, f"Only the {tiers[0].name} tier is installed.", []
    try:
        overhead = float(overhead_fn())
    except BookReaderError as exc:  # no embedder: the tiers' own speeds still decide
        log.warning("Cannot measure a question's overhead: %s", exc.user_message)
        overhead = 0.0
    results: list[Measurement] = []
    for spec in tiers:
        try:
            results.append(measure_fn(spec, settings, overhead_s=overhead))
        except BookReaderError as exc:
            log.warning("Cannot measure the %s tier: %s", spec.name, exc.user_message)
    fitting = [m for m in results if m.fits]
    order = [s.name for s in TIERS]
    targets = (f"first token p50 <= {FIRST_P50_S:.0f} s, p95 <= {FIRST_P95_S:.0f} s, "
               f"answer p95 <= {TOTAL_P95_S:.0f} s")
    if fitting:
        best = max(fitting, key=lambda m: order.index(m.tier))
        reason = (f"{best.tier} is the largest installed tier fast enough here ({targets}). "
                  f"Measured {best.summary()}.")
        return best.tier, reason, results
    fallback = min(results, key=lambda m: m.first_p50_s) if results else None
    name = fallback.tier if fallback else tiers[0].name
    reason = f"No installed tier meets {targets} on this machine; {name} is the fastest."
    if fallback:
        reason += f" Measured {fallback.summary()}."
    return name, reason, results
