"""A local stand-in for a Qdrant server's REST API, for the store contract over HTTP.

A Qdrant server binary cannot be installed here (no PyPI or Debian package ships one), so
the ``qdrant:URL`` store is tested through the real qdrant-client talking HTTP to this
server on 127.0.0.1, which answers the endpoints :class:`~bookreader.core.store.server.
ServerStore` uses by handing the request models (parsed with qdrant-client's own pydantic
models, as a server would) to qdrant-client's local mode and returning its results in
Qdrant's response envelope (``{"result": ..., "status": "ok", "time": ...}``).  What it
proves: the store's remote path (URLs, request and response bodies, filters, paging) works
through qdrant-client; what it cannot: the server's own engine.
"""

from __future__ import annotations

import json
import re
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import urlsplit


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


class FakeQdrantServer:
    """Use as a context manager; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        from qdrant_client import QdrantClient

        self.local = QdrantClient(location=":memory:")
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []
        self._httpd: Optional[ThreadingHTTPServer] = None

    def __enter__(self) -> "FakeQdrantServer":
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="fake-qdrant",
                         daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self.local.close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"


_COLLECTION = re.compile(r"^/collections/(?P<name>[^/]+)(?P<rest>/.*)?$")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeQdrantServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Silence the access log."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._handle("GET")

    def do_PUT(self) -> None:  # noqa: N802 - stdlib name
        self._handle("PUT")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._handle("POST")

    def do_DELETE(self) -> None:  # noqa: N802 - stdlib name
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"null") if length else None
        path = urlsplit(self.path).path
        self.fake.requests.append((method, path))
        t0 = time.perf_counter()
        if path == "/" or path == "/healthz":
            self._send(200, {"title": "fake qdrant", "version": "1.15.0"}, raw=True)
            return
        m = _COLLECTION.match(path)
        if m is None:
            self._send(404, {"error": f"no route {path}"}, status="error")
            return
        try:
            with self.fake.lock:
                result = self._route(method, m.group("name"), m.group("rest") or "", body)
        except KeyError as exc:
            self._send(404, {"error": f"Not found: {exc}"}, status="error")
            return
        except ValueError as exc:
            self._send(400, {"error": str(exc)}, status="error")
            return
        self._send(200, _jsonable(result), elapsed=time.perf_counter() - t0)

    def _route(self, method: str, name: str, rest: str, body: Any) -> Any:
        from qdrant_client.http import models

        local = self.fake.local
        done = models.UpdateResult(operation_id=0, status=models.UpdateStatus.COMPLETED)
        if method == "GET" and rest == "/exists":
            return {"exists": local.collection_exists(name)}
        if not rest:
            if method == "GET":
                if not local.collection_exists(name):
                    raise KeyError(f"Collection `{name}` doesn't exist!")
                return local.get_collection(name)
            if method == "PUT":
                req = models.CreateCollection.model_validate(body)
                return local.create_collection(name, vectors_config=req.vectors)
            if method == "DELETE":
                return local.delete_collection(name)
        if not local.collection_exists(name):
            raise KeyError(f"Collection `{name}` doesn't exist!")
        if method == "PUT" and rest == "/index":
            req = models.CreateFieldIndex.model_validate(body)
            with warnings.catch_warnings():  # local mode ignores payload indexes (it says so)
                warnings.simplefilter("ignore", UserWarning)
                local.create_payload_index(name, field_name=req.field_name,
                                           field_schema=req.field_schema)
            return done
        if method == "PUT" and rest == "/points":
            points = body.get("points") if isinstance(body, dict) else None
            if points is None:
                batch = models.PointsBatch.model_validate(body).batch
                local.upsert(name, points=batch)
            else:
                local.upsert(name, points=models.PointsList.model_validate(body).points)
            return done
        if method == "POST" and rest == "/points/query":
            req = models.QueryRequest.model_validate(body)
            return local.query_points(
                name, query=req.query, query_filter=req.filter, limit=req.limit or 10,
                offset=req.offset, with_payload=req.with_payload if req.with_payload
                is not None else True, with_vectors=req.with_vector or False,
                score_threshold=req.score_threshold, using=req.using)
        if method == "POST" and rest == "/points/scroll":
            req = models.ScrollRequest.model_validate(body)
            points, offset = local.scroll(
                name, scroll_filter=req.filter, limit=req.limit or 10, offset=req.offset,
                with_payload=req.with_payload if req.with_payload is not None else True,
                with_vectors=req.with_vector or False, order_by=req.order_by)
            return {"points": points, "next_page_offset": offset}
        if method == "POST" and rest == "/points":
            req = models.PointRequest.model_validate(body)
            return local.retrieve(name, ids=req.ids, with_payload=req.with_payload
                                  if req.with_payload is not None else True,
                                  with_vectors=req.with_vector or False)
        if method == "POST" and rest == "/points/count":
            req = models.CountRequest.model_validate(body or {})
            return local.count(name, count_filter=req.filter,
                               exact=req.exact if req.exact is not None else True)
        raise KeyError(f"{method} {rest}")

    def _send(self, code: int, payload: Any, *, status: Any = "ok", elapsed: float = 0.0,
              raw: bool = False) -> None:
        if raw:
            envelope = payload
        elif status == "ok":
            envelope = {"result": payload, "status": "ok", "time": elapsed}
        else:
            envelope = {"status": payload, "time": elapsed}
        data = json.dumps(envelope).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
