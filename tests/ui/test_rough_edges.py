"""The rough edges a new user hit, each fixed and kept fixed: cards that wrap at every
width, Ctrl+G, reopening at the last page, the nearby-pages action, conversation export."""

from __future__ import annotations

import uuid

import pytest
from PySide6.QtCore import QPoint, Qt

from bookreader.core.types import Answer, Citation, ConfidenceLevel, Mode
from bookreader.ui.answer_card import AnswerCard


def _answer(mode: Mode) -> Answer:
    return Answer(
        query_id=str(uuid.uuid4()), answer_id=str(uuid.uuid4()),
        question="Where is the energy of sunlight stored by plants, and in which molecules?",
        mode=mode, text="Plants store this energy in glucose molecules.", fallback=False,
        in_selected_text=False, confidence=0.93, confidence_level=ConfidenceLevel.HIGH,
        citations=tuple(Citation(f"1.{i} A rather long section title about light", i, str(i),
                                 "Plants store this energy in glucose molecules.", True)
                        for i in range(1, 5)),
        backend="gguf", model="qwen2.5-coder-1.5b-instruct-q4_k_m-a-very-long-file-name.gguf",
        latency_ms=12345.0)


@pytest.mark.parametrize("width", [1440, 1600])
def test_answer_cards_wrap_to_the_panel_at_every_width(opened, qtbot, width):
    win = opened.window
    win.resize(width, 900)
    win.default_dock_sizes()
    chat = win.chat
    card = AnswerCard(_answer(Mode.HIGHLIGHT).question, Mode.HIGHLIGHT, "Some selected text.")
    chat._add_card(card)
    card.set_answer(_answer(Mode.HIGHLIGHT))
    qtbot.waitUntil(lambda: card.isVisible() and card.width() > 0, timeout=5000)
    qtbot.wait(50)  # let the layouts settle after the resize
    viewport = chat.scroll_area.viewport()
    assert card.width() <= viewport.width()
    shown = [w for w in card.findChildren(type(card.meta_label)) if w.isVisible()]
    shown += [card.copy_button, *card.citation_chips()]
    for w in shown:
        right = w.mapTo(viewport, QPoint(w.width(), 0)).x()
        assert right <= viewport.width(), (w.objectName(), w.text(), right, viewport.width())
    badges = [w.text() for w in shown if w.objectName() == "badge"]
    assert "Selection + nearby pages" in badges and "High confidence" in badges


def test_ctrl_g_selects_the_page_box_and_an_unknown_page_says_so(opened, qtbot):
    win = opened.window
    win.activateWindow()
    win.focus_page_box()
    assert win.page_edit.hasSelectedText()
    assert win.page_edit.selectedText() == win.page_edit.text()
    qtbot.keyClicks(win.page_edit, "2")  # typing replaces the label: "2", not "i2"
    assert win.page_edit.text() == "2"
    qtbot.keyClick(win.page_edit, Qt.Key.Key_Return)
    assert win.reader.current_page() == 2  # printed page 2 is the third physical page
    win.focus_page_box()
    qtbot.keyClicks(win.page_edit, "196")
    qtbot.keyClick(win.page_edit, Qt.Key.Key_Return)
    message = win.statusBar().currentMessage()
    assert "no page '196'" in message and "from i to 3" in message


def test_a_book_reopens_at_the_page_it_was_left_at(make_app, ui_settings, book_pdf, qtbot):
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(win.reader.first_page_painted, timeout=20000):
        win.open_book(book_pdf)
    win.reader.go_to_page(3)
    qtbot.waitUntil(lambda: win.reader.current_page() == 3, timeout=5000)
    win.ui_state.sync()
    ctx.window.close()
    ctx.lock.unlock()
    again = make_app(ui_settings)
    with qtbot.waitSignal(again.window.book_opened, timeout=20000):
        again.window.open_book(book_pdf)
    qtbot.waitUntil(lambda: again.window.reader.current_page() == 3, timeout=5000)


def test_nearby_pages_are_sent_and_named_in_the_card(opened, qtbot):
    chat = opened.window.chat
    qtbot.waitUntil(lambda: chat.book_ready, timeout=120000)
    chat.set_selection("They produce ATP and NADPH for the Calvin cycle.", Mode.HIGHLIGHT,
                       (2, 2))
    assert "nearby pages" in chat.quote_title.text()
    assert chat._pages_for(Mode.HIGHLIGHT) == (1, 3)
    assert chat._pages_for(Mode.SELECTED) == (2, 2)
    with qtbot.waitSignal(chat.answer_finished, timeout=120000) as blocker:
        chat.ask("What do the light reactions produce?")
    answer = blocker.args[0]
    assert answer.mode == Mode.HIGHLIGHT and not answer.error
    assert answer.retrieval is not None and answer.retrieval.filter is not None
    assert (answer.retrieval.filter.page_start, answer.retrieval.filter.page_end) == (1, 3)
    badges = [w.text() for w in chat.cards()[-1].findChildren(type(chat.quote_title))
              if w.objectName() == "badge"]
    assert "Selection + nearby pages" in badges


def test_file_export_conversation_writes_markdown(opened, qtbot, tmp_path):
    win = opened.window
    chat = win.chat
    qtbot.waitUntil(lambda: chat.book_ready, timeout=120000)
    with qtbot.waitSignal(chat.answer_finished, timeout=120000):
        chat.ask("What do mitochondria produce?")
    assert win.export_conversation_action in win.menuBar().actions()[0].menu().actions()
    # Export names the open book from the window's list of books, which the library
    # process refreshes after indexing (on a machine at load 9 that came after the answer)
    qtbot.waitUntil(lambda: win.service.book_for_path(win.current_path) is not None,
                    timeout=120000)
    out = tmp_path / "talk.md"
    with qtbot.waitSignal(win.conversation_exported, timeout=60000):
        win.export_conversation(out)
    text = out.read_text(encoding="utf-8")
    assert "## 1. What do mitochondria produce?" in text and "Sources:" in text
