"""Anchors outside the hash chain, so that cutting records off its end is detected.

A hash chain proves that no record was changed *relative to the records after it*; on its
own it cannot tell that the last records were deleted, or that someone recomputed the
whole chain after an edit.  These anchors can:

* **Export trailer.**  Every JSONL export ends with one line
  ``{"bookreader_audit_trailer": {"n_records", "first_seq", "last_seq", "head_hash", ...}}``
  (a JSON export carries the same object as ``"trailer"``).  Deleting the last record, or
  the trailer itself, fails ``audit verify``.
* **Extends.**  ``audit verify LATER --extends EARLIER`` proves that every record of an
  earlier export an instructor kept is in the later one, unchanged (same position, same
  hash): the log was append-only between the two.  A recomputed chain changes the hashes
  from the first edit on, so it fails here even though it verifies on its own.
* **Expected head.**  ``audit verify --expect-head HASH`` checks that the chain still passes
  through a head hash noted earlier (printed by every verify and export).
* **Archive manifest.**  ``archive/MANIFEST.json`` lists every archive file with its
  SHA-256, record range and last hash; a missing, extra or altered archive fails verify.
* **Head file.**  ``audit.sqlite3.head`` beside the live SQLite database holds the seq and
  hash of the last record appended; a live log that ends before it was cut.

Whoever can write the data folder can also rewrite the head file and the manifest: these
catch accidents and casual edits on the machine.  What holds against the laptop's owner
is what the instructor keeps elsewhere: an earlier export (``--extends``) or a noted head
hash (``--expect-head``).  See the README's threat model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Iterable, Optional

from bookreader.core.audit.records import utc_timestamp

log = logging.getLogger(__name__)

TRAILER_KEY = "bookreader_audit_trailer"
MANIFEST = "MANIFEST.json"


# --- export trailer ------------------------------------------------------------------------
class TrailerCounter:
    """Counts records while an export is written, then gives its trailer."""

    def __init__(self) -> None:
        self.n = 0
        self.first_seq: Optional[int] = None
        self.last_seq: Optional[int] = None
        self.head_hash = ""

    def add(self, row: dict[str, Any]) -> None:
        self.n += 1
        if self.first_seq is None:
            self.first_seq = row.get("seq")
        self.last_seq = row.get("seq")
        self.head_hash = row.get("record_hash") or ""

    def trailer(self, filters: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        return {
            "n_records": self.n,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "head_hash": self.head_hash,
            "exported_at": utc_timestamp(),
            "filters": {k: str(v) for k, v in (filters or {}).items() if v not in (None, "")},
        }


def trailer_problem(trailer: Optional[dict[str, Any]], n: int, last_seq: Optional[int],
                    head_hash: str) -> str:
    """Why the records read do not match the file's trailer, or "" when they do."""
    if trailer is None:
        return ("it has no trailer line, so records may have been cut from its end (export it "
                "again with this version)")
    if int(trailer.get("n_records", -1)) != n:
        return (f"its trailer says {trailer.get('n_records')} records but {n} are there: "
                "records were removed or added")
    if (trailer.get("head_hash") or "") != (head_hash or ""):
        return "its last record is not the one its trailer names: the end was cut or changed"
    if trailer.get("last_seq") is not None and trailer.get("last_seq") != last_seq:
        return "its last record is not at the position its trailer names"
    return ""


# --- archive manifest ----------------------------------------------------------------------
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _atomic_write(path: Path, text: str, *, durable: bool = True) -> None:
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_manifest(archive_dir: Path, files: Iterable[Path]) -> Path:
    """List every archive file with its hash, record range and last hash."""
    from bookreader.core.audit.verify import read_records

    entries = []
    for path in files:
        n, first, last, head = 0, None, None, ""
        for rec in read_records(path):
            n += 1
            first = rec.get("seq") if first is None else first
            last, head = rec.get("seq"), rec.get("record_hash", "")
        entries.append({"file": path.name, "sha256": _sha256(path), "n_records": n,
                        "first_seq": first, "last_seq": last, "head_hash": head})
    target = archive_dir / MANIFEST
    _atomic_write(target, json.dumps({"updated_at": utc_timestamp(), "archives": entries},
                                     indent=1))
    return target


def manifest_problem(archive_dir: Optional[Path], files: list[Path]) -> str:
    """Why the archive folder does not match its manifest, or ""."""
    if archive_dir is None:
        return ""
    path = archive_dir / MANIFEST
    if not path.exists():
        return ("archive files exist but their manifest is missing" if files else "")
    try:
        listed = json.loads(path.read_text(encoding="utf-8"))["archives"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"the archive manifest {path} cannot be read ({exc})"
    names = {p.name: p for p in files}
    for entry in listed:
        p = names.pop(entry.get("file", ""), None)
        if p is None:
            return (f"archive {entry.get('file')} (records #{entry.get('first_seq')}-"
                    f"#{entry.get('last_seq')}) is listed in the manifest but missing")
        if _sha256(p) != entry.get("sha256"):
            return f"archive {p.name} differs from the one the manifest lists"
    if names:
        return f"archive {sorted(names)[0]} is not listed in the manifest"
    return ""


# --- head file beside the live database ----------------------------------------------------
class HeadFile:
    """``<db>.head``: the seq and hash of the last record appended to the live log."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> Optional[tuple[int, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return int(data["seq"]), str(data["record_hash"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("Ignoring the unreadable audit head file %s: %s", self.path, exc)
            return None

    def advance(self, seq: int, record_hash: str) -> None:
        """Note a new head (never moves back; a failure is logged, not raised)."""
        current = self.read()
        if current is not None and current[0] >= seq:
            return
        # No fsync: the head file is written after every record (two per question), and
        # a power cut that loses its last update leaves an older head, which never
        # raises a false alarm (the database, synced at each commit, holds more); an
        # unreadable file is ignored with a warning.  The manifest stays durable.
        try:
            _atomic_write(self.path, json.dumps(
                {"seq": seq, "record_hash": record_hash, "updated_at": utc_timestamp()}),
                durable=False)
        except OSError as exc:
            log.warning("Cannot update the audit head file %s: %s", self.path, exc)
