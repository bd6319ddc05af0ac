"""A local stand-in for the Anthropic Messages API, for testing the Claude backend.

It listens on 127.0.0.1 (a free port chosen by the OS) in a background thread and answers
``POST /v1/messages`` the way the real API does: a JSON message, or with ``"stream": true``
a server-sent event stream (``message_start``, ``content_block_start``,
``content_block_delta`` with ``text_delta``, ``content_block_stop``, ``message_delta``,
``message_stop``).  Each request takes the next scripted :class:`Behaviour` (``normal``
once the script is used up), and every request is recorded so a test can check headers,
the system prompt and that no secret leaked.

One word of the reply text is one "token": at most ``max_tokens`` words are sent, and then
``stop_reason`` is ``"max_tokens"``.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

DEFAULT_TEXT = "The mitochondria release energy from food and store it in ATP."
MAX_DELAY_S = 5.0  # a slow reply never stalls a test run for long


@dataclass(frozen=True)
class Behaviour:
    """How the server answers one request.

    Attributes:
        kind: "normal", "slow", "status" (an HTTP error), "broken" (the connection is
            closed in the middle of the stream) or "stream_error" (an ``error`` event in
            the middle of the stream, as the real API sends when it becomes overloaded).
        text: The reply text.
        status: HTTP status for kind "status" (401, 429, 500, 529...).
        delay_s: Pause before each streamed event (kind "slow"), or before the response
            headers when ``delay_headers`` is set; capped at ``MAX_DELAY_S``.
        delay_headers: Pause before sending anything at all (a server that never answers).
        after_events: Events sent before a "broken" or "stream_error" stream stops.
        retry_after_ms: ``retry-after-ms`` header on errors, so SDK retries are quick.
        error_type: The ``error.type`` of an error body or error event.
    """

    kind: str = "normal"
    text: str = DEFAULT_TEXT
    status: int = 200
    delay_s: float = 0.0
    delay_headers: bool = False
    after_events: int = 4
    retry_after_ms: int = 1
    error_type: str = ""

    @staticmethod
    def normal(text: str = DEFAULT_TEXT) -> "Behaviour":
        return Behaviour("normal", text=text)

    @staticmethod
    def slow(delay_s: float = 0.05, text: str = DEFAULT_TEXT, *, before_headers: bool = False):
        return Behaviour("slow", text=text, delay_s=delay_s, delay_headers=before_headers)

    @staticmethod
    def error(status: int, error_type: str = "", retry_after_ms: int = 1) -> "Behaviour":
        return Behaviour("status", status=status, error_type=error_type,
                         retry_after_ms=retry_after_ms)

    @staticmethod
    def broken(after_events: int = 4, text: str = DEFAULT_TEXT) -> "Behaviour":
        return Behaviour("broken", text=text, after_events=after_events)

    @staticmethod
    def stream_error(after_events: int = 4, error_type: str = "overloaded_error"):
        return Behaviour("stream_error", after_events=after_events, error_type=error_type)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""


@dataclass
class FakeClaudeServer:
    """The fake API.  Use as a context manager, or call :meth:`start` and :meth:`stop`."""

    script: list[Behaviour] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    default: Behaviour = field(default_factory=Behaviour)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # --- control ---------------------------------------------------------------------
    def start(self) -> "FakeClaudeServer":
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="fake-claude", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> "FakeClaudeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start() the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def queue(self, *behaviours: Behaviour) -> None:
        """Script the next responses, in order."""
        with self._lock:
            self.script.extend(behaviours)

    def next_behaviour(self) -> Behaviour:
        with self._lock:
            return self.script.pop(0) if self.script else self.default

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def wait(self, seconds: float) -> None:
        """Pause (bounded); returns at once when the server is stopping."""
        self._stopping.wait(min(max(0.0, seconds), MAX_DELAY_S))


def free_port() -> int:
    """A port nothing listens on (for connection-refused tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeClaudeServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Silence the default stderr access log."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        self.fake.record(
            RecordedRequest(
                "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw
            )
        )
        behaviour = self.fake.next_behaviour()
        if behaviour.delay_headers:
            self.fake.wait(behaviour.delay_s)
        if not self.path.split("?")[0].endswith("/v1/messages"):
            self._send_error(404, "not_found_error", f"no route {self.path}", behaviour)
            return
        if behaviour.kind == "status":
            etype = behaviour.error_type or _ERROR_TYPES.get(behaviour.status, "api_error")
            self._send_error(behaviour.status, etype, f"scripted {behaviour.status}", behaviour)
            return
        if not isinstance(body, dict):
            self._send_error(400, "invalid_request_error", "body is not JSON", behaviour)
            return
        max_tokens = int(body.get("max_tokens") or 0)
        words = behaviour.text.split(" ")
        stop_reason = "end_turn"
        if max_tokens and len(words) > max_tokens:
            words, stop_reason = words[:max_tokens], "max_tokens"
        model = str(body.get("model", ""))
        if body.get("stream"):
            self._send_stream(words, stop_reason, model, behaviour)
        else:
            self._send_json(200, _message(" ".join(words), stop_reason, model, len(words)))

    # --- responses -------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: Optional[dict] = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, etype: str, message: str, b: Behaviour) -> None:
        payload = {"type": "error", "error": {"type": etype, "message": message}}
        headers = {"retry-after-ms": str(b.retry_after_ms)} if status in (429, 529) or status >= 500 else {}
        self._send_json(status, payload, headers)

    def _send_stream(self, words: list[str], stop_reason: str, model: str, b: Behaviour) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        events: list[tuple[str, dict]] = [
            ("message_start", {"type": "message_start",
                               "message": _message("", None, model, 0, content=[])}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("ping", {"type": "ping"}),
        ]
        for i, word in enumerate(words):
            piece = word if i == 0 else " " + word
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": piece},
            }))
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": len(words)}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        try:
            for n, (name, data) in enumerate(events):
                if b.kind in ("broken", "stream_error") and n >= b.after_events:
                    if b.kind == "stream_error":
                        self._chunk(_sse("error", {"type": "error", "error": {
                            "type": b.error_type, "message": "scripted stream error"}}))
                        self._chunk(b"")
                    else:
                        # Close without the terminating chunk: the body is incomplete.
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if b.kind == "slow" and not b.delay_headers:
                    self.fake.wait(b.delay_s)
                self._chunk(_sse(name, data))
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client hung up (cancel): fine

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _sse(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _message(text: str, stop_reason: Optional[str], model: str, out_tokens: int,
             content: Optional[list] = None) -> dict:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}] if content is None else content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": out_tokens},
    }
