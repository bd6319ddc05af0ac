"""The Study panel in the real window: flashcards for a chapter picked from the outline,
a card's citation followed in the reader, a quiz result, spaced review by keyboard, and
"Make flashcards from this" on a selection."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from bookreader.ui.study_panel import MAKE_FROM_SELECTION
from study_support import (
    AFTER,
    CHAPTERS,
    LEAD_IN,
    RUNNING_DEFINITIONS_2,
    VOCABULARY,
    code_listing_pdf,
    study_book,
)


@pytest.fixture
def studying(make_app, ui_settings, tmp_path, qtbot):
    spec = study_book(tmp_path / "study.pdf")
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(win.reader.first_page_painted, timeout=20000):
        win.open_book(spec.path)
    panel = win.study
    qtbot.waitUntil(lambda: panel.book_id is not None and panel.cards_button.isEnabled(),
                    timeout=180000)
    return win, panel


def _make(qtbot, panel, button):
    with qtbot.waitSignal(panel.set_ready, timeout=60000) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def test_flashcards_for_a_chapter_and_a_citation_followed(studying, qtbot):
    win, panel = studying
    titles = [panel.scope_combo.itemText(i).strip() for i in range(panel.scope_combo.count())]
    assert any(t.startswith(CHAPTERS[0]) for t in titles)
    panel.choose_entry(0)
    made = _make(qtbot, panel, panel.cards_button)
    assert set(VOCABULARY) <= {c.front for c in made.cards}
    view = panel.cards_view
    assert view.front_label.text() == made.cards[0].front and view.back_label.text() == ""
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert view.back_label.text() == made.cards[0].back
    chip = view.chip_row.itemAt(0).widget()
    with qtbot.waitSignal(win.reader.citation_shown, timeout=10000) as shown:
        qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
    assert shown.args == [made.cards[0].citation.page]
    page, rects = win.reader.citation_highlight()
    assert page == made.cards[0].citation.page and rects
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.front_label.text() == made.cards[1].front
    assert "cited on its page" in panel.status.text()


def test_quiz_result_shows_every_item_with_its_citation(studying, qtbot):
    win, panel = studying
    panel.choose_entry(panel.toc.index(next(e for e in panel.toc if e.title == CHAPTERS[1])))
    made = _make(qtbot, panel, panel.quiz_button)
    assert made.quiz
    first = panel.quiz_view.items[0]
    if first.edit is not None:
        first.edit.setText(first.item.answer)
    else:
        next(b for b in first.group.buttons() if b.text() == first.item.answer).setChecked(True)
    with qtbot.waitSignal(panel.quiz_view.checked) as checked:
        qtbot.mouseClick(panel.quiz_view.check_button, Qt.MouseButton.LeftButton)
    right, total = checked.args
    assert total == len(made.quiz) and right >= 1
    assert panel.quiz_view.score_label.text().startswith(f"Result: {right} of {total}")
    for w in panel.quiz_view.items:
        assert w.verdict.isVisibleTo(panel) and w.chip.isVisibleTo(panel)
        assert f"page {w.item.citation.page_label}" in w.verdict.text()


def test_kept_cards_are_reviewed_with_space_and_number_keys(studying, qtbot):
    win, panel = studying
    panel.choose_entry(0)
    made = _make(qtbot, panel, panel.cards_button)
    qtbot.mouseClick(panel.keep_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status.text().startswith("Kept"), timeout=20000)
    with qtbot.waitSignal(panel.review_loaded, timeout=20000) as loaded:
        qtbot.mouseClick(panel.review_button, Qt.MouseButton.LeftButton)
    assert loaded.args == [len(made.cards)]
    view = panel.cards_view
    qtbot.keyClick(view, Qt.Key.Key_3)  # not flipped yet: no rating
    assert len(view.cards) == len(made.cards)
    qtbot.keyClick(view, Qt.Key.Key_Space)
    with qtbot.waitSignal(view.rated) as rated:
        qtbot.keyClick(view, Qt.Key.Key_3)
    assert rated.args[1] == 3 and len(view.cards) == len(made.cards) - 1
    qtbot.waitUntil(lambda: panel.status.text().startswith("Next time"), timeout=20000)
    with qtbot.waitSignal(panel.review_loaded, timeout=20000) as again:
        panel.review()
    assert again.args == [len(made.cards) - 1]  # the rated card is not due any more


def test_make_flashcards_from_a_selection(studying, qtbot):
    win, panel = studying
    reader = win.reader
    page = next(e.page for e in panel.toc if e.title == "2.1 Buying and Selling")
    reader.go_to_page(page)
    qtbot.waitUntil(lambda: bool(reader.words(page)), timeout=10000)
    words = reader.words(page)
    first_word = RUNNING_DEFINITIONS_2[0].split()[0]
    start = next(w for w in words if w.text == first_word)
    end = next(w for w in words if w.index > start.index and w.text.startswith("price."))
    from bookreader.ui.reader_view import WordRef

    reader.select_words(WordRef(page, start.index), WordRef(page, end.index))
    menu = reader.show_context_menu(reader.mapToGlobal(QPoint(10, 10)))
    action = next(a for a in menu.actions() if a.text() == MAKE_FROM_SELECTION)
    with qtbot.waitSignal(panel.set_ready, timeout=60000) as ready:
        action.trigger()
    menu.close()
    fronts = [c.front for c in ready.args[0].cards]
    assert fronts == ["Supply"]


def test_the_phrase_checkbox_asks_the_windows_model_and_keeps_the_books_backs(studying,
                                                                            qtbot):
    win, panel = studying
    panel.choose_entry(0)
    rules = _make(qtbot, panel, panel.cards_button)
    qtbot.waitUntil(lambda: panel.task is None and panel.cards_button.isEnabled())
    panel.phrase_check.setChecked(True)
    phrased = _make(qtbot, panel, panel.cards_button)
    # the window answers with the extractive backend, which quotes and cannot phrase
    assert phrased.backend == "rules"
    assert [(c.front, c.back) for c in phrased.cards] == [(c.front, c.back)
                                                          for c in rules.cards]


def test_the_code_checkbox_asks_for_code_cards(make_app, ui_settings, tmp_path, qtbot):
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(win.reader.first_page_painted, timeout=20000):
        win.open_book(code_listing_pdf(tmp_path / "code.pdf"))
    panel = win.study
    qtbot.waitUntil(lambda: panel.book_id is not None and panel.cards_button.isEnabled(),
                    timeout=180000)
    assert panel.code_check.toolTip()
    panel.choose_entry(0)
    plain = _make(qtbot, panel, panel.cards_button)
    assert not [c for c in plain.cards if c.kind == "code"]
    qtbot.waitUntil(lambda: panel.task is None and panel.cards_button.isEnabled())
    panel.code_check.setChecked(True)
    made = _make(qtbot, panel, panel.cards_button)
    codes = [c for c in made.cards if c.kind == "code"]
    assert {c.back for c in codes} == {LEAD_IN[:-1] + ".", AFTER}
    assert panel.cards_view.front_label.text() == made.cards[0].front
