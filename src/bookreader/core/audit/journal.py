"""Write-ahead audit records: a question is in the log before its answer is shown.

Every answer a student saw must be in the log, even when the program is killed while
the answer streams.  So an answer is recorded in three steps:

1. **Pending record** (chained).  When the question has been accepted and its prompt is
   built, before the first token is shown, a record with ``status="pending"`` is appended
   to the hash chain like any other: question, mode, selection (hash and excerpt),
   retrieved chunks, prompt; no answer text.  From then on, deleting or editing it breaks
   the chain.
2. **Stream journal** (not chained).  The text shown so far is written into the small
   ``audit_stream`` table, keyed by the pending record's id, at least every second and at
   every sentence end.  It is a journal that is overwritten in place, so it cannot be
   part of an append-only chain; it only lives until step 3.
3. **Completion record** (chained).  When the answer ends, a second record is appended
   with ``status="complete"`` and ``completes`` = the pending record's id, holding the
   whole answer, and the journal row is deleted in the same transaction.  When the
   program died instead, the next :class:`~bookreader.core.audit.AuditLog` opened on the
   database finds the pending record without a completion, appends a completion record
   with ``status="interrupted"`` and the journal's text (what the student saw), and
   deletes the journal row: again one transaction.

No record is ever changed after it is hashed; an incomplete answer is hashed as what it
is (a pending record), and completing it is an append.  Readers that show answers (the
chat history, the report) skip pending records; export and verify see everything.

A journal row names the process (host and pid) that writes it: recovery leaves alone a
pending record whose writer is still alive (another window on the same log).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bookreader.core.audit.records import answer_to_row, normalise, scrub, utc_timestamp
from bookreader.core.audit.schema import AuditRecord, AuditStream
from bookreader.core.types import Answer
from bookreader.errors import StoreError

if TYPE_CHECKING:
    from bookreader.core.audit.log import AuditLog

log = logging.getLogger(__name__)

records_t = AuditRecord.__table__
stream_t = AuditStream.__table__

#: Longest the shown text goes unflushed, in seconds.
FLUSH_INTERVAL_S = 1.0
#: A pending record whose writer is on another host is recovered after this long.
FOREIGN_STALE_S = 3600.0
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
_HOST = socket.gethostname()[:255]


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class AnswerJournal:
    """The pending record of one answer and the text streamed into it so far."""

    def __init__(self, audit: "AuditLog", record_id: str, session_id: str,
                 client_id: str | None = None) -> None:
        self.audit = audit
        self.record_id = record_id
        self.session_id = session_id
        self.client_id = client_id
        self._parts: list[str] = []
        self._flushed_len = 0
        self._last_flush = time.monotonic()
        self.flushes = 0

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def add(self, piece: str) -> None:
        """Append streamed text; flushed when a second has passed or a sentence ended."""
        if not piece:
            return
        self._parts.append(piece)
        if time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S or _SENTENCE_END.search(piece):
            self.flush()

    def flush(self) -> None:
        """Write the text shown so far into the journal row (committed on return)."""
        text = self.text
        if len(text) == self._flushed_len:
            return
        try:
            # A kill of the app is what the journal is for; it need not wait for the disk
            # (see AuditLog._write): the pending record before it was committed durably.
            with self.audit._write(durable=False) as conn:
                conn.execute(
                    stream_t.update().where(stream_t.c.record_id == self.record_id)
                    .values(text=scrub(text), updated_at=utc_timestamp())
                )
        except sa.exc.SQLAlchemyError as exc:  # keep answering; the pending record holds
            log.warning("Cannot journal the streamed answer %s: %s", self.record_id, exc)
            return
        self._flushed_len = len(text)
        self._last_flush = time.monotonic()
        self.flushes += 1


def begin(audit: "AuditLog", provisional: Answer, *, session_id: str,
          client_id: str | None = None) -> AnswerJournal:
    """Append the pending record of ``provisional`` (no answer text yet) and its journal."""
    row = answer_to_row(provisional, session_id=session_id, excerpt_only=audit.excerpt_only,
                        client_id=client_id)
    row.update(status="pending", answer_text=None, raw_output=None, citations=[],
               success=True, error_message=None, validation_details=None,
               validation_passed=None, validation_similarity=None, validation_overlap=None)
    now = utc_timestamp()

    def journal_row(conn, sealed: dict[str, Any]) -> None:
        conn.execute(stream_t.insert().values(
            record_id=sealed["record_id"], text="", pid=os.getpid(), host=_HOST, updated_at=now))

    [record_id] = audit._append([row], after=journal_row)
    return AnswerJournal(audit, record_id, session_id, client_id)


def complete(journal: AnswerJournal, answer: Answer) -> str:
    """Append the completion record of ``journal``'s pending record; drop its journal row."""
    audit = journal.audit
    row = answer_to_row(answer, session_id=journal.session_id, excerpt_only=audit.excerpt_only,
                        client_id=journal.client_id)
    row.update(status="complete", completes=journal.record_id)

    def drop(conn, _sealed) -> None:
        conn.execute(stream_t.delete().where(stream_t.c.record_id == journal.record_id))

    return audit._append([row], after=drop)[0]


def recover_interrupted(audit: "AuditLog") -> int:
    """Complete, as ``interrupted``, every pending record whose writer has died.

    Returns the number of records completed.  Safe to run from several processes: each
    completion is appended under the write lock after checking again that none exists.
    """
    done = 0
    try:
        with audit._read() as conn:
            completed = sa.select(records_t.c.completes).where(records_t.c.completes.is_not(None))
            pending = conn.execute(
                sa.select(records_t).where(records_t.c.status == "pending")
                .where(records_t.c.record_id.not_in(completed))
                .order_by(records_t.c.seq)
            ).mappings().all()
            journals = {r.record_id: r for r in conn.execute(sa.select(stream_t)).all()}
    except sa.exc.SQLAlchemyError as exc:
        log.warning("Cannot look for interrupted answers in the audit log: %s", exc)
        return 0
    for p in pending:
        j = journals.get(p["record_id"])
        if j is not None and j.host == _HOST and _alive(int(j.pid)):
            continue
        if j is not None and j.host != _HOST:
            age = time.time() - _epoch(j.updated_at)
            if age < FOREIGN_STALE_S:
                continue
        shown = (j.text if j is not None else "") or ""
        row = {k: v for k, v in normalise(dict(p)).items()
               if k not in ("seq", "record_hash", "prev_hash", "created_at")}
        row.update(
            record_id=None, status="interrupted", completes=p["record_id"], answer_text=shown,
            success=False,
            error_message=(
                f"The program stopped while this answer was being shown; the "
                f"{len(shown):,} characters shown by then are recorded here."
                if j is not None else
                "The program stopped before this answer was shown (no streamed text was "
                "journaled)."
            ),
        )
        pending_id = p["record_id"]

        def check_and_drop(conn, _sealed, pending_id=pending_id) -> None:
            conn.execute(stream_t.delete().where(stream_t.c.record_id == pending_id))

        try:
            audit._append([row], after=check_and_drop, unless_completed=pending_id)
            done += 1
        except StoreError as exc:
            log.warning("Cannot record the interrupted answer %s: %s", pending_id, exc.user_message)
            break
    if done:
        log.warning("Audit log: %d interrupted answers recorded as such", done)
    return done


def _epoch(stamp: str) -> float:
    from bookreader.core.audit.records import parse_timestamp

    try:
        return parse_timestamp(stamp).timestamp()
    except ValueError:
        return 0.0
