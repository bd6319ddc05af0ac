"""Read the metadata of a GGUF file (architecture, name, chat template) without loading it.

A GGUF file starts with ``b"GGUF"``, a uint32 version, the tensor count and the
key/value count (uint64 each), then the key/value pairs: a length-prefixed UTF-8 key, a
uint32 type and the value.  Only scalars and strings are kept; arrays (the tokenizer's
vocabulary, 150,000 strings for Qwen) are skipped by seeking past them, so reading the
metadata of a 1 GB model takes a fraction of a second and reads a few megabytes.

Used to check a model file before it is used: its architecture and name must be the
ones the tier expects, and a file without a chat template gets a warning (llama.cpp
would fall back to a generic template the model was not trained on).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

from bookreader.errors import ModelError

MAGIC = b"GGUF"
#: Keys that are read into the result even though they are long strings.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: A key or string longer than this is not a GGUF file we understand.
_MAX_STRING = 64 << 20
_MAX_KV = 100_000


class _Reader:
    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self.fh = fh
        self.path = path

    def take(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise ModelError(
                f"The model file {self.path} ends in the middle of its header: it is "
                f"truncated. Install the model again (bookreader models install NAME)."
            )
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, keep: bool = True) -> str:
        n = self.unpack("<Q")
        if n > _MAX_STRING:
            raise ModelError(f"The model file {self.path} has a broken GGUF header.")
        if not keep:
            self.fh.seek(n, 1)
            return ""
        return self.take(n).decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool = True) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string(keep)
        if kind == _ARRAY:
            item = self.unpack("<I")
            count = self.unpack("<Q")
            if item in _SCALARS:
                self.fh.seek(struct.calcsize(_SCALARS[item]) * count, 1)
            else:
                for _ in range(count):
                    self.value(item, keep=False)
            return None
        raise ModelError(f"The model file {self.path} has a GGUF value of unknown type {kind}.")


def read_metadata(path: Path) -> dict[str, Any]:
    """The scalar and string metadata of a GGUF file (arrays are skipped).

    Raises:
        ModelError: not a GGUF file, or a truncated or broken header.
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            r = _Reader(fh, path)
            if r.take(4) != MAGIC:
                raise ModelError(
                    f"The model file {path} is not a GGUF model. Install the model again, "
                    f"or pick another one in Settings."
                )
            version = r.unpack("<I")
            r.unpack("<Q")  # tensor count
            n_kv = r.unpack("<Q")
            if n_kv > _MAX_KV:
                raise ModelError(f"The model file {path} has a broken GGUF header.")
            meta: dict[str, Any] = {"gguf.version": version}
            for _ in range(n_kv):
                key = r.string()
                kind = r.unpack("<I")
                meta[key] = r.value(kind)
            return meta
    except OSError as exc:
        raise ModelError(
            f"The model file {path} cannot be read ({exc.strerror}). Check its permissions."
        ) from exc


def write_tiny_gguf(path: Path, *, architecture: str = "llama", name: str = "Test",
                    chat_template: str | None = "{{ messages }}", padding: int = 0) -> Path:
    """Write a small, valid GGUF header (no tensors) with the given metadata.

    For tests and the download test server: llama.cpp cannot run it, but every
    metadata check can.  ``padding`` bytes are appended to make the file larger.
    """
    kv: list[tuple[str, int, bytes]] = []

    def s(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    kv.append(("general.architecture", _STRING, s(architecture)))
    kv.append(("general.name", _STRING, s(name)))
    kv.append(("general.alignment", 4, struct.pack("<I", 32)))
    kv.append(("tokenizer.ggml.tokens", _ARRAY,
               struct.pack("<IQ", _STRING, 3) + s("a") + s("b") + s("c")))
    if chat_template is not None:
        kv.append(("tokenizer.chat_template", _STRING, s(chat_template)))
    out = bytearray(MAGIC + struct.pack("<IQQ", 3, 0, len(kv)))
    for key, kind, value in kv:
        out += s(key) + struct.pack("<I", kind) + value
    out += bytes(padding)
    Path(path).write_bytes(bytes(out))
    return Path(path)
