"""Asking: right-click a selection, stream the answer, follow a citation to its page."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication

from bookreader.core.types import Mode
from bookreader.ui.answer_card import number_sources
from bookreader.ui.page_layout import WordRef


def _words_between(reader, page, first, last):
    words = reader.words(page)
    a = next(w for w in words if w.text.strip(".,") == first)
    b = next(w for w in words if w.index > a.index and w.text.strip(".,") == last)
    return a, b


def _right_click(reader, point: QPoint):
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point,
                              reader.viewport().mapToGlobal(point))
    QApplication.sendEvent(reader.viewport(), event)
    return reader.context_menu


def _ask(qtbot, chat, question):
    tokens = []
    chat.tokens_streamed.connect(tokens.append)
    chat.question_edit.setPlainText(question)
    with qtbot.waitSignal(chat.answer_finished, timeout=120000) as blocker:
        qtbot.keyClick(chat.question_edit, Qt.Key.Key_Return)
    return blocker.args[0], tokens


def test_right_click_ask_about_this_streams_an_answer(opened, qtbot):
    win = opened.window
    reader, chat = win.reader, win.chat
    reader.go_to_page(1)
    qtbot.waitUntil(lambda: bool(reader.words(1)), timeout=10000)
    a, b = _words_between(reader, 1, "Photosynthesis", "molecules")
    a = reader.words(1)[3]  # the body line's "Photosynthesis", not the heading's
    reader.select_words(WordRef(1, a.index), WordRef(1, b.index))
    selected = reader.selected_text()
    menu = _right_click(reader, reader.word_center(1, a.index + 2))
    assert [act.text() for act in menu.actions() if act.text()] == [
        "Ask about this", "Ask with nearby pages", "Copy", "Make flashcards from this"]
    menu.actions()[0].trigger()
    assert chat.quote_frame.isVisible()
    assert chat.selection == selected
    assert chat.current_mode() == Mode.SELECTED

    answer, tokens = _ask(qtbot, chat, "Where do plants store energy?")
    assert answer.mode == Mode.SELECTED
    assert answer.text and not answer.error
    assert tokens, "the answer should arrive in pieces while it is generated"
    card = chat.cards()[-1]
    assert card.answer_label.text() == number_sources(answer)
    assert "glucose" in answer.text.lower()
    assert "glucose" in card.copy_answer().lower()
    badges = [w.text() for w in card.findChildren(type(card.meta_label))
              if w.objectName() == "badge"]
    assert "Selected text" in badges
    assert any(t.endswith("confidence") for t in badges)
    # Citations of the selection point at its page, so their chips can be followed.
    assert answer.citations and all(c.page == 1 for c in answer.citations), answer.citations
    assert all(chip.isEnabled() for chip in card.citation_chips())


def test_citation_chip_scrolls_to_the_page_and_highlights(opened, qtbot):
    win = opened.window
    reader, chat = win.reader, win.chat
    qtbot.waitUntil(lambda: chat.book_ready, timeout=120000)
    answer, _ = _ask(qtbot, chat, "What do mitochondria produce?")
    assert answer.mode == Mode.BOOK
    cited = [c for c in answer.citations if c.page >= 0]
    assert cited, answer
    card = chat.cards()[-1]
    chip = next(ch for ch in card.citation_chips() if ch.citation.page == cited[0].page)
    reader.go_to_page(0)
    with qtbot.waitSignal(reader.citation_shown, timeout=5000):
        qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    page = cited[0].page
    assert reader.current_page() == page
    highlight = reader.citation_highlight()
    assert highlight is not None and highlight[0] == page
    qtbot.waitUntil(lambda: bool(reader.citation_highlight()[1]) and
                    reader.is_page_rendered(page), timeout=10000)
    # The highlight is drawn: green-tinted pixels inside the first highlighted rectangle.
    rect = reader.citation_highlight()[1][0]
    x, y, w, h = reader.layout_.rect_to_content(page, rect)
    x -= reader.horizontalScrollBar().value()
    y -= reader.verticalScrollBar().value()
    image = reader.viewport().grab().toImage()
    greens = []
    for dx in range(2, max(3, int(w) - 2), 3):
        c = image.pixelColor(int(x + dx), int(y + h / 2))
        greens.append(c.green() - max(c.red(), c.blue()))
    assert max(greens) > 20


def test_whole_book_questions_wait_for_the_index(make_app, ui_settings, book_pdf, qtbot):
    ctx = make_app(ui_settings)
    chat = ctx.window.chat
    with qtbot.waitSignal(ctx.window.book_opened, timeout=20000):
        ctx.window.open_book(book_pdf)
    if not chat.book_ready:  # indexing is still running: book questions are refused
        chat.question_edit.setPlainText("What is photosynthesis?")
        assert chat.ask() is None
        assert "Indexing" in chat.status_label.text()
    qtbot.waitUntil(lambda: chat.book_ready, timeout=120000)
    assert ctx.window.library_panel.entry(str(book_pdf.resolve())).state == "ready"


def test_bundled_model_answers_about_a_selection(make_app, settings, book_pdf, qtbot):
    ctx = make_app(settings.updated(llm_backend="bundled", budgets={"tiny": {"first_token_s": 60}}))
    win = ctx.window
    with qtbot.waitSignal(win.reader.first_page_painted, timeout=20000):
        win.open_book(book_pdf)
    reader = win.reader
    reader.go_to_page(3)
    qtbot.waitUntil(lambda: bool(reader.words(3)), timeout=10000)
    words = reader.words(3)
    reader.select_words(WordRef(3, words[0].index), WordRef(3, words[-1].index))
    win.chat.set_selection(reader.selected_text(), Mode.SELECTED, (3, 3))
    answer, tokens = _ask(qtbot, win.chat, "What do mitochondria produce?")
    assert answer.backend == "bundled"
    assert answer.text
    assert tokens
    # Either a grounded answer or a clearly marked fallback, never an unmarked guess.
    assert answer.fallback or answer.replaced_by_validator or answer.citations or \
        "ATP" in answer.text


def test_stop_cancels_generation(make_app, settings, book_pdf, qtbot):
    ctx = make_app(settings.updated(llm_backend="bundled", max_new_tokens=2000,
                                    budgets={"tiny": {"first_token_s": 60}}))
    win = ctx.window
    with qtbot.waitSignal(win.book_opened, timeout=20000):
        win.open_book(book_pdf)
    chat = win.chat
    chat.set_selection(" ".join(["Mitochondria produce most of the ATP a cell needs."] * 5),
                       Mode.SELECTED, (3, 3))
    chat.question_edit.setPlainText("Write a long essay about every idea in this text.")
    ended = []
    chat.answer_finished.connect(lambda a: ended.append("finished"))
    chat.answer_stopped.connect(lambda: ended.append("stopped"))
    with qtbot.waitSignal(chat.tokens_streamed, timeout=120000):
        qtbot.keyClick(chat.question_edit, Qt.Key.Key_Return)
    assert chat.send_button.text() == "Stop"
    with qtbot.waitSignal(chat.answer_stopped, timeout=60000):
        qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
    assert ended == ["stopped"]
    assert "Stopped" in chat.cards()[-1].answer_label.text()
    assert chat.send_button.text() == "Send"
