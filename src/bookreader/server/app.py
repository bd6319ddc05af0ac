"""The FastAPI application: errors as JSON, bearer-token auth, rate limits, body caps.

Every error leaves as ``{"error": message, "code": code}`` with the same plain messages
as the command line.  Auth is required on every route except ``/health``,
``/openapi.json``, ``/docs`` and the static client files (``/demo`` and
``/static/bookreader.js`` hold no data; the demo asks for a key in the page).
"""

from __future__ import annotations

import json
import logging
import threading
from contextlib import asynccontextmanager
from typing import Any, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from bookreader.config import Settings
from bookreader.errors import BookNotFound, BookReaderError, InvalidInput, PdfError
from bookreader.server.keys import KeyStore
from bookreader.server.limits import Busy
from bookreader.server.state import ServeConfig, ServerState

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An HTTP error with a message for people and a short machine-readable code."""

    def __init__(self, status: int, code: str, message: str,
                 headers: Optional[dict[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def error_response(status: int, code: str, message: str,
                   headers: Optional[dict[str, str]] = None) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status, headers=headers)


def from_bookreader_error(exc: BookReaderError) -> ApiError:
    """The HTTP status a library error maps to."""
    if isinstance(exc, BookNotFound):
        return ApiError(404, "book_not_found", exc.user_message)
    if isinstance(exc, InvalidInput):
        return ApiError(422, "invalid_input", exc.user_message)
    if isinstance(exc, PdfError):
        return ApiError(422, "pdf_error", exc.user_message)
    return ApiError(500, "error", exc.user_message)


def state_of(request: Request) -> ServerState:
    return request.app.state.bookreader


# --- auth and limits ---------------------------------------------------------------------
def authenticate(request: Request) -> str:
    """The client id (key name) of the request's bearer token; 401 / 429 otherwise."""
    state = state_of(request)
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, "unauthorized",
            "This server needs an API key: send 'Authorization: Bearer <token>'. The "
            "instructor makes one with `bookreader keys add NAME`.",
            {"WWW-Authenticate": "Bearer"},
        )
    client = state.keys.client_for(token.strip())
    if client is None:
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


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object: 413 over the size cap, 422 when it is not JSON."""
    cap = state_of(request).config.max_body
    length = request.headers.get("content-length")
    too_big = ApiError(
        413, "too_large",
        f"The request body is larger than {cap:,} bytes. A selection may hold at most "
        "4,000 characters and a question 1,000.",
    )
    if length is not None:
        try:
            if int(length) > cap:
                raise too_big
        except ValueError:
            raise ApiError(422, "invalid_input",
                           "The Content-Length header is not a number.") from None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise too_big
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
    if not isinstance(data, dict):
        raise ApiError(422, "invalid_json", "The request body must be a JSON object.")
    return data


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
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(BookReaderError)
    async def _library_error(request: Request, exc: BookReaderError):
        err = from_bookreader_error(exc)
        return error_response(err.status, err.code, err.message)

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
            message = f"There is no {request.url.path} here. /docs lists the routes."
        return error_response(exc.status_code, code, message)

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
