"""Any OpenAI-compatible model server (Ollama, LM Studio, llama.cpp's server, vLLM,
LocalAI...) through its chat-completions API, streamed, with ``httpx``.

Nothing is contacted unless the user picks this backend (or opens Settings, which looks
for servers on this machine's default ports only: :mod:`.openai_servers`).  Every failure
that reaches the caller is a :class:`~bookreader.errors.BackendError` that says what
happened and what to do: the server is down, the model is missing (404), the key was
refused (401/403), the server is rate limiting (429), the stream broke off, the prompt is
longer than the model's context.

The API key, when a server needs one, comes from the constructor, else
``OPENAI_API_KEY``, else the system keyring (service "BookReader", user
"openai_api_key").  It is never logged, never put in a message or ``repr``, and never
written to the settings file or the audit log.  The backend's ``name`` is the URL without
credentials or query, and ``model_name`` says model and host, so the audit record names
both; the model's raw text is recorded as for every backend.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Iterator, Optional, Sequence
from urllib.parse import urlsplit, urlunsplit

from bookreader.core.llm.stored_keys import StoredKey
from bookreader.core.types import AnswerRequest, CancelFn, Message, Token
from bookreader.errors import BackendError

log = logging.getLogger(__name__)

PREFIX = "openai:"
API_KEY_ENV = "OPENAI_API_KEY"
#: Longest pause honoured from a ``retry-after`` header before a retry.
MAX_RETRY_WAIT_S = 10.0
#: Words in an error body that mean the prompt did not fit the model's context window
#: (llama.cpp's server, vLLM, LM Studio, LocalAI and OpenAI phrase it differently).
_CONTEXT_WORDS = ("context length", "context window", "maximum context", "context_length",
                  "n_ctx", "too many tokens", "prompt is too long", "exceeds the context",
                  "exceed context")

_OTHER_BACKEND = "or choose another answering model in Settings."


def clean_url(url: str) -> str:
    """The base URL without credentials, query or fragment, and without a trailing slash.

    Raises:
        BackendError: not an http(s) URL.
    """
    raw = (url or "").strip()
    if raw.lower().startswith(PREFIX):
        raw = raw[len(PREFIX):].strip()
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendError(
            f"{raw or 'An empty address'} is not the address of a model server. Give its "
            f"OpenAI-compatible API as http://HOST:PORT/v1 (Ollama: "
            f"http://127.0.0.1:11434/v1), {_OTHER_BACKEND}")
    netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def host_of(url: str) -> str:
    """``HOST:PORT`` of a URL (what the audit record and the messages name)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


#: The model server's key (most local servers need none): in the keyring, overridden by
#: ``OPENAI_API_KEY``.
_KEY = StoredKey("openai_api_key", API_KEY_ENV, "The model server's key")
keyring_api_key = _KEY.read
store_api_key = _KEY.store
resolve_api_key = _KEY.resolve


def _error_text(body: bytes) -> str:
    """The message of an OpenAI-style error body (``{"error": {"message": ...}}``),
    else the body's first 300 characters."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:300]
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        err = err.get("message") or err.get("detail") or err
    if isinstance(data, dict) and "detail" in data and not isinstance(err, str):
        err = data["detail"]
    return " ".join(str(err).split())[:300]


def is_context_error(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in _CONTEXT_WORDS) or ("exceed" in low and "token" in low)


class OpenAICompatibleBackend:
    """A model on an OpenAI-compatible server, streamed through ``/chat/completions``.

    Args:
        base_url: The API's address including ``/v1``, e.g. ``http://127.0.0.1:11434/v1``.
        model: The model id the server knows (``qwen3:4b``); empty: the first model the
            server lists under ``/models`` (looked up on first use).
        api_key: The key; None means ``OPENAI_API_KEY``, then the keyring, then none.
        timeout_s: Longest wait for a connection or for the next piece of the answer.
        max_retries: Retries with backoff on rate limits, server errors and refused
            connections, before the answer starts.

    Raises:
        BackendError: ``base_url`` is not an http(s) URL (nothing is contacted).
    """

    kind = "openai"

    def __init__(self, base_url: str, model: str = "", *, api_key: Optional[str] = None,
                 timeout_s: float = 30.0, max_retries: int = 2) -> None:
        self.base_url = clean_url(base_url)
        self.name = PREFIX + self.base_url
        self.host = host_of(self.base_url)
        self.model = (model or "").strip()
        self.timeout_s = float(timeout_s)
        self.max_retries = max(0, int(max_retries))
        self._explicit_key = api_key
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"OpenAICompatibleBackend(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def model_name(self) -> str:
        return f"{self.model or 'default model'} @ {self.host}"

    def warm_up(self) -> None:
        """Build the HTTP client (no request is sent)."""
        self._ensure_client()

    # --- client ------------------------------------------------------------------------
    def _ensure_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import httpx

                key, source = resolve_api_key(self._explicit_key)
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                log.info("Model server %s, model %s, key from %s", self.host,
                         self.model or "(server default)", source or "nowhere (none sent)")
                self._client = httpx.Client(
                    headers=headers, timeout=httpx.Timeout(self.timeout_s), trust_env=False)
            return self._client

    def list_models(self) -> list[str]:
        """The model ids the server lists under ``/models``.

        Raises:
            BackendError: the server cannot be reached or does not list models.
        """
        import httpx

        client = self._ensure_client()
        try:
            reply = client.get(f"{self.base_url}/models")
        except httpx.HTTPError as exc:
            raise self._transport_failure(exc, started=False) from exc
        if reply.status_code != 200:
            raise self._status_error(reply.status_code, _error_text(reply.content), {})
        try:
            data = reply.json().get("data") or []
            return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
        except (ValueError, AttributeError, TypeError) as exc:
            raise BackendError(
                f"The server at {self.host} does not answer like an OpenAI-compatible API "
                f"(its model list is not JSON). Check the address in Settings, "
                f"{_OTHER_BACKEND}") from exc

    def _model(self) -> str:
        if not self.model:
            models = self.list_models()
            if not models:
                raise BackendError(
                    f"The model server at {self.host} lists no models. Load or pull one "
                    f"there (e.g. `ollama pull qwen3:4b`), {_OTHER_BACKEND}")
            self.model = models[0]
            log.info("Model server %s: using its first model %s", self.host, self.model)
        return self.model

    # --- streaming ---------------------------------------------------------------------
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

        One streamed content piece is one token; at most ``max_tokens`` are yielded.
        The cancel check runs between pieces; a stalled server ends at ``timeout_s``.

        Raises:
            BackendError: see the module docstring.
        """
        if max_tokens <= 0:
            return
        client = self._ensure_client()
        body = {"model": self._model(), "stream": True, "max_tokens": int(max_tokens),
                "temperature": float(temperature),
                "messages": [{"role": m.role, "content": m.content} for m in messages]}
        with self._open(client, body) as reply:
            yield from self._read(reply, int(max_tokens), cancel)

    def _open(self, client: Any, body: dict) -> Any:
        """The streamed response, after retries on 429, 5xx and refused connections."""
        import httpx

        url = f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                ctx = client.stream("POST", url, json=body)
                reply = ctx.__enter__()
            except httpx.ConnectError as exc:
                if last:
                    raise self._transport_failure(exc, started=False) from exc
                self._pause(attempt, None)
                continue
            except httpx.HTTPError as exc:
                raise self._transport_failure(exc, started=False) from exc
            if reply.status_code == 200:
                return _Closing(ctx, reply)
            try:
                detail = _error_text(reply.read())
            except httpx.HTTPError:
                detail = ""
            finally:
                ctx.__exit__(None, None, None)
            if not last and (reply.status_code == 429 or reply.status_code >= 500):
                self._pause(attempt, reply.headers.get("retry-after"))
                continue
            raise self._status_error(reply.status_code, detail, body)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _pause(attempt: int, retry_after: Optional[str]) -> None:
        try:
            wait = float(retry_after) if retry_after is not None else 0.5 * 2 ** attempt
        except ValueError:
            wait = 0.5 * 2 ** attempt
        time.sleep(min(max(wait, 0.0), MAX_RETRY_WAIT_S))

    def _read(self, reply: Any, max_tokens: int, cancel: Optional[CancelFn]) -> Iterator[Token]:
        import httpx

        sent = 0
        finished = False
        try:
            for line in reply.iter_lines():
                if cancel is not None and cancel():
                    log.debug("Model server stream cancelled")
                    return
                line = line.strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    finished = True
                    break
                try:
                    event = json.loads(data)
                except ValueError:
                    log.warning("Model server %s sent a line that is not JSON", self.host)
                    continue
                if isinstance(event, dict) and event.get("error"):
                    raise self._stream_error(_error_text(json.dumps(event).encode()))
                for choice in event.get("choices") or ():
                    text = (choice.get("delta") or {}).get("content") or ""
                    if text:
                        yield Token(text)
                        sent += 1
                        if sent >= max_tokens:
                            return
                    if choice.get("finish_reason"):
                        finished = True
        except httpx.HTTPError as exc:
            raise self._transport_failure(exc, started=True) from exc
        if not finished:
            log.warning("Model server %s stream ended without finishing", self.host)
            raise BackendError(
                f"The connection to the model server at {self.host} broke off in the middle "
                f"of the answer. Ask again; if it keeps happening, check the server's log, "
                f"{_OTHER_BACKEND}")

    # --- errors ------------------------------------------------------------------------
    def _transport_failure(self, exc: BaseException, *, started: bool) -> BackendError:
        import httpx

        name = type(exc).__name__
        log.warning("Model server %s failed: %s (answer started: %s)", self.host, name, started)
        if isinstance(exc, httpx.TimeoutException):
            return BackendError(
                f"The model server at {self.host} did not answer within {self.timeout_s:g} s. "
                f"It may be loading the model or overloaded: ask again in a moment, "
                f"{_OTHER_BACKEND}", details=name)
        if started:
            return BackendError(
                f"The connection to the model server at {self.host} broke off in the middle "
                f"of the answer. Ask again, {_OTHER_BACKEND}", details=name)
        return BackendError(
            f"Could not reach the model server at {self.base_url}: nothing answers there. "
            f"Start the server (Ollama: `ollama serve`), check the address in Settings, "
            f"{_OTHER_BACKEND}", details=name)

    def _status_error(self, status: int, detail: str, body: dict) -> BackendError:
        details = f"HTTP {status}: {detail}"
        log.warning("Model server %s refused the request (%s)", self.host, details)
        said = f" It said: {detail}" if detail else ""
        if status in (401, 403):
            return BackendError(
                f"The model server at {self.host} refused the key (HTTP {status}). Enter the "
                f"right key in Settings (kept in the system keyring) or set {API_KEY_ENV}, "
                f"{_OTHER_BACKEND}", details=details)
        if status == 404:
            return self._not_found(body, details)
        if status == 429:
            return BackendError(
                f"The model server at {self.host} is rate limiting requests (HTTP 429) and "
                f"{self.max_retries} retries did not get through. Wait a minute and ask "
                f"again, {_OTHER_BACKEND}", details=details)
        if status in (400, 413, 422) and is_context_error(detail):
            return BackendError(
                f"The question with its book passages is longer than the context window of "
                f"{self.model or 'the model'} on {self.host}.{said} Give the model a larger "
                f"context on the server (llama.cpp: -c 8192; Ollama: num_ctx), ask about a "
                f"shorter selection, {_OTHER_BACKEND}", details=details)
        if status >= 500:
            return BackendError(
                f"The model server at {self.host} had an error (HTTP {status}).{said} Check "
                f"the server's log and try again, {_OTHER_BACKEND}", details=details)
        return BackendError(
            f"The model server at {self.host} refused the request (HTTP {status}).{said} "
            f"Check the server settings, {_OTHER_BACKEND}", details=details)

    def _not_found(self, body: dict, details: str) -> BackendError:
        """A 404 is a missing model when the server lists models, else a wrong address."""
        try:
            models = self.list_models() if body else []
        except BackendError:
            models = []
        if models:
            listed = ", ".join(models[:8]) + (" ..." if len(models) > 8 else "")
            return BackendError(
                f"The model server at {self.host} has no model {self.model!r} (HTTP 404). It "
                f"has: {listed}. Pick one in Settings or with --model, or load it on the "
                f"server (Ollama: `ollama pull {self.model}`).", details=details)
        return BackendError(
            f"There is no OpenAI-compatible API at {self.base_url} (HTTP 404), or it has "
            f"no model {self.model!r}. The address usually ends in /v1; check it in "
            f"Settings, {_OTHER_BACKEND}", details=details)

    def _stream_error(self, detail: str) -> BackendError:
        log.warning("Model server %s sent an error in the stream: %s", self.host, detail)
        if is_context_error(detail):
            return BackendError(
                f"The question with its book passages is longer than the context window of "
                f"{self.model} on {self.host}. Give the model a larger context on the server, "
                f"{_OTHER_BACKEND}", details=detail)
        return BackendError(
            f"The model server at {self.host} stopped the answer with an error: {detail}. "
            f"Ask again, {_OTHER_BACKEND}", details=detail)


class _Closing:
    """Context manager over an open streamed response: closes it however the reader ends
    (cancel, the caller dropping the generator, an error)."""

    def __init__(self, ctx: Any, reply: Any) -> None:
        self.ctx, self.reply = ctx, reply

    def __enter__(self) -> Any:
        return self.reply

    def __exit__(self, *exc: Any) -> None:
        self.ctx.__exit__(None, None, None)
