"""``bookreader audit export|verify|report|prune`` on a real audit log in the data folder."""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from bookreader import cli_audit
from bookreader.config import Settings
from bookreader.core.audit import AuditLog
from audit_samples import make_answer


@pytest.fixture
def populated(settings):
    """Eight answers in the settings' audit log: four 200 days old, four from today."""
    when = [datetime.now(timezone.utc) - timedelta(days=200)]

    def clock():
        when[0] += timedelta(minutes=1)
        return when[0]

    log = AuditLog(settings.audit_db_url, archive_dir=settings.archive_dir, clock=clock)
    rng = random.Random(9)
    ids = [log.record(make_answer(rng, passage_chars=80), session_id="cli") for _ in range(4)]
    when[0] = datetime.now(timezone.utc) - timedelta(hours=1)
    ids += [log.record(make_answer(rng, passage_chars=80), session_id="cli") for _ in range(4)]
    log.close()
    return ids


def run(*argv: str) -> int:
    return cli_audit.main(list(argv))


def test_register_adds_the_audit_commands():
    parser = argparse.ArgumentParser(prog="bookreader")
    cli_audit.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "export", "--format", "csv", "--since", "2025-01-01",
                              "--book", "Bio", "--mode", "selected"])
    assert args.func is cli_audit.cmd_export and args.format == "csv"
    assert (args.since, args.book, args.mode) == ("2025-01-01", "Bio", "selected")
    args = parser.parse_args(["audit", "verify", "x.jsonl"])
    assert args.func is cli_audit.cmd_verify and str(args.file) == "x.jsonl"
    args = parser.parse_args(["audit", "prune", "--dry-run"])
    assert args.func is cli_audit.cmd_prune and args.dry_run
    with pytest.raises(SystemExit):
        parser.parse_args(["audit", "export", "--format", "xlsx"])


def test_handlers_accept_settings_passed_in(populated, settings, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    cli_audit.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "verify"])
    assert args.func(args, settings) == 0
    assert "OK, 8 records" in capsys.readouterr().out


def test_export_csv_jsonl_json(populated, tmp_path, capsys):
    out = tmp_path / "log.csv"
    assert run("audit", "export", "--format", "csv", "--out", str(out)) == 0
    assert "Exported 8 records" in capsys.readouterr().err
    with open(out, encoding="utf-8-sig", newline="") as fh:
        assert [r["record_id"] for r in csv.DictReader(fh)] == populated
    for fmt in ("jsonl", "json"):
        out = tmp_path / f"log.{fmt}"
        assert run("audit", "export", "--format", fmt, "--out", str(out)) == 0
        assert run("audit", "verify", str(out)) == 0
        assert "OK, 8 records" in capsys.readouterr().out


def test_export_filters_and_stdout(populated, capfd):
    since = (datetime.now(timezone.utc) - timedelta(days=1)).date().isoformat()
    assert run("audit", "export", "--format", "jsonl", "--since", since) == 0
    out, err = capfd.readouterr()
    assert [json.loads(line)["record_id"] for line in out.splitlines()] == populated[4:]
    assert "standard output" in err


def test_verify_exit_codes_name_the_first_bad_record(populated, settings, capsys):
    assert run("audit", "verify") == 0
    assert "Last record hash" in capsys.readouterr().out
    engine = sa.create_engine(settings.audit_db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE audit_records SET answer_text = 'edited' "
                             "WHERE record_id = :r"), {"r": populated[3]})
    engine.dispose()
    assert run("audit", "verify") == 1
    out = capsys.readouterr().out
    assert "TAMPERED" in out and f"First bad record: {populated[3]} (#4)" in out


def test_verify_of_a_bad_file_is_an_error_with_advice(tmp_path, capsys):
    assert run("audit", "verify", str(tmp_path / "missing.jsonl")) == 2
    assert "does not exist" in capsys.readouterr().err


def test_report(populated, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert run("audit", "report", "--out", str(out)) == 0
    assert "8</b><span>questions" in out.read_text(encoding="utf-8")
    assert str(out) in capsys.readouterr().out


def test_prune_dry_run_then_for_real(populated, settings, capsys):
    assert run("audit", "prune", "--dry-run") == 0
    assert "Dry run: Would archive 4 records" in capsys.readouterr().out
    assert AuditLog.from_settings(settings).count() == 8
    assert run("audit", "prune") == 0
    out = capsys.readouterr().out
    assert "Archived 4 records" in out and "archive:" in out
    assert list(settings.archive_dir.glob("*.jsonl.gz"))
    assert run("audit", "verify") == 0
    assert "Archive: 4 records" in capsys.readouterr().out


def test_real_process_exit_code(populated, settings, tmp_path):
    """The module runs as a program and its exit status is the verdict."""
    env = {**os.environ, "BOOKREADER_DATA_DIR": str(settings.data_dir)}
    ok = subprocess.run([sys.executable, "-m", "bookreader.cli_audit", "audit", "verify"],
                        env=env, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert Settings.load().data_dir == settings.data_dir
