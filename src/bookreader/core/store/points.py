"""What both store implementations share: point ids, payloads and input checks.

Qdrant accepts only integers or UUIDs as point ids, so a chunk's point id is a UUID
derived from its ``chunk_id`` (uuid5, stable across runs and machines); the ``chunk_id``
itself travels in the payload together with every other :class:`Chunk` field.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Mapping, Sequence

import numpy as np

from bookreader.core.types import Chunk

#: Namespace for point ids; never change it, or existing indexes stop matching.
_POINT_NAMESPACE = uuid.UUID("6f1c2b1e-5d0a-4c64-9a53-2b8f3b0f6a11")

#: Payload fields that get an index where the backend supports payload indexes: the ones
#: the filters use.  (Point ids are looked up directly; ``chunks()`` sorts in Python.)
INTEGER_FIELDS = ("page_start", "page_end")
KEYWORD_FIELDS = ("chapter",)

_CHUNK_FIELDS = dataclasses.fields(Chunk)
_CHUNK_NAMES = tuple(f.name for f in _CHUNK_FIELDS)


def point_id(chunk_id: str) -> str:
    """The UUID (as a string) under which ``chunk_id`` is stored."""
    return str(uuid.uuid5(_POINT_NAMESPACE, chunk_id))


def chunk_to_payload(chunk: Chunk) -> dict[str, Any]:
    """Every field of ``chunk`` as a JSON-compatible payload (all fields are scalars).

    Not ``dataclasses.asdict``: its deep copies made payloads 8x slower to build.
    """
    return {name: getattr(chunk, name) for name in _CHUNK_NAMES}


def payload_to_chunk(payload: Mapping[str, Any]) -> Chunk:
    """Rebuild a :class:`Chunk`; fields added to Chunk later fall back to their defaults."""
    values = {}
    for f in _CHUNK_FIELDS:
        if f.name in payload:
            values[f.name] = payload[f.name]
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise KeyError(f"stored chunk lacks the field {f.name!r}")
    return Chunk(**values)


def check_batch(chunks: Sequence[Chunk], vectors: np.ndarray, dimension: int) -> np.ndarray:
    """``vectors`` as a float32 (n, dimension) array matching ``chunks``.

    Raises:
        ValueError: the shapes disagree (a programming error, not a user's).
    """
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim != 2 or arr.shape != (len(chunks), dimension):
        raise ValueError(
            f"expected vectors of shape ({len(chunks)}, {dimension}), got {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError("vectors contain NaN or infinite values")
    return arr


def check_query(vector: np.ndarray, dimension: int) -> list[float]:
    """A query vector as a plain list of ``dimension`` floats.

    Raises:
        ValueError: wrong size or non-finite values.
    """
    arr = np.asarray(vector, dtype=np.float32).reshape(-1)
    if arr.shape != (dimension,):
        raise ValueError(f"expected a query vector of {dimension} floats, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("the query vector contains NaN or infinite values")
    return arr.tolist()
