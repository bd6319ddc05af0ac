"""The audit log: the writer, history, and the entry points of export, verify, report, prune.

Durability: a record is committed before :meth:`AuditLog.record` returns.  On SQLite the
database runs in WAL mode with ``synchronous=FULL`` by default, so a committed record survives
a killed process *and* a power cut (``NORMAL`` would survive only the former; the cost of each
is measured by ``bench/audit.py``).

Chain integrity under concurrency: appending reads the last record's hash and writes the next
one inside a single write transaction that takes the database's write lock first (``BEGIN
IMMEDIATE`` on SQLite, a transaction-scoped advisory lock on PostgreSQL), so two processes
appending to the same log never fork the chain.  ``seq`` is the primary key, a last line of
defence on any other database: a forked append fails and is retried.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence, Union

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from bookreader.core.audit.records import (
    GENESIS_HASH,
    answer_to_row,
    row_to_answer,
    seal,
    utc_timestamp,
)
from bookreader.core.audit.schema import AuditAnchor, AuditRecord, migrate
from bookreader.core.types import Answer
from bookreader.errors import InvalidInput, StoreError

if TYPE_CHECKING:
    from bookreader.core.audit.export import ExportSummary

log = logging.getLogger(__name__)

#: Key of PostgreSQL's advisory lock that serialises appends (any constant shared by writers).
_PG_LOCK_KEY = 0x6B00_A0D1
_APPEND_RETRIES = 5

DateLike = Union[str, date, datetime, None]

records_t = AuditRecord.__table__
anchors_t = AuditAnchor.__table__


#: How long a connection retries switching a new database to WAL while another one does.
WAL_SWITCH_SECONDS = 30.0


def _journal_wal(cur: Any) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another process switches the same new
    file: SQLite answers "database is locked" at once there, without its busy timeout
    (seen in CI: 1 of 15 servers starting at once on a new shared-limit database)."""
    import sqlite3

    deadline = time.monotonic() + WAL_SWITCH_SECONDS
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@dataclass(frozen=True)
class VerifyResult:
    """What :meth:`AuditLog.verify` found.

    Attributes:
        ok: True when every record's hash matches its content and every link checked holds.
        n_records: Records checked.
        first_bad_record_id: ``record_id`` of the first record that does not match, else None.
        message: One sentence for people: what was checked and what was found.
        first_bad_seq: Position in the chain of that record.
        gaps: Places where consecutive records are missing (a filtered export), across which
            the chain link cannot be checked.
        head_hash: The last record's hash: note it down, and a later check can prove that
            nothing before it was rewritten.
    """

    ok: bool
    n_records: int
    first_bad_record_id: Optional[str]
    message: str
    first_bad_seq: Optional[int] = None
    gaps: int = 0
    head_hash: str = ""


@dataclass(frozen=True)
class PruneResult:
    """What :meth:`AuditLog.prune` did, or would do with ``dry_run``.

    Attributes:
        n_archived: Records moved from the live database into an archive file.
        n_expired: Records past the retention period deleted from the live database.
        n_expired_archived: Records past the retention period removed from archive files.
        archive_files: Archive files written or rewritten.
        anchor_seq: The live log now starts after this record (0 when nothing was cut).
        anchor_hash: The hash of that record, kept in the live database.
        dry_run: True when nothing was changed.
        message: One sentence for people.
    """

    n_archived: int
    n_expired: int
    n_expired_archived: int
    archive_files: tuple[Path, ...]
    anchor_seq: int
    anchor_hash: str
    dry_run: bool
    message: str


def _to_bound(value: DateLike, *, end: bool) -> Optional[tuple[str, bool]]:
    """A date/datetime (or its ISO text) as a ``created_at`` bound: (timestamp, inclusive).
    A bare date as ``until`` includes that whole day (it becomes "before the next midnight")."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            if len(text) == 10:
                value = date.fromisoformat(text)
            else:
                value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(
                f"Cannot read the date {text!r}. Use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS."
            ) from exc
    if isinstance(value, datetime):
        return utc_timestamp(value), True
    day = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    return (utc_timestamp(day + timedelta(days=1)), False) if end else (utc_timestamp(day), True)


class AuditLog:
    """Append-only, hash-chained log of every question and answer.

    Args:
        url: SQLAlchemy URL (``sqlite:///path`` or ``postgresql+psycopg://user@host/db``).
        excerpt_only: Keep only the first 500 characters of selections (plus their hash).
        archive_dir: Where :meth:`prune` writes compressed JSONL archives.
        retention_days: Records older than this are deleted by :meth:`prune`.
        hot_days: Records older than this are archived by :meth:`prune`.
        synchronous: SQLite's ``synchronous`` pragma: FULL (default) or NORMAL.
        clock: Returns the current time for ``created_at`` (tests and imports set it).

    Thread-safe: the UI may record from worker threads.
    """

    def __init__(
        self,
        url: str,
        *,
        excerpt_only: bool = False,
        archive_dir: Optional[Path] = None,
        retention_days: int = 365,
        hot_days: int = 90,
        synchronous: str = "FULL",
        clock: Optional[Callable[[], datetime]] = None,
    ) -> None:
        self.url = url
        self.excerpt_only = excerpt_only
        self.archive_dir = Path(archive_dir) if archive_dir else None
        self.retention_days = retention_days
        self.hot_days = hot_days
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._lock = threading.Lock()
        self._synchronous = synchronous.upper()
        self._engine = self.make_engine(url, self._synchronous)
        self._is_pg = self._engine.dialect.name == "postgresql"
        try:
            with self._write() as conn:
                applied = migrate(conn)
        except SQLAlchemyError as exc:
            self._engine.dispose()
            raise StoreError(
                f"Cannot open the audit log at {self.location}: {exc.__class__.__name__}: "
                f"{getattr(exc, 'orig', exc)}. Check free disk space, that the folder is writable "
                "and that the file is a BookReader audit database, or set another audit_url "
                "in the settings.",
                details=str(exc),
            ) from exc
        if applied:
            log.info("Audit log %s: applied migrations %s", self.location, ", ".join(applied))
        self.head_file = self._make_head_file()
        if "0007_prune_records" in applied:
            from bookreader.core.audit.retention import attest_old_anchor

            attest_old_anchor(self)
        self.recover_interrupted()

    @classmethod
    def from_settings(cls, settings) -> "AuditLog":
        """The audit log the settings describe (SQLite in the data folder by default)."""
        return cls(
            settings.audit_db_url,
            excerpt_only=settings.audit_excerpt_only,
            archive_dir=settings.archive_dir,
            retention_days=settings.audit_retention_days,
            hot_days=settings.audit_hot_days,
        )

    # --- connection plumbing ----------------------------------------------------------------
    @property
    def location(self) -> str:
        """The URL without its password, for messages."""
        return self._engine.url.render_as_string(hide_password=True)

    @staticmethod
    def make_engine(url: str, synchronous: str) -> Engine:
        """An engine for ``url`` as the audit log uses it: SQLite in WAL mode, waiting
        for other writers, ``BEGIN IMMEDIATE`` on connections with the ``audit_write``
        execution option; PostgreSQL with a pre-ping pool."""
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA, not {synchronous!r}")
        try:
            u = sa.engine.make_url(url)
        except sa.exc.ArgumentError as exc:
            raise StoreError(
                f"The audit database URL {url!r} is not valid. Use sqlite:///path/audit.sqlite3 "
                "or postgresql+psycopg://user@host/database."
            ) from exc
        if u.get_backend_name() != "sqlite":
            try:
                return sa.create_engine(u, pool_pre_ping=True)
            except (ImportError, sa.exc.NoSuchModuleError) as exc:
                raise StoreError(
                    f"The audit database {u.render_as_string(hide_password=True)} needs a "
                    f"driver that is not installed ({exc}). For PostgreSQL install "
                    "'psycopg[binary]' and use a postgresql+psycopg:// URL."
                ) from exc
        database = u.database
        in_memory = not database or database == ":memory:"
        if database and not in_memory:
            folder = Path(database).expanduser().parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                # A file where a folder of the path should be, no permission, a full disk.
                raise StoreError(
                    f"Cannot create the folder {folder} for the audit log ({exc.strerror or exc}). "
                    "Choose another audit log location (audit_url in settings.json, or "
                    "--data-dir), or move the file that is in the way."
                ) from exc
        engine = sa.create_engine(u, poolclass=StaticPool) if in_memory else sa.create_engine(u)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record) -> None:
            dbapi_conn.isolation_level = None  # the "begin" hook below issues BEGIN itself
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA busy_timeout=30000")  # wait for another writer, don't fail
            cur.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect on a new file only
            _journal_wal(cur)
            cur.execute(f"PRAGMA synchronous={synchronous}")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn) -> None:
            write = conn.get_execution_options().get("audit_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine

    @contextmanager
    def _write(self, *, durable: bool = True) -> Iterator[Connection]:
        """A transaction holding the log's write lock (in this process and across processes).

        ``durable=False`` is for scratch rows outside the chain (the journal of a streaming
        answer): committed without waiting for the disk, so they survive the app being
        killed but not a power cut.  In SQLite's WAL mode the next durable commit syncs
        the earlier ones too, so the order on disk is kept; PostgreSQL's
        ``synchronous_commit = off`` gives the same.
        """
        relax = not durable and not self._is_pg and self._synchronous != "NORMAL"
        with self._lock, self._engine.connect() as conn:
            conn.execution_options(audit_write=True)
            # on the driver's connection: a statement through SQLAlchemy would begin a
            # transaction, and SQLite takes this pragma only outside one
            raw: Any = conn.connection.dbapi_connection if relax else None
            if raw is not None:
                raw.execute("PRAGMA synchronous=NORMAL")
            try:
                with conn.begin():
                    if self._is_pg:
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"),
                                     {"k": _PG_LOCK_KEY})
                        if not durable:
                            conn.exec_driver_sql("SET LOCAL synchronous_commit TO OFF")
                    yield conn
            finally:
                if raw is not None:
                    raw.execute(f"PRAGMA synchronous={self._synchronous}")

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._engine.connect() as conn, conn.begin():
            yield conn

    # --- writing --------------------------------------------------------------------------
    @staticmethod
    def _head(conn: Connection) -> tuple[int, str]:
        """(seq, hash) of the last record, or of the prune anchor, or (0, genesis)."""
        last = conn.execute(
            sa.select(records_t.c.seq, records_t.c.record_hash)
            .order_by(records_t.c.seq.desc())
            .limit(1)
        ).first()
        if last is not None:
            return last[0], last[1]
        anchor = AuditLog._anchor(conn)
        return anchor if anchor is not None else (0, GENESIS_HASH)

    @staticmethod
    def _anchor(conn: Connection) -> Optional[tuple[int, str]]:
        row = conn.execute(
            sa.select(anchors_t.c.through_seq, anchors_t.c.anchor_hash)
            .order_by(anchors_t.c.through_seq.desc())
            .limit(1)
        ).first()
        return (row[0], row[1]) if row is not None else None

    def record(
        self, answer: Answer, *, session_id: str, client_id: Optional[str] = None
    ) -> str:
        """Append ``answer`` to the log; returns its record id once it is committed.

        ``client_id`` is the name of the API key a server request came with.

        Raises:
            StoreError: The database cannot be written (disk full, permissions, server down).
        """
        return self.record_many([answer], session_id=session_id, client_id=client_id)[0]

    def record_many(
        self, answers: Sequence[Answer], *, session_id: str, client_id: Optional[str] = None
    ) -> list[str]:
        """Append several answers in one transaction (imports, benchmarks)."""
        rows = [
            answer_to_row(a, session_id=session_id, excerpt_only=self.excerpt_only,
                          client_id=client_id)
            for a in answers
        ]
        return self._append(rows)

    def _append(self, rows: list[dict[str, Any]], *, after: Optional[Callable] = None,
                unless_completed: Optional[str] = None) -> list[str]:
        """Seal ``rows`` onto the chain in one write transaction; ``after(conn, last_sealed)``
        runs in the same transaction.  With ``unless_completed``, nothing is appended when a
        record completing that pending record already exists."""
        if not rows:
            return []
        last_error: Optional[Exception] = None
        for attempt in range(_APPEND_RETRIES):
            try:
                with self._write() as conn:
                    if unless_completed is not None and conn.execute(
                        sa.select(records_t.c.seq).where(records_t.c.completes == unless_completed)
                    ).first() is not None:
                        return []
                    seq, prev = self._head(conn)
                    sealed = []
                    for row in rows:
                        seq += 1
                        now = utc_timestamp(self._clock())
                        row = dict(row)
                        if not row.get("record_id"):
                            row["record_id"] = str(uuid.uuid4())
                        s = seal(row, seq=seq, prev_hash=prev, created_at=now)
                        prev = s["record_hash"]
                        sealed.append(s)
                    conn.execute(records_t.insert(), sealed)
                    if after is not None:
                        after(conn, sealed[-1])
                self._note_head(seq, prev)
                return [s["record_id"] for s in sealed]
            except IntegrityError as exc:  # another writer took our seq: read the head again
                log.warning("Audit append collided (attempt %d): %s", attempt + 1, exc)
                last_error = exc
                time.sleep(0.01 * (attempt + 1))
            except SQLAlchemyError as exc:
                raise StoreError(
                    f"Cannot write to the audit log at {self.location}: "
                    f"{getattr(exc, 'orig', exc)}. Check free disk space and that the folder "
                    "is writable (or that the database server is running).",
                    details=str(exc),
                ) from exc
        raise StoreError(
            f"Cannot write to the audit log at {self.location}: another writer kept taking "
            f"the same position ({getattr(last_error, 'orig', last_error)}). Close other "
            "BookReader windows that use the same log and try again."
        )

    def _make_head_file(self):
        """The head file beside a SQLite database (see anchors.py); None for a server.

        A database without one (older versions) gets one holding its current head.
        """
        from bookreader.core.audit.anchors import HeadFile

        u = self._engine.url
        if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
            return None
        head = HeadFile(Path(u.database + ".head"))
        if head.read() is None:
            with self._read() as conn:
                seq, last = self._head(conn)
            if seq:
                head.advance(seq, last)
        return head

    def _note_head(self, seq: int, head: str) -> None:
        """Keep the head file beside the database in step with the chain."""
        head_file = getattr(self, "head_file", None)
        if head_file is not None:
            head_file.advance(seq, head)

    # --- write-ahead records (see journal.py) -------------------------------------------
    def begin_answer(self, provisional: Answer, *, session_id: str,
                     client_id: Optional[str] = None):
        """Append the pending record of a question about to be answered; returns the
        :class:`~bookreader.core.audit.journal.AnswerJournal` that streamed text goes to."""
        from bookreader.core.audit import journal

        return journal.begin(self, provisional, session_id=session_id, client_id=client_id)

    def complete_answer(self, pending, answer: Answer) -> str:
        """Append the completion record of ``pending`` (an AnswerJournal)."""
        from bookreader.core.audit import journal

        return journal.complete(pending, answer)

    def recover_interrupted(self) -> int:
        """Record every answer whose process died mid-stream as ``interrupted``."""
        from bookreader.core.audit import journal

        return journal.recover_interrupted(self)

    # --- reading --------------------------------------------------------------------------
    def history(self, book_id: str, limit: int = 200) -> list[Answer]:
        """The last ``limit`` answers about ``book_id``, oldest first, for the chat panel."""
        with self._read() as conn:
            rows = conn.execute(
                sa.select(records_t)
                .where(records_t.c.book_id == book_id)
                .where(sa.or_(records_t.c.status.is_(None), records_t.c.status != "pending"))
                .order_by(records_t.c.seq.desc())
                .limit(limit)
            ).mappings().all()
        return [row_to_answer(dict(r)) for r in reversed(rows)]

    def session(
        self, session_id: str, *, client_id: Optional[str] = None, limit: int = 200
    ) -> list[Answer]:
        """The last ``limit`` answers of one session, oldest first (the server's history);
        with ``client_id``, only that client's records of it."""
        q = (sa.select(records_t).where(records_t.c.session_id == session_id)
             .where(sa.or_(records_t.c.status.is_(None), records_t.c.status != "pending")))
        if client_id is not None:
            q = q.where(records_t.c.client_id == client_id)
        with self._read() as conn:
            rows = conn.execute(q.order_by(records_t.c.seq.desc()).limit(limit)).mappings().all()
        return [row_to_answer(dict(r)) for r in reversed(rows)]

    def count(self) -> int:
        """Records in the live database."""
        with self._read() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(records_t)).scalar_one()

    def _filtered(
        self, *, since: DateLike = None, until: DateLike = None, book=None, mode=None
    ) -> sa.Select:
        q = sa.select(records_t).order_by(records_t.c.seq)
        col = records_t.c.created_at
        lo, hi = _to_bound(since, end=False), _to_bound(until, end=True)
        if lo:
            q = q.where(col >= lo[0])
        if hi:
            q = q.where(col <= hi[0] if hi[1] else col < hi[0])
        if book:
            q = q.where(
                sa.or_(records_t.c.book_id == str(book),
                       records_t.c.book_title.icontains(str(book), autoescape=True))
            )
        if mode:
            q = q.where(records_t.c.mode == getattr(mode, "value", str(mode)))
        return q

    def iter_rows(self, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every record matching the filters (since, until, book, mode), oldest first, as
        plain dicts with every column, streamed in batches."""
        q = self._filtered(**filters)
        with self._engine.connect() as conn:
            result = conn.execution_options(yield_per=2000).execute(q).mappings()
            for r in result:
                yield dict(r)

    # --- the rest lives in its own module ----------------------------------------------------
    def export(self, fmt: str, out: Optional[Path] = None, *, since: DateLike = None,
               until: DateLike = None, book=None, mode=None) -> int:
        """Write the matching records as ``csv``, ``jsonl`` or ``json`` to ``out`` (stdout
        when None).  Returns the number of records written."""
        return self.export_summary(fmt, out, since=since, until=until, book=book,
                                   mode=mode).records

    def export_summary(self, fmt: str, out: Optional[Path] = None, *, since: DateLike = None,
                       until: DateLike = None, book=None, mode=None) -> ExportSummary:
        """:meth:`export`, saying how many records and how many questions it wrote."""
        from bookreader.core.audit.export import export_records

        filters = {"since": since, "until": until, "book": book, "mode": mode}
        return export_records(self.iter_rows(**filters), fmt, out, filters=filters,
                              source=self.location)

    def verify(self, path: Optional[Path] = None, *, extends: Optional[Path] = None,
               expect_head: Optional[str] = None) -> VerifyResult:
        """Check the hash chain of the live database (its archives and manifest, and its
        head file), or of an exported or archived JSONL/JSON file when ``path`` is given.

        ``extends``: an earlier export whose records must all be present, unchanged.
        ``expect_head``: a record hash noted earlier that the chain must pass through.
        """
        from bookreader.core.audit.verify import verify_file, verify_live

        if path is not None:
            return verify_file(Path(path), extends=extends, expect_head=expect_head)
        with self._read() as conn:
            anchor = self._anchor(conn)
        head = self.head_file.read() if self.head_file is not None else None
        return verify_live(self.iter_rows(), anchor, self.archive_dir, head=head,
                           extends=extends, expect_head=expect_head)

    def report(self, out: Path, **filters: Any) -> Path:
        """Write the instructor's one-page HTML report of the matching records to ``out``."""
        from bookreader.core.audit.report import write_report

        answers = (r for r in self.iter_rows(**filters)
                   if r.get("status") not in ("pending", "prune"))
        return write_report(answers, Path(out), filters=filters,
                            source=self.location)

    def prune(self, *, dry_run: bool = False, now: Optional[datetime] = None) -> PruneResult:
        """Archive records older than ``hot_days`` and delete those older than
        ``retention_days`` (see :mod:`bookreader.core.audit.retention`)."""
        from bookreader.core.audit.retention import prune

        return prune(self, dry_run=dry_run, now=now)

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()

    def __enter__(self) -> "AuditLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
