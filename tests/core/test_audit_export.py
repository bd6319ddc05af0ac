"""Audit export: CSV a spreadsheet can open safely, JSONL/JSON that verify on their own."""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from audit_support import audit_url, pg_cluster  # noqa: F401 (fixtures)

from bookreader.core.audit import AuditLog
from bookreader.core.audit.export import neutralise
from audit_samples import make_answer
from bookreader.core.audit.schema import COLUMNS
from bookreader.core.types import Mode
from bookreader.errors import BookReaderError, InvalidInput

DANGEROUS = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-3*4", "@SUM(A1:A9)", "\tcmd", "\rcmd"]


class Clock:
    """Hands out times one hour apart from a fixed start."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(hours=1)
        return self.now


@pytest.fixture
def filled(audit_url, tmp_path):
    """A log of 12 answers over 12 hours on 1 March 2025, two books, every mode."""
    log = AuditLog(audit_url, archive_dir=tmp_path / "archive",
                   clock=Clock(datetime(2025, 3, 1, 0, tzinfo=timezone.utc)))
    rng = random.Random(3)
    modes = [Mode.BOOK, Mode.SELECTED, Mode.HIGHLIGHT]
    answers = [make_answer(rng, mode=modes[i % 3], passage_chars=120) for i in range(12)]
    answers[0] = replace(answers[0], question=DANGEROUS[0], text="Line one\nLine two, \"quoted\"\n")
    for i, bad in enumerate(DANGEROUS[1:], 1):
        answers[i] = replace(answers[i], question=bad, text=f"{bad}\r\nsecond line")
    for a in answers:
        log.record(a, session_id="s1")
    yield log, answers
    log.close()


def read_csv(path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 BOM for spreadsheet programs
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def test_csv_neutralises_formulas_and_keeps_multiline_cells(filled, tmp_path):
    log, answers = filled
    out = tmp_path / "audit.csv"
    assert log.export("csv", out) == 12
    got = read_csv(out)
    assert list(got[0]) == list(COLUMNS)
    assert len(got) == 12
    for row, answer in zip(got, answers):
        if answer.question in DANGEROUS:
            assert row["question"] == "'" + answer.question
        else:
            assert row["question"] == answer.question
    assert got[0]["answer_text"] == "Line one\nLine two, \"quoted\"\n"
    assert got[1]["answer_text"] == "'+1+2\r\nsecond line"
    # Nothing a spreadsheet would evaluate: no cell starts with a formula character.
    for row in got:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r"))
    # Numbers stay numbers; JSON fields are JSON text.
    assert float(got[3]["confidence"]) == pytest.approx(answers[3].confidence)
    assert json.loads(got[0]["prompt"])[1]["role"] == "user"
    # RFC 4180: records end with CRLF.
    assert out.read_bytes().split(b"\r\n")[0].decode("utf-8-sig").startswith("seq,record_id")


@pytest.mark.parametrize("text,expected", [
    ("=1+1", "'=1+1"), ("+x", "'+x"), ("-x", "'-x"), ("@x", "'@x"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("plain", "plain"), ("", ""), ("a=b", "a=b"),
])
def test_neutralise(text, expected):
    assert neutralise(text) == expected


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_export_keeps_every_field_and_verifies(filled, tmp_path, fmt):
    log, _answers = filled
    out = tmp_path / f"audit.{fmt}"
    assert log.export(fmt, out) == 12
    result = log.verify(out)
    assert result.ok and result.n_records == 12 and result.gaps == 0
    assert result.head_hash == log.verify().head_hash
    if fmt == "jsonl":
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    else:
        data = json.loads(out.read_text(encoding="utf-8"))
        assert data["export"]["format"] == "bookreader-audit" and data["n_records"] == 12
        records = data["records"]
    assert list(records[0]) == list(COLUMNS)
    assert records == [{k: v for k, v in r.items()} for r in log.iter_rows()]


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_tampering_one_field_in_an_export_is_detected(filled, tmp_path, fmt):
    log, _answers = filled
    out = tmp_path / f"audit.{fmt}"
    log.export(fmt, out)
    if fmt == "jsonl":
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    else:
        records = json.loads(out.read_text(encoding="utf-8"))["records"]
    victim = records[5]
    victim["confidence"] = 0.999
    text = (
        "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
        if fmt == "jsonl" else json.dumps({"records": records})
    )
    out.write_text(text, encoding="utf-8")
    result = log.verify(out)
    assert not result.ok
    assert result.first_bad_record_id == victim["record_id"] and result.n_records == 5


def test_removing_a_line_from_an_export_is_reported_as_a_gap(filled, tmp_path):
    log, _ = filled
    out = tmp_path / "audit.jsonl"
    log.export("jsonl", out)
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text("\n".join(lines[:4] + lines[5:]) + "\n", encoding="utf-8")
    result = log.verify(out)
    assert result.gaps == 1 and "gaps" in result.message


def test_filters_select_by_date_book_and_mode(filled, tmp_path):
    log, answers = filled
    stamps = [r["created_at"] for r in log.iter_rows()]
    assert stamps[0].startswith("2025-03-01T01:00")

    def count(**filters):
        return log.export("jsonl", tmp_path / "f.jsonl", **filters)

    assert count(since="2025-03-01T06:00:00Z") == 7
    assert count(until="2025-03-01T05:00:00+00:00") == 5
    assert count(until="2025-03-01") == 12  # a bare date includes the whole day
    assert count(since="2025-03-02") == 0
    assert count(mode="selected") == 4
    assert count(mode=Mode.HIGHLIGHT) == 4
    book = answers[0].book_id
    assert count(book=book) == sum(a.book_id == book for a in answers)
    title_word = answers[0].book_title.split()[1].lower()
    assert count(book=title_word) == sum(a.book_title == answers[0].book_title for a in answers)
    # A filtered export still verifies: each record's hash holds, gaps are reported.
    count(mode="book")
    result = log.verify(tmp_path / "f.jsonl")
    assert result.ok and result.n_records == 4 and result.gaps == 3


def test_bad_inputs_say_what_to_do(filled, tmp_path):
    log, _ = filled
    with pytest.raises(InvalidInput, match="csv, jsonl, json"):
        log.export("xlsx", tmp_path / "x.xlsx")
    with pytest.raises(InvalidInput, match="YYYY-MM-DD"):
        log.export("csv", tmp_path / "x.csv", since="last tuesday")
    log.export("csv", tmp_path / "x.csv")
    with pytest.raises(BookReaderError, match="--format jsonl"):
        log.verify(tmp_path / "x.csv")
    (tmp_path / "junk.jsonl").write_text("not json\n")
    with pytest.raises(BookReaderError, match="not a readable"):
        log.verify(tmp_path / "junk.jsonl")


def test_export_to_stdout(filled, capfdbinary):
    log, _ = filled
    assert log.export("jsonl", None, mode="book") == 4
    out = capfdbinary.readouterr().out
    lines = out.decode("utf-8").splitlines()
    assert len(lines) == 4 and all(json.loads(line)["mode"] == "book" for line in lines)


def test_csv_parses_back_with_the_csv_module_in_memory(filled, tmp_path):
    """The whole file, read as one string, splits into exactly 13 rows (header + 12)."""
    log, answers = filled
    out = tmp_path / "a.csv"
    log.export("csv", out)
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8-sig"), newline="")))
    assert len(rows) == 13
    assert rows[1][COLUMNS.index("answer_text")] == answers[0].text


def test_a_pretty_printed_json_export_still_verifies(filled, tmp_path):
    """Someone opened the export in an editor and saved it indented: it still verifies."""
    log, _ = filled
    out = tmp_path / "audit.json"
    log.export("json", out)
    data = json.loads(out.read_text(encoding="utf-8"))
    out.write_text(json.dumps(data, indent=2, ensure_ascii=True), encoding="utf-8")
    result = log.verify(out)
    assert result.ok and result.n_records == 12
