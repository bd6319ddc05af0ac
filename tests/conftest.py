"""Shared fixtures.  Real components everywhere: real PDFs made with PyMuPDF, the real
bundled MiniLM (loaded once per session), real Qdrant Edge shards and SQLite in temp dirs.
"""

from __future__ import annotations

import os
from pathlib import Path

# Before anything imports Qt or huggingface: no screen, no network.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("OPENAI_API_KEY", None)

import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = REPO_ROOT.parent / "shared" / "eval"
# Test helpers in tools/ (audit_samples ...) for the subprocesses that tests start: pytest's
# own ``pythonpath`` setting reaches only this process.
os.environ["BOOKREADER_TEST_TOOLS"] = str(REPO_ROOT / "tools")


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own data folder; nothing touches the user's real one."""
    data_dir = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("BOOKREADER_DATA_DIR", str(data_dir))
    yield data_dir


@pytest.fixture
def data_dir(_isolated_data_dir) -> Path:
    return _isolated_data_dir


@pytest.fixture
def settings(data_dir):
    from bookreader.config import Settings

    s = Settings(data_dir=data_dir)
    s.ensure_dirs()
    return s


@pytest.fixture(scope="session")
def embedder():
    """The real bundled all-MiniLM-L6-v2, loaded once for the whole session."""
    from bookreader.core.embedding import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.warm_up()
    return emb


@pytest.fixture(scope="module")
def validator(embedder):
    """The grounding validator on the full-precision MiniLM (the app gives it an int8 copy:
    tests that need the app's exact verdicts build ``GroundingValidator(embedder.quantized_copy())``)."""
    from bookreader.core.grounding import GroundingValidator

    return GroundingValidator(embedder)


@pytest.fixture(scope="session")
def sample_pdf(tmp_path_factory) -> Path:
    """The bundled sample book (the BookReader user guide) laid out as a real PDF."""
    from bookreader.core.samplebook import build_sample_book

    out = tmp_path_factory.mktemp("sample") / "bookreader-guide.pdf"
    build_sample_book(out)
    return out


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    """``../shared/eval``; tests that need it skip with a message when it is absent."""
    if not EVAL_DIR.is_dir():
        pytest.skip(f"evaluation material not found at {EVAL_DIR} (../shared/eval is absent)")
    return EVAL_DIR


@pytest.fixture
def claude_server():
    """A local fake of the Anthropic Messages API on 127.0.0.1 (see tests/fakes)."""
    from fakes.claude_server import FakeClaudeServer

    with FakeClaudeServer() as server:
        yield server


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server on 127.0.0.1 with the bundled model (see
    tests/llama_server.py); skips when its dependencies are not installed."""
    from llama_server import start_llama_server, why_not

    server = start_llama_server(tmp_path_factory.mktemp("llama-server"))
    if server is None:
        pytest.skip(why_not())
    yield server
    server.stop()


@pytest.fixture
def claude_answerer(claude_server, embedder, monkeypatch, tmp_path):
    """An Answerer whose Claude backend is the local fake (a 120 s total budget)."""
    from bookreader.config import Settings
    from bookreader.core.answering import Answerer

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    settings = Settings(data_dir=tmp_path / "data").updated(
        claude_base_url=claude_server.url, claude_max_retries=0)
    settings.ensure_dirs()
    return Answerer(settings, embedder=embedder, budget_fn=lambda name: (None, 120.0))
