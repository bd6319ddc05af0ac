"""Typed settings, each field with a description, stored as JSON in the data folder.

The data folder comes from platformdirs; ``BOOKREADER_DATA_DIR`` overrides it (tests and
portable installs).  Everything BookReader writes lives below it: the settings file, one
Qdrant Edge shard per book, the audit database, the archive, the models folder and logs.
Secrets (the Claude API key) are never written here: they live in the system keyring or in
``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

APP_NAME = "BookReader"
DATA_DIR_ENV = "BOOKREADER_DATA_DIR"
SETTINGS_FILE = "settings.json"


def default_data_dir() -> Path:
    """The data folder: ``$BOOKREADER_DATA_DIR`` if set, else the platform's user data dir."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


#: Settings of older versions: one total budget per kind of backend.
_OLD_BUDGETS = {"generation_budget_bundled_s": None, "generation_budget_gguf_s": None,
                "generation_budget_claude_s": "claude"}


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Settings saved by an older version, in today's names.

    The per-backend total budgets become ``budgets``: Claude keeps its total budget; the
    local ones are dropped (a local model now has a first-token budget per tier and is
    never cut off in the middle of an answer), and are logged.
    """
    out = {k: v for k, v in raw.items() if k != "data_dir" and k not in _OLD_BUDGETS}
    budgets = dict(out.get("budgets") or {}) if isinstance(out.get("budgets"), dict) else {}
    for key, target in _OLD_BUDGETS.items():
        if key not in raw:
            continue
        if target is None:
            log.info("Setting %s is gone: local models now have a first-token budget per "
                     "tier (see 'budgets')", key)
            continue
        try:
            budgets.setdefault(target, {}).setdefault("total_s", float(raw[key]))
        except (TypeError, ValueError):
            log.warning("Ignoring setting %r with bad value %r", key, raw[key])
    if budgets:
        out["budgets"] = budgets
    # Older versions saved every field, so their "bundled" was usually just the default
    # of the day: such a file lets BookReader choose the tier for the machine.
    if "generation_budget_bundled_s" in raw and \
            str(out.get("llm_backend", "")).strip().lower() == "bundled":
        out["llm_backend"] = "auto"
    return out


def _clean_budgets(value: dict) -> dict[str, dict[str, float]]:
    """``{name: {"first_token_s"|"total_s": seconds > 0}}``; anything else is dropped."""
    clean: dict[str, dict[str, float]] = {}
    for name, entry in value.items():
        if not isinstance(entry, dict):
            continue
        for key in ("first_token_s", "total_s"):
            try:
                seconds = float(entry[key])
            except (KeyError, TypeError, ValueError):
                continue
            if seconds > 0:
                clean.setdefault(str(name), {})[key] = seconds
    return clean


def _d(default: Any, description: str, **kw: Any) -> Any:
    return field(default=default, metadata={"description": description, **kw})


@dataclass
class Settings:
    """All user-adjustable settings.  ``describe()`` lists them with their descriptions."""

    data_dir: Path = field(
        default_factory=default_data_dir,
        metadata={"description": "Folder for the index, audit log, models and logs."},
    )
    # --- store -----------------------------------------------------------------------
    store_backend: str = _d(
        "edge",
        "Vector store: 'edge' (embedded Qdrant Edge, one shard per book in the data folder) "
        "or 'server' (a Qdrant server at qdrant_url, e.g. a department-wide library).",
        choices=("edge", "server"),
    )
    qdrant_url: str = _d("", "URL of a Qdrant server when store_backend is 'server'.")
    # --- chunking and retrieval --------------------------------------------------------
    chunk_max_tokens: int = _d(
        256,
        "Largest chunk in word pieces of the embedding model's tokenizer. all-MiniLM-L6-v2 "
        "reads at most 256 and silently cuts the rest, so larger chunks lose text.",
    )
    chunk_overlap: float = _d(0.2, "Share of each chunk repeated at the start of the next.")
    dense_weight: float = _d(
        0.85, "Weight of the dense (embedding) score in hybrid search; BM25 gets the rest."
    )
    top_k: int = _d(5, "Passages retrieved for a whole-book question.")
    highlight_top_k: int = _d(3, "Extra passages retrieved around a selection in highlight mode.")
    confidence_threshold: float = _d(
        0.60,
        "Retrieval confidence below which a question is declared not covered in the book.",
    )
    retrieval_timeout_s: float = _d(2.0, "Longest a retrieval may take, in seconds.")
    # --- language models -----------------------------------------------------------------
    llm_backend: str = _d(
        "auto",
        "Answering model: 'auto' (the best local tier that is fast enough on this machine, "
        "measured at first start and by 'bookreader doctor'), a local tier 'tiny' "
        "(SmolLM2-135M, bundled; old name 'bundled'), 'small' (Qwen2.5-Coder-0.5B) or "
        "'better' (Qwen2.5-Coder-1.5B), 'extractive' (quotes the best sentences, no model), "
        "'claude' (Anthropic API, needs network and a key), 'openai' or 'openai:URL' (a model "
        "on an OpenAI-compatible server) or 'gguf:PATH' (a GGUF file).",
    )
    auto_tier: str = _d("", "The tier 'auto' chose on this machine (empty: not measured yet).")
    auto_reason: str = _d("", "Why 'auto' chose that tier (shown in Settings and doctor).")
    auto_basis: str = _d(
        "", "What the 'auto' choice was made on: the estimate's version and the installed "
            "tiers (when they change, the tiers are measured again).")
    n_ctx: int = _d(4096, "Context window for llama.cpp models, in tokens.")
    n_threads: int = _d(
        0, "CPU threads for llama.cpp; 0 means follow the load: every core while nothing "
           "else runs, fewer while other programs use the CPU (one fewer than the cores "
           "where the load cannot be measured).")
    max_new_tokens: int = _d(500, "Most tokens a model may generate for one answer.")
    temperature: float = _d(0.1, "Sampling temperature; low keeps answers close to the text.")
    budgets: dict = field(
        default_factory=dict,
        metadata={"description": (
            "Time budgets that differ from a backend's defaults (core/llm/specs.py), e.g. "
            "{\"small\": {\"first_token_s\": 12}, \"claude\": {\"total_s\": 90}}. A local "
            "model has a first-token budget (then it streams to its token cap, and Stop "
            "ends it); Claude has a total budget.")},
    )
    claude_model: str = _d("claude-sonnet-5-5", "Claude model name.")
    claude_base_url: str = _d("", "Override for the Anthropic API address (testing, proxies).")
    claude_timeout_s: float = _d(30.0, "Network timeout for one Claude API request.")
    claude_max_retries: int = _d(3, "Retries with backoff on rate limits and server errors.")
    openai_base_url: str = _d(
        "", "Address of an OpenAI-compatible model server for the 'openai' backend, "
            "including /v1 (Ollama: http://127.0.0.1:11434/v1).")
    openai_model: str = _d(
        "", "Model id on that server (e.g. qwen3:4b); empty: the first model it lists. Its "
            "family chooses the prompt's context size and claim cap (core/llm/specs.py).")
    openai_timeout_s: float = _d(
        30.0, "Longest wait for the model server to connect or send the next piece.")
    openai_max_retries: int = _d(
        2, "Retries with backoff when the model server is busy (429, 5xx) or refuses the "
           "connection, before the answer starts.")
    # --- grounding -----------------------------------------------------------------------
    grounding_similarity_threshold: float = _d(
        0.7, "Answer sentences at least this similar (MiniLM cosine) to the context pass."
    )
    grounding_overlap_threshold: float = _d(
        0.5, "Answer sentences whose content words are at least this share in the context pass."
    )
    # --- reading untrusted PDFs -----------------------------------------------------------
    sandbox_memory_mb: int = _d(
        2048,
        "Memory cap (address space, MB) of the child process that first opens a PDF and "
        "reads its text; a page that needs more is skipped instead of exhausting the laptop.",
    )
    sandbox_cpu_s: float = _d(
        60.0, "Processor seconds the sandboxed PDF reader may spend opening a file or on one page."
    )
    sandbox_wall_s: float = _d(
        60.0, "Seconds the sandboxed PDF reader may go without progress before it is stopped."
    )
    sandbox_page_content_mb: int = _d(
        64,
        "A page whose drawing instructions inflate beyond this (MB) is not parsed: it is "
        "shown as a placeholder and its text is skipped (a decompression bomb).",
    )
    max_page_chars: int = _d(
        200_000, "Page text beyond this many characters is cut, with a note in the book's message."
    )
    # --- audit ---------------------------------------------------------------------------
    audit_url: str = _d(
        "",
        "SQLAlchemy URL of the audit database; empty means SQLite in the data folder. "
        "A class server can use postgresql+psycopg://user@host/db.",
    )
    audit_retention_days: int = _d(365, "Audit records older than this are deleted by prune.")
    audit_hot_days: int = _d(
        90, "Records older than this are archived to compressed JSONL by prune."
    )
    audit_excerpt_only: bool = _d(
        False, "Keep only the first 500 characters of selections in the audit log."
    )

    # ----------------------------------------------------------------------------------
    @property
    def bm25_weight(self) -> float:
        return 1.0 - self.dense_weight

    @property
    def books_dir(self) -> Path:
        return self.data_dir / "books"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def archive_dir(self) -> Path:
        return self.data_dir / "archive"

    @property
    def audit_db_url(self) -> str:
        if self.audit_url:
            return self.audit_url
        return f"sqlite:///{self.data_dir / 'audit.sqlite3'}"

    def ensure_dirs(self) -> None:
        """Create the data folder and its sub-folders."""
        for d in (self.data_dir, self.books_dir, self.models_dir, self.log_dir):
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BookReaderError(
                    f"Cannot create the data folder {d}: {exc.strerror}. "
                    f"Choose another folder with {DATA_DIR_ENV} or in the settings."
                ) from exc

    @classmethod
    def describe(cls) -> dict[str, str]:
        """Field name -> description, for help texts and the settings dialog."""
        return {f.name: f.metadata.get("description", "") for f in fields(cls)}

    # --- persistence ---------------------------------------------------------------------
    @classmethod
    def load(cls, data_dir: Path | None = None) -> "Settings":
        """Read settings from ``data_dir/settings.json``; unknown or broken values fall back."""
        data_dir = Path(data_dir) if data_dir else default_data_dir()
        settings = cls(data_dir=data_dir)
        path = data_dir / SETTINGS_FILE
        if not path.exists():
            return settings
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("Ignoring unreadable settings file %s: %s", path, exc)
            return settings
        if not isinstance(raw, dict):
            log.warning("Ignoring settings file %s: not a JSON object", path)
            return settings
        return settings.updated(**migrate(raw))

    def updated(self, **changes: Any) -> "Settings":
        """A copy with ``changes`` applied; values of the wrong type are ignored and logged."""
        known = {f.name: f for f in fields(self)}
        clean: dict[str, Any] = {}
        for key, value in changes.items():
            f = known.get(key)
            if f is None:
                log.warning("Ignoring unknown setting %r", key)
                continue
            current = getattr(self, key)
            try:
                if isinstance(current, dict):
                    if not isinstance(value, dict):
                        raise TypeError(key)
                    value = _clean_budgets(value)
                elif isinstance(current, bool):
                    value = bool(value)
                elif isinstance(current, int):
                    value = int(value)
                elif isinstance(current, float):
                    value = float(value)
                elif isinstance(current, Path):
                    value = Path(value)
                else:
                    value = str(value)
            except (TypeError, ValueError):
                log.warning("Ignoring setting %r with bad value %r", key, value)
                continue
            choices = f.metadata.get("choices")
            if choices and value not in choices:
                log.warning("Ignoring setting %r: %r is not one of %s", key, value, choices)
                continue
            clean[key] = value
        return dataclasses.replace(self, **clean)

    def save(self) -> None:
        """Write the settings (not the data folder itself) to ``settings.json``."""
        self.ensure_dirs()
        data = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "data_dir"
        }
        path = self.data_dir / SETTINGS_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
        os.replace(tmp, path)
