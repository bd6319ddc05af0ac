"""The OpenAI-compatible backend's failures, each against a local fake server on 127.0.0.1
(tests/fakes/openai_server.py): server down, key refused, model missing, rate limited, a
stream cut in the middle, a too-long context; plus the address checks, the one-time
notice for a server elsewhere, finding local servers, and the family spec table.
"""

from __future__ import annotations

import json
import re

import pytest

from bookreader.config import Settings
from bookreader.core.llm.openai_compat import OpenAICompatibleBackend, clean_url
from bookreader.core.llm.openai_servers import (
    NOTICE_FILE, detect_local_servers, is_local_url, list_models, notice_once,
)
from bookreader.core.llm.registry import (
    BackendRegistry, budget_for, canonical_name, create_backend, describe_backends, spec_of,
)
from bookreader.core.llm.specs import OPENAI, family_spec, spec_for
from bookreader.core.types import Message
from bookreader.errors import BackendError, BookReaderError
from fakes.claude_server import free_port
from fakes.openai_server import CONTEXT_MESSAGE, MODEL, Behaviour, FakeOpenAIServer

MESSAGES = [Message("system", "Answer."), Message("user", "<question>\nWhat is ATP?\n</question>")]


@pytest.fixture
def fake():
    with FakeOpenAIServer() as server:
        yield server


def backend(url: str, model: str = MODEL, **kw) -> OpenAICompatibleBackend:
    kw.setdefault("max_retries", 0)
    return OpenAICompatibleBackend(url, model, timeout_s=10, **kw)


def text_of(b: OpenAICompatibleBackend, **kw) -> str:
    return "".join(t.text for t in b.stream(MESSAGES, **kw))


def test_streams_the_answer_and_sends_the_messages_model_and_limits(fake):
    assert text_of(backend(fake.url), max_tokens=4, temperature=0.3) == \
        "The mitochondria release energy"
    body = fake.chat_requests()[-1]["body"]
    assert body["model"] == MODEL and body["stream"] is True
    assert body["max_tokens"] == 4 and body["temperature"] == pytest.approx(0.3)
    assert body["messages"] == [{"role": m.role, "content": m.content} for m in MESSAGES]
    assert "authorization" not in fake.chat_requests()[-1]["headers"]  # no key, none sent


def test_without_a_model_the_first_one_the_server_lists_is_used(fake):
    b = backend(fake.url, model="")
    assert text_of(b, max_tokens=2)
    assert b.model == MODEL and b.model_name == f"{MODEL} @ {b.host}"


def test_server_down_says_nothing_answers_there():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendError) as info:
        text_of(backend(url))
    message = info.value.user_message
    assert "Could not reach the model server" in message and url in message
    assert "Settings" in message


def test_a_refused_key_is_reported_and_the_key_never_shown(monkeypatch):
    with FakeOpenAIServer(api_key="right-key") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong-secret-key")
        with pytest.raises(BackendError) as info:
            text_of(backend(server.url))
        assert "refused the key (HTTP 401)" in info.value.user_message
        assert "wrong-secret-key" not in info.value.user_message + str(info.value.details)
        assert "wrong-secret-key" not in repr(backend(server.url))
        monkeypatch.setenv("OPENAI_API_KEY", "right-key")
        assert text_of(backend(server.url), max_tokens=2) == "The mitochondria"
        assert server.chat_requests()[-1]["headers"]["authorization"] == "Bearer right-key"


def test_a_missing_model_names_the_models_the_server_has(fake):
    with pytest.raises(BackendError) as info:
        text_of(backend(fake.url, model="qwen3:4b"))
    message = info.value.user_message
    assert "has no model 'qwen3:4b' (HTTP 404)" in message and MODEL in message


def test_a_wrong_address_is_not_mistaken_for_a_missing_model(fake):
    with pytest.raises(BackendError) as info:
        text_of(backend(fake.url.removesuffix("/v1")))
    assert "no OpenAI-compatible API" in info.value.user_message
    assert "/v1" in info.value.user_message


def test_rate_limiting_is_retried_then_reported(fake):
    fake.queue(Behaviour("status", status=429))
    assert text_of(backend(fake.url, max_retries=1), max_tokens=1) == "The"  # retried once
    fake.queue(Behaviour("status", status=429), Behaviour("status", status=429))
    with pytest.raises(BackendError) as info:
        text_of(backend(fake.url, max_retries=1))
    assert "rate limiting requests (HTTP 429)" in info.value.user_message
    assert len(fake.chat_requests()) == 4


def test_a_stream_cut_in_the_middle_is_an_error_not_a_short_answer(fake):
    fake.queue(Behaviour("cut", after=3))
    tokens: list[str] = []
    with pytest.raises(BackendError) as info:
        for token in backend(fake.url).stream(MESSAGES):
            tokens.append(token.text)
    assert "broke off in the middle of the answer" in info.value.user_message
    assert "".join(tokens) == "The mitochondria release"


def test_an_error_inside_the_stream_is_reported(fake):
    fake.queue(Behaviour("stream_error", after=2, message="the server is overloaded"))
    with pytest.raises(BackendError) as info:
        text_of(backend(fake.url))
    assert "stopped the answer with an error: the server is overloaded" in info.value.user_message


@pytest.mark.parametrize("status, message", [
    (400, CONTEXT_MESSAGE),
    (400, "Requested tokens (5000) exceed context window of 2048"),  # llama.cpp's server
])
def test_a_too_long_context_says_so(fake, status, message):
    fake.queue(Behaviour("status", status=status, message=message))
    with pytest.raises(BackendError) as info:
        text_of(backend(fake.url))
    assert "longer than the context window" in info.value.user_message
    assert "larger context" in info.value.user_message


def test_a_server_error_is_reported_with_what_the_server_said(fake):
    fake.queue(Behaviour("status", status=500, message="CUDA out of memory"))
    with pytest.raises(BackendError) as info:
        text_of(backend(fake.url))
    assert "HTTP 500" in info.value.user_message and "CUDA out of memory" in info.value.user_message


def test_addresses_are_checked_and_cleaned_without_any_traffic():
    assert clean_url("openai:http://user:pw@127.0.0.1:11434/v1/?x=1#f") == \
        "http://127.0.0.1:11434/v1"
    for bad in ("", "ftp://host/v1", "127.0.0.1:11434", "openai:"):
        with pytest.raises(BackendError) as info:
            OpenAICompatibleBackend(bad)
        assert "http://HOST:PORT/v1" in info.value.user_message


def test_local_and_remote_addresses():
    for url in ("http://127.0.0.1:11434/v1", "http://localhost:1234/v1", "http://[::1]:8000/v1",
                "http://192.168.1.20:11434/v1", "http://10.0.0.5/v1", "http://ollama:11434/v1",
                "http://gpu-box.local:8000/v1", "http://172.16.3.4:8000/v1"):
        assert is_local_url(url), url
    for url in ("https://api.openai.com/v1", "http://8.8.8.8:8000/v1",
                "https://llm.example.edu/v1"):
        assert not is_local_url(url), url


def test_a_remote_server_gets_its_notice_once_per_host(tmp_path):
    assert notice_once("http://127.0.0.1:11434/v1", tmp_path) is None
    note = notice_once("https://llm.example.edu/v1", tmp_path)
    assert note and "llm.example.edu" in note and "passages" in note
    assert notice_once("https://llm.example.edu/other/v1", tmp_path) is None
    assert notice_once("https://api.other.org/v1", tmp_path)
    assert json.loads((tmp_path / NOTICE_FILE).read_text()) == ["api.other.org",
                                                                "llm.example.edu"]


def test_settings_find_the_servers_that_answer_on_their_ports(fake):
    port = int(re.search(r":(\d+)/v1$", fake.url).group(1))
    found = detect_local_servers(known=(("Fake server", port), ("Nothing here", free_port())))
    assert [(f.name, f.url, f.models) for f in found] == [("Fake server", fake.url, (MODEL,))]
    assert list_models(fake.url) == [MODEL]


def test_the_registry_builds_it_from_the_name_and_settings(tmp_path, fake):
    settings = Settings(data_dir=tmp_path).updated(openai_model=MODEL, openai_max_retries=0)
    b = create_backend(f"openai:{fake.url}/", settings, registry=BackendRegistry())
    assert isinstance(b, OpenAICompatibleBackend) and b.name == f"openai:{fake.url}"
    assert canonical_name(f"openai:{fake.url}", settings) == f"openai:{fake.url}"
    from_settings = settings.updated(openai_base_url=fake.url, llm_backend="openai")
    assert create_backend("openai", from_settings).base_url == fake.url
    assert budget_for("openai", from_settings) == (None, OPENAI.total_s)
    entry = next(e for e in describe_backends(from_settings) if e["name"] == "openai")
    assert entry["available"] and entry["selected"] and entry["model"] == MODEL
    assert not fake.requests  # building and describing contacted nothing
    with pytest.raises(BookReaderError):
        create_backend("openai", settings)  # no address anywhere


def test_the_spec_table_chooses_by_model_family(tmp_path):
    assert spec_for("openai:http://127.0.0.1:8000/v1") is OPENAI
    small = family_spec(OPENAI, "qwen2.5:1.5b")
    mid = family_spec(OPENAI, "qwen3:4b")
    for name in ("smollm2-135m-instruct", "llama3.2:1b", "gemma2:2b", "qwen2.5-coder:0.5b"):
        assert family_spec(OPENAI, name) is small, name
    for name in ("llama3.1:8b", "qwen2.5:14b", "phi3:3.8b"):
        assert family_spec(OPENAI, name) is mid, name
    for name in ("qwen2.5:32b", "llama3.3:70b", "gpt-4o", ""):
        assert family_spec(OPENAI, name) is OPENAI, name
    assert small.context_chars < mid.context_chars < OPENAI.context_chars
    assert small.max_claims == 3 and OPENAI.max_claims is None
    settings = Settings(data_dir=tmp_path).updated(openai_model="llama3.1:8b")
    assert spec_of("openai:http://127.0.0.1:8000/v1", settings) is mid
    assert {s.name for s in (small, mid, OPENAI)} == {"openai"}  # one budget override for all
