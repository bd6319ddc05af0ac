"""Retention: archive records past the hot window, delete records past the retention period.

``prune`` works on the oldest records only, as one contiguous run at the start of the chain
(the chain cannot have a hole in the middle), in this order:

1. The run of oldest live records created before ``now - hot_days``: those older than
   ``now - retention_days`` expire; the rest are written, every field and hash intact, to
   ``archive_dir/audit-archive-<first seq>-<last seq>.jsonl.gz`` (temporary file, fsync,
   rename), and only then deleted from the live database, in the same transaction that stores
   the anchor (the last cut record's seq and hash).  The live chain then starts from that
   anchor, and ``verify`` links the archive files to it.
2. Archived records past the retention period are removed from the archive files (a file
   left empty is deleted).

A crash between writing the archive and deleting the rows leaves those rows both archived and
live; the next prune sees the archive already covers them and only deletes them.

A prune that cuts records appends, in the same transaction, a record of its own to the chain
(``status="prune"``, ``mode="audit"``, its ``prune`` field naming the cut: through which seq,
that record's hash, how many were archived and expired, the archive file).  The anchor row
alone is not trusted: ``verify`` accepts a live log that starts after record #N only when a
chained prune record names #N and its hash.  Deleting the oldest records and inserting an
anchor row therefore fails verify; an anchor left by a version before prune records existed
is attested once, by a prune record written when the log is upgraded
(:func:`attest_old_anchor`).
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import sqlalchemy as sa

from bookreader.core.audit.log import PruneResult, anchors_t, records_t
from bookreader.core.audit.records import normalise, seal, utc_timestamp
from bookreader.core.audit.anchors import write_manifest
from bookreader.core.audit.verify import archive_files, read_records
from bookreader.errors import StoreError

if TYPE_CHECKING:
    from bookreader.core.audit.log import AuditLog

log = logging.getLogger(__name__)

_NAME = re.compile(r"audit-archive-(\d+)-(\d+)\.jsonl\.gz$")
#: ``status`` and ``mode`` of the record a prune appends to the chain.
PRUNE_STATUS = "prune"
PRUNE_MODE = "audit"
PRUNE_SESSION = "audit-prune"


def prune_record(cut: dict[str, Any], text: str) -> dict[str, Any]:
    """The unsealed record of a prune: ``cut`` is its ``prune`` field, ``text`` says it in
    words (the record's question, as the report and exports show it)."""
    return {
        "record_id": str(uuid.uuid4()), "query_id": str(uuid.uuid4()),
        "answer_id": str(uuid.uuid4()), "session_id": PRUNE_SESSION, "mode": PRUNE_MODE,
        "question": text, "n_chunks": 0, "chunks": [], "success": True,
        "status": PRUNE_STATUS, "prune": cut,
    }


def _append_prune_record(audit: "AuditLog", conn: Any, cut: dict[str, Any],
                         text: str) -> tuple[int, str]:
    """Seal the prune's record onto the chain inside the prune's transaction."""
    from bookreader.core.audit.log import AuditLog

    seq, prev = AuditLog._head(conn)
    row = seal(prune_record(cut, text), seq=seq + 1, prev_hash=prev,
               created_at=utc_timestamp(audit._clock()))
    conn.execute(records_t.insert(), [row])
    return seq + 1, row["record_hash"]


def attest_old_anchor(audit: "AuditLog") -> None:
    """Give the latest anchor left by a version without prune records its record in the
    chain, once, when the log is upgraded (so an upgraded log keeps verifying)."""
    from bookreader.core.audit.log import AuditLog

    with audit._write() as conn:
        anchor = AuditLog._anchor(conn)
        if anchor is None:
            return
        cut = {"through_seq": anchor[0], "anchor_hash": anchor[1], "attested": True}
        head = _append_prune_record(audit, conn, cut, (
            f"Audit log upgraded: it starts after record #{anchor[0]}, cut by a prune of an "
            "older BookReader version (before prunes were recorded in the chain)."))
    audit._note_head(*head)
    log.info("Audit log: attested the prune anchor at record #%d", anchor[0])


def archive_name(first_seq: int, last_seq: int) -> str:
    return f"audit-archive-{first_seq:012d}-{last_seq:012d}.jsonl.gz"


def _seq_range(path: Path) -> tuple[int, int]:
    m = _NAME.search(path.name)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _write_gz(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename=path.name[:-3], mode="wb", fileobj=raw, mtime=0) as gz:
            for row in rows:
                line = json.dumps(normalise(row), ensure_ascii=False, separators=(",", ":"))
                gz.write(line.encode("utf-8") + b"\n")
        raw.flush()
        os.fsync(raw.fileno())
    os.replace(tmp, path)


def _expired_prefix(rows: list[dict[str, Any]], cutoff: str) -> int:
    """How many leading rows were created before ``cutoff``.  Only a prefix expires, so what
    is kept stays one unbroken run of the chain even if the clock once went backwards."""
    k = 0
    while k < len(rows) and str(rows[k].get("created_at", "")) < cutoff:
        k += 1
    return k


def _expire_archives(
    archive_dir: Optional[Path], cutoff: str, dry_run: bool
) -> tuple[int, list[Path]]:
    """Drop archived records created before ``cutoff``; returns (count, files changed)."""
    removed, touched = 0, []
    for path in archive_files(archive_dir):
        records = list(read_records(path))
        keep = records[_expired_prefix(records, cutoff):]
        if len(keep) == len(records):
            continue
        removed += len(records) - len(keep)
        touched.append(path)
        if dry_run:
            continue
        if keep:
            new = path.with_name(archive_name(int(keep[0]["seq"]), int(keep[-1]["seq"])))
            _write_gz(new, keep)
            if new != path:
                path.unlink()
        else:
            path.unlink()
    return removed, touched


def prune(audit: "AuditLog", *, dry_run: bool = False, now: Optional[datetime] = None) -> PruneResult:
    """See the module docstring.  ``now`` is for tests; it defaults to the current UTC time."""
    now = now or datetime.now(timezone.utc)
    hot_cut = utc_timestamp(now - timedelta(days=audit.hot_days))
    ret_cut = utc_timestamp(now - timedelta(days=max(audit.retention_days, audit.hot_days)))
    archive_dir = audit.archive_dir
    files: list[Path] = []
    new_head: Optional[tuple[int, str]] = None
    try:
        with audit._write() as conn:
            # The contiguous run of oldest records before the hot cut.
            first_hot = conn.execute(
                sa.select(sa.func.min(records_t.c.seq)).where(records_t.c.created_at >= hot_cut)
            ).scalar()
            q = sa.select(records_t).order_by(records_t.c.seq)
            if first_hot is not None:
                q = q.where(records_t.c.seq < first_hot)
            cut = [dict(r) for r in conn.execute(q).mappings()]
            already = max((_seq_range(p)[1] for p in archive_files(archive_dir)), default=0)
            fresh = [r for r in cut if r["seq"] > already]
            k = _expired_prefix(fresh, ret_cut)
            expired, to_archive = fresh[:k], fresh[k:]
            if to_archive and archive_dir is None:
                raise StoreError(
                    "Cannot archive audit records: no archive folder is set. Use "
                    "AuditLog.from_settings or pass archive_dir."
                )
            if cut and not dry_run:
                if to_archive and archive_dir is not None:  # None was refused above
                    archive_dir.mkdir(parents=True, exist_ok=True)
                    path = archive_dir / archive_name(to_archive[0]["seq"], to_archive[-1]["seq"])
                    _write_gz(path, to_archive)
                    files.append(path)
                last = cut[-1]
                conn.execute(
                    anchors_t.insert().values(
                        through_seq=last["seq"],
                        anchor_hash=last["record_hash"],
                        created_at=utc_timestamp(now),
                        n_archived=len(to_archive),
                        n_expired=len(expired),
                        archive_file=files[0].name if files else None,
                    )
                )
                conn.execute(records_t.delete().where(records_t.c.seq <= last["seq"]))
                cut_fields = {
                    "through_seq": last["seq"], "anchor_hash": last["record_hash"],
                    "n_archived": len(to_archive), "n_expired": len(expired),
                    "n_already_archived": len(cut) - len(fresh),
                    "archive_file": files[0].name if files else None,
                    "retention_days": audit.retention_days, "hot_days": audit.hot_days,
                }
                new_head = _append_prune_record(audit, conn, cut_fields, (
                    f"Audit prune: records #{cut[0]['seq']}-#{last['seq']} left the live log "
                    f"({len(to_archive)} archived"
                    + (f" in {files[0].name}" if files else "")
                    + f", {len(expired)} older than {audit.retention_days} days deleted)."))
            anchor_seq = cut[-1]["seq"] if cut else 0
            anchor_hash = cut[-1]["record_hash"] if cut else ""
    except OSError as exc:
        raise StoreError(
            f"Cannot write the audit archive in {archive_dir}: {exc.strerror or exc}. "
            "Check free disk space and that the folder is writable; nothing was removed."
        ) from exc
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(
            f"Cannot prune the audit log at {audit.location}: {getattr(exc, 'orig', exc)}.",
            details=str(exc),
        ) from exc
    n_old_archived, touched = _expire_archives(archive_dir, ret_cut, dry_run)
    files.extend(p for p in touched if p not in files)
    if not dry_run and archive_dir is not None and archive_dir.is_dir():
        try:
            write_manifest(archive_dir, archive_files(archive_dir))
        except OSError as exc:
            raise StoreError(
                f"Cannot write the archive manifest in {archive_dir}: {exc.strerror or exc}. "
                "Check free disk space; run prune again to rewrite it."
            ) from exc
    if new_head is not None:
        audit._note_head(*new_head)
    if cut and not dry_run and audit._engine.dialect.name == "sqlite":
        with audit._engine.connect() as conn:  # give the freed pages back to the disk
            conn.exec_driver_sql("PRAGMA incremental_vacuum")
    verb = "would archive" if dry_run else "archived"
    message = (
        f"{verb} {len(to_archive)} records older than {audit.hot_days} days, "
        f"{'would delete' if dry_run else 'deleted'} {len(expired)} live and "
        f"{n_old_archived} archived records older than {audit.retention_days} days"
    )
    if cut and len(cut) != len(to_archive) + len(expired):
        message += f" ({len(cut) - len(to_archive) - len(expired)} were archived already)"
    log.info("Audit prune: %s", message)
    return PruneResult(
        n_archived=len(to_archive),
        n_expired=len(expired),
        n_expired_archived=n_old_archived,
        archive_files=tuple(files),
        anchor_seq=anchor_seq,
        anchor_hash=anchor_hash,
        dry_run=dry_run,
        message=message[0].upper() + message[1:] + ".",
    )
