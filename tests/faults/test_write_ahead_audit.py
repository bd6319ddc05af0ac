"""Every answer a student saw is in the audit log, even when the program is killed while
the answer streams: the question is recorded (chained) before the first token, the shown
text is journaled every second and at sentence ends, and the next start completes the
record as ``interrupted`` with that text.  The chain verifies throughout."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bookreader.config import Settings
from bookreader.core.audit import AuditLog
from bookreader.core.types import Mode
from bookreader.library import Library

REPO = Path(__file__).resolve().parents[2]
SELECTION = (
    "Photosynthesis converts light energy into chemical energy. Plants store this energy "
    "in glucose molecules. Chlorophyll in the chloroplasts absorbs red and blue light, and "
    "oxygen is released as a by-product of splitting water."
)

# The real CLI path (Library.ask with the bundled model), its tokens shown slowly (as a
# busy machine would) so that the parent can kill it while the answer is on screen.
ASKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bookreader.config import Settings
    from bookreader.library import Library

    settings = Settings(data_dir=Path(sys.argv[1])).updated(generation_budget_bundled_s=120)
    lib = Library(settings)

    def show(text):
        sys.stdout.write(text)
        sys.stdout.flush()
        time.sleep(0.25)

    lib.ask("What do plants do with light energy, and what is released?", mode="selected",
            selection=sys.argv[2], on_token=show)
    sys.stdout.write("\\n<<finished>>")
    sys.stdout.flush()
    """
)


def test_sigkill_while_streaming_leaves_an_interrupted_record(tmp_path):
    data = tmp_path / "data"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.Popen([sys.executable, "-c", ASKER, str(data), SELECTION],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    seen = b""
    first = None
    try:
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 300)
            assert ready, "no answer streamed within 300 s"
            block = os.read(proc.stdout.fileno(), 4096)
            assert block, proc.stderr.read().decode(errors="replace")[-3000:]
            seen += block
            first = first or time.monotonic()
            assert b"<<finished>>" not in seen, "the answer ended before it could be killed"
            if len(seen) >= 15 and time.monotonic() - first >= 1.5:
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    seen += proc.stdout.read()
    proc.stdout.close()
    proc.stderr.close()
    shown = seen.decode("utf-8", errors="replace")

    settings = Settings(data_dir=data)
    with AuditLog(settings.audit_db_url) as log:  # opening it completes the pending record
        rows = list(log.iter_rows())
        assert [r["status"] for r in rows] == ["pending", "interrupted"]
        pending, interrupted = rows
        assert interrupted["completes"] == pending["record_id"]
        assert pending["question"].startswith("What do plants do")
        assert pending["selection_sha256"] and pending["prompt"]
        text = interrupted["answer_text"]
        assert text and shown.startswith(text), (text, shown)
        assert "characters shown by then are recorded" in interrupted["error_message"]
        result = log.verify()
        assert result.ok, result.message
        assert log.recover_interrupted() == 0  # done once, never twice
        # The chat history shows the interrupted answer, not the pending record.
        assert [a.text for a in log.history("")] in ([], [text])


def test_a_completed_answer_is_a_pending_and_a_completion_record(settings, embedder):
    settings = settings.updated(llm_backend="extractive")
    shown: list[str] = []
    with Library(settings, embedder=embedder) as lib:
        answer = lib.ask("What does chlorophyll absorb?", mode=Mode.SELECTED, selection=SELECTION,
                         on_token=shown.append)
        assert "".join(shown).strip()
        rows = list(lib.audit.iter_rows())
        assert [r["status"] for r in rows] == ["pending", "complete"]
        assert rows[1]["completes"] == rows[0]["record_id"]
        assert rows[1]["answer_text"] == answer.text
        assert rows[0]["answer_text"] is None
        assert lib.audit.verify().ok
        with lib.audit._read() as conn:  # the stream journal is gone once completed
            assert conn.exec_driver_sql("SELECT count(*) FROM audit_stream").scalar() == 0


def test_an_answer_nobody_sees_streaming_is_one_record_written_before_it_returns(
        settings, embedder):
    """A server's JSON reply shows nothing until the answer returns: no write-ahead
    record, no journal; one complete record, committed before ``ask`` returns."""
    settings = settings.updated(llm_backend="extractive")
    with Library(settings, embedder=embedder) as lib:
        answer = lib.ask("What does chlorophyll absorb?", mode=Mode.SELECTED, selection=SELECTION)
        rows = list(lib.audit.iter_rows())
        # a whole record, as written before write-ahead records existed (no status)
        assert [r["status"] for r in rows] == [None]
        assert rows[0]["answer_text"] == answer.text and rows[0]["completes"] is None
        assert lib.audit.verify().ok
        with lib.audit._read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM audit_stream").scalar() == 0


def test_an_answer_nobody_sees_stopped_after_the_model_started_is_recorded_as_stopped(
        settings, embedder):
    """A JSON request stopped once the model had started (the client went away) leaves
    one record saying it was stopped, and the chain still verifies."""
    from bookreader.errors import Cancelled

    settings = settings.updated(llm_backend="extractive")
    with Library(settings, embedder=embedder) as lib:
        started: list[bool] = []
        ask = lib.answerer.ask

        def observed(*args, on_start, **kwargs):
            def on_start_seen(provisional):
                started.append(True)
                on_start(provisional)
            return ask(*args, on_start=on_start_seen, **kwargs)

        lib.answerer.ask = observed
        with pytest.raises(Cancelled):
            lib.ask("What does chlorophyll absorb?", mode=Mode.SELECTED, selection=SELECTION,
                    cancel=lambda: bool(started))
        assert started
        rows = list(lib.audit.iter_rows())
        assert len(rows) == 1 and rows[0]["status"] is None
        assert rows[0]["question"] == "What does chlorophyll absorb?"
        assert "stopped by the user" in rows[0]["answer_text"]
        assert lib.audit.verify().ok


def test_a_live_writers_pending_record_is_left_alone(settings, embedder):
    from bookreader.core.audit.journal import begin
    from audit_samples import make_answer

    import random

    with AuditLog(settings.audit_db_url) as log:
        journal = begin(log, make_answer(random.Random(3)), session_id="live")
        journal.add("Plants absorb light. ")
        with AuditLog(settings.audit_db_url) as other:  # another window opening the log
            assert other.recover_interrupted() == 0
        rows = list(log.iter_rows())
        assert [r["status"] for r in rows] == ["pending"]
        with log._read() as conn:
            assert conn.exec_driver_sql("SELECT text FROM audit_stream").scalar() == "Plants absorb light. "
