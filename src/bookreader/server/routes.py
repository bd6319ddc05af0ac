"""The routes of ``bookreader serve``.  Page numbers are 0-based physical pages, the same
numbers as the ``page`` of a citation and ``bookreader ask --json``."""

from __future__ import annotations

import html
import logging
import math
from importlib import resources
from typing import Any, Optional

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from bookreader.core.types import Mode
from bookreader.server.answers import (
    MODES,
    clean_session_id,
    parse_pages,
    run_question,
    text_field,
)
from bookreader.server.app import ApiError, authenticate, echo, read_json, state_of

log = logging.getLogger(__name__)

MAX_ZOOM = 4.0
MAX_RECTS = 200
#: PDF pages are at most 14,400 points wide (the PDF 1.7 limit): larger is no place on one.
MAX_POINT = 1_000_000
HIGHLIGHT_RGB = (255, 214, 0)
HIGHLIGHT_ALPHA = 0.38


def _book_json(info: Any) -> dict[str, Any]:
    return {"book_id": info.book_id, "title": info.title, "pages": info.page_count,
            "chunks": info.chunk_count, "state": info.state, "message": info.message}


def register(app: FastAPI) -> None:
    auth = [Depends(authenticate)]

    @app.get("/health", tags=["server"])
    def health(request: Request) -> dict[str, Any]:
        """Ready or loading (no key needed)."""
        state = state_of(request)
        status = ("failed" if state.load_error else "ready") if state.ready.is_set() \
            else "loading"
        return {"status": status, "message": state.load_message,
                "error_id": state.load_error_id or None,
                "backend": state.backend, "books": len(state.books),
                "workers": state.pool.workers, "max_queue": state.pool.max_queue,
                "timeout_s": state.timeout_s, "rate_limit": state.config.rate_limit,
                "rate_limit_store": state.rate_limit_store,
                "counters": state.counters.as_dict()}

    @app.post("/query-selected-text", dependencies=auth, tags=["questions"])
    async def query_selected_text(request: Request):
        """ADR-003: ``{"query", "selected_text", "session_id"}`` answered from the
        selection only (optionally ``book_id`` names the book it came from)."""
        data = await read_json(request)
        query = text_field(data, "query", required=True)
        selected = text_field(data, "selected_text", required=True)
        session_id = clean_session_id(data.get("session_id"))
        book = None
        if data.get("book_id") is not None:
            book = state_of(request).served_book(str(data["book_id"])).book_id
        pages = parse_pages(data.get("pages"))
        return await run_question(request, request.state.client_id, session_id, {
            "question": query, "mode": Mode.SELECTED, "selection": selected, "book": book,
            "pages": pages if book else None})

    @app.post("/v1/books/{book_id}/query", dependencies=auth, tags=["questions"])
    async def query_book(book_id: str, request: Request):
        """``{"question", "mode": "book"|"highlight", "selection"?, "pages"?,
        "session_id"?}``: a whole-book or highlight answer with citations."""
        state = state_of(request)
        info = state.served_book(book_id)
        data = await read_json(request)
        question = text_field(data, "question", required=True)
        mode_name = data.get("mode", "book")
        if not isinstance(mode_name, str) or mode_name not in MODES:
            raise ApiError(422, "invalid_input",
                           f"mode must be 'book' or 'highlight', not {echo(repr(mode_name))}. Ask "
                           "about a selection alone with POST /query-selected-text.")
        mode = MODES[mode_name]
        selection = text_field(data, "selection", required=mode is Mode.HIGHLIGHT)
        pages = parse_pages(data.get("pages"))
        session_id = clean_session_id(data.get("session_id"))
        return await run_question(request, request.state.client_id, session_id, {
            "question": question, "mode": mode, "book": info.book_id,
            "selection": selection if mode is Mode.HIGHLIGHT else None, "pages": pages})

    @app.get("/v1/books", dependencies=auth, tags=["books"])
    def list_books(request: Request) -> list[dict[str, Any]]:
        return [_book_json(b) for b in state_of(request).books.values()]

    @app.get("/v1/books/{book_id}", dependencies=auth, tags=["books"])
    def get_book(book_id: str, request: Request) -> dict[str, Any]:
        return _book_json(state_of(request).served_book(book_id))

    @app.get("/v1/books/{book_id}/pages/{page}.png", dependencies=auth, tags=["books"],
             response_class=Response)
    def page_png(book_id: str, page: str, request: Request, zoom: float = 1.5,
                 highlight: Optional[str] = None) -> Response:
        """The page as PNG; ``highlight=x0,y0,x1,y1;...`` (PDF points, as in a citation's
        ``rects``) paints those rectangles yellow."""
        state = state_of(request)
        info = state.served_book(book_id)
        try:
            index = int(page)
        except ValueError:
            raise ApiError(422, "invalid_input",
                           f"'{echo(page)}' is not a page number.") from None
        if not 0 <= index < info.page_count:
            raise ApiError(404, "page_not_found",
                           f"'{info.title}' has pages 0-{info.page_count - 1}; there is no "
                           f"page {index}.")
        if not 0.1 <= zoom <= MAX_ZOOM:  # also NaN
            raise ApiError(422, "invalid_input", f"zoom must be between 0.1 and {MAX_ZOOM}.")
        rects = _parse_rects(highlight)
        pdf = state.library.open_pdf(info.book_id)
        png = _render_png(pdf, index, zoom, rects)
        return Response(png, media_type="image/png",
                        headers={"Cache-Control": "private, max-age=3600"})

    @app.get("/v1/sessions/{session_id}", dependencies=auth, tags=["questions"])
    def get_session(session_id: str, request: Request) -> dict[str, Any]:
        """The questions and answers of a session asked with this key, oldest first."""
        from bookreader.server.answers import answer_payload

        state = state_of(request)
        session_id = clean_session_id(session_id)
        answers = state.library.audit.session(session_id, client_id=request.state.client_id)
        if not answers:
            raise ApiError(404, "session_not_found",
                           f"No questions were recorded in session '{session_id}' with this "
                           "key.")
        items = []
        for a in answers:
            item = answer_payload(a, session_id)
            item.update(question=a.question, created_at=a.created_at,
                        error=a.error or None)
            items.append(item)
        return {"session_id": session_id, "questions": items}

    @app.get("/static/bookreader.js", include_in_schema=False)
    def client_script() -> FileResponse:
        return FileResponse(str(_static("bookreader.js")), media_type="text/javascript")

    @app.get("/demo", include_in_schema=False)
    def demo(request: Request) -> HTMLResponse:
        return HTMLResponse(demo_page(state_of(request).sample_book_id))


def _static(name: str):
    return resources.files("bookreader.server") / "static" / name


def _parse_rects(text: Optional[str]) -> list[tuple[float, float, float, float]]:
    """``x0,y0,x1,y1;...`` in PDF points, finite; the first :data:`MAX_RECTS` count."""
    if not text:
        return []
    rects = []
    for part in text.split(";")[:MAX_RECTS]:
        try:
            x0, y0, x1, y1 = (float(v) for v in part.split(","))
        except ValueError:
            raise ApiError(422, "invalid_input", "highlight must be x0,y0,x1,y1;... in PDF "
                           "points, as in a citation's rects.") from None
        if not all(math.isfinite(v) and abs(v) <= MAX_POINT for v in (x0, y0, x1, y1)):
            raise ApiError(422, "invalid_input",
                           f"highlight coordinates must be numbers between -{MAX_POINT:,} and "
                           f"{MAX_POINT:,} PDF points (not NaN or infinity).")
        rects.append((x0, y0, x1, y1))
    return rects


def _render_png(pdf: Any, index: int, zoom: float, rects: list) -> bytes:
    import fitz
    import numpy as np

    samples, width, height, stride = pdf.render(index, zoom)
    if rects:
        page_w, page_h = pdf.page_size(index)
        sx, sy = width / max(page_w, 1.0), height / max(page_h, 1.0)
        img = np.frombuffer(samples, dtype=np.uint8).reshape(height, stride)[:, : width * 3]
        img = img.reshape(height, width, 3).astype(np.float32)
        color = np.array(HIGHLIGHT_RGB, dtype=np.float32)
        for x0, y0, x1, y1 in rects:
            a0, a1 = max(0, int(x0 * sx)), min(width, int(x1 * sx) + 1)
            b0, b1 = max(0, int(y0 * sy)), min(height, int(y1 * sy) + 1)
            if a1 > a0 and b1 > b0:
                region = img[b0:b1, a0:a1]
                img[b0:b1, a0:a1] = region * (1 - HIGHLIGHT_ALPHA) + color * HIGHLIGHT_ALPHA
        samples = img.astype(np.uint8).tobytes()
        stride = width * 3
    pix = fitz.Pixmap(fitz.csRGB, width, height, samples, 0)
    return pix.tobytes("png")


def demo_page(book_id: Optional[str]) -> str:
    """A page with the sample book's text and the browser client."""
    from bookreader.core.samplebook import parse_guide

    guide = parse_guide()
    parts = []
    for ch in guide.chapters:
        parts.append(f"<h2>{html.escape(ch.heading)}</h2>{_blocks(ch.intro)}")
        for sec in ch.sections:
            parts.append(f"<h3>{html.escape(sec.heading)}</h3>{_blocks(sec.blocks)}")
    title = html.escape(guide.meta.get("title", "BookReader guide"))
    book_attr = f' data-book-id="{html.escape(book_id)}"' if book_id else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{title} · BookReader demo</title>
<style>
body{{font:17px/1.55 Georgia,serif;max-width:46em;margin:2em auto;padding:0 1em;color:#222}}
h1,h2,h3{{font-family:system-ui,sans-serif}} pre{{background:#f4f4f4;padding:.6em;overflow:auto}}
.demo-key{{font:14px system-ui,sans-serif;background:#eef4fb;padding:.7em 1em;border-radius:6px}}
.demo-key input{{width:24em}}
</style></head><body>
<div class="demo-key">Select any passage below and click <b>Ask about this</b>.
API key: <input id="demo-key" type="password" placeholder="token from `bookreader keys add NAME`">
</div>
<h1>{title}</h1>
<article id="book-text">{''.join(parts)}</article>
<script src="/static/bookreader.js"></script>
<script>
(function () {{
  var input = document.getElementById('demo-key');
  var fromHash = new URLSearchParams(location.hash.slice(1)).get('key');
  input.value = fromHash || sessionStorage.getItem('bookreader-key') || '';
  if (fromHash) {{ sessionStorage.setItem('bookreader-key', fromHash); }}
  BookReader.init({{server: location.origin, key: function () {{ return input.value.trim(); }},
                   bookId: document.body.dataset.bookId || null}});
}})();
</script>
</body></html>""".replace("<body>", f"<body{book_attr}>", 1)


def _blocks(blocks: list) -> str:
    out = []
    for kind, content in blocks:
        if kind == "p":
            out.append(f"<p>{html.escape(str(content))}</p>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{html.escape(str(i))}</li>" for i in content)
                       + "</ul>")
        elif kind == "pre":
            out.append(f"<pre>{html.escape(str(content))}</pre>")
    return "".join(out)
