"""Per-key rate limits and the bounded answer pool of ``bookreader serve``.

Rate limit: a sliding one-window log per key (the times of the requests in the last
window), in memory.  That is exact for one server process, which is how ``bookreader
serve`` runs: its ``--workers`` are threads of one process.  Several processes behind a
load balancer would each count on their own, so a key could make N x the limit; they
share one count in the audit database instead
(:class:`bookreader.server.shared_limits.SharedRateLimiter`, ``--rate-limit-store``).

Answer pool: ``workers`` threads take jobs from a queue.  A local llama.cpp model answers
one question at a time (its context is not thread-safe), so the server gives it one
worker; Claude and the extractive backend get several.  A job that has not started
within its wait budget is dropped and its request answered 503 with ``Retry-After``,
and a full queue answers 503 at once: requests never pile up behind a slow model.
"""

from __future__ import annotations

import collections
import logging
import math
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from bookreader.errors import InvalidInput

log = logging.getLogger(__name__)

_UNITS = {"second": 1.0, "sec": 1.0, "s": 1.0, "minute": 60.0, "min": 60.0, "m": 60.0,
          "hour": 3600.0, "h": 3600.0}


def parse_rate(text: str) -> tuple[int, float]:
    """``"100/minute"`` -> (100, 60.0).  Units: second, minute, hour."""
    count, sep, unit = (text or "").strip().partition("/")
    try:
        n = int(count)
        window = _UNITS[unit.strip().lower() or "minute"] if sep else 60.0
    except (ValueError, KeyError):
        raise InvalidInput(
            f"'{text}' is not a rate limit. Write it as COUNT/UNIT, e.g. 100/minute "
            "(units: second, minute, hour)."
        ) from None
    if n < 1:
        raise InvalidInput(f"The rate limit '{text}' must allow at least one request.")
    return n, window


class RateLimiter:
    """At most ``limit`` requests per ``window`` seconds per key (sliding window)."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.window = window
        self._clock = clock
        self._hits: dict[str, collections.deque] = {}
        self._lock = threading.Lock()

    def check(self, key: str) -> Optional[int]:
        """Count a request of ``key``: None when allowed, else seconds until it would be."""
        now = self._clock()
        with self._lock:
            hits = self._hits.setdefault(key, collections.deque())
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) >= self.limit:
                return max(1, math.ceil(hits[0] + self.window - now))
            hits.append(now)
            return None


class FailedAuthLimiter:
    """At most ``limit`` requests with an invalid API key per ``window`` seconds per
    client address; over it, every request from that address is refused (valid key or
    not) until the oldest failure leaves the window.  Remembers at most
    ``max_addresses`` addresses (the least recent are forgotten), so a flood from many
    addresses cannot grow it without bound."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic,
                 max_addresses: int = 10_000) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._max = max_addresses
        self._fails: "collections.OrderedDict[str, collections.deque]" = \
            collections.OrderedDict()
        self._lock = threading.Lock()

    def blocked(self, address: str) -> Optional[int]:
        """Seconds until ``address`` may try again, or None when it may now."""
        now = self._clock()
        with self._lock:
            fails = self._fails.get(address)
            if fails is None:
                return None
            while fails and fails[0] <= now - self.window:
                fails.popleft()
            if not fails:
                del self._fails[address]
                return None
            if len(fails) >= self.limit:
                return max(1, math.ceil(fails[0] + self.window - now))
            return None

    def failed(self, address: str) -> None:
        """Count a request with an invalid key from ``address``."""
        with self._lock:
            fails = self._fails.setdefault(address, collections.deque())
            fails.append(self._clock())
            self._fails.move_to_end(address)
            while len(self._fails) > self._max:
                self._fails.popitem(last=False)


class Busy(Exception):
    """The pool cannot start this job in time; answer 503 with ``retry_after``."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Job:
    fn: Callable[[], Any]
    future: Future = field(default_factory=Future)
    started: threading.Event = field(default_factory=threading.Event)
    abandoned: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    on_start: Optional[Callable[[], object]] = None  # called on the worker as it starts


class AnswerPool:
    """``workers`` threads answering from a queue of at most ``max_queue`` waiting jobs."""

    def __init__(self, workers: int, max_queue: int) -> None:
        self.workers = max(1, int(workers))
        self.max_queue = max(0, int(max_queue))
        self._queue: "queue.Queue[Optional[Job]]" = queue.Queue()
        self._waiting = 0  # queued, not taken by a worker yet
        self._running = 0
        self._lock = threading.Lock()
        self._durations: collections.deque = collections.deque(maxlen=50)
        self._threads = [
            threading.Thread(target=self._run, name=f"answer-{i}", daemon=True)
            for i in range(self.workers)
        ]
        for t in self._threads:
            t.start()

    def retry_after(self) -> int:
        """Seconds until a new job could probably start: the queue ahead times the mean
        answer time, over the workers (at least 1)."""
        mean = (sum(self._durations) / len(self._durations)) if self._durations else 1.0
        with self._lock:
            ahead = self._waiting + self.workers
        return max(1, math.ceil(mean * ahead / self.workers))

    def submit(self, fn: Callable[[], Any],
               on_start: Optional[Callable[[], object]] = None) -> Job:
        """Queue ``fn``; raises Busy when the queue is full.  ``on_start`` runs on the
        worker thread when the job starts (the server wakes the waiting request with it
        instead of polling)."""
        with self._lock:
            idle = self.workers - self._running
            if self._waiting >= self.max_queue + max(0, idle):
                full = True
            else:
                full = False
                self._waiting += 1
        if full:
            raise Busy("The server is busy answering other questions. Try again shortly.",
                       self.retry_after())
        job = Job(fn, on_start=on_start)
        self._queue.put(job)
        return job

    def abandon(self, job: Job) -> bool:
        """Drop ``job`` if it has not started; returns True when it was dropped."""
        with job.lock, self._lock:
            if job.started.is_set() or job.abandoned:
                return not job.started.is_set()
            job.abandoned = True
            self._waiting -= 1  # its place in the queue is free at once
        return True

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            with job.lock, self._lock:
                if job.abandoned:
                    continue
                self._waiting -= 1
                job.started.set()
                self._running += 1
            if job.on_start is not None:
                try:
                    job.on_start()
                except Exception:  # the waiting request also sees job.started
                    log.exception("Starting an answer's notification failed")
            t0 = time.monotonic()
            try:
                result = job.fn()
            except BaseException as exc:  # handed to the request that waits for it
                job.future.set_exception(exc)
            else:
                job.future.set_result(result)
            finally:
                with self._lock:
                    self._running -= 1
            self._durations.append(time.monotonic() - t0)

    def close(self) -> None:
        for _ in self._threads:
            self._queue.put(None)
