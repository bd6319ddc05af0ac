"""Running one question on the answer pool: budgets, cancellation and streaming.

A question waits for a worker at most ``queue_wait_s`` (then 503 with ``Retry-After``)
and runs at most ``timeout_s`` once started.  Over that budget its cancel check turns
true, the library stops generating, and the server records the question in the audit
log as timed out and answers 504 "Query processing timed out. Try a simpler question."
(an answer the library itself stopped at its generation budget comes back the same way).
A client that disconnects sets the same cancel check: the generation stops at its next
token and nothing is recorded, as when a reader presses Stop in the window.

With ``Accept: text/event-stream`` the tokens go out as server-sent events while they are
generated (``event: token``), then one ``event: answer`` with the checked answer, which
may differ from the streamed text (the grounding check can replace it), or one
``event: error`` carrying the status the plain request would have had.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from typing import Any, Optional
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import JSONResponse, StreamingResponse

from bookreader.core.prompts import TIMEOUT_MESSAGE
from bookreader.core.types import Mode
from bookreader.errors import BookReaderError, Cancelled, QueryTimeout
from bookreader.server.app import (
    ApiError,
    from_bookreader_error,
    redact,
    server_error,
    state_of,
)
from bookreader.server.limits import Busy

log = logging.getLogger(__name__)

_POLL_S = 0.5  # how often a waiting request looks for a vanished client


def _outcome(answer: Any) -> str:
    value = getattr(answer, "outcome", None)
    if value:
        return str(getattr(value, "value", value))
    if answer.error:
        return "timeout" if answer.error == TIMEOUT_MESSAGE else "error"
    return "not_answered" if answer.fallback else "answered"


def _timed_out(answer: Any) -> bool:
    """The library stopped this answer at its own time budget."""
    return _outcome(answer) == "timeout" or answer.error == TIMEOUT_MESSAGE


def answer_payload(answer: Any, session_id: str) -> dict[str, Any]:
    """The ``ask --json`` fields plus ADR-003's ``response``/``in_selected_text``/
    ``session_id``, and each citation's page rectangles and highlighted page image URL."""
    from bookreader.core.types import answer_to_dict

    data = answer_to_dict(answer)
    citations = []
    for c, base in zip(answer.citations, data["citations"]):
        rects = [[round(float(x), 2) for x in r] for r in c.rects]
        item = {**base, "label": c.page_label, "rects": rects}
        if answer.book_id and c.page >= 0:
            hl = ";".join(",".join(str(x) for x in r) for r in rects)
            item["page_image"] = (f"/v1/books/{answer.book_id}/pages/{c.page}.png"
                                  + (f"?highlight={quote(hl)}" if hl else ""))
        citations.append(item)
    data.update(
        response=answer.text,
        in_selected_text=answer.in_selected_text,
        session_id=session_id,
        citations=citations,
        outcome=_outcome(answer),
        book_id=answer.book_id or None,
        answer_id=answer.answer_id,
        query_id=answer.query_id,
    )
    return data


def clean_session_id(value: Any) -> str:
    """The client's session id (1-64 printable characters), or a new one."""
    if value is None or value == "":
        return str(uuid.uuid4())
    if not isinstance(value, str) or not (0 < len(value.strip()) <= 64) or \
            not value.strip().isprintable():
        raise ApiError(422, "invalid_input",
                       "session_id must be text of 1-64 printable characters.")
    return value.strip()


def wants_stream(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "").lower()


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode("utf-8")


class _Question:
    """One question's job on the pool and how its result becomes a response."""

    def __init__(self, request: Request, client: str, session_id: str, ask: dict) -> None:
        self.state = state_of(request)
        self.request = request
        self.client = client
        self.session_id = session_id
        self.ask = ask
        self.cancel_event = threading.Event()
        self.loop = asyncio.get_running_loop()
        self.tokens: Optional[asyncio.Queue] = None

    def _on_token(self, text: str) -> None:
        if self.tokens is not None:
            self.loop.call_soon_threadsafe(self.tokens.put_nowait, ("token", text))

    def work(self) -> tuple[str, Any]:
        """Runs on a pool thread."""
        state, ask = self.state, self.ask
        deadline = time.monotonic() + state.timeout_s
        timed_out = threading.Event()

        def cancel() -> bool:
            if self.cancel_event.is_set():
                return True
            if time.monotonic() > deadline:
                timed_out.set()
                return True
            return False

        def stop_reason() -> Optional[QueryTimeout]:
            # The budget, not the client, stopped it: the library records the question
            # once, as a timeout (never also as a Stop).
            if timed_out.is_set() and not self.cancel_event.is_set():
                return QueryTimeout(TIMEOUT_MESSAGE)
            return None

        try:
            answer = state.library.ask(
                ask["question"], mode=ask["mode"], book=ask.get("book"),
                selection=ask.get("selection"), pages=ask.get("pages"), backend=state.backend,
                on_token=self._on_token if self.tokens is not None else None, cancel=cancel, session_id=self.session_id,
                client_id=self.client, stop_reason=stop_reason,
            )
        except Cancelled:
            if stop_reason() is not None:
                return "timeout", None
            # Counted here: a streamed request's reader is gone by now.
            state.counters.add("cancelled")
            log.info("Answer for %s stopped: the client disconnected", self.client)
            return "cancelled", None
        return "answer", answer

    async def start(self):
        """Queue the job and wait until a worker takes it (503 when it waits too long)."""
        state = self.state
        if not state.ready.is_set():
            raise ApiError(503, "loading", "The server is still loading its models and "
                           "books. Try again in a few seconds.", {"Retry-After": "5"})
        if state.load_error:
            raise ApiError(503, "not_ready", state.load_message, {"Retry-After": "60"},
                           error_id=state.load_error_id)
        started = asyncio.Event()
        loop = self.loop
        job = state.pool.submit(self.work,
                                on_start=lambda: loop.call_soon_threadsafe(started.set))
        deadline = loop.time() + state.queue_wait_s
        while not job.started.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0 or await self.request.is_disconnected():
                if state.pool.abandon(job):
                    raise Busy("The server is busy answering other questions and this one "
                               "waited longer than its budget. Try again shortly.",
                               state.pool.retry_after())
                break
            # woken by the worker as it takes the job; every half second the request
            # looks whether its client is still there
            try:
                await asyncio.wait_for(started.wait(), timeout=min(remaining, _POLL_S))
            except asyncio.TimeoutError:
                pass
        return job

    def result_to_response(self, kind: str, value: Any) -> tuple[int, dict, dict]:
        """(status, JSON body, headers) for a finished job."""
        counters = self.state.counters
        if kind == "cancelled":
            return 499, {"error": "The client went away; the answer was stopped.",
                         "code": "cancelled"}, {}
        if kind == "timeout" or (kind == "answer" and _timed_out(value)):
            counters.add("timed_out")
            body = {"error": TIMEOUT_MESSAGE, "code": "timeout", "session_id": self.session_id}
            if kind == "answer" and value.error and value.error != TIMEOUT_MESSAGE:
                # the library's own words on which budget ran out
                body["detail"] = redact(value.error, self.state.settings)
            return 504, body, {}
        if value.error:
            counters.add("failed")
            log.warning("Answer failed for %s: %s", self.client, value.error)
            return 502, {"error": redact(value.error, self.state.settings),
                         "code": "answer_failed", "session_id": self.session_id}, {}
        counters.add("answered")
        return 200, answer_payload(value, self.session_id), {}

    def error_of(self, exc: BaseException) -> tuple[int, dict, dict]:
        if isinstance(exc, BookReaderError):
            err = from_bookreader_error(exc, self.state.settings)
        elif isinstance(exc, ApiError):
            err = exc
        else:
            err = server_error(f"Unexpected {type(exc).__name__} while answering: {exc}",
                               exc=exc)
        return err.status, err.body(), err.headers


async def run_question(request: Request, client: str, session_id: str, ask: dict):
    """Answer ``ask`` ({question, mode, book, selection, pages}) as JSON or as events."""
    q = _Question(request, client, session_id, ask)
    stream = wants_stream(request)
    if stream:
        q.tokens = asyncio.Queue()
    job = await q.start()
    future = asyncio.wrap_future(job.future)
    if not stream:
        while True:
            done, _ = await asyncio.wait({future}, timeout=_POLL_S)
            if done:
                break
            if await request.is_disconnected():
                q.cancel_event.set()
        try:
            kind, value = future.result()
        except BaseException as exc:  # a BookReaderError (audited by the library) or a bug
            status, body, headers = q.error_of(exc)
            if status >= 500:
                q.state.counters.add("failed")
            return JSONResponse(body, status_code=status, headers=headers)
        status, body, headers = q.result_to_response(kind, value)
        return JSONResponse(body, status_code=status, headers=headers)

    tokens = q.tokens
    assert tokens is not None  # set above for a streaming request
    future.add_done_callback(lambda f: tokens.put_nowait(("done", f)))

    async def events():
        finished = False
        try:
            yield _sse("start", {"session_id": session_id})
            while True:
                kind, item = await tokens.get()
                if kind == "token":
                    yield _sse("token", {"text": item})
                    continue
                finished = True
                try:
                    result_kind, value = item.result()
                except BaseException as exc:
                    status, body, _ = q.error_of(exc)
                    yield _sse("error", {**body, "status": status})
                    return
                status, body, _ = q.result_to_response(result_kind, value)
                yield _sse("answer" if status == 200 else "error",
                           body if status == 200 else {**body, "status": status})
                return
        finally:
            if not finished:
                log.info("Client %s went away during a streamed answer; stopping it", client)
                q.cancel_event.set()

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


#: Larger page numbers are not pages of any book (and would not fit a message).
MAX_PAGE = 10**7


def parse_pages(value: Any) -> Optional[tuple[int, int]]:
    """``[a, b]``, ``a`` or ``"a-b"`` (0-based physical pages, inclusive)."""
    if value is None:
        return None
    if isinstance(value, str):
        from bookreader.cli import parse_pages as parse_text

        if len(value) > 40:
            raise ApiError(422, "invalid_input",
                           "pages must be [first, last] (0-based page numbers).")
        return parse_text(value)
    if isinstance(value, bool):
        value = None
    if isinstance(value, int):
        value = [value, value]
    if isinstance(value, list) and len(value) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in value):
        if not all(0 <= x <= MAX_PAGE for x in value):
            raise ApiError(422, "invalid_input",
                           f"pages must be page numbers from 0 to {MAX_PAGE:,}.")
        return (value[0], value[1])
    raise ApiError(422, "invalid_input", "pages must be [first, last] (0-based page numbers).")


def text_field(data: dict, name: str, *, required: bool) -> Optional[str]:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ApiError(422, "invalid_input",
                       f"'{name}' is {'missing' if value is None else 'not text'}. Send it as "
                       "a JSON string.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escape such as "\\ud800"
        raise ApiError(422, "invalid_input",
                       f"'{name}' holds an unpaired surrogate (\\uD800-\\uDFFF), which is not "
                       "text. Send it as UTF-8 text.") from None
    return value


MODES = {"book": Mode.BOOK, "highlight": Mode.HIGHLIGHT}
