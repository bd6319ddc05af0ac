"""The MiniLM vectors of a book's sentences, computed once and kept beside its index.

The focus step of a local tier ranks the sentences ("units") of the retrieved passages by
their similarity to the question: about 60 units a question, each one pass of the int8
MiniLM copy (it reads one text per pass, see ``MiniLMEmbedder._encode``), about a second
on two cores before the model can start.  The units are those of the book's chunks, so
they can be embedded once per book, after ingest, and looked up by the hash of their
text at question time (:meth:`MiniLMEmbedder.attach_vectors`).  A unit not in the table
(a chunker that splits differently, a sentence joined differently) is embedded on the
fly as before, so a table can only make a question faster, never change its vectors.

File format (``unit_vectors.bin`` in the book's folder)::

    4,096 bytes   JSON header, space padded: format, fingerprint (embedder, unit rules,
                  chunking), count, dimension, SHA-256 of the payload
    count * 8     uint64 keys (BLAKE2b-64 of each unit's UTF-8 text), ascending
    count * d * 4 float32 vectors, row i for key i

It is written to a temporary file, synced and renamed into place, so a file that exists
is complete; a file whose size, header or checksum does not match (a damaged disk, a
copy cut short) is ignored with a log line and built again.  The vectors are
memory-mapped: the pages of the units a question needs are read from the page cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from bookreader.core.focus import overlap_variants, ranked_units
from bookreader.core.types import CancelFn, ProgressFn, check_cancel, never_cancel, no_progress

log = logging.getLogger(__name__)

UNIT_VECTORS_FILE = "unit_vectors.bin"
#: Bumped when the file's layout changes.
FORMAT = 1
#: Bumped when the splitting of a passage into the focus step's units changes
#: (``bookreader.core.focus._units``/``focus_ranking.answer_units``, ``sentences.split_sentences``):
#: the old table would still be right (vectors are keyed by text) but would miss.
UNIT_RULES_VERSION = 2
HEADER_BYTES = 4096
#: Units embedded between two looks at whether a question started (one int8 pass each).
BUILD_STEP = 4


def unit_key(text: str) -> int:
    """The 64-bit key of a unit's text."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class UnitVectors:
    """A read-only table of unit vectors by text (keys sorted, vectors memory-mapped)."""

    def __init__(self, keys: np.ndarray, vectors: np.ndarray, path: Optional[Path] = None):
        self.keys = keys
        self.vectors = vectors
        self.path = path

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def get(self, text: str) -> Optional[np.ndarray]:
        """The vector of ``text``, or None when the table does not hold it."""
        n = len(self)
        if n == 0:
            return None
        key = np.uint64(unit_key(text))
        i = int(np.searchsorted(self.keys, key))
        if i < n and self.keys[i] == key:
            return np.asarray(self.vectors[i], dtype=np.float32)
        return None

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.vectors.nbytes)


def book_units(texts: Iterable[str], budgets: Sequence[int]) -> list[str]:
    """Every unit the focus step may rank for passages among ``texts`` (a book's chunk
    texts, in reading order) under any of the focusing tiers' character ``budgets``, each
    once, sorted: the units of each chunk, and of each chunk without the sentences it
    shares with a neighbour (as the focus step sees a chunk retrieved after one that
    overlaps it)."""
    texts = list(texts)
    units: set[str] = set()
    for text in [*texts, *overlap_variants(texts)]:
        units.update(ranked_units(text, budgets))
    return sorted(units)


def _payload_sha(keys: np.ndarray, vectors: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(keys).data)
    flat = vectors.reshape(-1)
    step = 1 << 20  # floats per update: the vectors may be a memory map
    for i in range(0, flat.shape[0], step):
        h.update(np.ascontiguousarray(flat[i : i + step]).data)
    return h.hexdigest()


def save(path: Path, keys: np.ndarray, vectors: np.ndarray, fingerprint: dict) -> None:
    """Write the table atomically (temporary file, fsync, rename)."""
    # sorted, one row per key (two texts with one 64-bit hash: the first is kept)
    _, order = np.unique(np.asarray(keys, dtype=np.uint64), return_index=True)
    keys = np.ascontiguousarray(keys[order], dtype="<u8")
    vectors = np.ascontiguousarray(vectors[order], dtype="<f4")
    header = {
        "format": FORMAT,
        "fingerprint": fingerprint,
        "count": int(keys.shape[0]),
        "dimension": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
        "sha256": _payload_sha(keys, vectors),
    }
    raw = json.dumps(header, sort_keys=True).encode("utf-8")
    if len(raw) >= HEADER_BYTES:
        raise ValueError("unit vectors header too long")
    _remove_stale_temporaries(path)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(raw + b" " * (HEADER_BYTES - 1 - len(raw)) + b"\n")
            f.write(keys.data)
            f.write(vectors.data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _remove_stale_temporaries(path: Path) -> None:
    """Delete temporary files a killed process left (its pid no longer runs)."""
    for tmp in path.parent.glob(f"{path.name}.tmp-*"):
        try:
            pid = int(tmp.name.rsplit("-", 1)[1])
            if pid != os.getpid():
                os.kill(pid, 0)
                continue  # another live process is writing it
        except ProcessLookupError:
            pass
        except (ValueError, PermissionError):
            continue
        tmp.unlink(missing_ok=True)
        log.info("Removed %s, left by an interrupted build", tmp)


def load(path: Path, fingerprint: dict) -> Optional[UnitVectors]:
    """The table at ``path`` if it is complete and was built for ``fingerprint``.

    Returns None (with a log line saying why) for a missing, stale, partial or corrupt
    file; never raises for what is in the file.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("Unit vectors %s cannot be read (%s); they will be built again", path, exc)
        return None
    try:
        with open(path, "rb") as f:
            header = json.loads(f.read(HEADER_BYTES).decode("utf-8"))
        count, dim = int(header["count"]), int(header["dimension"])
        if header.get("format") != FORMAT or header.get("fingerprint") != fingerprint:
            log.info("Unit vectors %s were built by another version; they will be built again",
                     path)
            return None
        expected = HEADER_BYTES + count * 8 + count * dim * 4
        if size != expected or count < 0 or dim <= 0:
            log.warning("Unit vectors %s are incomplete (%d bytes, %d expected); ignored, "
                        "they will be built again", path, size, expected)
            return None
        if count == 0:
            return UnitVectors(np.zeros(0, dtype="<u8"), np.zeros((0, dim), dtype="<f4"), path)
        keys = np.fromfile(path, dtype="<u8", count=count, offset=HEADER_BYTES)
        vectors = np.memmap(path, dtype="<f4", mode="r", offset=HEADER_BYTES + count * 8,
                            shape=(count, dim))
        if _payload_sha(keys, vectors) != header.get("sha256") or (
                count > 1 and not bool(np.all(keys[1:] > keys[:-1]))):
            log.warning("Unit vectors %s are corrupt (checksum mismatch); ignored, they "
                        "will be built again", path)
            return None
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        log.warning("Unit vectors %s are unreadable (%s); ignored, they will be built again",
                    path, exc)
        return None
    return UnitVectors(keys, vectors, path)


def build(
    texts: Sequence[str],
    embedder: Any,
    budgets: Sequence[int],
    path: Path,
    fingerprint: dict,
    *,
    pause: Callable[[], None] = lambda: None,
    progress: ProgressFn = no_progress,
    cancel: CancelFn = never_cancel,
) -> UnitVectors:
    """Embed every unit of a book's chunk ``texts`` with ``embedder`` (the focus step's
    own, so a looked-up vector is the one it would compute) and save the table.

    ``pause()`` is called before every few units and returns when the work may go on
    (it blocks while a question is being answered).

    Raises:
        Cancelled: ``cancel()`` turned true (nothing is written).
    """
    units = book_units(texts, budgets)
    dim = int(embedder.dimension)
    vectors = np.empty((len(units), dim), dtype=np.float32)
    progress(0, len(units), "Sentence vectors")
    for i in range(0, len(units), BUILD_STEP):
        pause()
        check_cancel(cancel)
        part = units[i : i + BUILD_STEP]
        vectors[i : i + len(part)] = embedder.embed(part, cache=False)
        progress(i + len(part), len(units), "Sentence vectors")
    keys = np.fromiter((unit_key(u) for u in units), dtype=np.uint64, count=len(units))
    check_cancel(cancel)
    save(path, keys, vectors, fingerprint)
    log.info("Unit vectors of %d units saved to %s (%.1f MB)", len(units), path,
             path.stat().st_size / 1e6)
    table = load(path, fingerprint)
    if table is None:  # pragma: no cover - just written
        raise OSError(f"the unit vectors just written to {path} do not read back")
    return table
