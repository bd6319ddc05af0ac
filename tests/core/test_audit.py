"""The audit log's store: fields, chain, tamper evidence, secrets, migrations, concurrency.

Each test runs against SQLite and, when PostgreSQL can be started, against PostgreSQL too.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from dataclasses import replace

import pytest
import sqlalchemy as sa
from audit_support import audit_url, pg_cluster  # noqa: F401 (fixtures)

from bookreader.core.audit import GENESIS_HASH, AuditLog, scrub
from bookreader.core.audit.records import answer_to_row, seal, utc_timestamp
from bookreader.core.audit.schema import COLUMNS, MIGRATIONS, applied_migrations, migrate
from bookreader.core.types import (
    Answer,
    Chunk,
    Citation,
    Message,
    Mode,
    Passage,
    Retrieval,
    Validation,
)
from bookreader.errors import StoreError

SECRET = "sk-ant-api03-" + "Zx9" * 20
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0cGF5bG9hZA.c2lnbmF0dXJlc2ln"


def full_answer(**changes) -> Answer:
    """An answer with every field set to a distinctive value."""
    chunk = Chunk("c" * 32, "book-1", 7, "Energy is conserved in an isolated system.", 11, 12,
                  "12", "13", "2 Energy", "2.1 The First Law", 0, 40)
    retrieval = Retrieval("what is conserved", (Passage(chunk, 0.875, 0.9, 0.625),), 0.8125,
                          23.5)
    answer = Answer(
        query_id="q-" + uuid.uuid4().hex,
        answer_id="a-" + uuid.uuid4().hex,
        question="What is conserved?\nIn an isolated system",
        mode=Mode.HIGHLIGHT,
        text="Energy is conserved.\n\nIt cannot be created or destroyed.",
        fallback=False,
        in_selected_text=True,
        confidence=0.8125,
        confidence_level="high",
        citations=(Citation("2.1 The First Law", 11, "12", "Energy is conserved", True, False,
                            ((72.0, 100.5, 300.25, 112.0),)),),
        validation=Validation(0.75, 0.625, True, 12.5, ("One odd sentence.",), ("42 J",)),
        truncation_warning="Context was cut to fit.",
        backend="bundled",
        model="SmolLM2-135M-Instruct.Q4_1.gguf",
        latency_ms=1500.25,
        first_token_ms=210.5,
        generation_ms=1200.75,
        retrieval=retrieval,
        prompt=(Message("system", "Answer from the context."),
                Message("user", "Context: ... Question: What is conserved?")),
        raw_output="Energy is conserved. [Source: 2.1 (Page 12) - \"Energy\"]",
        replaced_by_validator=False,
        error="",
        book_id="book-1",
        book_title="Thermodynamics <Intro>",
        selection="Energy is conserved in an isolated system. " * 20,
        stage_ms={"retrieval": 23.5, "generation": 1200.75},
        chapter="2 Energy",
        selection_page=11,
    )
    return replace(answer, **changes)


def rows(url: str) -> list[dict]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [dict(r) for r in conn.execute(
                sa.text("SELECT * FROM audit_records ORDER BY seq")).mappings()]
    finally:
        engine.dispose()


def execute(url: str, sql: str, **params) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(sql), params)
    finally:
        engine.dispose()


@pytest.fixture
def audit(audit_url, tmp_path):
    log = AuditLog(audit_url, archive_dir=tmp_path / "archive")
    yield log
    log.close()


def test_every_field_round_trips(audit, audit_url):
    answer = full_answer()
    record_id = audit.record(answer, session_id="session-7")
    assert uuid.UUID(record_id).version == 4

    (row,) = list(audit.iter_rows())
    assert set(row) == set(COLUMNS)
    expected = {
        "record_id": record_id, "query_id": answer.query_id, "answer_id": answer.answer_id,
        "session_id": "session-7", "book_id": "book-1", "book_title": "Thermodynamics <Intro>",
        "mode": "highlight", "question": answer.question,
        "selection_excerpt": answer.selection[:500],
        "selection_sha256": hashlib.sha256(answer.selection.encode()).hexdigest(),
        "selection": answer.selection, "retrieval_query": "what is conserved", "n_chunks": 1,
        "retrieval_ms": 23.5, "first_token_ms": 210.5, "generation_ms": 1200.75,
        "validation_similarity": 0.75, "validation_overlap": 0.625, "validation_passed": True,
        "backend": "bundled", "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "raw_output": answer.raw_output, "answer_text": answer.text, "confidence": 0.8125,
        "confidence_level": "high", "success": True, "error_message": None,
        "fallback": False, "in_selected_text": True,
        "truncation_warning": "Context was cut to fit.", "replaced_by_validator": False,
        "latency_ms": 1500.25, "retrieval_confidence": 0.8125, "chapter": "2 Energy",
        "selection_page": 11, "seq": 1, "prev_hash": GENESIS_HASH,
        "stage_ms": {"retrieval": 23.5, "generation": 1200.75},
        "validation_details": {"ms": 12.5, "unsupported_sentences": ["One odd sentence."],
                               "missing_terms": ["42 J"]},
        "prompt": [{"role": "system", "content": "Answer from the context."},
                   {"role": "user", "content": "Context: ... Question: What is conserved?"}],
        "chunks": [{"chunk_id": "c" * 32, "page_start": 11, "page_end": 12,
                    "page_label": "12-13", "chapter": "2 Energy",
                    "section": "2.1 The First Law", "score": 0.875, "dense_score": 0.9,
                    "bm25_score": 0.625}],
        "citations": [{"section": "2.1 The First Law", "page": 11, "page_label": "12",
                       "excerpt": "Energy is conserved", "verified": True, "repaired": False,
                       "rects": [[72.0, 100.5, 300.25, 112.0]]}],
    }
    for name, value in expected.items():
        assert row[name] == value, name
    assert len(row["record_hash"]) == 64 and row["created_at"].endswith("Z")

    (again,) = audit.history("book-1")
    assert again.created_at == row["created_at"]
    assert again.retrieval is None  # chunk texts are not kept, only ids/pages/scores
    assert replace(again, created_at="", retrieval=answer.retrieval) == answer


def test_record_is_committed_before_it_returns(audit, audit_url, tmp_path):
    record_id = audit.record(full_answer(), session_id="s")
    other = AuditLog(audit_url)  # a second connection sees it without any close or flush
    try:
        assert [r["record_id"] for r in other.iter_rows()] == [record_id]
    finally:
        other.close()


def test_failed_and_timed_out_answers_are_recorded_with_their_error(audit):
    timeout = full_answer(error="Generation took longer than 5 s; try a shorter question.",
                          text="", validation=None, citations=())
    failed = full_answer(error="The Claude API rejected the key.", mode=Mode.BOOK,
                         selection="", selection_page=None, retrieval=None)
    audit.record(timeout, session_id="s")
    audit.record(failed, session_id="s")
    got = list(audit.iter_rows())
    assert [r["success"] for r in got] == [False, False]
    assert got[0]["error_message"].startswith("Generation took longer")
    assert got[1]["error_message"] == "The Claude API rejected the key."
    assert got[1]["n_chunks"] == 0 and got[1]["selection"] is None
    assert [a.error for a in audit.history("book-1")] == [timeout.error, failed.error]
    assert audit.verify().ok


def test_secrets_never_reach_the_log(audit, audit_url, tmp_path):
    answer = full_answer(
        question=f"My key is {SECRET}, why does it fail?",
        selection=f"Authorization: {BEARER}\nexport ANTHROPIC_API_KEY={SECRET}",
        prompt=(Message("user", f"x-api-key: {SECRET}"),),
        raw_output=f"I saw {SECRET}",
        text=f"Do not share {SECRET}.",
        error=f"401 for key {SECRET[:20]}...",
        citations=(Citation("s", 1, "2", f"token {SECRET}", False),),
    )
    audit.record(answer, session_id="s")
    (row,) = rows(audit_url)
    dumped = json.dumps({k: v for k, v in row.items()}, default=str)
    assert "Zx9Zx9" not in dumped and "c2VjcmV0" not in dumped
    assert "[REDACTED]" in row["question"] and "[REDACTED]" in row["raw_output"]
    if audit_url.startswith("sqlite"):  # nothing in the file (or its WAL) either
        db = audit_url.removeprefix("sqlite:///")
        for path in (db, db + "-wal"):
            try:
                assert b"Zx9Zx9" not in open(path, "rb").read()
            except FileNotFoundError:
                pass
    assert audit.verify().ok


@pytest.mark.parametrize("text", [
    SECRET, BEARER, "api_key=abcdef123456", "ghp_" + "a" * 36, "AKIAABCDEFGHIJKLMNOP",
    "hf_" + "b" * 34, "sk-proj-" + "c" * 40,
])
def test_scrub_patterns(text):
    out = scrub(f"before {text} after")
    assert text not in out and out.startswith("before ") and out.endswith(" after")


def test_scrub_leaves_ordinary_text_alone():
    text = "The task-based approach (sk-1) uses a bearer bond; API keys are discussed on p. 4."
    assert scrub(text) == text


def test_excerpt_only_keeps_500_characters_and_the_hash(audit_url):
    log = AuditLog(audit_url, excerpt_only=True)
    try:
        answer = full_answer()
        log.record(answer, session_id="s")
        (row,) = list(log.iter_rows())
        assert row["selection"] is None
        assert row["selection_excerpt"] == answer.selection[:500]
        assert row["selection_sha256"] == hashlib.sha256(answer.selection.encode()).hexdigest()
        assert log.verify().ok
    finally:
        log.close()


def test_history_is_oldest_first_per_book_and_limited(audit):
    ids = [audit.record(full_answer(question=f"q{i}"), session_id="s") for i in range(5)]
    audit.record(full_answer(book_id="other", question="elsewhere"), session_id="s")
    assert len(ids) == 5
    assert [a.question for a in audit.history("book-1")] == [f"q{i}" for i in range(5)]
    assert [a.question for a in audit.history("book-1", limit=2)] == ["q3", "q4"]
    assert [a.question for a in audit.history("other")] == ["elsewhere"]
    assert audit.history("missing") == []


def test_chain_links_every_record_to_the_one_before(audit, audit_url):
    for i in range(4):
        audit.record(full_answer(question=f"q{i}"), session_id="s")
    got = rows(audit_url)
    assert [r["seq"] for r in got] == [1, 2, 3, 4]
    assert got[0]["prev_hash"] == GENESIS_HASH
    for before, after in zip(got, got[1:]):
        assert after["prev_hash"] == before["record_hash"]
    result = audit.verify()
    assert result.ok and result.n_records == 4 and result.head_hash == got[-1]["record_hash"]


@pytest.mark.parametrize("column,value", [
    ("answer_text", "A different answer."),
    ("confidence", 0.99),
    ("success", False),
    ("citations", "[]"),
])
def test_tampering_one_field_of_one_row_is_detected(audit, audit_url, column, value):
    ids = [audit.record(full_answer(question=f"q{i}"), session_id="s") for i in range(4)]
    execute(audit_url, f"UPDATE audit_records SET {column} = :v WHERE record_id = :r",
            v=value, r=ids[2])
    result = audit.verify()
    assert not result.ok
    assert result.first_bad_record_id == ids[2] and result.first_bad_seq == 3
    assert ids[2] in result.message and "changed" in result.message
    assert result.n_records == 2


def test_rewriting_a_hash_breaks_the_next_link(audit, audit_url):
    ids = [audit.record(full_answer(question=f"q{i}"), session_id="s") for i in range(3)]
    execute(audit_url, "UPDATE audit_records SET record_hash = :h WHERE record_id = :r",
            h="f" * 64, r=ids[1])
    result = audit.verify()
    assert not result.ok and result.first_bad_record_id == ids[1]


def test_deleting_a_row_is_detected(audit, audit_url):
    ids = [audit.record(full_answer(question=f"q{i}"), session_id="s") for i in range(4)]
    execute(audit_url, "DELETE FROM audit_records WHERE record_id = :r", r=ids[1])
    result = audit.verify()
    assert not result.ok and result.first_bad_record_id == ids[2]
    assert "missing" in result.message


WRITER = r"""
import sys; sys.path.insert(0, __import__("os").environ["BOOKREADER_TEST_TOOLS"])
import sys
from bookreader.core.audit import AuditLog
from audit_samples import make_answer
import random
log = AuditLog(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
for i in range(int(sys.argv[3])):
    log.record(make_answer(rng, passage_chars=100), session_id="proc" + sys.argv[2])
log.close()
"""


def test_concurrent_processes_do_not_fork_the_chain(audit, audit_url):
    audit.record(full_answer(), session_id="s")  # schema exists before the race starts
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, audit_url, str(k), "15"],
                              stderr=subprocess.PIPE, text=True) for k in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    got = rows(audit_url)
    assert [r["seq"] for r in got] == list(range(1, 47))
    assert audit.verify().ok


def test_threads_share_one_log(audit):
    import threading

    def work(k):
        for i in range(10):
            audit.record(full_answer(question=f"t{k}-{i}"), session_id=f"t{k}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert audit.count() == 40 and audit.verify().ok


def test_migrations_upgrade_an_old_schema_database(audit_url):
    engine = sa.create_engine(audit_url)
    with engine.begin() as conn:
        assert migrate(conn, upto="0001_create_audit_records") == ["0001_create_audit_records"]
    old_cols = {c["name"] for c in sa.inspect(engine).get_columns("audit_records")}
    assert "fallback" not in old_cols and "chapter" not in old_cols
    # A record as version 0001 wrote it: only the columns that existed then.
    row = {k: v for k, v in answer_to_row(full_answer(), session_id="old",
                                          excerpt_only=False).items() if k in old_cols}
    sealed = seal(row, seq=1, prev_hash=GENESIS_HASH, created_at=utc_timestamp())
    old_table = sa.Table("audit_records", sa.MetaData(), autoload_with=engine)
    with engine.begin() as conn:
        conn.execute(old_table.insert(), [{k: v for k, v in sealed.items() if k in old_cols}])
    engine.dispose()

    log = AuditLog(audit_url)
    try:
        engine = sa.create_engine(audit_url)
        with engine.connect() as conn:
            assert applied_migrations(conn) == [name for name, _ in MIGRATIONS]
        engine.dispose()
        assert log.verify().ok  # the old record still hashes the same
        log.record(full_answer(question="new"), session_id="new")
        history = log.history("book-1")
        assert [a.question for a in history] == [full_answer().question, "new"]
        assert history[0].fallback is False and history[1].chapter == "2 Energy"
        result = log.verify()
        assert result.ok and result.n_records == 2
    finally:
        log.close()
    # Opening again applies nothing.
    again = AuditLog(audit_url)
    again.close()


def test_opening_something_that_is_not_a_database_names_the_file(tmp_path):
    bad = tmp_path / "audit.sqlite3"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError) as info:
        AuditLog(f"sqlite:///{bad}")
    assert str(bad) in info.value.user_message


def test_sqlite_runs_in_wal_mode(tmp_path):
    log = AuditLog(f"sqlite:///{tmp_path / 'a.db'}")
    try:
        with log._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    finally:
        log.close()


def test_migrations_build_exactly_the_model(audit, audit_url):
    """The named migrations and the SQLAlchemy model describe the same table and indexes."""
    engine = sa.create_engine(audit_url)
    try:
        insp = sa.inspect(engine)
        assert {c["name"] for c in insp.get_columns("audit_records")} == set(COLUMNS)
        indexed = {tuple(i["column_names"]) for i in insp.get_indexes("audit_records")}
        indexed |= {tuple(u["column_names"]) for u in insp.get_unique_constraints("audit_records")}
        for col in ("query_id", "answer_id", "created_at", "record_id", "record_hash"):
            assert (col,) in indexed, col
        assert insp.get_pk_constraint("audit_records")["constrained_columns"] == ["seq"]
        assert insp.has_table("audit_anchors") and insp.has_table("schema_version")
    finally:
        engine.dispose()


@pytest.mark.parametrize("url,words", [
    ("not a url", "not valid"),
    ("nosuchdb://x/y", "driver"),
])
def test_bad_database_urls_say_what_to_do(url, words):
    with pytest.raises(StoreError, match=words):
        AuditLog(url)


def test_unreachable_server_is_a_store_error():
    from audit_support import free_port

    pytest.importorskip("psycopg")
    with pytest.raises(StoreError, match="Cannot open the audit log"):
        AuditLog(f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/nothing")


def test_a_file_in_the_way_of_the_log_folder_is_a_clear_error(tmp_path):
    """A regular file where the log's folder should be: a StoreError that names the folder
    and what to do, not a bare FileExistsError; the file in the way is left as it was."""
    blocker = tmp_path / "notes.txt"
    blocker.write_text("keep me", encoding="utf-8")
    with pytest.raises(StoreError) as err:
        AuditLog(f"sqlite:///{blocker / 'audit' / 'audit.sqlite3'}")
    message = str(err.value)
    assert str(blocker / "audit") in message
    assert "audit log" in message and "Choose another audit log location" in message
    assert blocker.read_text(encoding="utf-8") == "keep me"
