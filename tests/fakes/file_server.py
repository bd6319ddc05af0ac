"""A real HTTP file server on 127.0.0.1 for model download tests: serves one file with
``Range`` support and can drop the first response part-way (a broken connection)."""

from __future__ import annotations

import http.server
import threading


class FileServer:
    """Serves one file with Range support; can drop the first response part-way."""

    def __init__(self, data: bytes, drop_after: int = 0) -> None:
        self.data = data
        self.drop_after = drop_after
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                rng = self.headers.get("Range", "")
                outer.requests.append(rng)
                start = int(rng[6:].split("-")[0]) if rng.startswith("bytes=") else 0
                body = outer.data[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if outer.drop_after and len(outer.requests) == 1:
                    self.wfile.write(body[:outer.drop_after])
                    self.wfile.flush()
                    self.connection.shutdown(2)  # the connection drops mid-file
                    return
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/model.gguf"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
