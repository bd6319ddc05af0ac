"""Checking the hash chain: of the live database, of the archive, of an exported file.

Each record must hash to its ``record_hash``; each record that directly follows another
(``seq`` one higher) must carry that record's hash as ``prev_hash``.  In the live database
and the archive no record may be missing; an export filtered by date, book or mode has gaps,
which are counted and reported, and only the links across them go unchecked.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from bookreader.core.audit.log import VerifyResult
from bookreader.core.audit.records import GENESIS_HASH, record_hash
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

ARCHIVE_GLOB = "audit-archive-*.jsonl.gz"


class ChainChecker:
    """Feed records in order with :meth:`add`; stops at the first bad one.

    Args:
        start: (seq, hash) the first record must follow, or None to accept whatever the
            first record says it follows (an export or an archive that was trimmed).
        allow_gaps: Accept missing records (filtered exports), counting them.
    """

    def __init__(self, start: Optional[tuple[int, str]] = None, *, allow_gaps: bool = False):
        self.prev_seq, self.prev_hash = start if start is not None else (None, None)
        self.allow_gaps = allow_gaps
        self.n = 0
        self.gaps = 0
        self.bad: Optional[dict[str, Any]] = None
        self.reason = ""
        self.first_seq: Optional[int] = None

    def add(self, row: dict[str, Any]) -> bool:
        """Check one record; False (and :attr:`bad` set) when it does not match."""
        if self.bad is not None:
            return False
        seq, rid = row.get("seq"), row.get("record_id")
        try:
            seq = int(seq)  # pyright: ignore[reportArgumentType]
        except (TypeError, ValueError):
            return self._fail(row, f"record {rid} has no valid position (seq={seq!r})")
        if self.first_seq is None:
            self.first_seq = seq
        if self.prev_seq is not None:
            if seq <= self.prev_seq:
                return self._fail(row, f"record {rid} (#{seq}) is out of order")
            if seq != self.prev_seq + 1:
                if not self.allow_gaps:
                    return self._fail(
                        row,
                        f"records #{self.prev_seq + 1}-#{seq - 1} before record {rid} "
                        "are missing",
                    )
                self.gaps += 1
            elif row.get("prev_hash") != self.prev_hash:
                return self._fail(
                    row, f"record {rid} (#{seq}) does not link to the record before it"
                )
        elif seq == 1 and row.get("prev_hash") != GENESIS_HASH:
            return self._fail(row, f"record {rid} (#1) does not start the chain")
        if record_hash(row) != row.get("record_hash"):
            return self._fail(row, f"record {rid} (#{seq}) was changed after it was written")
        self.prev_seq, self.prev_hash = seq, row["record_hash"]
        self.n += 1
        return True

    def _fail(self, row: dict[str, Any], reason: str) -> bool:
        self.bad, self.reason = row, reason
        return False

    def result(self, what: str, *, extra: str = "") -> VerifyResult:
        if self.bad is not None:
            seq = self.bad.get("seq")
            return VerifyResult(
                ok=False,
                n_records=self.n,
                first_bad_record_id=self.bad.get("record_id"),
                message=f"{what}: TAMPERED: {self.reason}. {self.n} records before it match.",
                first_bad_seq=int(seq) if isinstance(seq, int) else None,
                gaps=self.gaps,
                head_hash=self.prev_hash or "",
            )
        parts = [f"{what}: OK, {self.n} records match their hashes and chain"]
        if self.gaps:
            parts.append(
                f"; {self.gaps} gaps where records were left out (a filtered export, or "
                "removed): links across them were not checked"
            )
        if self.first_seq and self.first_seq > 1:
            parts.append(f"; starts after record #{self.first_seq - 1} (archived or filtered)")
        return VerifyResult(
            ok=True,
            n_records=self.n,
            first_bad_record_id=None,
            message="".join(parts) + "." + extra,
            gaps=self.gaps,
            head_hash=self.prev_hash or "",
        )


# --- reading exported and archived files ---------------------------------------------------------
def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of an exported JSONL/JSON file or of a ``.jsonl.gz`` archive.

    Raises:
        BookReaderError: the file is missing, a CSV, or not an audit export.
    """
    if not path.is_file():
        raise BookReaderError(f"The file {path} does not exist. Give the path of an export.")
    if path.suffix.lower() in (".csv", ".tsv"):
        raise BookReaderError(
            f"{path} is a CSV export, which cannot be verified (spreadsheet cells are "
            "rewritten against formula injection). Export with --format jsonl and verify that."
        )
    try:
        with _open_text(path) as fh:
            head = fh.read(1)
            while head and head.isspace():
                head = fh.read(1)
            if head == "[" or path.suffix == ".json":
                first = head + fh.readline()
                if first.startswith('{"export":') and first.rstrip().endswith('"records":['):
                    # As export writes it: one record a line, streamed without loading all.
                    for line in fh:
                        line = line.strip()
                        if line.startswith("]"):
                            return
                        if line:
                            yield json.loads(line[:-1] if line.endswith(",") else line)
                    raise ValueError("the list of records is not closed")
                data = json.loads(first + fh.read())
                records = data.get("records") if isinstance(data, dict) else data
                if not isinstance(records, list):
                    raise ValueError("no list of records")
                yield from records
                return
            first = True
            for n, line in enumerate(fh, 1):
                if first:
                    line, first = head + line, False
                if line.strip():
                    rec = json.loads(line)
                    if not isinstance(rec, dict):
                        raise ValueError(f"line {n} is not a record")
                    yield rec
    except (ValueError, OSError, EOFError, UnicodeDecodeError) as exc:
        raise BookReaderError(
            f"{path} is not a readable BookReader audit export ({exc}). Verify the JSONL or "
            "JSON file that 'bookreader audit export' wrote."
        ) from exc


def verify_file(path: Path) -> VerifyResult:
    """Verify an exported JSONL/JSON file or an archive on its own."""
    checker = ChainChecker(allow_gaps=True)
    for rec in read_records(path):
        if not checker.add(rec):
            break
    log.info("Verified %s: %d records, ok=%s", path, checker.n, checker.bad is None)
    return checker.result(str(path))


def archive_files(archive_dir: Optional[Path]) -> list[Path]:
    """Archive files in chain order (their names carry zero-padded first and last seq)."""
    if archive_dir is None or not archive_dir.is_dir():
        return []
    return sorted(archive_dir.glob(ARCHIVE_GLOB))


def verify_live(
    rows: Iterable[dict[str, Any]],
    anchor: Optional[tuple[int, str]],
    archive_dir: Optional[Path],
) -> VerifyResult:
    """Verify the archive files in order, then the live rows, as one unbroken chain.

    With no archive the live chain starts at the prune anchor (or at the beginning).
    """
    files = archive_files(archive_dir)
    extra = ""
    if files:
        checker = ChainChecker()
        for f in files:
            for rec in read_records(f):
                if not checker.add(rec):
                    return checker.result(f"Archive {f.name}")
        start = (checker.prev_seq, checker.prev_hash)
        extra = f" Archive: {checker.n} records in {len(files)} files chain into it."
        if anchor is not None and checker.prev_seq is not None and checker.prev_seq < anchor[0]:
            # Records after the archive expired straight from the live log (older than the
            # retention period when prune ran): nothing links them, so start at the anchor.
            start = anchor
            extra = (
                f" Archive: {checker.n} records in {len(files)} files verified; records "
                f"#{checker.prev_seq + 1}-#{anchor[0]} expired, so the archive does not link "
                "to the live log."
            )
        elif anchor is not None and start != anchor:
            return VerifyResult(
                ok=False,
                n_records=checker.n,
                first_bad_record_id=None,
                message=(
                    f"Archive in {archive_dir}: TAMPERED: it ends at record #{checker.prev_seq} "
                    f"but the live log was cut after #{anchor[0]} with a different hash."
                ),
                gaps=0,
            )
    else:
        start = anchor if anchor is not None else (0, GENESIS_HASH)
    live = ChainChecker(start)  # pyright: ignore[reportArgumentType]
    for row in rows:
        if not live.add(row):
            break
    return live.result("Audit log", extra=extra)
