"""Fixtures of the server tests: a prepared data folder and real server processes."""

from __future__ import annotations

import pytest

from serve_support import ServerProcess, add_key, copy_data


@pytest.fixture(scope="session")
def prepared_data(tmp_path_factory, sample_pdf, embedder):
    """A data folder with the sample book indexed (copied for each server)."""
    from bookreader.config import Settings
    from bookreader.library import Library

    root = tmp_path_factory.mktemp("serve-prepared")
    with Library(Settings(data_dir=root), embedder=embedder) as lib:
        info = lib.ingest(sample_pdf)
    return root, info


@pytest.fixture(scope="session")
def extractive_server(tmp_path_factory, prepared_data):
    """A server with the extractive backend and keys ``alice`` and ``bob``."""
    root, info = prepared_data
    data = copy_data(root, tmp_path_factory.mktemp("serve-extractive") / "data")
    tokens = {name: add_key(data, name) for name in ("alice", "bob", "carol")}
    server = ServerProcess(data, "--backend", "extractive", "--rate-limit", "1000/minute")
    try:
        server.wait_ready()
        server.tokens = tokens
        server.book = info
        yield server
    finally:
        server.stop()
