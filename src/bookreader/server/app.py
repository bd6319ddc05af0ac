"""The FastAPI application: errors as JSON, bearer-token auth, rate limits, body caps.

Every error leaves as ``{"error": message, "code": code}`` with the same plain messages
as the command line.  A request the client got wrong is a 4xx that says what to send
instead.  A failure on the server's side (a broken key file, a full disk, a bug) never
shows its text, which may name the server's folders or database: the client gets a
message with an ``error_id`` and the log has the detail under that id.

Auth is required on every route except ``/health``, ``/openapi.json``, ``/docs`` and the
static client files (``/demo`` and ``/static/bookreader.js`` hold no data; the demo asks
for a key in the page).  Invalid keys are limited per client address
(:class:`bookreader.server.limits.FailedAuthLimiter`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from bookreader.config import Settings
from bookreader.errors import BookNotFound, BookReaderError, InvalidInput, QueryTimeout
from bookreader.server.keys import KeyStore
from bookreader.server.limits import Busy
from bookreader.server.state import ServeConfig, ServerState

log = logging.getLogger(__name__)

#: Longest text of a client's own value quoted back in an error message.
ECHO_CHARS = 60
_DB_URL_RE = re.compile(r"\b(?:sqlite|postgres(?:ql)?|mysql)(?:\+\w+)?://\S*", re.IGNORECASE)


class ApiError(Exception):
    """An HTTP error with a message for people and a short machine-readable code."""

    def __init__(self, status: int, code: str, message: str,
                 headers: Optional[dict[str, str]] = None,
                 error_id: Optional[str] = None) -> None:
        # a client's text quoted in the message may hold lone surrogates, which JSON
        # responses cannot encode: written as escapes instead
        message = message.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.error_id = error_id

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.message, "code": self.code}
        if self.error_id:
            out["error_id"] = self.error_id
        return out


def error_response(status: int, code: str, message: str,
                   headers: Optional[dict[str, str]] = None) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


def echo(value: Any) -> str:
    """A client's value quoted back in a message, cut to :data:`ECHO_CHARS`."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= ECHO_CHARS else text[:ECHO_CHARS] + "..."


def server_error(detail: str, *, exc: Optional[BaseException] = None,
                 status: int = 500) -> ApiError:
    """A failure on the server's side: logged in full under a new error id; the client
    gets the id and a message without the detail (which may name paths or databases)."""
    error_id = uuid.uuid4().hex[:12]
    log.error("Server error %s: %s", error_id, detail, exc_info=exc)
    return ApiError(
        status, "server_error",
        f"The server could not complete this request because of a problem on the server "
        f"(error id {error_id}). Tell the instructor: the server log has the details "
        "under that id.", error_id=error_id)


def redact(text: str, settings: Optional[Settings]) -> str:
    """``text`` without the server's folders and database URLs, for a client."""
    text = _DB_URL_RE.sub("[server database]", text or "")
    if settings is None:
        return text
    roots = set()
    for folder in (settings.data_dir, getattr(settings, "models_dir", None), Path.home()):
        if folder:
            roots.add(str(folder))
            try:
                roots.add(str(Path(folder).expanduser().resolve()))
            except (OSError, RuntimeError):
                pass
    for root in sorted((r for r in roots if len(r) > 1), key=len, reverse=True):
        text = text.replace(root, "[server folder]")
    return text


def from_bookreader_error(exc: BookReaderError,
                          settings: Optional[Settings] = None) -> ApiError:
    """The HTTP error a library error maps to.  Only errors about the request itself
    show their message; the others (a store, model, key file or PDF of the server's
    that failed) are server errors with an error id."""
    if isinstance(exc, BookNotFound):
        return ApiError(404, "book_not_found", redact(exc.user_message, settings))
    if isinstance(exc, InvalidInput):
        return ApiError(422, "invalid_input", redact(exc.user_message, settings))
    if isinstance(exc, QueryTimeout):
        return ApiError(504, "timeout", redact(exc.user_message, settings))
    detail = f"{type(exc).__name__}: {exc.user_message}"
    if exc.details:
        detail += f" ({exc.details})"
    return server_error(detail, exc=exc)


def state_of(request: Request) -> ServerState:
    return request.app.state.bookreader


def client_address(request: Request) -> str:
    return request.client.host if request.client else "?"


# --- auth and limits ---------------------------------------------------------------------
def authenticate(request: Request) -> str:
    """The client id (key name) of the request's bearer token; 401 / 429 otherwise.

    A request that presents a wrong key counts against its address; once an address has
    used up its budget of failures every request from it is 429 until the window passes.
    """
    state = state_of(request)
    address = client_address(request)
    blocked = state.auth_failures.blocked(address)
    if blocked is not None:
        raise _auth_limited(state, blocked)
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if not header.strip():
        raise ApiError(
            401, "unauthorized",
            "This server needs an API key: send 'Authorization: Bearer <token>'. The "
            "instructor makes one with `bookreader keys add NAME`.",
            {"WWW-Authenticate": "Bearer"},
        )
    client = state.keys.client_for(token.strip()) \
        if scheme.lower() == "bearer" and token.strip() else None
    if client is None:
        state.auth_failures.failed(address)
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(
                401, "unauthorized",
                "This server needs an API key: send 'Authorization: Bearer <token>'. The "
                "instructor makes one with `bookreader keys add NAME`.",
                {"WWW-Authenticate": "Bearer"},
            )
        raise ApiError(
            401, "unauthorized",
            "The API key is not valid (mistyped or revoked). Ask the instructor for a "
            "current key.",
            {"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    wait = state.limiter.check(client)
    if wait is not None:
        state.counters.add("rate_limited")
        raise ApiError(
            429, "rate_limited",
            f"Too many requests with this key (the limit is {state.config.rate_limit}). "
            f"Try again in {wait} s.",
            {"Retry-After": str(wait)},
        )
    request.state.client_id = client
    return client


def _auth_limited(state: ServerState, wait: int) -> ApiError:
    state.counters.add("auth_limited")
    return ApiError(
        429, "auth_rate_limited",
        f"Too many requests with an invalid API key from this address (the limit is "
        f"{state.config.auth_failure_limit}). Try again in {wait} s with a valid key.",
        {"Retry-After": str(wait)},
    )


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object: 413 over the size cap, 408 when it does not
    arrive in time, 422 when it is not JSON."""
    config = state_of(request).config
    cap = config.max_body
    length = request.headers.get("content-length")
    too_big = ApiError(
        413, "too_large",
        f"The request body is larger than {cap:,} bytes. A selection may hold at most "
        "4,000 characters and a question 1,000.",
    )
    if length is not None:
        if not length.strip().isdigit() or len(length.strip()) > 18:
            raise ApiError(422, "invalid_input", "The Content-Length header is not a number.")
        if int(length) > cap:
            raise too_big
    body = bytearray()
    try:
        async with asyncio.timeout(config.body_timeout_s):
            async for chunk in request.stream():
                body += chunk
                if len(body) > cap:
                    raise too_big
    except TimeoutError:
        raise ApiError(408, "request_timeout",
                       f"The request body did not arrive within {config.body_timeout_s:g} s.",
                       {"Connection": "close"}) from None
    except ClientDisconnect:
        raise ApiError(400, "client_disconnected",
                       "The client went away before sending the whole body.",
                       {"Connection": "close"}) from None
    return parse_json_object(bytes(body))


def parse_json_object(body: bytes) -> dict[str, Any]:
    """``body`` as a JSON object, or a 422 that says what is wrong with it."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise ApiError(422, "invalid_json",
                       "The request body is not UTF-8 text. Send JSON.") from None
    except json.JSONDecodeError as exc:
        raise ApiError(
            422, "invalid_json",
            f"The request body is not valid JSON ({exc.msg} at position {exc.pos}). Send a "
            "JSON object such as {\"query\": \"...\", \"selected_text\": \"...\"}.",
        ) from exc
    except RecursionError:
        raise ApiError(422, "invalid_json",
                       "The request body nests arrays or objects too deeply. Send a JSON "
                       "object of text fields.") from None
    except ValueError:  # an integer of more than 4,300 digits
        raise ApiError(422, "invalid_json",
                       "The request body holds a number too long to read. Page numbers "
                       "are small integers.") from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_json", "The request body must be a JSON object.")
    return data


class UnexpectedErrors:
    """ASGI middleware: an exception no handler took (a bug) becomes a JSON 500 with an
    error id, and the traceback goes to the log (Starlette would answer plain text)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: dict) -> None:
            nonlocal started
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # every other exception is handled before this
            err = server_error(f"{scope.get('method')} {scope.get('path')}: unexpected "
                               f"{type(exc).__name__}: {exc}", exc=exc)
            if started:  # the response is under way: it can only be cut short
                return
            await JSONResponse(err.body(), status_code=err.status)(scope, receive, send)


# --- the app -----------------------------------------------------------------------------
def create_app(settings: Settings, config: Optional[ServeConfig] = None, *,
               library: Any = None, keys: Optional[KeyStore] = None,
               load_in_background: bool = True) -> FastAPI:
    """The server application for ``settings``'s data folder.

    Startup indexes or opens the books and warms the models once, on a thread, so that
    ``GET /health`` answers "loading" meanwhile and "ready" after.
    """
    config = config or ServeConfig()
    state = ServerState(settings, config, library=library, keys=keys)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if load_in_background:
            threading.Thread(target=state.load, name="serve-load", daemon=True).start()
        else:
            state.load()
        try:
            yield
        finally:
            state.close()

    app = FastAPI(
        title="BookReader",
        summary="Answers about a textbook with checked citations, from the book only.",
        version=_version(),
        lifespan=lifespan,
        docs_url=None,  # served below from local files: FastAPI's own page loads a CDN
        redoc_url=None,
    )
    app.state.bookreader = state
    _offline_docs(app)
    # inside CORS (added after it), so that its JSON 500 carries the CORS headers too
    app.add_middleware(UnexpectedErrors)

    if config.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Accept"],
            expose_headers=["Retry-After"],
        )

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(BookReaderError)
    async def _library_error(request: Request, exc: BookReaderError):
        err = from_bookreader_error(exc, settings)
        return JSONResponse(err.body(), status_code=err.status, headers=err.headers)

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy):
        state.counters.add("busy")
        return error_response(503, "busy", str(exc), {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()))
        return error_response(422, "invalid_input",
                              f"{where}: {first.get('msg', 'invalid value')}.")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else "Request failed."
        if exc.status_code == 404:
            message = f"There is no {echo(request.url.path)} here. /docs lists the routes."
        return error_response(exc.status_code, code, message, dict(exc.headers or {}))

    from bookreader.server import routes, study_routes

    routes.register(app)
    study_routes.register(app)
    return app


def _offline_docs(app: FastAPI) -> None:
    """``/docs`` with Swagger UI from the ``fastapi-offline`` package's files.

    FastAPI's default page loads Swagger UI from a CDN, so a student's or an instructor's
    browser would reach the internet (and show a blank page offline).  The same page is
    served here with its script and style from ``/docs-assets`` on this server.
    """
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles
    from fastapi_offline.core import _STATIC_PATH

    app.mount("/docs-assets", StaticFiles(directory=str(_STATIC_PATH)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request):
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} API",
            swagger_js_url=f"{root}/docs-assets/swagger-ui-bundle.js",
            swagger_css_url=f"{root}/docs-assets/swagger-ui.css",
            swagger_favicon_url=f"{root}/docs-assets/favicon.png",
        )


def _version() -> str:
    from bookreader import __version__

    return __version__
