"""Free disk space, damaged indexes, and log records that survive bad bytes.

Qdrant Edge memory-maps its segments (32 MB each): a write through such a map on a full
disk is a ``SIGBUS`` that kills the process without a message.  So nothing opens or grows
a shard without first checking that the disk has room (:func:`require_free`).  An ingest
checks an estimate from the page count before it writes anything.

A book whose shard folder or BM25 file went missing (a cleanup tool, a failed backup
restore) is reported as damaged (:func:`index_damage`) instead of being answered from an
empty index that says "not covered" to every question.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from bookreader.errors import StoreError

log = logging.getLogger(__name__)

MB = 1 << 20
#: Free space needed to open a book's shard at all (one memory-mapped segment and room).
MIN_FREE_TO_OPEN = 64 * MB
#: Ingest estimate: one fresh segment plus this much per page (vectors, payload, BM25, WAL).
PER_PAGE_BYTES = 48 * 1024


def free_bytes(path: Path) -> int:
    """Free bytes on the file system holding ``path`` (or its nearest existing parent)."""
    path = Path(path)
    while not path.exists() and path.parent != path:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError as exc:
        log.warning("Cannot read the free space at %s: %s", path, exc)
        return 1 << 62


def ingest_estimate(page_count: int) -> int:
    """Bytes an ingest of ``page_count`` pages may write, with room to spare."""
    return MIN_FREE_TO_OPEN + PER_PAGE_BYTES * max(1, page_count)


def require_free(path: Path, need: int, what: str) -> None:
    """Raise StoreError unless ``need`` bytes are free where ``path`` lives."""
    free = free_bytes(path)
    if free < need:
        raise StoreError(
            f"Not enough free disk space to {what}: {free / MB:.0f} MB free in {path}, about "
            f"{need / MB:.0f} MB needed. Free some space (or move the data folder to a larger "
            "disk in the settings) and try again. Nothing was changed."
        )


def index_damage(book_dir: Path, *, edge: bool, lexical_file: str) -> str:
    """Why a ready book's index cannot be used (a missing or unreadable part), or ""."""
    shard = book_dir / "shard"
    if edge:
        if not shard.is_dir():
            return "its vector index (the shard folder) is missing"
        try:
            if not any(shard.iterdir()):
                return "its vector index (the shard folder) is empty"
        except OSError as exc:
            return f"its vector index cannot be read ({exc.strerror or exc})"
    bm25 = book_dir / lexical_file
    if not bm25.is_file():
        return f"its keyword index ({lexical_file}) is missing"
    try:
        with open(bm25, "rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                return f"its keyword index ({lexical_file}) is damaged"
    except OSError as exc:
        return f"its keyword index cannot be read ({exc.strerror or exc})"
    return ""


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: undecodable bytes (lone surrogates, as Python decodes bad
    bytes from C libraries and the command line) become U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


class ValidTextFilter(logging.Filter):
    """Makes a record's message and arguments valid Unicode before any handler writes it
    (a MuPDF warning quoting bad bytes from a PDF must not become a logging traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = valid_text(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(valid_text(a) if isinstance(a, str) else a for a in record.args)
        return True
