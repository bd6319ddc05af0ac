"""Answers are kept per book across restarts; the instructor dialog exports, verifies and
reports on them."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from bookreader.core.types import Mode


def _ask_selected(qtbot, win, question: str):
    reader, chat = win.reader, win.chat
    words = reader.words(0)
    chat.set_selection(" ".join(w.text for w in words), Mode.SELECTED, (0, 0))
    chat.question_edit.setPlainText(question)
    with qtbot.waitSignal(chat.answer_finished, timeout=120000) as blocker:
        qtbot.keyClick(chat.question_edit, Qt.Key.Key_Return)
    return blocker.args[0]


def test_history_survives_a_restart_and_audit_dialog_works(make_app, ui_settings, book_pdf,
                                                           tmp_path, qtbot):
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(ctx.service.ingest_finished, timeout=120000):
        win.open_book(book_pdf)
    qtbot.waitUntil(lambda: bool(win.reader.words(0)), timeout=10000)
    answer = _ask_selected(qtbot, win, "What does this book explain?")
    assert answer.book_id

    # Instructor dialog: export, verify the export, open the report.
    dialog = win.show_audit()
    out = tmp_path / "exports" / "audit.jsonl"
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData("jsonl"))
    dialog.export_path.setText(str(out))
    dialog.mode_combo.setCurrentIndex(dialog.mode_combo.findData(Mode.SELECTED.value))
    with qtbot.waitSignal(dialog.export_finished, timeout=30000) as blocker:
        dialog.export_button.click()
    # One question: its write-ahead record and the record of its answer (issue 12); an
    # export keeps both so that it verifies on its own, and says one question.
    assert blocker.args[:2] == [1, 2]
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert any(r.get("question") == "What does this book explain?" for r in rows)

    dialog.verify_path.setText(str(out))
    with qtbot.waitSignal(dialog.verify_finished, timeout=30000) as blocker:
        dialog.verify_button.click()
    assert blocker.args[0].ok
    assert dialog.status.text().startswith("✔")

    opened_urls = []
    dialog.open_url = opened_urls.append
    with qtbot.waitSignal(dialog.report_finished, timeout=30000) as blocker:
        dialog.report_button.click()
    report = blocker.args[0]
    assert opened_urls and opened_urls[0].toLocalFile() == report
    assert "<html" in open(report, encoding="utf-8").read().lower()
    dialog.reject()

    # Restart on the same data folder: the answer is back in the chat.
    win.close()
    ctx.lock.unlock()
    again = make_app(ui_settings)
    with qtbot.waitSignal(again.window.chat.history_loaded, timeout=60000) as blocker:
        again.window.open_book(book_pdf)
    assert blocker.args[0] >= 1
    cards = again.window.chat.cards()
    assert cards[-1].question_label.text() == "What does this book explain?"
    assert cards[-1].answer is not None and cards[-1].answer.text == answer.text

    # Earlier answers read while a new question is on screen go above it: the question the
    # student just sent stays the last card (it used to end up under the whole history).
    chat = again.window.chat
    qtbot.waitUntil(lambda: bool(again.window.reader.words(0)), timeout=10000)
    before = len(chat.cards())
    chat.set_selection(" ".join(w.text for w in again.window.reader.words(0)), Mode.SELECTED,
                       (0, 0))
    with qtbot.waitSignal(chat.history_loaded, timeout=60000) as history, \
            qtbot.waitSignal(chat.answer_finished, timeout=120000):
        chat.load_history(chat.book_id)  # read in the background...
        chat.ask("What is this page about?")  # ...while the student asks
        live = chat.cards()[-1]
    assert live.question_label.text() == "What is this page about?"
    assert history.args[0] >= 1
    assert len(chat.cards()) == before + history.args[0] + 1
    assert chat.cards()[-1] is live
