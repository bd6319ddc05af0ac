"""Words a student understands: who answered (no model file names), what is happening
while an answer is prepared, Settings without benchmark figures up front, and Help."""

from __future__ import annotations

import html
import uuid

from PySide6.QtWidgets import QLabel, QRadioButton

from bookreader.core.types import Answer, ConfidenceLevel, Mode, Outcome
from bookreader.ui.answer_card import AnswerCard
from bookreader.ui.settings_dialog import SettingsDialog

TECHNICAL = ("gguf", "tok/s", "SQuAD", "p50", "p95", "Grounding", "extractive", "Q4_K_M",
             "Qwen", "SmolLM")


def _answer(**kw) -> Answer:
    base = dict(query_id=str(uuid.uuid4()), answer_id=str(uuid.uuid4()),
                question="What do mitochondria produce?", mode=Mode.BOOK,
                text="Mitochondria produce most of the ATP a cell needs.", fallback=False,
                in_selected_text=None, confidence=0.8, confidence_level=ConfidenceLevel.HIGH,
                backend="small", model="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                latency_ms=4200.0, outcome=Outcome.ANSWER)
    base.update(kw)
    return Answer(**base)


def _visible_text(widget) -> str:
    labels = [w.text() for w in widget.findChildren(QLabel) if w.isVisibleTo(widget)]
    buttons = [w.text() for w in widget.findChildren(QRadioButton) if w.isVisibleTo(widget)]
    return "\n".join(labels + buttons)


def test_a_card_says_who_answered_in_plain_words(qtbot):
    card = AnswerCard("What do mitochondria produce?", Mode.BOOK)
    qtbot.addWidget(card)
    card.set_answer(_answer())
    assert card.meta_label.text() == "Answered by the Small model · 4.2 s"
    assert "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" in card.meta_label.toolTip()
    assert not any(t in _visible_text(card) for t in TECHNICAL)

    book = AnswerCard("What do mitochondria produce?", Mode.BOOK)
    qtbot.addWidget(book)
    book.set_answer(_answer(model="book sentences (extractive), in place of "
                                  "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf: its answer was "
                                  "less likely right"))
    assert book.meta_label.text().startswith("In the book's own words")
    assert "less likely right" in book.meta_label.toolTip()
    assert not any(t in _visible_text(book) for t in TECHNICAL)

    # quotes: the model's answer could not be checked, so nobody "answered"
    quotes = AnswerCard("What do mitochondria produce?", Mode.BOOK)
    qtbot.addWidget(quotes)
    quotes.set_answer(_answer(outcome=Outcome.QUOTES, fallback=True))
    assert quotes.meta_label.text() == "Quotes from the book · 4.2 s"
    assert "the Small model" in quotes.meta_label.toolTip()


def test_settings_speak_to_students_and_keep_figures_under_advanced(qtbot, ui_settings):
    dialog = SettingsDialog(ui_settings.updated(
        auto_tier="small", auto_reason="small is the largest installed tier fast enough "
                                       "here (first token p50 <= 3 s, p95 <= 6 s)."))
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.advanced.isVisible()
    main = _visible_text(dialog)
    assert "Small model" in main and "seconds" in main
    assert "Chosen for this computer: the Small model." in main
    assert not any(t in main for t in TECHNICAL), [t for t in TECHNICAL if t in main]
    dialog.advanced_button.click()
    assert dialog.advanced.isVisible()
    advanced = html.unescape(_visible_text(dialog.advanced))
    assert "p50 <= 3 s" in advanced and "SQuAD" in advanced and "Grounding" in advanced


def test_answering_says_what_it_is_doing(opened, qtbot):
    win = opened.window
    chat = win.chat
    qtbot.waitUntil(lambda: chat.book_ready, timeout=120000)
    stages: list[str] = []
    chat.stage_changed.connect(stages.append)
    with qtbot.waitSignal(chat.answer_finished, timeout=120000):
        chat.ask("What do mitochondria produce?")
    assert stages[0] == "Searching the book…"
    assert "Checking the answer against the book…" in stages
    assert stages.index("Searching the book…") < stages.index(
        "Checking the answer against the book…")


def test_help_opens_the_shortcut_sheet_and_how_asking_works(opened, qtbot):
    win = opened.window
    help_menu = win.menuBar().actions()[-1].menu()
    assert [a.text() for a in help_menu.actions() if a.text()] == [
        "Keyboard shortcuts", "How asking works", "About BookReader"]
    win.shortcuts_action.trigger()
    sheet = win._dialogs[-1]
    assert sheet.isVisible() and "Ctrl+G" in sheet.text() and "Shift+Enter" in sheet.text()
    win.how_asking_works_action.trigger()
    asking = win._dialogs[-1]
    text = asking.text()
    for words in ("Whole book", "Selected text", "Selection and nearby pages",
                  "Not found in the book", "Not found in the selection"):
        assert words in text
