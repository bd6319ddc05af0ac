"""A local stand-in for an OpenAI-compatible model server, for the error cases a real
local server will not produce on demand (a refused key, rate limiting, a stream cut in the
middle, a too-long context).  The normal path is tested against llama.cpp's own server.

It listens on 127.0.0.1 in a background thread and answers ``GET /v1/models`` (the
``models`` it knows) and ``POST /v1/chat/completions``: one word of the reply per streamed
chunk, at most ``max_tokens`` of them, then ``finish_reason`` and ``data: [DONE]``.  A
request for a model it does not know gets 404 as Ollama and vLLM answer it.  Each chat
request takes the next scripted :class:`Behaviour`; every request is recorded.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

DEFAULT_TEXT = "The mitochondria release energy from food and store it in ATP."
MODEL = "fake-model-7b"
CONTEXT_MESSAGE = ("This model's maximum context length is 2048 tokens. However, you "
                   "requested 5000 tokens. Please reduce the length of the messages.")


@dataclass(frozen=True)
class Behaviour:
    """How one chat request is answered.

    Attributes:
        kind: "normal", "status" (an HTTP error with ``message``), "cut" (the connection
            closes after ``after`` chunks, without ``[DONE]``) or "stream_error" (an error
            object in the stream after ``after`` chunks).
    """

    kind: str = "normal"
    text: str = DEFAULT_TEXT
    status: int = 200
    message: str = ""
    after: int = 3
    retry_after: str = "0"


@dataclass
class FakeOpenAIServer:
    models: tuple[str, ...] = (MODEL,)
    script: list[Behaviour] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: The key every request must carry (None: no key needed).
    api_key: Optional[str] = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None

    def __enter__(self) -> "FakeOpenAIServer":
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="fake-openai",
                         daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def queue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.script.extend(behaviours)

    def next_behaviour(self) -> Behaviour:
        with self._lock:
            return self.script.pop(0) if self.script else Behaviour()

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Silence the access log."""

    def _authorised(self) -> bool:
        want = self.fake.api_key
        if want is None or self.headers.get("authorization") == f"Bearer {want}":
            return True
        self._json(401, {"error": {"message": "Incorrect API key provided",
                                   "type": "invalid_request_error"}})
        return False

    def _record(self, body: Any) -> None:
        with self.fake._lock:
            self.fake.requests.append({"path": self.path, "body": body,
                                       "headers": {k.lower(): v for k, v in self.headers.items()}})

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._record(None)
        if not self._authorised():
            return
        if self.path.rstrip("/") != "/v1/models":
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        self._json(200, {"object": "list", "data": [
            {"id": m, "object": "model", "owned_by": "fake"} for m in self.fake.models]})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            body = None
        self._record(body)
        if not self._authorised():
            return
        if self.path != "/v1/chat/completions" or not isinstance(body, dict):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        b = self.fake.next_behaviour()
        if b.kind == "status":
            headers = {"retry-after": b.retry_after} if b.status == 429 else {}
            self._json(b.status, {"error": {"message": b.message or f"scripted {b.status}",
                                            "type": "error", "code": b.status}}, headers)
            return
        if body.get("model") not in self.fake.models:
            self._json(404, {"error": {"message": f"model '{body.get('model')}' not found",
                                       "type": "not_found_error"}})
            return
        words = b.text.split(" ")[: int(body.get("max_tokens") or 10_000)]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for i, word in enumerate(words):
                if b.kind in ("cut", "stream_error") and i >= b.after:
                    if b.kind == "stream_error":
                        self._chunk(_sse({"error": {"message": b.message or "overloaded"}}))
                        self._chunk(b"")
                    else:  # close without the terminating chunk: the body is incomplete
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                piece = word if i == 0 else " " + word
                self._chunk(_sse(_delta(body["model"], {"content": piece}, None)))
            self._chunk(_sse(_delta(body["model"], {}, "stop")))
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client hung up (cancel)

    def _json(self, status: int, payload: Any, headers: Optional[dict] = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _delta(model: str, delta: dict, finish: Optional[str]) -> dict:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _sse(data: dict) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()
