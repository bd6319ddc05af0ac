"""Local GGUF models through llama.cpp (llama-cpp-python).

The model is loaded on the first :meth:`LlamaCppBackend.stream` (or :meth:`warm_up`), once,
under a lock; construction only stores the settings, so a backend for a missing file can be
built and listed without error.  The defaults differ from the library's on purpose:

* ``n_ctx`` 4096 (the library's 512 cannot hold a prompt with five excerpts);
* ``n_threads`` and ``n_threads_batch`` = all cores (the library uses half for generation);
* the chat template stored in the GGUF file (``create_chat_completion``).

Token probabilities: llama-cpp-python only reports logprobs with ``logits_all=True``, which
keeps ``n_ctx x n_vocab`` floats (800 MB for SmolLM2 at 4096 tokens) and slows the prompt.
Instead a logits processor, which sees the raw logits of every step anyway, keeps the
log-softmax of the last step and reads the probability of the token that was sampled
from it when the next step starts.  Each streamed :class:`Token` therefore leaves one step
late and carries the summed log-probability of the tokens that made its text.  Cost: one
log-softmax over the vocabulary per token (about 0.2 ms for 49k entries).

Saved prompt prefixes: each mode's fixed rules are evaluated once (:meth:`prime`) and
their state is kept, so switching modes loads a state instead of reading the rules again.
Only primed prefixes are kept (not every answer), and only llama.cpp's own state: the
library's ``save_state`` also copies its ``scores`` array, ``n_batch x n_vocab`` floats
(311 MB for a Qwen model) that nothing reads without ``logits_all`` or logprobs; copying it
back and forth cost 0.2-0.5 s per question on two cores.  A question asked in the mode
last primed costs the prime nothing: llama.cpp still holds those tokens.

Cancellation: ``cancel()`` is polled between tokens, and also inside llama.cpp's own
compute loop through its abort callback, so even a long prompt evaluation stops promptly.
Generation runs in the caller's thread (a generator), so stopping leaves no thread behind.

llama.cpp writes its diagnostics to stderr through a process-wide log callback; we replace
it with one that routes them into :mod:`logging` (load chatter at DEBUG).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from bookreader.core.llm.cpu_load import OtherLoad, fit_threads
from bookreader.core.omp import passive_wait
from bookreader.core.types import AnswerRequest, CancelFn, Message, Token
from bookreader.errors import ModelError

log = logging.getLogger(__name__)
native_log = logging.getLogger(__name__ + ".native")

GGUF_MAGIC = b"GGUF"
DEFAULT_N_CTX = 4096


def available_cores() -> int:
    """CPU cores this process may use (respects affinity masks and containers)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: Memory for saved prompt states (one per primed prefix; the oldest are dropped).
PROMPT_CACHE_BYTES = 128 << 20


def check_gguf_file(path: Path) -> None:
    """Cheap checks of a model file without loading it.

    Raises:
        ModelError: the file is missing, not a file, empty, or not a GGUF file.
    """
    path = Path(path)
    fix = "Pick another model in Settings, or download the file again."
    if not path.exists():
        raise ModelError(f"The model file {path} does not exist. {fix}")
    if not path.is_file():
        raise ModelError(f"The model path {path} is a folder, not a .gguf file. {fix}")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelError(
            f"The model file {path} cannot be read ({exc.strerror}). Check its permissions, "
            f"or pick another model in Settings."
        ) from exc
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"The model file {path} is not a GGUF model (llama.cpp reads only .gguf files). {fix}"
        )


def _prefix_key(messages: Sequence[Message]) -> tuple[tuple[str, str], ...]:
    return tuple((m.role, m.content) for m in messages)


def prompt_seed(messages: Sequence[Message], base: Optional[int] = None) -> int:
    """The sampling seed of a prompt: the same prompt is always sampled alike.

    Without it llama-cpp-python draws each completion's seed from the previous one, so at
    the default temperature (0.1) the same question on the same book got another answer
    depending on how many prompts the model had read since it was loaded (most answers
    differed between a run of a whole question set and a run of a few of its questions
    alone).  A student asking again, or an instructor checking an audited
    answer, now gets the same answer.  ``base`` (the backend's configured seed) varies
    it.
    """
    h = hashlib.sha256(b"" if base is None else str(int(base)).encode())
    for m in messages:
        h.update(m.role.encode("utf-8") + b"\0")
        h.update(m.content.encode("utf-8", "surrogatepass") + b"\0")
    return int.from_bytes(h.digest()[:4], "big") & 0x7FFFFFFF


class _NativeLogRouter:
    """Receives llama.cpp's log lines (which come in pieces) and logs whole lines."""

    # ggml_log_level in current llama.cpp: 0 none, 1 debug, 2 info, 3 warn, 4 error,
    # 5 continue the previous line.  (llama-cpp-python's own table predates this order.)
    # Info is load chatter (hundreds of lines per model), so it goes to DEBUG.
    _LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.DEBUG, 3: logging.WARNING,
               4: logging.ERROR}

    def __init__(self) -> None:
        self._buffer = ""
        self._level = logging.DEBUG
        self._lock = threading.Lock()
        self.callback: Any = None
        self.installed = False
        #: Set while a cancelled evaluation unwinds: llama.cpp reports the abort we asked
        #: for as errors, which would alarm anyone reading the log.
        self.aborting = False

    def __call__(self, level: int, text: Optional[bytes], _user_data: Any) -> None:
        try:
            piece = (text or b"").decode("utf-8", errors="replace")
            with self._lock:
                if level != 5:
                    self._level = self._LEVELS.get(level, logging.DEBUG)
                    if self.aborting:
                        self._level = logging.DEBUG
                self._buffer += piece
                lines = self._buffer.split("\n")
                self._buffer = lines.pop()
                level_now = self._level
            for line in lines:
                if line.strip():
                    native_log.log(level_now, "%s", line.rstrip())
        except Exception:  # an exception must never cross into C
            pass

    def install(self) -> None:
        """Point llama.cpp's process-wide log callback at this router (idempotent)."""
        if self.installed:
            return
        import llama_cpp

        self.callback = llama_cpp.llama_log_callback(self)  # keep a reference: C holds it
        llama_cpp.llama_log_set(self.callback, ctypes.c_void_p(0))
        self.installed = True


# llama.cpp has exactly one log callback per process, so the router that owns it is
# process-wide too (it holds no model or service, only the C callback and a line buffer).
_LOG_ROUTER = _NativeLogRouter()


class _LogprobTracker:
    """A logits processor that records the log-probability of each sampled token."""

    def __init__(self) -> None:
        self._last: Any = None  # log-softmax of the previous step
        self._pending: list[float] = []

    def __call__(self, input_ids: Any, logits: Any) -> Any:
        import numpy as np

        if self._last is not None and len(input_ids):
            token = int(input_ids[-1])
            if 0 <= token < len(self._last):
                self._pending.append(float(self._last[token]))
        top = float(np.max(logits))
        lse = top + float(np.log(np.sum(np.exp(logits - top))))
        self._last = logits - lse  # a new array: llama.cpp reuses the buffer it passed
        return logits

    def take(self) -> Optional[float]:
        """Summed logprob of the tokens resolved since the last call (None if none)."""
        if not self._pending:
            return None
        total = sum(self._pending)
        self._pending.clear()
        return total


def _prefix_cache_class(llama_cpp: Any) -> Any:
    """A RAM state cache that stores states only while a prefix is being primed."""

    class PrefixCache(llama_cpp.LlamaRAMCache):
        def __init__(self, capacity_bytes: int) -> None:
            super().__init__(capacity_bytes=capacity_bytes)
            self.recording = False

        def __setitem__(self, key: Any, value: Any) -> None:
            if self.recording:
                super().__setitem__(key, value)

    return PrefixCache


def _lean_llama_class(llama_cpp: Any) -> Any:
    """``llama_cpp.Llama`` whose saved states leave out the unused ``scores`` array.

    Valid because the backend never asks for ``logits_all``, logprobs or stopping
    criteria, the only readers of ``scores``; a loaded state re-evaluates its last token
    (``_requires_eval``), so sampling starts from fresh logits.
    """
    import numpy as np

    class LeanLlama(llama_cpp.Llama):
        def save_state(self) -> Any:
            cache = getattr(self, "cache", None)
            if cache is not None and not getattr(cache, "recording", True):
                # The cache would drop it: do not copy the state at all.
                return None
            size = llama_cpp.llama_state_get_size(self._ctx.ctx)
            buf = (ctypes.c_uint8 * int(size))()
            n_bytes = int(llama_cpp.llama_state_get_data(self._ctx.ctx, buf, size))
            if n_bytes > int(size):
                raise RuntimeError("Failed to copy llama state data")
            return llama_cpp.LlamaState(
                scores=np.zeros((0, self._n_vocab), dtype=np.single),
                input_ids=self.input_ids[: self.n_tokens].copy(),
                n_tokens=self.n_tokens,
                llama_state=bytes(memoryview(buf)[:n_bytes]),
                llama_state_size=n_bytes,
                seed=self._seed,
            )

        def load_state(self, state: Any) -> None:
            self.input_ids[: state.n_tokens] = state.input_ids[: state.n_tokens]
            self.n_tokens = state.n_tokens
            self._requires_eval = True
            self._seed = state.seed
            size = state.llama_state_size
            data = (ctypes.c_uint8 * size).from_buffer_copy(state.llama_state)
            if llama_cpp.llama_state_set_data(self._ctx.ctx, data, size) != size:
                raise RuntimeError("Failed to set llama state data")

    return LeanLlama


class LlamaCppBackend:
    """A GGUF model run by llama.cpp, loaded on first use.

    Args:
        model_path: The ``.gguf`` file.
        name: Registry name ("bundled" or "gguf:PATH").
        n_ctx: Context window in tokens (prompt + answer).
        n_threads: Threads for generation; ``None`` means all cores.
        n_threads_batch: Threads for reading the prompt; ``None`` means all cores.
        n_batch: Prompt tokens evaluated per llama.cpp batch.
        seed: Sampling seed; ``None`` keeps llama.cpp's random seed.
        adaptive_threads: Before each prompt, give llama.cpp the cores other programs
            leave free (:mod:`bookreader.core.llm.cpu_load`); ``n_threads`` is then the
            count used where the load cannot be measured.
    """

    def __init__(
        self,
        model_path: Path | str,
        *,
        name: str,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: Optional[int] = None,
        n_threads_batch: Optional[int] = None,
        n_batch: int = 512,
        seed: Optional[int] = None,
        adaptive_threads: bool = False,
    ) -> None:
        self.name = name
        self.model_path = Path(model_path)
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads) if n_threads else available_cores()
        self.n_threads_batch = int(n_threads_batch) if n_threads_batch else self.n_threads
        self.n_batch = int(n_batch)
        self.seed = seed
        self._cpu = OtherLoad() if adaptive_threads else None
        #: Threads llama.cpp runs with now (changed per prompt when adaptive).
        self.threads_now = self.n_threads
        self._llm: Any = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._cancel: Optional[CancelFn] = None
        self._abort_callback: Any = None
        #: The messages last primed, while llama.cpp still holds their tokens.
        self._primed: Optional[tuple[tuple[str, str], ...]] = None
        #: The tokens llama.cpp held right after priming them.
        self._primed_tokens: list[int] = []

    def __repr__(self) -> str:
        return f"LlamaCppBackend({str(self.model_path)!r}, name={self.name!r}, n_ctx={self.n_ctx})"

    @property
    def model_name(self) -> str:
        return self.model_path.name

    @property
    def loaded(self) -> bool:
        """True once the model is in memory."""
        return self._llm is not None

    # --- loading ---------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the model now (``stream`` does it on first use anyway)."""
        self._ensure_loaded()

    def prime(self, messages: Sequence[Message]) -> None:
        """Evaluate a fixed prompt prefix (rules and worked example) ahead of a question.

        llama.cpp reuses the longest common token prefix of the previous prompt, and the
        RAM state cache installed at load time keeps one state per prefix, so each
        mode's rules are read once per session instead of once per question: on two
        cores the 260-token prefix costs the bundled model about 1 s.  A prefix already
        cached costs a state load (~0.1 s) or nothing.
        """
        llm = self._ensure_loaded()
        if not messages:
            return
        key = _prefix_key(messages)
        with self._generate_lock:
            if key == self._primed:
                return  # llama.cpp still holds these tokens: nothing to read or load
            self._fit_threads(llm)
            turns = [{"role": m.role, "content": m.content} for m in messages]
            turns.append({"role": "user", "content": ""})
            cache = getattr(llm, "cache", None)
            if cache is not None:
                cache.recording = True
            try:
                llm.create_chat_completion(messages=turns, max_tokens=1, temperature=0.0)
                self._primed = key
                self._primed_tokens = [int(t) for t in llm.input_ids[: llm.n_tokens]]
            except Exception as exc:  # priming is an optimisation; the question still runs
                log.debug("Priming the prompt prefix failed: %s", exc)
                self._primed = None
            finally:
                if cache is not None:
                    cache.recording = False

    def _ensure_loaded(self) -> Any:
        if self._llm is not None:
            return self._llm
        with self._load_lock:
            if self._llm is None:
                self._llm = self._load()
        return self._llm

    def _load(self) -> Any:
        path = self.model_path
        check_gguf_file(path)
        # llama.cpp shares the process's one OpenMP runtime with torch: its threads must
        # not spin while they wait, whichever of the two loads first (core/omp.py)
        passive_wait()
        try:
            import llama_cpp
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise ModelError(
                "llama-cpp-python is not installed, so local models cannot run. Reinstall "
                "BookReader, or choose the extractive or Claude backend in Settings."
            ) from exc
        _LOG_ROUTER.install()
        kwargs: dict[str, Any] = dict(
            model_path=str(path),
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads_batch,
            n_batch=min(self.n_batch, self.n_ctx),
            verbose=False,
        )
        if self.seed is not None:
            kwargs["seed"] = self.seed
        log.info(
            "Loading %s (n_ctx=%d, threads=%d/%d)",
            path, self.n_ctx, self.n_threads, self.n_threads_batch,
        )
        try:
            llm = _lean_llama_class(llama_cpp)(**kwargs)
        except MemoryError as exc:
            raise ModelError(
                f"Not enough memory to load the model {path}. Close other programs, lower "
                f"the context window in Settings, or pick a smaller model."
            ) from exc
        except Exception as exc:  # llama.cpp reports every load failure as ValueError/RuntimeError
            raise ModelError(
                f"The model file {path} could not be loaded: it is corrupt, truncated or a "
                f"kind of model this llama.cpp does not support. Download it again, or pick "
                f"another model in Settings.",
                details=f"{type(exc).__name__}: {exc}",
            ) from exc
        self._install_abort(llama_cpp, llm)
        if getattr(llama_cpp, "LlamaRAMCache", None) is not None:
            # A state is a few MB (KV of the tokens used, not n_ctx); only primed
            # prefixes are stored.
            llm.set_cache(_prefix_cache_class(llama_cpp)(PROMPT_CACHE_BYTES))
        log.info("Loaded %s (chat format %s)", path.name, getattr(llm, "chat_format", "?"))
        return llm

    def _fit_threads(self, llm: Any) -> None:
        """Adaptive threads: the cores other programs left free over the last moments."""
        if self._cpu is None:
            return
        other = self._cpu.cores()
        cores = available_cores()
        n = fit_threads(cores, other, self.n_threads)
        if n == self.threads_now:
            return
        import llama_cpp

        ctx = getattr(getattr(llm, "_ctx", None), "ctx", None)
        setter = getattr(llama_cpp, "llama_set_n_threads", None)
        if ctx is None or setter is None:  # pragma: no cover - older bindings
            return
        setter(ctx, n, n)
        log.info("llama.cpp threads %d -> %d (other programs use %.1f of %d cores)",
                 self.threads_now, n, other or 0.0, cores)
        self.threads_now = n

    def _install_abort(self, llama_cpp: Any, llm: Any) -> None:
        """Let ``cancel()`` interrupt llama.cpp inside a prompt evaluation."""
        setter = getattr(llama_cpp, "llama_set_abort_callback", None)
        ctx = getattr(getattr(llm, "_ctx", None), "ctx", None)
        if setter is None or ctx is None:  # pragma: no cover - older bindings
            log.debug("llama.cpp abort callback unavailable; cancel acts between tokens")
            return

        def should_abort(_data: Any) -> bool:
            try:
                cancel = self._cancel
                abort = bool(cancel is not None and cancel())
                if abort:
                    _LOG_ROUTER.aborting = True
                return abort
            except Exception:  # never let an exception cross into C
                return False

        self._abort_callback = llama_cpp.ggml_abort_callback(should_abort)
        setter(ctx, self._abort_callback, None)

    # --- generation ------------------------------------------------------------------
    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 500,
        temperature: float = 0.1,
        cancel: Optional[CancelFn] = None,
        request: Optional[AnswerRequest] = None,
    ) -> Iterator[Token]:
        """Stream the answer; see :class:`bookreader.core.llm.base.LLMBackend`
        (``request`` is not used: the model reads the messages).

        One generation runs at a time per model; a second caller waits (and gives up
        quietly if it is cancelled while waiting).
        """
        llm = self._ensure_loaded()
        if max_tokens <= 0:
            return
        while not self._generate_lock.acquire(timeout=0.05):
            if cancel is not None and cancel():
                return
        try:
            self._cancel = cancel
            if self._primed is not None and _prefix_key(messages[:-1]) != self._primed:
                self._primed = None  # other tokens replace the primed ones
            if self._primed is not None:
                self._reuse_only_primed(llm)
            self._fit_threads(llm)
            yield from self._generate(llm, messages, max_tokens, temperature, cancel)
        finally:
            if self._cpu is not None:
                self._cpu.mark()  # the next window starts when this answer ends
            self._cancel = None
            self._generate_lock.release()

    def choice_logprobs(self, messages: Sequence[Message],
                        choices: Sequence[str]) -> dict[str, float]:
        """Log-probability of each of ``choices`` being the answer's first word.

        Nothing is sampled: the answer's first step is computed once and each choice's
        probability is summed over its spellings' first tokens ("Yes", " yes", ...).  The
        prompt's common prefix with the previous one is reused by llama.cpp, so a fixed
        instruction and examples followed by a varying item cost only the item's tokens.
        """
        import llama_cpp
        import numpy as np

        llm = self._ensure_loaded()
        seen: list[Any] = []

        def keep(_ids: Any, logits: Any) -> Any:
            if not seen:
                seen.append(np.array(logits, dtype=np.float64))
            return logits

        with self._generate_lock:
            self._primed = None
            self._fit_threads(llm)
            try:
                llm.create_chat_completion(
                    messages=[{"role": m.role, "content": m.content} for m in messages],
                    max_tokens=1, temperature=0.0,
                    logits_processor=llama_cpp.LogitsProcessorList([keep]))
            except (RuntimeError, ValueError) as exc:
                raise ModelError(
                    f"The model {self.model_name} failed while reading a prompt. Try again, "
                    f"or pick another model in Settings.",
                    details=f"{type(exc).__name__}: {exc}") from exc
        if not seen:
            raise ModelError(f"The model {self.model_name} gave no answer step to read.")
        logits = seen[0]
        top = float(np.max(logits))
        logz = top + float(np.log(np.sum(np.exp(logits - top))))
        out: dict[str, float] = {}
        for choice in choices:
            ids = set()
            for spelling in (choice, " " + choice, choice.lower(), " " + choice.lower(),
                             choice.upper()):
                tokens = llm.tokenize(spelling.encode("utf-8"), add_bos=False, special=False)
                if tokens:
                    ids.add(int(tokens[0]))
            values = np.array([logits[i] for i in sorted(ids)])
            vtop = float(np.max(values))
            out[choice] = vtop + float(np.log(np.sum(np.exp(values - vtop)))) - logz
        return out

    def _reuse_only_primed(self, llm: Any) -> None:
        """Let llama.cpp reuse of its context only what the primed prefix holds.

        llama.cpp reuses the longest common token prefix of the previous prompt, which
        after an answer reaches into the last question's excerpts (``<excerpt id="1"
        section="...``).  Those tokens' cached keys and values were computed in another
        batch than this prompt would compute them, so the same prompt was read from other
        cached values depending on the question asked before it.  Reusing only the primed
        prefix makes every prompt read the same tokens from the same cache, whatever came
        before (with :func:`prompt_seed`, the same answer), at the cost of reading about
        8 more tokens (0.06 s).  ``generate`` compares the prompt with
        ``input_ids[:n_tokens]`` and drops the rest of the cache.
        """
        shared = llm.longest_token_prefix(self._primed_tokens, llm.input_ids[: llm.n_tokens])
        llm.n_tokens = min(llm.n_tokens, shared)

    def _generate(
        self,
        llm: Any,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        cancel: Optional[CancelFn],
    ) -> Iterator[Token]:
        import llama_cpp

        tracker = _LogprobTracker()
        chunks: Any = None
        pending: Optional[str] = None
        cancelled = False
        try:
            chunks = llm.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                seed=prompt_seed(messages, self.seed),
                temperature=float(temperature),
                max_tokens=int(max_tokens),
                stream=True,
                logits_processor=llama_cpp.LogitsProcessorList([tracker]),
            )
            for chunk in chunks:
                if cancel is not None and cancel():
                    cancelled = True
                    break
                choices = chunk.get("choices") or [{}]
                text = (choices[0].get("delta") or {}).get("content")
                if not text:
                    continue
                if pending is not None:
                    yield Token(pending, tracker.take())
                pending = text
            if pending is not None and not cancelled:
                yield Token(pending, tracker.take())
        except (RuntimeError, ValueError) as exc:
            if cancel is not None and cancel():
                log.debug("Generation with %s aborted by cancel: %s", self.model_name, exc)
                return
            if "context window" in str(exc) or "exceed" in str(exc):
                raise ModelError(
                    f"The question and its excerpts do not fit in the {self.n_ctx}-token "
                    f"context window of {self.model_name}. Raise the context window in "
                    f"Settings, or ask about a shorter selection.",
                    details=str(exc),
                ) from exc
            raise ModelError(
                f"The model {self.model_name} failed while answering. Try again, or pick "
                f"another model in Settings.",
                details=f"{type(exc).__name__}: {exc}",
            ) from exc
        finally:
            if chunks is not None and hasattr(chunks, "close"):
                chunks.close()
            _LOG_ROUTER.aborting = False
