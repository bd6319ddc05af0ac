"""The audit log's tables, and the named migrations that build and evolve them.

One denormalised, append-only table, ``audit_records``: a row holds everything about one
question so that a single row, exported alone, tells the whole story.  ``audit_anchors``
remembers where the live table starts after :meth:`AuditLog.prune` moved older rows to the
archive, so the hash chain stays checkable across the cut.

Schema changes are named migrations applied in order and recorded in ``schema_version``.
Each migration spells out its own DDL (it never reads the current model), so an old
database is always upgraded through the same steps a new one was built with.  Columns added
by a later migration are NULL on older rows; the record hash leaves NULL fields out, so
older rows keep verifying after an upgrade.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Callable, Optional

import sqlalchemy as sa
from sqlalchemy import JSON, Boolean, Float, Integer, String, Text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

log = logging.getLogger(__name__)

RECORDS_TABLE = "audit_records"
ANCHORS_TABLE = "audit_anchors"
VERSION_TABLE = "schema_version"
STREAM_TABLE = "audit_stream"


class Base(DeclarativeBase):
    """Declarative base of the audit models (its own metadata, nothing shared)."""


class AuditRecord(Base):
    """One question and its answer, as recorded.  Never updated, never deleted in place
    (only :meth:`AuditLog.prune` removes the oldest rows, after archiving them).

    ``created_at`` is text (``YYYY-MM-DDTHH:MM:SS.ffffffZ``), not a DateTime: the same
    string on SQLite and PostgreSQL, in the export and in the hash, and it sorts correctly.
    """

    __tablename__ = RECORDS_TABLE

    # --- 0001_create_audit_records: the fields the design asks for -------------------------
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    record_id: Mapped[str] = mapped_column(String(36), unique=True)
    query_id: Mapped[str] = mapped_column(String(64), index=True)
    answer_id: Mapped[str] = mapped_column(String(64), index=True)
    session_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[str] = mapped_column(String(32), index=True)
    book_id: Mapped[Optional[str]] = mapped_column(String(128), index=True)
    book_title: Mapped[Optional[str]] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String(16))
    question: Mapped[str] = mapped_column(Text)
    selection_excerpt: Mapped[Optional[str]] = mapped_column(Text)
    selection_sha256: Mapped[Optional[str]] = mapped_column(String(64))
    selection: Mapped[Optional[str]] = mapped_column(Text)
    retrieval_query: Mapped[Optional[str]] = mapped_column(Text)
    n_chunks: Mapped[int] = mapped_column(Integer)
    chunks: Mapped[Optional[list]] = mapped_column(JSON)
    retrieval_ms: Mapped[Optional[float]] = mapped_column(Float)
    first_token_ms: Mapped[Optional[float]] = mapped_column(Float)
    generation_ms: Mapped[Optional[float]] = mapped_column(Float)
    validation_similarity: Mapped[Optional[float]] = mapped_column(Float)
    validation_overlap: Mapped[Optional[float]] = mapped_column(Float)
    validation_passed: Mapped[Optional[bool]] = mapped_column(Boolean)
    backend: Mapped[Optional[str]] = mapped_column(String(64))
    model: Mapped[Optional[str]] = mapped_column(Text)
    prompt: Mapped[Optional[list]] = mapped_column(JSON)
    raw_output: Mapped[Optional[str]] = mapped_column(Text)
    answer_text: Mapped[Optional[str]] = mapped_column(Text)
    confidence: Mapped[Optional[float]] = mapped_column(Float)
    confidence_level: Mapped[Optional[str]] = mapped_column(String(16))
    citations: Mapped[Optional[list]] = mapped_column(JSON)
    success: Mapped[bool] = mapped_column(Boolean)
    error_message: Mapped[Optional[str]] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    record_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # --- 0002_answer_details: what the chat history and the report need besides ----------
    fallback: Mapped[Optional[bool]] = mapped_column(Boolean)
    in_selected_text: Mapped[Optional[bool]] = mapped_column(Boolean)
    truncation_warning: Mapped[Optional[str]] = mapped_column(Text)
    replaced_by_validator: Mapped[Optional[bool]] = mapped_column(Boolean)
    latency_ms: Mapped[Optional[float]] = mapped_column(Float)
    retrieval_confidence: Mapped[Optional[float]] = mapped_column(Float)
    stage_ms: Mapped[Optional[dict]] = mapped_column(JSON)
    validation_details: Mapped[Optional[dict]] = mapped_column(JSON)
    chapter: Mapped[Optional[str]] = mapped_column(Text)
    selection_page: Mapped[Optional[int]] = mapped_column(Integer)
    # --- 0004_client_id: who asked through ``bookreader serve`` (the API key's name) ------
    client_id: Mapped[Optional[str]] = mapped_column(String(128))
    # --- 0005_answer_outcome: how the question ended (core.types.Outcome) ----------------
    outcome: Mapped[Optional[str]] = mapped_column(String(24))
    # --- 0006_write_ahead: a question is recorded before its answer streams ---------------
    #: NULL (a record written whole), "pending" (written when the question was accepted),
    #: "complete" or "interrupted" (the completion of the pending record in ``completes``).
    status: Mapped[Optional[str]] = mapped_column(String(16))
    completes: Mapped[Optional[str]] = mapped_column(String(36), index=True)
    # --- 0007_prune_records: a prune is itself a record of the chain ----------------------
    #: Set on the record a prune appends (``status="prune"``): the cut it made (through
    #: which seq, that record's hash, how many records were archived or expired, the
    #: archive file), so that the live log may start after a record only where the chain
    #: itself says a prune cut it (see verify.py).
    prune: Mapped[Optional[dict]] = mapped_column(JSON)


class AuditAnchor(Base):
    """Written by prune: the live table now starts right after ``through_seq``, whose
    record hash was ``anchor_hash`` (the last archived or expired record)."""

    __tablename__ = ANCHORS_TABLE

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    through_seq: Mapped[int] = mapped_column(Integer, index=True)
    anchor_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[str] = mapped_column(String(32))
    n_archived: Mapped[int] = mapped_column(Integer)
    n_expired: Mapped[int] = mapped_column(Integer)
    archive_file: Mapped[Optional[str]] = mapped_column(Text)


class AuditStream(Base):
    """The text a pending record's answer has streamed so far (flushed about every second
    and at every sentence end).  Outside the hash chain: it is a journal, copied into the
    chained completion record when the answer ends, or by the recovery of an interrupted
    one, and then deleted."""

    __tablename__ = STREAM_TABLE

    record_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    pid: Mapped[int] = mapped_column(Integer)
    host: Mapped[str] = mapped_column(String(255))
    updated_at: Mapped[str] = mapped_column(String(32))


#: Column name -> python type used to normalise values before hashing (see records.py).
COLUMN_KINDS: dict[str, str] = {}
for _col in AuditRecord.__table__.columns:
    _t = _col.type
    COLUMN_KINDS[_col.name] = (
        "json" if isinstance(_t, JSON)
        else "bool" if isinstance(_t, Boolean)
        else "float" if isinstance(_t, Float)
        else "int" if isinstance(_t, Integer)
        else "str"
    )
#: Every column in table order: the export's field order and the CSV header.
COLUMNS: tuple[str, ...] = tuple(c.name for c in AuditRecord.__table__.columns)


# --- migrations ------------------------------------------------------------------------------
def _add_columns(conn: Connection, table: str, columns: list[tuple[str, sa.types.TypeEngine]]):
    dialect = conn.dialect
    for name, type_ in columns:
        ddl = type_.compile(dialect=dialect)
        conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {name} {ddl}"))


def _m0001_create_audit_records(conn: Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        RECORDS_TABLE,
        md,
        sa.Column("seq", Integer, primary_key=True, autoincrement=False),
        sa.Column("record_id", String(36), nullable=False, unique=True),
        sa.Column("query_id", String(64), nullable=False, index=True),
        sa.Column("answer_id", String(64), nullable=False, index=True),
        sa.Column("session_id", String(64), nullable=False),
        sa.Column("created_at", String(32), nullable=False, index=True),
        sa.Column("book_id", String(128), index=True),
        sa.Column("book_title", Text),
        sa.Column("mode", String(16), nullable=False),
        sa.Column("question", Text, nullable=False),
        sa.Column("selection_excerpt", Text),
        sa.Column("selection_sha256", String(64)),
        sa.Column("selection", Text),
        sa.Column("retrieval_query", Text),
        sa.Column("n_chunks", Integer, nullable=False),
        sa.Column("chunks", JSON),
        sa.Column("retrieval_ms", Float),
        sa.Column("first_token_ms", Float),
        sa.Column("generation_ms", Float),
        sa.Column("validation_similarity", Float),
        sa.Column("validation_overlap", Float),
        sa.Column("validation_passed", Boolean),
        sa.Column("backend", String(64)),
        sa.Column("model", Text),
        sa.Column("prompt", JSON),
        sa.Column("raw_output", Text),
        sa.Column("answer_text", Text),
        sa.Column("confidence", Float),
        sa.Column("confidence_level", String(16)),
        sa.Column("citations", JSON),
        sa.Column("success", Boolean, nullable=False),
        sa.Column("error_message", Text),
        sa.Column("prev_hash", String(64), nullable=False),
        sa.Column("record_hash", String(64), nullable=False, unique=True),
    )
    md.create_all(conn)


def _m0002_answer_details(conn: Connection) -> None:
    _add_columns(
        conn,
        RECORDS_TABLE,
        [
            ("fallback", Boolean()),
            ("in_selected_text", Boolean()),
            ("truncation_warning", Text()),
            ("replaced_by_validator", Boolean()),
            ("latency_ms", Float()),
            ("retrieval_confidence", Float()),
            ("stage_ms", JSON()),
            ("validation_details", JSON()),
            ("chapter", Text()),
            ("selection_page", Integer()),
        ],
    )


def _m0003_create_audit_anchors(conn: Connection) -> None:
    md = sa.MetaData()
    sa.Table(
        ANCHORS_TABLE,
        md,
        sa.Column("id", Integer, primary_key=True, autoincrement=True),
        sa.Column("through_seq", Integer, nullable=False, index=True),
        sa.Column("anchor_hash", String(64), nullable=False),
        sa.Column("created_at", String(32), nullable=False),
        sa.Column("n_archived", Integer, nullable=False),
        sa.Column("n_expired", Integer, nullable=False),
        sa.Column("archive_file", Text),
    )
    md.create_all(conn)


def _m0004_client_id(conn: Connection) -> None:
    _add_columns(conn, RECORDS_TABLE, [("client_id", String(128))])


def _m0005_answer_outcome(conn: Connection) -> None:
    """One nullable column: records written before it keep their hashes (NULL fields are
    left out of the canonical JSON); readers derive their outcome from ``fallback``."""
    _add_columns(conn, RECORDS_TABLE, [("outcome", String(24))])


def _m0006_write_ahead(conn: Connection) -> None:
    _add_columns(conn, RECORDS_TABLE, [("status", String(16)), ("completes", String(36))])
    conn.execute(sa.text(
        f"CREATE INDEX IF NOT EXISTS ix_{RECORDS_TABLE}_completes ON {RECORDS_TABLE} (completes)"
    ))
    md = sa.MetaData()
    sa.Table(
        STREAM_TABLE,
        md,
        sa.Column("record_id", String(36), primary_key=True),
        sa.Column("text", Text, nullable=False),
        sa.Column("pid", Integer, nullable=False),
        sa.Column("host", String(255), nullable=False),
        sa.Column("updated_at", String(32), nullable=False),
    )
    md.create_all(conn)


def _m0007_prune_records(conn: Connection) -> None:
    """One nullable column: older records keep their hashes.  An anchor written by an older
    version gets its prune record when the log is opened (retention.attest_old_anchor)."""
    _add_columns(conn, RECORDS_TABLE, [("prune", JSON())])


#: The migrations, in the order they apply.  Append only; never rename or reorder.
MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = [
    ("0001_create_audit_records", _m0001_create_audit_records),
    ("0002_answer_details", _m0002_answer_details),
    ("0003_create_audit_anchors", _m0003_create_audit_anchors),
    ("0004_client_id", _m0004_client_id),
    ("0005_answer_outcome", _m0005_answer_outcome),
    ("0006_write_ahead", _m0006_write_ahead),
    ("0007_prune_records", _m0007_prune_records),
]

_version_md = sa.MetaData()
schema_version = sa.Table(
    VERSION_TABLE,
    _version_md,
    sa.Column("name", String(100), primary_key=True),
    sa.Column("applied_at", String(32), nullable=False),
)


def applied_migrations(conn: Connection) -> list[str]:
    """Names of the migrations already applied (empty for a new database)."""
    if not sa.inspect(conn).has_table(VERSION_TABLE):
        return []
    return [r[0] for r in conn.execute(sa.select(schema_version.c.name))]


def migrate(conn: Connection, *, upto: Optional[str] = None) -> list[str]:
    """Apply the missing migrations (up to and including ``upto``) inside ``conn``'s
    transaction; the caller holds the write lock.  Returns the names applied now."""
    _version_md.create_all(conn, checkfirst=True)
    done = set(applied_migrations(conn))
    applied: list[str] = []
    for name, step in MIGRATIONS:
        if name not in done:
            log.info("Applying audit-log migration %s", name)
            step(conn)
            conn.execute(
                schema_version.insert().values(
                    name=name,
                    applied_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                )
            )
            applied.append(name)
        if name == upto:
            break
    return applied
