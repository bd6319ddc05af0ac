"""Free disk space, damaged indexes, and log records that survive bad bytes.

Qdrant Edge memory-maps its files (write-ahead log segments, vector chunks, payload pages:
32 MB each, created sparse): a write through such a map into a hole on a full disk is a
``SIGBUS`` that kills the process without a message.  A check of the free space before
writing is not enough, because another program can fill the disk meanwhile.  So before and
after every write the store gives each hole of its files real blocks
(:func:`back_sparse_files`, ``posix_fallocate``, a few MB past the data each file holds):
writes through the maps then land in blocks the files own, which no other program can take, and a full disk shows up as an
ordinary ``ENOSPC`` here, turned into the disk-full :class:`StoreError`.  When the index is
finished and closed, the blocks of zeros it never used are given back
(:func:`release_zero_blocks`).  Nothing opens or grows a shard without first checking that
the disk has room (:func:`require_free`); an ingest checks an estimate from the page count
before it writes anything.  (SQLite, the audit log, maps nothing by default: its
``mmap_size`` is 0, and it extends its shared-memory index with ``write()`` first, so a full
disk is ``SQLITE_FULL``, an error, never a signal.)

A book whose shard folder or BM25 file went missing (a cleanup tool, a failed backup
restore) is reported as damaged (:func:`index_damage`) instead of being answered from an
empty index that says "not covered" to every question.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sys
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


#: How every disk-full message starts.
DISK_FULL = "The disk is full"


def disk_full_message(path: Path, what: str) -> str:
    return (f"{DISK_FULL}: cannot {what} in {path} ({free_bytes(path) / MB:.0f} MB free). "
            "Free some space (or move the data folder to a larger disk in the settings), "
            "then try again; an interrupted index resumes where it stopped.")


#: Blocks given to each memory-mapped file past the end of what it holds, before a write:
#: far more than one write adds to a file (a batch of chunks is tens of kB).
BACK_AHEAD = 8 * MB
#: Free space a write needs besides: room for the files a write may create.
WRITE_HEADROOM = 16 * MB


def _data_end(fd: int, size: int) -> int:
    """Where the last stretch of data of a sparse file ends (0 when it holds none)."""
    end, offset = 0, 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError:  # ENXIO: no data after offset
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        offset = end
    return end


def back_sparse_files(folder: Path, what: str) -> int:
    """Give the holes of every file under ``folder`` real blocks, up to :data:`BACK_AHEAD`
    past the data each holds (the store's files fill from the front); returns the bytes
    allocated.

    Raises:
        StoreError: the disk is full (the disk-full message naming ``what``).
    """
    allocate = getattr(os, "posix_fallocate", None)
    if allocate is None or not hasattr(os, "SEEK_DATA"):
        return 0  # Windows allocates on extension; macOS has no posix_fallocate
    added = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            try:
                st = path.stat()
                if st.st_blocks * 512 >= st.st_size:
                    continue
                fd = os.open(path, os.O_RDWR)
            except OSError:
                continue  # gone meanwhile, or not ours to write
            try:
                length = min(st.st_size, _data_end(fd, st.st_size) + BACK_AHEAD)
                allocate(fd, 0, length)
                added += length
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise StoreError(disk_full_message(folder, what), details=repr(exc)) from exc
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise StoreError(
                        f"Cannot {what} in {folder}: {exc.strerror or exc}. Check that the "
                        "data folder is writable.", details=repr(exc)) from exc
                return added  # a file system without fallocate: nothing to do
            finally:
                os.close(fd)
    return added


_PUNCH_HOLE = 0x02 | 0x01  # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
_BLOCK = 1 << 20


def release_zero_blocks(folder: Path) -> int:
    """Give back the blocks of whole zero megabytes in the files under ``folder`` (Linux;
    the files must not be open): they read as zeros either way.  Returns bytes released."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    try:
        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return 0
    fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    zero = bytes(_BLOCK)
    released = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            try:
                if path.stat().st_size < _BLOCK:
                    continue
                fd = os.open(path, os.O_RDWR)
            except OSError:
                continue
            try:
                offset = 0
                while True:
                    block = os.pread(fd, _BLOCK, offset)
                    if len(block) < _BLOCK:
                        break
                    if block == zero and fallocate(fd, _PUNCH_HOLE, offset, _BLOCK) == 0:
                        released += _BLOCK
                    offset += _BLOCK
            except OSError as exc:
                log.info("Cannot give back the unused blocks of %s: %s", path, exc)
            finally:
                os.close(fd)
    return released


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
