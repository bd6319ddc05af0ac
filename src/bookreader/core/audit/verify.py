"""Checking the hash chain: of the live database, of the archive, of an exported file.

Each record must hash to its ``record_hash``; each record that directly follows another
(``seq`` one higher) must carry that record's hash as ``prev_hash``.  A record may hold only
the fields the log writes: the hash covers those, so a field added to an exported record
would otherwise pass unseen.  A live log that starts after record #N (a prune cut the older
ones) must hold the chained prune record that names #N and its hash (see retention.py).  In the live database
and the archive no record may be missing; an export filtered by date, book or mode has gaps,
which are counted and reported, and only the links across them go unchecked.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import logging
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from bookreader.core.audit.anchors import TRAILER_KEY, manifest_problem, trailer_problem
from bookreader.core.audit.log import VerifyResult
from bookreader.core.audit.records import GENESIS_HASH, record_hash
from bookreader.core.audit.schema import COLUMNS
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

ARCHIVE_GLOB = "audit-archive-*.jsonl.gz"
_FIELDS = frozenset(COLUMNS)


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
        raw_seq, rid = row.get("seq"), row.get("record_id")
        try:
            seq = int(raw_seq if raw_seq is not None else "")
        except (TypeError, ValueError):
            return self._fail(row, f"record {rid} has no valid position (seq={raw_seq!r})")
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
        unknown = sorted(k for k in row if k not in _FIELDS)
        if unknown:
            return self._fail(row, f"record {rid} (#{seq}) has a field the audit log never "
                                   f"writes ({unknown[0]!r}): it was added after the record "
                                   "was written")
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


def read_records(path: Path, trailer: Optional[dict[str, Any]] = None) -> Iterator[dict[str, Any]]:
    """The records of an exported JSONL/JSON file or of a ``.jsonl.gz`` archive.

    ``trailer``, when given, receives the file's trailer (count and head hash) under the
    key ``"trailer"`` if the file has one.

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
                            rest = (line[1:] + fh.read()).strip().lstrip(",")
                            if rest and trailer is not None:
                                tail = json.loads("{" + rest)
                                if isinstance(tail.get("trailer"), dict):
                                    trailer["trailer"] = tail["trailer"]
                            return
                        if line:
                            yield json.loads(line[:-1] if line.endswith(",") else line)
                    raise ValueError("the list of records is not closed")
                data = json.loads(first + fh.read())
                records = data.get("records") if isinstance(data, dict) else data
                if trailer is not None and isinstance(data, dict) and isinstance(data.get("trailer"), dict):
                    trailer["trailer"] = data["trailer"]
                if not isinstance(records, list):
                    raise ValueError("no list of records")
                yield from records
                return
            first = True
            seen_trailer = False
            for n, line in enumerate(fh, 1):
                if first:
                    line, first = head + line, False
                if line.strip():
                    rec = json.loads(line)
                    if not isinstance(rec, dict):
                        raise ValueError(f"line {n} is not a record")
                    if TRAILER_KEY in rec:
                        if trailer is not None:
                            trailer["trailer"] = rec[TRAILER_KEY]
                        seen_trailer = True
                        continue
                    if seen_trailer:
                        raise ValueError(f"line {n} comes after the trailer line")
                    yield rec
    except (ValueError, OSError, EOFError, UnicodeDecodeError) as exc:
        raise BookReaderError(
            f"{path} is not a readable BookReader audit export ({exc}). Verify the JSONL or "
            "JSON file that 'bookreader audit export' wrote."
        ) from exc


def verify_file(path: Path, *, extends: Optional[Path] = None,
                expect_head: Optional[str] = None) -> VerifyResult:
    """Verify an exported JSONL/JSON file or an archive on its own: the chain, the trailer
    (an export must end with one), and optionally that it extends an earlier export and
    passes through a noted head hash."""
    holder: dict[str, Any] = {}
    checker = ChainChecker(allow_gaps=True)
    hashes = ContainsChecker(extends, expect_head)
    for rec in read_records(path, holder):
        if not checker.add(rec):
            break
        hashes.add(rec)
    log.info("Verified %s: %d records, ok=%s", path, checker.n, checker.bad is None)
    result = checker.result(str(path))
    if not result.ok:
        return result
    if not path.name.endswith(".gz"):  # archives are checked against their manifest
        problem = trailer_problem(holder.get("trailer"), checker.n, checker.prev_seq,
                                  checker.prev_hash or "")
        if problem:
            return _failed(result, f"{path}: TAMPERED: {problem}.")
    return hashes.result(result)


def _failed(result: VerifyResult, message: str) -> VerifyResult:
    return dataclasses.replace(result, ok=False, message=message)


class ContainsChecker:
    """Checks that a chain holds every record of an earlier export unchanged and passes
    through a noted head hash."""

    def __init__(self, extends: Optional[Path], expect_head: Optional[str]) -> None:
        self.extends = extends
        self.expect_head = (expect_head or "").strip().lower() or None
        self.found_head: Optional[int] = None
        self.earlier: dict[int, str] = {}
        self.problem = ""
        if extends is not None:
            earlier = verify_file(extends)
            if not earlier.ok:
                self.problem = f"the earlier export does not verify ({earlier.message})"
            for rec in read_records(extends):
                self.earlier[int(rec["seq"])] = rec["record_hash"]
        self.matched = 0

    def add(self, rec: dict[str, Any]) -> None:
        if self.expect_head and rec.get("record_hash") == self.expect_head:
            self.found_head = int(rec["seq"])
        want = self.earlier.get(int(rec["seq"]))
        if want is not None:
            if want != rec.get("record_hash") and not self.problem:
                self.problem = (f"record #{rec['seq']} differs from the earlier export "
                                "(the log was rewritten after it was exported)")
            self.matched += 1

    def result(self, result: VerifyResult) -> VerifyResult:
        if self.problem:
            return _failed(result, f"TAMPERED: {self.problem}.")
        extra = ""
        if self.extends is not None:
            if self.matched != len(self.earlier):
                missing = len(self.earlier) - self.matched
                return _failed(result, f"TAMPERED: {missing} records of the earlier export "
                                       f"{self.extends.name} are missing from this one.")
            extra += (f" It extends {self.extends.name}: all {len(self.earlier)} of its records "
                      "are here, unchanged.")
        if self.expect_head:
            if self.found_head is None:
                return _failed(result, "TAMPERED: the chain does not pass through the expected "
                                       f"head {self.expect_head[:16]}...: the log was cut or "
                                       "rewritten before that record.")
            extra += f" The expected head is record #{self.found_head}."
        return dataclasses.replace(result, message=result.message + extra)


def _prune_problem(anchor: tuple[int, str], prunes: list[dict[str, Any]]) -> tuple[str, str]:
    """(why the cut at ``anchor`` is not one the chain records, what the prune said)."""
    through, anchor_hash = anchor
    for p in prunes:
        if p.get("through_seq") == through and p.get("anchor_hash") == anchor_hash:
            if p.get("attested"):
                return "", (f"Records up to #{through} were cut by an older version's prune "
                            f"(attested by record #{p['seq']} when the log was upgraded).")
            return "", (f"Records up to #{through} were cut by the prune recorded as "
                        f"#{p['seq']} on {str(p.get('created_at'))[:10]}: "
                        f"{p.get('n_archived', 0)} archived, {p.get('n_expired', 0)} older "
                        "than the retention period deleted.")
    return (f"the live log starts after record #{through}, but no prune record in the chain "
            "names that cut: the older records were deleted and the anchor row inserted by "
            "hand (a real prune records itself in the chain)"), ""


def archive_files(archive_dir: Optional[Path]) -> list[Path]:
    """Archive files in chain order (their names carry zero-padded first and last seq)."""
    if archive_dir is None or not archive_dir.is_dir():
        return []
    return sorted(archive_dir.glob(ARCHIVE_GLOB))


def verify_live(
    rows: Iterable[dict[str, Any]],
    anchor: Optional[tuple[int, str]],
    archive_dir: Optional[Path],
    *,
    head: Optional[tuple[int, str]] = None,
    extends: Optional[Path] = None,
    expect_head: Optional[str] = None,
) -> VerifyResult:
    """Verify the archive files in order, then the live rows, as one unbroken chain.

    With no archive the live chain starts at the prune anchor (or at the beginning).
    ``head`` is the head file's (seq, hash): the live log must reach it.
    """
    result = _verify_live(rows, anchor, archive_dir, head, ContainsChecker(extends, expect_head))
    return result


def _verify_live(rows, anchor, archive_dir, head, hashes: "ContainsChecker") -> VerifyResult:
    files = archive_files(archive_dir)
    extra = ""
    if files:
        checker = ChainChecker()
        for f in files:
            for rec in read_records(f):
                if not checker.add(rec):
                    return checker.result(f"Archive {f.name}")
                hashes.add(rec)
        start: Optional[tuple[int, str]] = None  # empty archive files: accept the first
        if checker.prev_seq is not None and checker.prev_hash is not None:
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
    live = ChainChecker(start)
    head_hash_seen: Optional[str] = None
    prunes: list[dict[str, Any]] = []
    for row in rows:
        if not live.add(row):
            break
        hashes.add(row)
        if head is not None and row.get("seq") == head[0]:
            head_hash_seen = row.get("record_hash")
        if isinstance(row.get("prune"), dict):
            prunes.append({**row["prune"], "seq": row.get("seq"),
                           "created_at": row.get("created_at")})
    result = live.result("Audit log", extra=extra)
    if not result.ok:
        return result
    if anchor is not None:
        problem, said = _prune_problem(anchor, prunes)
        if problem:
            return _failed(result, f"Audit log: TAMPERED: {problem}.")
        result = dataclasses.replace(result, message=f"{result.message} {said}")
    problem = manifest_problem(archive_dir, files)
    if problem:
        return _failed(result, f"Archive in {archive_dir}: TAMPERED: {problem}.")
    if head is not None:
        last = live.prev_seq or 0
        if last < head[0]:
            return _failed(result, (
                f"Audit log: TAMPERED: it ends at record #{last}, but the head file beside the "
                f"database says record #{head[0]} was written: the last {head[0] - last} "
                "records were deleted."))
        if head_hash_seen is not None and head_hash_seen != head[1]:
            return _failed(result, (
                f"Audit log: TAMPERED: record #{head[0]} is not the one the head file names: "
                "the log was rewritten from there on."))
    return hashes.result(result)
