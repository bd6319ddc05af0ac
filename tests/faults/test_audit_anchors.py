"""Truncation and rewrites that a bare hash chain cannot see are caught by the anchors:
the export trailer, ``--extends``, ``--expect-head``, the archive manifest and the head
file beside the live database."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from bookreader.cli import main as cli_main
from bookreader.core.audit import AuditLog
from bookreader.core.audit.records import GENESIS_HASH, seal
from audit_samples import make_answer


@pytest.fixture
def log(settings):
    audit = AuditLog.from_settings(settings)
    rng = random.Random(5)
    for _ in range(6):
        audit.record(make_answer(rng), session_id="s")
    yield audit
    audit.close()


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_deleting_the_last_record_of_an_export_fails(log, tmp_path):
    out = tmp_path / "a.jsonl"
    log.export("jsonl", out)
    assert log.verify(out).ok
    lines = _lines(out)
    out.write_text("\n".join(lines[:-2] + lines[-1:]) + "\n", encoding="utf-8")  # last record
    result = log.verify(out)
    assert not result.ok and "trailer says 6 records but 5" in result.message
    out.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # the trailer itself
    result = log.verify(out)
    assert not result.ok and "no trailer line" in result.message


def test_json_export_carries_the_trailer_too(log, tmp_path):
    out = tmp_path / "a.json"
    log.export("json", out)
    assert log.verify(out).ok
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["trailer"]["n_records"] == 6
    data["records"].pop()
    data["n_records"] = 5
    out.write_text(json.dumps(data), encoding="utf-8")
    assert not log.verify(out).ok


def _recompute(records):
    """Re-seal every record after an edit: a chain that verifies on its own."""
    prev, out = GENESIS_HASH, []
    for r in records:
        body = {k: v for k, v in r.items() if k not in ("record_hash", "prev_hash")}
        sealed = seal(body, seq=r["seq"], prev_hash=prev, created_at=r["created_at"])
        out.append(sealed)
        prev = sealed["record_hash"]
    return out


def test_extends_catches_a_recomputed_chain_and_proves_append_only(log, settings, tmp_path):
    earlier = tmp_path / "earlier.jsonl"
    log.export("jsonl", earlier)
    log.record(make_answer(random.Random(9)), session_id="s")
    later = tmp_path / "later.jsonl"
    log.export("jsonl", later)
    ok = log.verify(later, extends=earlier)
    assert ok.ok and "all 6 of its records are here, unchanged" in ok.message

    records = [json.loads(x) for x in _lines(later)[:-1]]
    records[2]["answer_text"] = "The answer the student wishes they had given."
    forged = _recompute(records)
    trailer = {"bookreader_audit_trailer": {"n_records": len(forged), "first_seq": 1,
                                            "last_seq": forged[-1]["seq"],
                                            "head_hash": forged[-1]["record_hash"]}}
    rewritten = tmp_path / "rewritten.jsonl"
    rewritten.write_text("\n".join(json.dumps(r) for r in forged + [trailer]) + "\n",
                         encoding="utf-8")
    assert log.verify(rewritten).ok  # on its own, a recomputed chain looks fine
    bad = log.verify(rewritten, extends=earlier)
    assert not bad.ok and "record #3 differs from the earlier export" in bad.message
    # The command line says the same and exits 1.
    args = ["--data-dir", str(settings.data_dir), "audit", "verify", str(rewritten),
            "--extends", str(earlier)]
    assert cli_main(args) == 1


def test_expect_head(log, settings, capsys):
    head = log.verify().head_hash
    log.record(make_answer(random.Random(10)), session_id="s")
    assert log.verify(expect_head=head).ok
    assert not log.verify(expect_head="ab" * 32).ok
    assert cli_main(["--data-dir", str(settings.data_dir), "audit", "verify",
                     "--expect-head", head]) == 0
    assert "expected head is record #6" in capsys.readouterr().out


def test_deleted_tail_of_the_live_log_is_detected(log, settings):
    assert log.verify().ok
    engine = sa.create_engine(settings.audit_db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM audit_records WHERE seq > 4"))
    result = log.verify()
    assert not result.ok and "ends at record #4" in result.message
    assert "the last 2 records were deleted" in result.message
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM audit_records"))
    engine.dispose()
    result = log.verify()
    assert not result.ok and "ends at record #0" in result.message


def test_deleted_archive_is_detected(settings):
    now = datetime.now(timezone.utc)
    clock = {"t": now - timedelta(days=200)}
    audit = AuditLog(settings.audit_db_url, archive_dir=settings.archive_dir,
                     clock=lambda: clock["t"])
    rng = random.Random(4)
    for days in (200, 150, 120, 10):
        clock["t"] = now - timedelta(days=days)
        audit.record(make_answer(rng), session_id="s")
    result = audit.prune(now=now)
    assert result.archive_files and audit.verify().ok
    manifest = json.loads((settings.archive_dir / "MANIFEST.json").read_text())
    assert manifest["archives"][0]["n_records"] == 3
    result.archive_files[0].unlink()
    check = audit.verify()
    assert not check.ok and "listed in the manifest but missing" in check.message
    audit.close()


def test_a_forged_prune_anchor_fails_even_with_the_expected_head(log, settings):
    """Deleting the oldest records and inserting an anchor row (the real hash of the last
    deleted record, nothing rehashed) used to verify as "starts after record #3"."""
    head = log.verify().head_hash
    rows = list(log.iter_rows())
    engine = sa.create_engine(settings.audit_db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM audit_records WHERE seq <= 3"))
        conn.execute(sa.text(
            "INSERT INTO audit_anchors (through_seq, anchor_hash, created_at, n_archived, "
            "n_expired) VALUES (3, :h, '2026-01-01T00:00:00.000000Z', 0, 3)"),
            {"h": rows[2]["record_hash"]})
    engine.dispose()
    result = log.verify(expect_head=head)
    assert not result.ok
    assert "no prune record in the chain names that cut" in result.message
    assert cli_main(["--data-dir", str(settings.data_dir), "audit", "verify",
                     "--expect-head", head]) != 0


def test_an_unknown_field_in_an_exported_record_fails(log, tmp_path):
    out = tmp_path / "a.jsonl"
    log.export("jsonl", out)
    lines = _lines(out)
    rec = json.loads(lines[1])
    rec["grade"] = "A"  # not a field of the log: the hash does not cover it
    lines[1] = json.dumps(rec)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = log.verify(out)
    assert not result.ok and "field the audit log never writes ('grade')" in result.message
    assert result.first_bad_record_id == rec["record_id"]


def test_an_anchor_of_an_older_version_is_attested_when_the_log_is_upgraded(settings):
    """The migration path: a log pruned before prunes were chained keeps verifying."""
    from bookreader.core.audit.schema import migrate

    engine = sa.create_engine(settings.audit_db_url)
    with engine.begin() as conn:
        migrate(conn, upto="0006_write_ahead")
    engine.dispose()
    old = AuditLog.from_settings(settings)  # migrates 0007 on an empty log: nothing to attest
    rng = random.Random(8)
    for _ in range(4):
        old.record(make_answer(rng), session_id="s")
    rows = list(old.iter_rows())
    old.close()
    engine = sa.create_engine(settings.audit_db_url)
    with engine.begin() as conn:  # what an older version's prune of 2 expired records left
        conn.execute(sa.text("DELETE FROM audit_records WHERE seq <= 2"))
        conn.execute(sa.text(
            "INSERT INTO audit_anchors (through_seq, anchor_hash, created_at, n_archived, "
            "n_expired) VALUES (2, :h, '2026-01-01T00:00:00.000000Z', 0, 2)"),
            {"h": rows[1]["record_hash"]})
        conn.execute(sa.text("DELETE FROM schema_version WHERE name = '0007_prune_records'"))
        conn.execute(sa.text("ALTER TABLE audit_records DROP COLUMN prune"))
    engine.dispose()
    upgraded = AuditLog.from_settings(settings)
    try:
        result = upgraded.verify()
        assert result.ok, result.message
        assert "attested by record #5 when the log was upgraded" in result.message
        assert upgraded.count() == 3  # records 3, 4 and the attestation
    finally:
        upgraded.close()
