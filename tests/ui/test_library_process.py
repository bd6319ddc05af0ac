"""The Library in its own process (the app's default): calls, progress, tokens, errors."""

from __future__ import annotations

from bookreader.core.types import Mode
from bookreader.errors import InvalidInput, PasswordRequired
from bookreader.ui.library_host import decode_error, encode_error


def test_errors_cross_the_process_boundary_intact():
    exc = PasswordRequired("'x.pdf' is protected by a password. Enter it.", path="/b/x.pdf",
                           wrong_password=True)
    back = decode_error(encode_error(exc))
    assert isinstance(back, PasswordRequired)
    assert back.user_message == exc.user_message
    assert back.path == "/b/x.pdf" and back.wrong_password is True
    unknown = decode_error(encode_error(ZeroDivisionError("division by zero")))
    assert isinstance(unknown, ZeroDivisionError)


def test_index_and_ask_through_the_library_process(qtbot, ui_settings, book_pdf):
    import sys
    import threading

    from bookreader.app import build_app
    from bookreader.ui.messages import RecordingSink

    hooks = (sys.excepthook, threading.excepthook)
    ctx = build_app(["test"], settings=ui_settings, sink=RecordingSink())
    try:
        assert ctx.service.mode == "process"
        win = ctx.window
        qtbot.addWidget(win)
        progress = []
        ctx.service.ingest_progressed.connect(lambda p, d, t, m: progress.append(m))
        with qtbot.waitSignal(ctx.service.ingest_finished, timeout=180000) as blocker:
            win.open_book(book_pdf)
        info = blocker.args[1]
        assert info.state == "ready" and info.chunk_count > 0
        assert "Embedding" in progress
        qtbot.waitUntil(lambda: win.chat.book_ready, timeout=30000)

        tokens = []
        win.chat.tokens_streamed.connect(tokens.append)
        win.chat.question_edit.setPlainText("What do mitochondria produce?")
        with qtbot.waitSignal(win.chat.answer_finished, timeout=180000) as blocker:
            win.chat.ask()
        answer = blocker.args[0]
        assert answer.mode == Mode.BOOK and answer.text and tokens
        assert answer.book_id == info.book_id

        # A user error raised in the child arrives as the same BookReaderError subclass.
        errors = []
        ctx.service.ask("", mode=Mode.SELECTED, book=None, selection="Some text.",
                        pages=None, on_failure=errors.append)
        qtbot.waitUntil(lambda: bool(errors), timeout=60000)
        assert isinstance(errors[0], InvalidInput)
        assert errors[0].user_message
    finally:
        ctx.window.close()
        ctx.lock.unlock()
        sys.excepthook, threading.excepthook = hooks


def test_a_key_typed_without_a_keyring_reaches_the_library_process(qtbot, ui_settings,
                                                                    claude_server):
    """The library process starts before the key is typed; the key goes over the pipe."""
    import os

    from fakes.claude_server import Behaviour

    from bookreader.ui.library_service import LibraryService
    from bookreader.ui.workers import TaskRunner

    key = "sk-ant-typed-in-settings"
    settings = ui_settings.updated(claude_base_url=claude_server.url, claude_max_retries=0)
    runner = TaskRunner()
    service = LibraryService(runner, settings, mode="process")
    try:
        with qtbot.waitSignal(service.books_changed, timeout=60000):
            service.refresh_books()  # the child process is running now, without the key
        service.use_api_key(key)
        claude_server.queue(Behaviour.normal(
            "Mitochondria produce most of the ATP that a cell needs."))
        answers, errors = [], []
        service.ask("What do mitochondria produce?", mode=Mode.SELECTED, book=None,
                    selection="Mitochondria produce most of the ATP that a cell needs.",
                    pages=None, backend="claude", on_success=answers.append,
                    on_failure=errors.append)
        qtbot.waitUntil(lambda: bool(answers or errors), timeout=120000)
        assert not errors, errors
        assert not answers[0].error, answers[0].error
        (req,) = claude_server.requests
        sent = req.headers.get("x-api-key") or req.headers.get("authorization", "")
        assert key in sent
    finally:
        runner.shutdown()
        service.close()
        os.environ.pop("ANTHROPIC_API_KEY", None)
    log_dir = settings.log_dir
    for path in log_dir.rglob("*"):
        if path.is_file():
            assert key not in path.read_text(errors="ignore"), path
