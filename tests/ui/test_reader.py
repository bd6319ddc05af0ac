"""The page view: rendering, word-snapped selection, copy, find, labels, keyboard."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QGuiApplication, QMouseEvent
from PySide6.QtWidgets import QApplication

from bookreader.ui.page_layout import WordRef


def _send(widget, kind, pos, button=Qt.MouseButton.LeftButton, buttons=None):
    buttons = button if buttons is None else buttons
    event = QMouseEvent(kind, QPointF(pos), widget.mapToGlobal(QPointF(pos)), button, buttons,
                        Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def drag(widget, start, end):
    """Press at ``start``, move in steps to ``end``, release: a real mouse drag."""
    _send(widget, QMouseEvent.Type.MouseButtonPress, start)
    steps = 5
    for k in range(1, steps + 1):
        p = start + (end - start) * k / steps
        _send(widget, QMouseEvent.Type.MouseMove, p, Qt.MouseButton.NoButton,
              Qt.MouseButton.LeftButton)
    _send(widget, QMouseEvent.Type.MouseButtonRelease, end, buttons=Qt.MouseButton.NoButton)


def find_word(reader, page, text, start=0):
    for w in reader.words(page):
        if w.index >= start and w.text.strip(".,") == text:
            return w
    raise AssertionError(f"{text!r} not on page {page}: {[w.text for w in reader.words(page)]}")


def test_book_opens_with_pages_outline_and_labels(opened):
    win = opened.window
    reader = win.reader
    assert reader.page_count == 4
    assert reader.meta.labels == ("i", "1", "2", "3")
    assert reader.is_page_rendered(0)
    assert "Plants and Energy" in win.windowTitle()
    titles = [win.toc_panel.tree.topLevelItem(i).text(0)
              for i in range(win.toc_panel.tree.topLevelItemCount())]
    assert titles == ["Preface", "Chapter 1 Photosynthesis", "Chapter 2 Respiration"]
    # The painted page shows the text: dark pixels where the first word's box is.
    image = reader.viewport().grab().toImage()
    word = reader.words(0)[0]
    center = reader.word_center(0, word.index)
    dark = [image.pixelColor(center.x() + dx, center.y()).lightness()
            for dx in range(-20, 21)]
    assert min(dark) < 100


def test_drag_selects_whole_words_across_lines(opened, qtbot):
    reader = opened.window.reader
    reader.go_to_page(1)
    qtbot.waitUntil(lambda: reader.is_page_rendered(1) and bool(reader.words(1)), timeout=10000)
    start = find_word(reader, 1, "light")
    end = find_word(reader, 1, "glucose", start.index)
    drag(reader.viewport(), QPointF(reader.word_center(1, start.index)),
         QPointF(reader.word_center(1, end.index)))
    expected = [w.text for w in reader.words(1) if start.index <= w.index <= end.index]
    assert reader.selected_text().split() == expected
    assert expected[0] == "light" and expected[-1] == "glucose"
    assert "\n" in reader.selected_text()  # two lines, in reading order
    reader.setFocus()
    qtbot.keyClick(reader, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == reader.selected_text()


def test_double_click_selects_one_word(opened, qtbot):
    reader = opened.window.reader
    word = find_word(reader, 0, "plants")
    qtbot.mouseDClick(reader.viewport(), Qt.MouseButton.LeftButton,
                      pos=reader.word_center(0, word.index))
    assert reader.selected_text() == "plants"


def test_selection_spans_pages_in_reading_order(opened, qtbot):
    reader = opened.window.reader
    reader.fit_page()
    reader.set_zoom_percent(30)
    qtbot.waitUntil(lambda: reader.is_page_rendered(1) and bool(reader.words(1)), timeout=10000)
    last0 = reader.words(0)[-1]
    first1 = reader.words(1)[0]
    reader.select_words(WordRef(0, last0.index - 1), WordRef(1, first1.index + 1))
    text = reader.selected_text()
    assert text.split() == [reader.words(0)[-2].text, last0.text, first1.text,
                            reader.words(1)[1].text]
    assert "\n\n" in text
    assert reader.selected_pages() == (0, 1)


def test_find_highlights_every_hit(opened, qtbot):
    win = opened.window
    reader = win.reader
    win.find_action.trigger()
    assert win.find_bar.isVisible()
    win.find_bar.edit.setText("energy")
    with qtbot.waitSignal(win.document.find_finished, timeout=10000) as blocker:
        qtbot.keyClick(win.find_bar.edit, Qt.Key.Key_Return)
    assert blocker.args[1] >= 5
    hits = reader.find_hits()
    assert set(hits) == {0, 1, 3}
    assert win.find_bar.count.text().endswith(f"of {blocker.args[1]}")


def test_find_says_when_nothing_matches(opened, qtbot):
    win = opened.window
    win.find_action.trigger()
    win.find_bar.edit.setText("xylophone")
    with qtbot.waitSignal(win.reader.find_finished, timeout=10000) as blocker:
        qtbot.keyClick(win.find_bar.edit, Qt.Key.Key_Return)
    assert blocker.args == [0]
    assert win.find_bar.count.text() == "No matches"
    assert win.reader.find_hits() == {}


def test_go_to_printed_page_label(opened, qtbot):
    win = opened.window
    win.page_edit.setText("2")
    win.page_edit.returnPressed.emit()
    assert win.reader.current_page() == 2
    win.page_edit.setText("i")
    win.page_edit.returnPressed.emit()
    assert win.reader.current_page() == 0


def test_keyboard_navigation_and_zoom(opened, qtbot):
    reader = opened.window.reader
    reader.setFocus()
    qtbot.keyClick(reader, Qt.Key.Key_End)
    assert reader.current_page() == 3
    qtbot.keyClick(reader, Qt.Key.Key_Home)
    assert reader.current_page() == 0
    qtbot.keyClick(reader, Qt.Key.Key_PageDown)
    assert reader.verticalScrollBar().value() > 0
    before = reader.zoom_percent
    reader.zoom_in()
    assert reader.zoom_percent > before
    reader.fit_width()
    assert reader.zoom_mode == "fit_width"
