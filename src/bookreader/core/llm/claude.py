"""Claude through the Anthropic Messages API (the ``anthropic`` SDK), streamed.

The one backend that uses the network, and only when the user picks it.  Retries with
exponential backoff on 408/409/429/5xx and connection failures are the SDK's own
(``max_retries``; it honours ``retry-after``); every failure that reaches the caller
becomes a :class:`~bookreader.errors.BackendError` that says what happened and what to do.

The API key comes from the constructor, else ``ANTHROPIC_API_KEY``, else the system
keyring (service "BookReader", user "anthropic_api_key").  It is looked up on first use,
never logged, never put in an exception message or ``repr``, and never written to the
settings file or the audit log.
"""

from __future__ import annotations

import inspect
import logging
import threading
from typing import Any, Iterator, Optional, Sequence

from bookreader.core.llm.stored_keys import StoredKey
from bookreader.core.types import AnswerRequest, CancelFn, Message, Token
from bookreader.errors import BackendError

log = logging.getLogger(__name__)

API_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_MODEL = "claude-sonnet-5-5"

_OTHER_BACKEND = "or choose a local backend (bundled or extractive) in Settings."


#: The Claude key: in the keyring, overridden by ``ANTHROPIC_API_KEY``.
_KEY = StoredKey("anthropic_api_key", API_KEY_ENV, "The Claude API key")
keyring_api_key = _KEY.read
store_api_key = _KEY.store
resolve_api_key = _KEY.resolve


def _is_transport_error(exc: BaseException) -> bool:
    """An error of the HTTP stack under the SDK (httpx/httpx2/httpcore) or the socket."""
    module = type(exc).__module__.split(".")[0]
    return isinstance(exc, OSError) or module in {"httpx", "httpx2", "httpcore", "httpcore2",
                                                  "h11", "h2"}


class ClaudeBackend:
    """Anthropic's Claude, streamed through the Messages API.

    Args:
        api_key: The key; ``None`` means ``ANTHROPIC_API_KEY``, then the system keyring.
        model: The model id, e.g. ``"claude-sonnet-5-5"``.
        base_url: Another API address (a proxy, or the test server).
        timeout_s: Longest wait for a connection or for the next piece of a response.
        max_retries: Retries (with exponential backoff) on rate limits, server errors and
            connection failures, before the answer starts.
        name: Registry name.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        model: str = DEFAULT_MODEL,
        *,
        base_url: Optional[str] = None,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        name: str = "claude",
    ) -> None:
        self.name = name
        self.model = model or DEFAULT_MODEL
        self.base_url = base_url or None
        self.timeout_s = float(timeout_s)
        self.max_retries = max(0, int(max_retries))
        self._explicit_key = api_key
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._accepts_temperature: Optional[bool] = None

    def __repr__(self) -> str:  # never the key
        return f"ClaudeBackend(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def model_name(self) -> str:
        return self.model

    def warm_up(self) -> None:
        """Build the HTTP client (no request is sent)."""
        self._ensure_client()

    # --- client ----------------------------------------------------------------------
    def _ensure_client(self) -> Any:
        if self._client is not None:
            return self._client
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        try:
            import anthropic
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise BackendError(
                f"The anthropic package is not installed, so Claude cannot be used. "
                f"Reinstall BookReader, {_OTHER_BACKEND}"
            ) from exc
        key, source = resolve_api_key(self._explicit_key)
        if not key:
            raise BackendError(
                f"No Claude API key found. Enter one in Settings (it is kept in the system "
                f"keyring) or set {API_KEY_ENV}, {_OTHER_BACKEND}"
            )
        log.info("Claude backend: model %s, key from %s, %s", self.model, source,
                 self.base_url or "default API address")
        kwargs: dict[str, Any] = dict(
            api_key=key, timeout=self.timeout_s, max_retries=self.max_retries
        )
        if self.base_url:
            kwargs["base_url"] = self.base_url
        client = anthropic.Anthropic(**kwargs)
        try:
            params = inspect.signature(client.messages.create).parameters
            self._accepts_temperature = "temperature" in params
        except (TypeError, ValueError):  # pragma: no cover - exotic SDK builds
            self._accepts_temperature = True
        return client

    # --- streaming -------------------------------------------------------------------
    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 500,
        temperature: float = 0.1,
        cancel: Optional[CancelFn] = None,
        request: Optional[AnswerRequest] = None,
    ) -> Iterator[Token]:
        """Stream the answer; see :class:`bookreader.core.llm.base.LLMBackend`
        (``request`` is not used: the model reads the messages).

        ``temperature`` is sent when the installed SDK still accepts it (newer SDKs
        dropped the parameter).  The cancel check runs between streamed events; a stalled
        connection ends at ``timeout_s``.

        Raises:
            BackendError: no key, key rejected, no network, timeout, rate limit after the
                retries, server errors, or a stream that broke off.
        """
        import anthropic

        client = self._ensure_client()
        if max_tokens <= 0:
            return
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        chat = [{"role": m.role, "content": m.content} for m in messages
                if m.role in ("user", "assistant")]
        kwargs: dict[str, Any] = dict(
            model=self.model, max_tokens=int(max_tokens), messages=chat, stream=True
        )
        if system:
            kwargs["system"] = system
        if self._accepts_temperature:
            kwargs["temperature"] = float(temperature)
        try:
            events = client.messages.create(**kwargs)
        except anthropic.APIError as exc:
            raise self._translate(exc, started=False) from exc
        finished = False
        try:
            for event in events:
                if cancel is not None and cancel():
                    log.debug("Claude stream cancelled")
                    return
                kind = getattr(event, "type", "")
                if kind == "content_block_delta":
                    delta = getattr(event, "delta", None)
                    text = getattr(delta, "text", "")
                    if getattr(delta, "type", "") == "text_delta" and text:
                        yield Token(text)
                elif kind == "message_stop":
                    finished = True
        except anthropic.APIError as exc:
            raise self._translate(exc, started=True) from exc
        except Exception as exc:
            if not _is_transport_error(exc):
                raise
            raise self._transport_failure(exc) from exc
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
        if not finished:
            log.warning("Claude stream ended without message_stop")
            raise BackendError(
                f"The connection to the Claude API broke off in the middle of the answer. "
                f"Ask again, {_OTHER_BACKEND}"
            )

    # --- errors ----------------------------------------------------------------------
    def _where(self) -> str:
        return f"the Claude API at {self.base_url}" if self.base_url else "the Claude API"

    def _retries(self) -> str:
        return "1 retry" if self.max_retries == 1 else f"{self.max_retries} retries"

    def _transport_failure(self, exc: BaseException) -> BackendError:
        """A raw HTTP error while reading the stream (the SDK does not wrap those)."""
        log.warning("Claude stream failed: %s", type(exc).__name__)
        if "timeout" in type(exc).__name__.lower():
            return BackendError(
                f"The answer from {self._where()} stalled for {self.timeout_s:g} s. "
                f"Check your connection and ask again, {_OTHER_BACKEND}",
                details=type(exc).__name__,
            )
        return BackendError(
            f"The connection to the Claude API broke off in the middle of the answer. "
            f"Ask again, {_OTHER_BACKEND}",
            details=type(exc).__name__,
        )

    def _translate(self, exc: Any, *, started: bool) -> BackendError:
        """Turn an SDK error into a message a student can act on (never with the key)."""
        import anthropic

        details = f"{type(exc).__name__}: status={getattr(exc, 'status_code', None)}"
        log.warning("Claude request failed (%s, answer started: %s)", details, started)
        if isinstance(exc, anthropic.APITimeoutError) and started:
            # newer SDKs wrap a read timeout inside the stream too
            return BackendError(
                f"The answer from {self._where()} stalled for {self.timeout_s:g} s. "
                f"Check your connection and ask again, {_OTHER_BACKEND}", details=details)
        if isinstance(exc, anthropic.APITimeoutError):
            return BackendError(
                f"No answer from {self._where()} within {self.timeout_s:g} s (after "
                f"{self._retries()}). Check your connection and try again, "
                f"{_OTHER_BACKEND}", details=details)
        if isinstance(exc, anthropic.APIConnectionError):
            if started:
                return BackendError(
                    f"The connection to the Claude API broke off in the middle of the "
                    f"answer. Ask again, {_OTHER_BACKEND}", details=details)
            return BackendError(
                f"Could not reach {self._where()}: there is no network connection or the "
                f"server refused it. Check your internet connection, {_OTHER_BACKEND}",
                details=details)
        status = getattr(exc, "status_code", None)
        etype = getattr(exc, "type", None) or _error_type(getattr(exc, "body", None))
        if status == 401 or etype == "authentication_error":
            return BackendError(
                "The Claude API key was rejected (HTTP 401). Check the key in Settings or "
                f"in {API_KEY_ENV}, {_OTHER_BACKEND}", details=details)
        if status == 403 or etype == "permission_error":
            return BackendError(
                f"The Claude API key may not use the model {self.model} (HTTP 403). Choose "
                f"another Claude model in Settings, {_OTHER_BACKEND}", details=details)
        if status == 404 or etype == "not_found_error":
            return BackendError(
                f"The Claude model {self.model} does not exist (HTTP 404). Check the model "
                f"name in Settings, {_OTHER_BACKEND}", details=details)
        if status == 429 or etype == "rate_limit_error":
            return BackendError(
                f"Claude's rate limit was reached and {self._retries()} did not get through."
                f" Wait a minute and ask again, {_OTHER_BACKEND}", details=details)
        if status == 529 or etype == "overloaded_error":
            return BackendError(
                f"Claude is overloaded right now. Try again in a few minutes, "
                f"{_OTHER_BACKEND}", details=details)
        if isinstance(status, int) and status >= 500 or etype == "api_error":
            return BackendError(
                f"The Claude API had a server error (HTTP {status}) and {self._retries()} "
                f"did not help. Try again later, {_OTHER_BACKEND}", details=details)
        if started:
            return BackendError(
                f"The Claude API stopped the answer with an error ({etype or status}). Ask "
                f"again, {_OTHER_BACKEND}", details=details)
        return BackendError(
            f"The Claude API refused the request (HTTP {status}, {etype or 'unknown error'}). "
            f"Check the Claude settings, {_OTHER_BACKEND}", details=details)


def _error_type(body: Any) -> Optional[str]:
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            value = err.get("type")
            return value if isinstance(value, str) else None
    return None
