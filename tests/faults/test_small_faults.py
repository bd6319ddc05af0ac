"""The smaller faults of issue 12, each with its fix: bad bytes on the command line,
exports over special files, rejected inputs stored capped, CSV neutralisation after
leading noise, key-like strings in validation details, SDK debug logging, MuPDF messages
with bad bytes."""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import random

import pytest

from bookreader.cli import main as cli_main
from bookreader.cli import setup_logging
from bookreader.config import Settings
from bookreader.core.audit import AuditLog
from bookreader.core.audit.export import neutralise
from bookreader.core.audit.records import REDACTED, answer_to_row
from audit_samples import make_answer
from bookreader.core.types import Mode, Validation
from bookreader.errors import InvalidInput
from bookreader.library import REJECTED_KEEP_CHARS, Library


def _cli(settings, *args):
    return cli_main(["--data-dir", str(settings.data_dir), *args])


def test_invalid_utf8_on_the_command_line_is_a_clear_audited_error(settings, capsys):
    bad = "How many gulls \udcff\udcfe?"  # what Python makes of bytes 0xff 0xfe in argv
    code = _cli(settings, "ask", bad, "--mode", "selected", "--selection", "Gulls.",
                "--backend", "extractive")
    err = capsys.readouterr().err
    assert code != 0 and "not valid UTF-8" in err and "unexpected error" not in err
    with AuditLog(settings.audit_db_url) as log:
        [row] = list(log.iter_rows())
    assert row["question"] == "How many gulls \ufffd\ufffd?" and "not valid UTF-8" in row["error_message"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_export_refuses_fifos_symlinks_and_devices(settings, tmp_path, capsys):
    with AuditLog(settings.audit_db_url) as log:
        log.record(make_answer(random.Random(1)), session_id="s")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    target = tmp_path / "victim.txt"
    target.write_text("keep me", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    for out, what in ((fifo, "a device, pipe or socket"), (link, "a symbolic link"),
                      ("/dev/null", "a device, pipe or socket")):
        assert _cli(settings, "audit", "export", "--format", "jsonl", "--out", str(out)) != 0
        assert what in capsys.readouterr().err
    assert fifo.is_fifo() and link.is_symlink() and target.read_text() == "keep me"
    assert _cli(settings, "audit", "report", "--out", str(link)) != 0
    assert target.read_text() == "keep me"


def test_rejected_huge_inputs_are_stored_capped(settings, embedder):
    with Library(settings.updated(llm_backend="extractive"), embedder=embedder) as lib:
        with pytest.raises(InvalidInput):
            lib.ask("why? " * 200_000, mode=Mode.SELECTED, selection="Some text.")
        with pytest.raises(InvalidInput):
            lib.ask("", mode=Mode.SELECTED, selection="x" * 10_000_000)
        rows = list(lib.audit.iter_rows())
    assert len(rows) == 2
    q, sel = rows[0]["question"], rows[1]["selection"] or rows[1]["selection_excerpt"]
    for text, n in ((q, 1_000_000), (sel, 10_000_000)):
        assert len(text) < REJECTED_KEEP_CHARS + 200
        assert f"{n:,} characters in all, SHA-256 " in text


@pytest.mark.parametrize("cell", [" =1+1", "\n=cmd|' /C calc'!A0", "\u200b=HYPERLINK(\"x\")",
                                  "\ufeff+1", "\uff1dSUM(A1)", "\u3000\uff0b1", "\t\u200d@x"])
def test_csv_neutralises_formulas_after_leading_noise(cell):
    assert neutralise(cell) == "'" + cell


def test_plain_cells_are_left_alone():
    assert neutralise("Photosynthesis = light") == "Photosynthesis = light"
    assert neutralise(" a - b") == " a - b"


def test_key_like_strings_are_redacted_in_validation_details():
    answer = make_answer(random.Random(2))
    v = Validation(0.5, 0.5, False, 1.0, unsupported_sentences=("key x9F8a7B6c5D4e3F2a1B0c9D8e7F6a5B4c3",),
                   missing_terms=("akiaiosfodnn7example", "x9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3", "gulls"))
    row = answer_to_row(dataclasses.replace(answer, validation=v), session_id="s", excerpt_only=False)
    details = row["validation_details"]
    assert details["missing_terms"] == [REDACTED, REDACTED, "gulls"]
    assert details["unsupported_sentences"] == [f"key {REDACTED}"]
    assert row["query_id"] == answer.query_id  # ids are kept


def test_sdk_debug_loggers_stay_at_info(data_dir):
    _path, handlers = setup_logging(Settings(data_dir=data_dir), verbose=True)
    try:
        assert logging.getLogger().level == logging.DEBUG
        for name in ("anthropic", "httpx", "httpcore"):
            assert logging.getLogger(name).getEffectiveLevel() == logging.INFO
            assert not logging.getLogger(name).isEnabledFor(logging.DEBUG)
    finally:
        for h in handlers:
            logging.getLogger().removeHandler(h)
            h.close()


def test_mupdf_message_with_bad_bytes_is_logged_with_replacement(capsys):
    from bookreader.core.pdf import mupdf_log, route_mupdf_messages

    route_mupdf_messages()
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8")  # strict, like a log file
    handler = logging.StreamHandler(stream)
    mupdf_log.addHandler(handler)
    old = mupdf_log.level
    mupdf_log.setLevel(logging.INFO)
    try:
        mupdf_log.info("MuPDF (%s): %s", "x.pdf", "bad font name \udcff\udcc3")
        handler.flush()
    finally:
        mupdf_log.removeHandler(handler)
        mupdf_log.setLevel(old)
    assert "bad font name \ufffd\ufffd" in raw.getvalue().decode("utf-8")
    assert "Logging error" not in capsys.readouterr().err
