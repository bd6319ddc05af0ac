"""Retention: prune archives to gzip JSONL, expires old records, keeps the chain checkable."""

from __future__ import annotations

import gzip
import json
import random
from datetime import datetime, timedelta, timezone

import pytest
from audit_support import audit_url, pg_cluster  # noqa: F401 (fixtures)

from bookreader.core.audit import AuditLog
from audit_samples import make_answer

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)


class Clock:
    def __init__(self, when: datetime) -> None:
        self.when = when

    def __call__(self) -> datetime:
        self.when += timedelta(seconds=1)
        return self.when


@pytest.fixture
def aged(audit_url, tmp_path):
    """5 records 400 days old, 6 records 200 days old, 4 records 10 days old."""
    clock = Clock(NOW - timedelta(days=400))
    log = AuditLog(audit_url, archive_dir=tmp_path / "archive", clock=clock)
    rng = random.Random(5)
    ids = []
    for age, n in ((400, 5), (200, 6), (10, 4)):
        clock.when = NOW - timedelta(days=age)
        ids.append([log.record(make_answer(rng, passage_chars=80), session_id="s")
                    for _ in range(n)])
    yield log, ids, clock
    log.close()


def read_gz(path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_dry_run_reports_and_changes_nothing(aged, tmp_path):
    log, ids, _ = aged
    before = list(log.iter_rows())
    result = log.prune(dry_run=True, now=NOW)
    assert result.dry_run and result.n_archived == 6 and result.n_expired == 5
    assert "would archive 6" in result.message.lower()
    assert list(log.iter_rows()) == before
    assert not (tmp_path / "archive").exists()


def test_prune_archives_expires_and_keeps_the_chain_verifiable(aged, tmp_path):
    log, (old, middle, recent), clock = aged
    result = log.prune(now=NOW)
    assert (result.n_archived, result.n_expired, result.n_expired_archived) == (6, 5, 0)
    (archive,) = result.archive_files
    assert archive.parent == tmp_path / "archive" and archive.name.endswith(".jsonl.gz")
    archived = read_gz(archive)
    assert [r["record_id"] for r in archived] == middle
    live = list(log.iter_rows())
    assert [r["record_id"] for r in live[:-1]] == recent
    assert result.anchor_hash == archived[-1]["record_hash"] and result.anchor_seq == 11
    # The prune is itself the newest record of the chain, naming the cut it made.
    assert live[-1]["status"] == "prune" and live[-1]["seq"] == 16
    assert live[-1]["prune"]["through_seq"] == 11 and live[-1]["prune"]["n_expired"] == 5
    assert live[-1]["prune"]["anchor_hash"] == result.anchor_hash

    # The live log verifies from the anchor, the archive links into it, the archive alone too.
    check = log.verify()
    assert check.ok and check.n_records == 5 and "Archive: 6 records" in check.message
    assert "cut by the prune recorded as #16" in check.message
    assert log.verify(archive).ok

    # New records chain on; pruning again changes nothing.
    clock.when = NOW
    log.record(make_answer(random.Random(1), passage_chars=80), session_id="s")
    again = log.prune(now=NOW)
    assert (again.n_archived, again.n_expired, again.n_expired_archived) == (0, 0, 0)
    assert log.verify().ok and log.count() == 6


def test_archived_records_expire_later_and_the_rest_still_verifies(aged, tmp_path):
    log, (old, middle, recent), _ = aged
    log.prune(now=NOW)
    later = NOW + timedelta(days=200)  # the 200-day-old records are now 400 days old
    result = log.prune(now=later)
    assert result.n_expired_archived == 6 and result.n_archived == 5  # 4 + the prune record
    (archive,) = list((tmp_path / "archive").glob("*.jsonl.gz"))
    archived = read_gz(archive)
    # The first prune's record was archived with the records it followed.
    assert [r["record_id"] for r in archived[:-1]] == recent
    assert archived[-1]["status"] == "prune"
    assert [r["status"] for r in log.iter_rows()] == ["prune"]  # the second prune's record
    check = log.verify()
    assert check.ok and "Archive: 5 records" in check.message


def test_tampered_archive_is_detected(aged, tmp_path):
    log, (old, middle, recent), _ = aged
    (archive,) = log.prune(now=NOW).archive_files
    records = read_gz(archive)
    records[2]["answer_text"] = "rewritten"
    with gzip.open(archive, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    check = log.verify()
    assert not check.ok and check.first_bad_record_id == middle[2]
    assert log.verify(archive).first_bad_record_id == middle[2]


def test_a_missing_archive_is_detected_by_the_manifest(aged, tmp_path):
    log, _, _ = aged
    (archive,) = log.prune(now=NOW).archive_files
    assert log.verify().ok
    archive.unlink()
    check = log.verify()
    assert not check.ok and "is listed in the manifest but missing" in check.message
    assert archive.name in check.message


def test_tampering_the_first_live_record_after_a_cut_is_detected(aged, audit_url):
    import sqlalchemy as sa

    log, (_, _, recent), _ = aged
    log.prune(now=NOW)
    engine = sa.create_engine(audit_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE audit_records SET question = 'x' WHERE record_id = :r"),
                     {"r": recent[0]})
    engine.dispose()
    check = log.verify()
    assert not check.ok and check.first_bad_record_id == recent[0]


def test_prune_without_an_archive_folder_refuses_to_lose_records(audit_url):
    clock = Clock(NOW - timedelta(days=100))
    log = AuditLog(audit_url, clock=clock)
    try:
        log.record(make_answer(random.Random(2), passage_chars=50), session_id="s")
        from bookreader.errors import StoreError

        with pytest.raises(StoreError, match="archive"):
            log.prune(now=NOW)
        assert log.count() == 1
    finally:
        log.close()
