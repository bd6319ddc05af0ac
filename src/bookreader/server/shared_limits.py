"""A per-key rate limit shared by several ``bookreader serve`` processes.

One server process counts in memory (:class:`bookreader.server.limits.RateLimiter`).  A
school that runs several server processes behind a load balancer (each with its own copy
of the books, all writing one PostgreSQL audit log: the README's scale-out settings)
needs one count per key across them, or a key could make N times its limit.  The
processes already share one database, the audit log's, so the count lives there, in a
table of its own beside the audit tables (never part of the hash chain):

    serve_rate_limits(client, window, count)   primary key (client, window)

Each request adds one to its key's row for the current fixed window with one atomic
``INSERT ... ON CONFLICT DO UPDATE`` (SQLite and PostgreSQL both have it), and reads the
previous window's count.  The limit is checked against the sliding-window estimate
``previous * (share of the window still to run) + current``, which smooths the burst a
plain fixed window allows at its edge.  A refused request takes its count back, so a
client that keeps retrying while refused does not push its own wait further out.

When the database cannot be reached the request is let through and the in-memory limit
of this process applies instead (logged): an outage of the counter must not take the
answers down with it, and the audit log reports its own failure.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Callable, Optional

import sqlalchemy as sa
import sqlalchemy.exc

from bookreader.core.audit.log import AuditLog
from bookreader.server.limits import RateLimiter

log = logging.getLogger(__name__)

_METADATA = sa.MetaData()
RATE_TABLE = sa.Table(
    "serve_rate_limits",
    _METADATA,
    sa.Column("client", sa.String(200), primary_key=True),
    sa.Column("window", sa.BigInteger, primary_key=True),
    sa.Column("count", sa.Integer, nullable=False),
)
_EPS = 1e-9  # float slack at the exact moment a request fits again
_PRUNE_EVERY = 200  # requests between removals of windows that no longer count


def _upsert(dialect: str):
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:  # pragma: no cover - the audit log supports these two
        raise ValueError(f"A shared rate limit needs SQLite or PostgreSQL, not {dialect}")
    return insert


class SharedRateLimiter:
    """At most ``limit`` requests per ``window`` seconds per key, counted in the database
    at ``url`` so that every process using the same database shares one count."""

    def __init__(self, url: str, limit: int, window: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        # The audit log's own engine set-up (WAL, busy timeout, BEGIN IMMEDIATE for
        # writes), without an fsync per commit: losing the last second of counts in a
        # power cut only lets a few requests more through.
        self._engine = AuditLog.make_engine(url, "NORMAL")
        self._insert = _upsert(self._engine.dialect.name)
        self._fallback = RateLimiter(limit, window)
        self._calls = 0
        self._lock = threading.Lock()
        # Under the write lock: two servers starting at once on a new database both saw
        # no table and both created it, and the second failed ("table already exists").
        with self._engine.connect() as conn, conn.execution_options(audit_write=True).begin():
            _METADATA.create_all(conn, checkfirst=True)

    @property
    def where(self) -> str:
        """The database holding the count, without its password."""
        return self._engine.url.render_as_string(hide_password=True)

    def check(self, key: str) -> Optional[int]:
        """Count a request of ``key``: None when allowed, else seconds until it would be."""
        try:
            return self._check(key)
        except sqlalchemy.exc.SQLAlchemyError as exc:
            log.warning("The shared rate limit in %s is unavailable (%s); counting in this "
                        "process only", self.where, exc)
            return self._fallback.check(key)

    def _check(self, key: str) -> Optional[int]:
        now = self._clock()
        position = now / self.window
        current = int(math.floor(position))
        left = 1.0 - (position - current)  # share of the previous window still counted
        t = RATE_TABLE
        stmt = self._insert(t).values(client=key, window=current, count=1)
        stmt = stmt.on_conflict_do_update(index_elements=[t.c.client, t.c.window],
                                          set_={"count": t.c.count + 1})
        with self._engine.connect() as conn, conn.execution_options(audit_write=True).begin():
            conn.execute(stmt)
            counts = dict(conn.execute(
                sa.select(t.c.window, t.c.count).where(
                    t.c.client == key, t.c.window.in_([current - 1, current]))).all())
            previous, mine = counts.get(current - 1, 0), counts.get(current, 0)
            if previous * left + mine <= self.limit + _EPS:
                wait = None
            else:
                conn.execute(sa.update(t).where(t.c.client == key, t.c.window == current)
                             .values(count=t.c.count - 1))
                wait = self._wait(previous, mine - 1, left)
            with self._lock:
                self._calls += 1
                prune = self._calls % _PRUNE_EVERY == 0
            if prune:
                conn.execute(sa.delete(t).where(t.c.window < current - 1))
        return wait

    def _wait(self, previous: int, mine: int, left: float) -> int:
        """Seconds until one more request fits under the estimate."""
        if mine + 1 > self.limit:  # the current window alone is full: wait for the next
            # (the one after it still counts this window's share, hence the loop below)
            spare, mine, previous, left = left * self.window, 0, mine, 1.0
        else:
            spare = 0.0
        if previous * left + mine + 1 <= self.limit + _EPS:
            return max(1, math.ceil(spare))
        # previous * x + mine + 1 <= limit  <=>  x <= (limit - mine - 1) / previous
        x = max(0.0, (self.limit - mine - 1) / previous)
        return max(1, math.ceil(spare + (left - x) * self.window))

    def close(self) -> None:
        self._engine.dispose()
