"""Count what a prompt costs a local model: its tokens, and those read after the cached prefix.

A local tier's first token waits for llama.cpp to read the prompt.  The rules and the
worked example (everything before the question's own user turn) are evaluated once per
session by :meth:`~bookreader.core.llm.llama_cpp.LlamaCppBackend.prime` and reused from
llama.cpp's state as long as the next prompt begins with the *same tokens*; only the rest
(passages, selection, question, chat framing) is read per question.  This module renders
messages with the GGUF file's own chat template and counts tokens with its own tokenizer
(the file is opened ``vocab_only``: no weights, a fraction of a second), so the counts are
exact and do not depend on the machine's load.  ``bench/prompt_tokens.py`` uses it on real
questions; the tests use it to check that the prefix really is shared.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from bookreader.core.types import Message
from bookreader.errors import ModelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PromptCost:
    """Tokens of one prompt (chat template applied, generation prompt included)."""

    total: int
    #: Tokens of the primed prefix (rules and example, as ``prime`` evaluates them)
    #: that this prompt begins with.
    prefix: int
    #: True when the whole primed prefix up to the last user turn's content is a token
    #: prefix of this prompt (the cache can hit).
    prefix_shared: bool

    @property
    def uncached(self) -> int:
        """Tokens read for this question after the cached prefix."""
        return self.total - self.prefix


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class PromptCounter:
    """Renders and tokenizes chat messages as llama.cpp would for one GGUF file.

    Raises:
        ModelError: the file cannot be opened or has no chat template.
    """

    def __init__(self, model_path: Path | str) -> None:
        try:
            llama_cpp: Any = importlib.import_module("llama_cpp")
            chat_format: Any = importlib.import_module("llama_cpp.llama_chat_format")
            Jinja2ChatFormatter = chat_format.Jinja2ChatFormatter

            self._llm: Any = llama_cpp.Llama(model_path=str(model_path), vocab_only=True,
                                             verbose=False)
        except Exception as exc:
            raise ModelError(f"The model file {model_path} could not be opened to count "
                             f"tokens: {exc}") from exc
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(f"The model file {model_path} has no chat template.")
        model = self._llm._model
        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(self._llm.token_eos()),
            bos_token=model.token_get_text(self._llm.token_bos()),
        )

    def tokenize(self, text: str) -> list[int]:
        """Tokens of plain text (no special tokens added)."""
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def tokens(self, messages: Sequence[Message]) -> list[int]:
        """Tokens of the chat prompt for ``messages``, as ``create_chat_completion`` builds it."""
        result = self._formatter(messages=[{"role": m.role, "content": m.content}
                                           for m in messages])
        return list(self._llm.tokenize(result.prompt.encode("utf-8"),
                                       add_bos=not result.added_special, special=True))

    def common(self, a: Sequence[int], b: Sequence[int]) -> int:
        return common_prefix(a, b)

    def primed(self, messages: Sequence[Message]) -> list[int]:
        """Tokens ``prime`` evaluates for a question's messages: all but the last turn,
        then an empty user turn (the same as the backend's ``prime``)."""
        return self.tokens([*messages[:-1], Message("user", "")])

    def cost(self, messages: Sequence[Message]) -> PromptCost:
        """The cost of ``messages`` when the prefix of its earlier turns is primed."""
        full = self.tokens(messages)
        if len(messages) <= 1:
            return PromptCost(len(full), 0, True)
        primed = self.primed(messages)
        shared = common_prefix(primed, full)
        # The primed prompt ends with the empty user turn's closing and the generation
        # prompt; everything before the user turn's content must match.
        head = self.tokens_before_last_content(messages)
        return PromptCost(len(full), shared, shared >= head)

    def tokens_before_last_content(self, messages: Sequence[Message]) -> int:
        """How many tokens precede the last message's content (the framing included)."""
        marker = "\u2063" * 3  # an invisible separator no prompt contains
        probe = [*messages[:-1], Message(messages[-1].role, marker)]
        text = self._formatter(messages=[{"role": m.role, "content": m.content}
                                         for m in probe]).prompt
        head = text.split(marker, 1)[0]
        return len(self._llm.tokenize(head.encode("utf-8"), add_bos=False, special=True))
