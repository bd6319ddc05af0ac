"""Connection limits of ``bookreader serve``: slow or half-open clients cannot lock the
others out.

Every connection holds a file descriptor from the moment it is accepted, and uvicorn
waits for a request head without a time limit.  A client that opens many sockets and
never finishes its request headers used to take every descriptor (1,024 by default on
Linux): from then on the server could accept nothing, and every real request failed until
those sockets went away.  A FastAPI middleware cannot help: it sees a request only once
its head is complete.  So the HTTP protocol uvicorn runs per connection is wrapped here
(:func:`protocol_class`) and one :class:`ConnectionGuard` watches all of them:

* A connection must send a complete request head within ``header_timeout_s`` of being
  accepted (or of its previous response, for a kept-alive connection); otherwise it is
  answered 408 and closed.  A head larger than ``max_head_bytes`` is answered 431.
* At most ``max_per_ip`` connections per client address and ``max_connections`` in all
  (a budget below the descriptor limit, :func:`connection_budget`).  At either cap the
  oldest connection *still waiting for its request head* is closed to make room (503), so
  a flood of idle sockets evicts itself while a client that sends its request at once
  gets in; only when every connection is busy with a request is the new one refused (503).

:func:`raise_open_files_limit` raises the descriptor soft limit to the hard limit (at
most 65,536) at startup where the system allows it, so the budget is rarely the binding
limit.  Request bodies have their own time limit (``read_json`` in :mod:`.app`).
"""

from __future__ import annotations

import asyncio
import http
import json
import logging
from collections import Counter
from typing import Any, Optional

log = logging.getLogger(__name__)

HEADER_TIMEOUT_S = 10.0
MAX_HEAD_BYTES = 64 * 1024
MAX_PER_IP = 128
MAX_CONNECTIONS = 4096
#: Descriptors kept free for everything else the server opens (the books' stores and
#: PDFs, SQLite, models, logs) and for a burst of accepts between two evictions.
FD_RESERVE = 256
OPEN_FILES_TARGET = 65536
#: How long a connection answered 431 mid-upload is kept half-closed (see raw_reply).
LINGER_S = 2.0


def raise_open_files_limit(target: int = OPEN_FILES_TARGET) -> int:
    """Raise the soft limit on open files towards the hard limit (at most ``target``);
    returns the soft limit in force afterwards (0 where there is none to read)."""
    try:
        import resource
    except ImportError:  # Windows: no descriptor limit of this kind
        return 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if soft == resource.RLIM_INFINITY or soft >= want:
        return int(target if soft == resource.RLIM_INFINITY else soft)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ValueError, OSError) as exc:
        log.warning("Cannot raise the open-file limit from %d to %d: %s", soft, want, exc)
        return int(soft)
    log.info("Open-file limit raised from %d to %d", soft, want)
    return int(want)


def connection_budget(open_files: int, requested: Optional[int] = None) -> int:
    """Connections the server may hold: ``requested`` (default :data:`MAX_CONNECTIONS`),
    but never so many that the descriptors run out (``open_files`` minus a reserve)."""
    cap = int(requested or MAX_CONNECTIONS)
    if open_files > 0:
        cap = min(cap, open_files - FD_RESERVE)
    return max(16, cap)


def raw_reply(transport: Any, status: int, code: str, message: str,
              linger_s: float = 0.0) -> None:
    """Write a complete JSON error response on ``transport`` and close it.

    With ``linger_s``, the connection is half-closed first and closed only after that
    time (what arrives meanwhile is dropped): a client still sending when the server
    closes would otherwise get a reset instead of the response.
    """
    body = json.dumps({"error": message, "code": code}).encode("utf-8")
    head = (f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode("ascii")
    try:
        transport.write(head + body)
        if linger_s > 0 and transport.can_write_eof():
            transport.write_eof()
            asyncio.get_running_loop().call_later(linger_s, transport.close)
            return
    except (OSError, RuntimeError):  # gone already
        pass
    transport.close()


class ConnectionGuard:
    """The open connections of one server, the per-address and total caps, and the
    request-head time limit.  Runs on the event loop thread only (no locks)."""

    def __init__(self, *, max_connections: int = MAX_CONNECTIONS,
                 max_per_ip: int = MAX_PER_IP, header_timeout_s: float = HEADER_TIMEOUT_S,
                 max_head_bytes: int = MAX_HEAD_BYTES) -> None:
        self.max_connections = max(1, int(max_connections))
        self.max_per_ip = max(1, int(max_per_ip))
        self.header_timeout_s = float(header_timeout_s)
        self.max_head_bytes = int(max_head_bytes)
        self.open: dict[Any, None] = {}  # every connection, oldest first
        self.waiting: dict[Any, None] = {}  # those without a complete request head, oldest first
        self.per_ip: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()  # evicted, refused, timed_out, too_large

    # --- called by the protocol -------------------------------------------------------
    def admit(self, conn: "_Guarded") -> bool:
        """Make room for a new connection; False when it must be refused."""
        ip = conn.br_ip
        if self.per_ip[ip] >= self.max_per_ip and not self._evict(ip):
            return False
        if len(self.open) >= self.max_connections and not self._evict(None):
            return False
        self.open[conn] = None
        self.per_ip[ip] += 1
        return True

    def wait_for_head(self, conn: "_Guarded") -> None:
        self.waiting.pop(conn, None)
        self.waiting[conn] = None

    def head_received(self, conn: "_Guarded") -> None:
        self.waiting.pop(conn, None)

    def closed(self, conn: "_Guarded") -> None:
        if self.open.pop(conn, False) is None:
            self.per_ip[conn.br_ip] -= 1
            if self.per_ip[conn.br_ip] <= 0:
                del self.per_ip[conn.br_ip]
        self.waiting.pop(conn, None)

    # --- eviction -----------------------------------------------------------------------
    def _evict(self, ip: Optional[str]) -> bool:
        """Close the oldest connection still waiting for its request head (from ``ip``,
        or from anywhere); False when there is none."""
        victim = next((c for c in self.waiting if ip is None or c.br_ip == ip), None)
        if victim is None:
            return False
        self.counts["evicted"] += 1
        if self.counts["evicted"] in (1, 100) or self.counts["evicted"] % 1000 == 0:
            log.warning("Closing connections that sent no request (%d so far; now from %s): "
                        "too many connections %s", self.counts["evicted"], victim.br_ip,
                        "from one address" if ip is not None else "in all")
        if victim.br_served:  # a kept-alive connection between requests: clients reconnect
            victim.br_reply(0, "", "")
        else:
            victim.br_reply(503, "too_many_connections",
                            "The server has too many connections waiting for a request; "
                            "this one sent none in time. Send the request right after "
                            "connecting.")
        return True


class _Guarded(asyncio.Protocol):
    """Mixed in before uvicorn's HTTP protocol class (see :func:`protocol_class`)."""

    guard: ConnectionGuard  # set on the class :func:`protocol_class` makes

    br_ip: str = "?"
    _br_transport: Any = None
    _br_cycle: Any = None
    _br_head_bytes = 0
    _br_timer: Optional[asyncio.TimerHandle] = None
    _br_gone = False

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        client = getattr(self, "client", None)
        self.br_ip = str(client[0]) if client else "?"
        self._br_transport = transport
        if not self.guard.admit(self):
            self.guard.counts["refused"] += 1
            self._br_gone = True
            raw_reply(transport, 503, "too_many_connections",
                      "The server has too many open connections. Try again shortly.")
            return
        self._br_wait()

    def data_received(self, data: bytes) -> None:
        if self._br_gone:
            return
        super().data_received(data)
        cycle = getattr(self, "cycle", None)
        if cycle is not None and cycle is not self._br_cycle:  # a request head arrived
            self._br_cycle = cycle
            self._br_stop_waiting()
        elif self._br_timer is not None:  # still waiting for the head
            self._br_head_bytes += len(data)
            if self._br_head_bytes > self.guard.max_head_bytes:
                self.guard.counts["too_large"] += 1
                self.br_reply(431, "headers_too_large",
                              f"The request line and headers are larger than "
                              f"{self.guard.max_head_bytes:,} bytes.", linger_s=LINGER_S)

    def on_response_complete(self) -> None:
        super_complete = getattr(super(), "on_response_complete")
        super_complete()
        cycle = getattr(self, "cycle", None)
        if cycle is not self._br_cycle:  # a pipelined request started at once
            self._br_cycle = cycle
            return
        transport = self._br_transport
        if self._br_gone or transport is None or transport.is_closing():
            return
        if cycle is not None and getattr(cycle, "response_complete", False) and \
                not getattr(self, "pipeline", None):
            self._br_wait()  # kept alive: the next request head has the same time limit

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self._br_stop_waiting()
        self.guard.closed(self)
        super().connection_lost(exc)

    # --- helpers ------------------------------------------------------------------------
    def _br_wait(self) -> None:
        self._br_stop_waiting()
        self._br_head_bytes = 0
        loop = asyncio.get_running_loop()
        self._br_timer = loop.call_later(self.guard.header_timeout_s, self._br_timed_out)
        self.guard.wait_for_head(self)

    def _br_stop_waiting(self) -> None:
        if self._br_timer is not None:
            self._br_timer.cancel()
            self._br_timer = None
        self.guard.head_received(self)

    def _br_timed_out(self) -> None:
        self._br_timer = None
        if self._br_gone:
            return
        self.guard.counts["timed_out"] += 1
        self.br_reply(408, "request_timeout",
                      f"The request headers did not arrive within "
                      f"{self.guard.header_timeout_s:g} s.")

    @property
    def br_served(self) -> bool:
        """A request was received on this connection before."""
        return self._br_cycle is not None

    def br_reply(self, status: int, code: str, message: str, linger_s: float = 0.0) -> None:
        """Answer ``status`` with a JSON error (0: none) and close; the guard forgets the
        connection at once."""
        self._br_gone = True
        self._br_stop_waiting()
        self.guard.closed(self)
        transport = self._br_transport
        if transport is None or transport.is_closing():
            return
        if status:
            raw_reply(transport, status, code, message, linger_s)
        else:
            transport.close()


def protocol_class(guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools when installed, as uvicorn picks it, else h11)
    with ``guard``'s limits; pass it as ``uvicorn.run(..., http=...)``."""
    base: type[asyncio.Protocol]
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        base = HttpToolsProtocol
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol
    return type(f"Guarded{base.__name__}", (_Guarded, base), {"guard": guard})
