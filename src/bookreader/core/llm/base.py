"""The LLM protocol: stream the tokens of an answer for a list of chat messages.

A backend loads its model on first use, never in ``__init__`` (construction must be
instant and never fail because a model file is missing).  Every backend passes
``tests/contracts/test_llm_contract.py``.
"""

from __future__ import annotations

from typing import Iterator, Optional, Protocol, Sequence, runtime_checkable

from bookreader.core.types import AnswerRequest, CancelFn, Message, Token


@runtime_checkable
class LLMBackend(Protocol):
    """A language model that streams tokens."""

    #: Registry name: "bundled", "extractive", "claude" or "gguf:PATH".
    name: str

    @property
    def model_name(self) -> str:
        """Human-readable model name (file name for GGUF, model id for Claude)."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 500,
        temperature: float = 0.1,
        cancel: Optional[CancelFn] = None,
        request: Optional[AnswerRequest] = None,
    ) -> Iterator[Token]:
        """Yield the answer token by token.

        Stops early (without raising) when ``cancel()`` turns true; the caller decides
        whether that was a timeout or the user's Stop.  ``request`` is what the messages
        say, as values (mode, question, excerpts, selection, fallback sentence): a backend
        that does not read prose uses it instead of parsing the prompt; a model ignores it.

        Raises:
            ModelError: the model is missing or corrupt.
            BackendError: a remote failure (bad key, network, broken stream).
        """
        ...

    def warm_up(self) -> None:
        """Load the model now (optional; ``stream`` loads it on first use anyway)."""
        ...
