"""The window as a whole: errors, passwords, one instance per data folder, settings,
the crash hook, the library panel and remembered layout."""

from __future__ import annotations

import json
import logging
import os

import pytest

from bookreader.app import build_app
from bookreader.errors import AlreadyRunning
from bookreader.ui.messages import RecordingSink


def test_broken_pdf_shows_a_readable_error(make_app, ui_settings, tmp_path, qtbot):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n1 0 obj <</Type /Catalog>> garbage \x00\x01\x02")
    ctx = make_app(ui_settings)
    with qtbot.waitSignal(ctx.window.document.open_failed, timeout=10000):
        ctx.window.open_book(broken)
    assert len(ctx.sink.errors) == 1
    title, message = ctx.sink.errors[0]
    assert "broken.pdf" in message
    assert not ctx.sink.crashes
    assert ctx.window.reader.meta is None


def test_encrypted_pdf_asks_for_its_password_until_right(make_app, ui_settings, tmp_path,
                                                         qtbot, pdf_factory):
    locked = pdf_factory(tmp_path / "locked.pdf", password="s3cret")
    sink = RecordingSink(passwords=["wrong", "s3cret"])
    ctx = make_app(ui_settings, sink=sink)
    with qtbot.waitSignal(ctx.window.book_opened, timeout=20000) as blocker:
        ctx.window.open_book(locked)
    assert sink.password_prompts == [("locked.pdf", False), ("locked.pdf", True)]
    assert blocker.args[0].page_count == 4
    assert not sink.errors


def test_cancelled_password_prompt_opens_nothing(make_app, ui_settings, tmp_path, qtbot,
                                                 pdf_factory):
    locked = pdf_factory(tmp_path / "locked.pdf", password="s3cret")
    sink = RecordingSink(passwords=[None])
    ctx = make_app(ui_settings, sink=sink)
    with qtbot.waitSignal(ctx.window.document.open_failed, timeout=10000):
        ctx.window.open_book(locked)
    assert sink.password_prompts == [("locked.pdf", False)]
    assert ctx.window.reader.meta is None


def test_second_window_on_the_same_data_is_refused(make_app, ui_settings):
    make_app(ui_settings)
    sink = RecordingSink()
    with pytest.raises(AlreadyRunning):
        build_app(["again"], settings=ui_settings, sink=sink)
    assert len(sink.errors) == 1
    assert "already open" in sink.errors[0][1]
    assert str(ui_settings.data_dir) in sink.errors[0][1]


def test_unexpected_worker_error_reaches_crash_dialog_and_log(make_app, ui_settings, qtbot):
    ctx = make_app(ui_settings)

    def boom(ctl):
        raise RuntimeError("simulated bug in a worker")

    with qtbot.waitSignal(ctx.reporter.crash_reported, timeout=5000):
        ctx.runner.submit("library", boom, name="boom")
    assert ctx.sink.crashes and "simulated bug" in ctx.sink.crashes[0][0]
    for h in logging.getLogger().handlers:
        h.flush()
    assert "simulated bug in a worker" in ctx.log_file.read_text(encoding="utf-8")


def test_settings_saved_and_applied_without_restart(make_app, ui_settings, qtbot):
    ctx = make_app(ui_settings)
    win = ctx.window
    session = ctx.service._lanes.library().session_id
    dialog = win.show_settings()
    # The dialog lists what the spec table holds: auto, each tier, extractive, claude, a
    # model server, a file.
    assert list(dialog.backend_buttons) == ["auto", "tiny", "small", "better", "extractive",
                                            "claude", "openai", "gguf"]
    assert "small" in dialog.install_rows and "tiny" not in dialog.install_rows
    dialog.backend_buttons["tiny"].setChecked(True)
    dialog.budget_boxes["tiny"][1].setValue(7.5)
    dialog.similarity.setValue(0.55)
    assert dialog.threads.value() == 0 and dialog.threads.text() == "Follow the load"
    dialog.threads.setValue(1)
    dialog.api_key_edit.setText("sk-ant-test-key-never-on-disk")
    with qtbot.waitSignal(win.settings_applied, timeout=5000):
        dialog.save_button.click()
    saved = json.loads((ui_settings.data_dir / "settings.json").read_text())
    assert saved["llm_backend"] == "tiny"
    assert saved["budgets"] == {"tiny": {"first_token_s": 7.5}}
    assert saved["grounding_similarity_threshold"] == 0.55
    assert saved["n_threads"] == 1  # a fixed count instead of following the load
    assert win.settings.budgets["tiny"]["first_token_s"] == 7.5
    # The library is rebuilt with the new settings once its workers are idle, in the same
    # session (the instructor report counts runs, not Settings saves), and its grounding
    # validator uses the new threshold.
    qtbot.waitUntil(lambda: ctx.service.settings.budgets.get("tiny") == {"first_token_s": 7.5})
    qtbot.waitUntil(lambda: ctx.service._lanes.library_obj is None, timeout=10000)
    rebuilt = ctx.service._lanes.library()
    assert rebuilt.session_id == session
    assert rebuilt.answerer.validator.similarity_threshold == 0.55
    # The key went to the keyring or process memory, never to a file in the data folder.
    for path in ui_settings.data_dir.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".ini", ".log", ".txt"):
            assert "sk-ant-test-key" not in path.read_text(errors="ignore"), path
    os.environ.pop("ANTHROPIC_API_KEY", None)
    again = win.show_settings()
    assert again.budget_boxes["tiny"][1].value() == 7.5
    assert again.backend_buttons["tiny"].isChecked()
    assert again.threads.value() == 1


def test_library_panel_shows_progress_then_ready(make_app, ui_settings, book_pdf, qtbot):
    ctx = make_app(ui_settings)
    progress = []
    ctx.service.ingest_progressed.connect(lambda p, d, t, m: progress.append((d, t, m)))
    with qtbot.waitSignal(ctx.service.ingest_finished, timeout=120000) as blocker:
        ctx.window.open_book(book_pdf)
    info = blocker.args[1]
    assert info.state == "ready" and info.chunk_count > 0
    assert progress and progress[-1][0] == progress[-1][1]
    entry = ctx.window.library_panel.entry(str(book_pdf.resolve()))
    assert entry is not None and entry.state == "ready"
    assert ctx.window.chat.book_ready


def test_recent_books_and_layout_are_remembered(make_app, ui_settings, book_pdf, qtbot):
    ctx = make_app(ui_settings)
    with qtbot.waitSignal(ctx.window.book_opened, timeout=20000):
        ctx.window.open_book(book_pdf)
    ctx.window.save_layout()
    ini = (ui_settings.data_dir / "ui.ini").read_text()
    assert "geometry" in ini
    assert ctx.window.recent_books() == [str(book_pdf.resolve())]
    assert ctx.window.library_panel.recent.count() == 1


def test_dropping_a_pdf_opens_it(make_app, ui_settings, book_pdf, qtbot):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    ctx = make_app(ui_settings)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(book_pdf))])
    event = QDropEvent(QPointF(300, 300), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(ctx.window.book_opened, timeout=20000) as blocker:
        ctx.window.dropEvent(event)  # Qt delivers drops only inside a real drag
    assert blocker.args[0].title == "Plants and Energy"


def test_changing_the_data_folder_switches_library_and_lock(make_app, ui_settings, tmp_path,
                                                            qtbot):
    from PySide6.QtCore import QLockFile

    ctx = make_app(ui_settings)
    new_dir = tmp_path / "elsewhere"
    dialog = ctx.window.show_settings()
    dialog.data_dir_edit.setText(str(new_dir))
    with qtbot.waitSignal(ctx.window.settings_applied, timeout=10000):
        dialog.save_button.click()
    assert ctx.settings.data_dir == new_dir
    assert ctx.service.settings.data_dir == new_dir
    assert (new_dir / "settings.json").is_file()
    old = QLockFile(str(ui_settings.data_dir / "bookreader.lock"))
    assert old.tryLock(0), "the old data folder is free for another window"
    old.unlock()
    new = QLockFile(str(new_dir / "bookreader.lock"))
    assert not new.tryLock(0), "this window now holds the new data folder"


def test_the_window_and_the_command_line_share_one_log_handler(tmp_path):
    """`bookreader gui` sets up the command line's log file, then the app's: one handler."""
    from bookreader import cli
    from bookreader.app import setup_logging
    from bookreader.config import Settings

    settings = Settings(data_dir=tmp_path)
    root = logging.getLogger()
    before = list(root.handlers)
    path, added = cli.setup_logging(settings)
    try:
        app_path = setup_logging(settings)
        assert app_path == path
        same = [h for h in root.handlers if isinstance(h, logging.FileHandler)
                and os.path.samefile(h.baseFilename, path)]
        assert len(same) == 1
        logging.getLogger("bookreader.test").info("written once")
        same[0].flush()
        assert path.read_text(encoding="utf-8").count("written once") == 1
    finally:
        for h in list(root.handlers):
            if h not in before:
                root.removeHandler(h)
                h.close()


def test_the_next_start_offers_a_native_crash_report(make_app, ui_settings):
    """A crash report left in the log folder is offered once, in the window."""
    ui_settings.log_dir.mkdir(parents=True, exist_ok=True)
    (ui_settings.log_dir / "crash-library.log").write_text(
        'Fatal Python error: Segmentation fault\n\nThread 0x1 (most recent call first):\n'
        '  File "llama_cpp/llama.py", line 1 in eval\n', encoding="utf-8")
    ctx = make_app(ui_settings)
    assert len(ctx.sink.crash_reports) == 1
    summary, report = ctx.sink.crash_reports[0]
    assert "library process stopped unexpectedly" in summary and "crash-reports" in summary
    assert "Segmentation fault" in report
    assert not (ui_settings.log_dir / "crash-library.log").exists()
    assert (ui_settings.log_dir / "crash-window.log").exists()  # this run is covered too
