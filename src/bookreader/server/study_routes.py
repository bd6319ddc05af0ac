"""``POST /v1/books/{book_id}/study/{cards|quiz|summary|export}``: study tools over HTTP.

The body names what to study: ``{"pages": [first, last]}`` (0-based physical pages, as
everywhere on this server, or ``"A-B"`` as text), or ``{"chapter": "title"}`` (an outline
entry), optionally with ``"selection"`` (only the sentences of that passage) and
``"limit"``; ``"phrase": true`` lets the server's own model phrase the question cards'
fronts (their backs stay the book's words), and ``"code": true`` adds code cards (a listing
the page explains, and the book's sentence that says what it does).  Cards, quiz and
summary answer with the set as JSON, every item with its verified citation; export answers with the file (``"format"``: anki, csv or markdown).
Each generated set is recorded in the audit log with the API key's name, like a question.
Generation runs on a worker thread and stops at the server's time budget.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from bookreader.errors import BookReaderError, Cancelled
from bookreader.server.answers import parse_pages, text_field
from bookreader.server.app import ApiError, authenticate, from_bookreader_error, read_json, \
    state_of

log = logging.getLogger(__name__)

TOOLS = ("cards", "quiz", "summary")
MEDIA_TYPES = {"anki": "application/octet-stream", "csv": "text/csv; charset=utf-8",
               "markdown": "text/markdown; charset=utf-8"}
SUFFIXES = {"anki": ".apkg", "csv": ".csv", "markdown": ".md"}
#: Most items one request may ask for.
MAX_LIMIT = 500


def _scope(data: dict) -> dict[str, Any]:
    chapter = text_field(data, "chapter", required=False)
    selection = text_field(data, "selection", required=False)
    pages = parse_pages(data.get("pages"))
    if not chapter and pages is None:
        raise ApiError(422, "invalid_input", "Say what to study: \"pages\": [first, last] "
                       "(0-based) or \"chapter\": an outline entry's title.")
    limit = data.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                              or not 1 <= limit <= MAX_LIMIT):
        raise ApiError(422, "invalid_input", f"limit must be a whole number from 1 to "
                       f"{MAX_LIMIT}.")
    phrase = data.get("phrase", False)
    if not isinstance(phrase, bool):
        raise ApiError(422, "invalid_input", "phrase must be true or false.")
    code = data.get("code", False)
    if not isinstance(code, bool):
        raise ApiError(422, "invalid_input", "code must be true or false.")
    return {"chapter": chapter, "pages": None if chapter else pages,
            "selection": selection, "limit": limit, "phrase": phrase, "code": code}


async def _run(request: Request, fn: Any) -> Any:
    """``fn(cancel)`` on a worker thread, stopped at the server's time budget."""
    state = state_of(request)
    deadline = time.monotonic() + state.timeout_s
    stop = threading.Event()

    def cancel() -> bool:
        return stop.is_set() or time.monotonic() > deadline

    try:
        return await asyncio.to_thread(fn, cancel)
    except Cancelled as exc:
        raise ApiError(504, "timeout", "Making the study set took longer than the server's "
                       "time budget. Ask for fewer pages.") from exc
    except BookReaderError as exc:
        raise from_bookreader_error(exc, state.settings) from exc
    finally:
        stop.set()


def register(app: FastAPI) -> None:
    auth = [Depends(authenticate)]

    @app.post("/v1/books/{book_id}/study/{tool}", dependencies=auth, tags=["study"])
    async def study(book_id: str, tool: str, request: Request):
        """Flashcards (``cards``), a ``quiz`` or a ``summary`` of ``pages`` or a
        ``chapter``, every item with its verified citation."""
        from bookreader.core.study.model import study_set_to_dict

        if tool not in TOOLS + ("export",):
            raise ApiError(404, "not_found", f"There is no study tool {tool!r}: use cards, "
                           "quiz, summary or export.")
        state = state_of(request)
        info = state.served_book(book_id)
        data = await read_json(request)
        scope = _scope(data)
        # "phrase": true lets the server's own model phrase question fronts (cards only)
        phrase_with = state.backend if scope.pop("phrase") and tool == "cards" else None
        client = request.state.client_id
        lib = state.library
        if tool != "export":
            made = await _run(request, lambda cancel: lib.study(
                info.book_id, tool, cancel=cancel, client_id=client, phrase_with=phrase_with,
                **scope))
            return JSONResponse(study_set_to_dict(made))
        fmt = data.get("format", "anki")
        if not isinstance(fmt, str) or fmt not in SUFFIXES:
            raise ApiError(422, "invalid_input", "format must be anki, csv or markdown.")

        def export(cancel: Any) -> bytes:
            made = lib.study(info.book_id, "cards", cancel=cancel, client_id=client, **scope)
            with tempfile.TemporaryDirectory(prefix="bookreader-study-") as tmp:
                path = lib.study_export(info.book_id, fmt, Path(tmp) / f"cards{SUFFIXES[fmt]}",
                                        cards=made.cards)
                return path.read_bytes()

        body = await _run(request, export)
        return Response(body, media_type=MEDIA_TYPES[fmt], headers={
            "Content-Disposition": f'attachment; filename="cards{SUFFIXES[fmt]}"'})
