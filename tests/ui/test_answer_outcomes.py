"""Answer cards per outcome: a quotes card renders its quotes and sources with no
confidence badge; a selected-text card that found nothing offers "Search the whole book",
which asks the same question anew in whole-book mode."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bookreader.core import prompts, quotes
from bookreader.core.types import Answer, Citation, Mode, Outcome
from bookreader.ui.answer_card import AnswerCard


def _badges(card):
    return [w.text() for w in card.findChildren(type(card.meta_label))
            if w.objectName() == "badge"]


def _answer(outcome, text, mode=Mode.BOOK, citations=(), confidence=0.95):
    return Answer(query_id="q", answer_id="a", question="What is ATP?", mode=mode, text=text,
                  fallback=outcome is not Outcome.ANSWER, in_selected_text=None,
                  confidence=confidence, confidence_level="high", citations=citations,
                  outcome=outcome, backend="bundled")


def test_a_quotes_card_shows_quotes_and_sources_without_a_confidence_badge(qtbot):
    cites = (
        Citation("1.2 Mitochondria", 3, "4", "The energy is stored in a molecule called ATP",
                 True, rects=((72.0, 100.0, 300.0, 112.0),)),
        Citation("1.2 Mitochondria", 3, "4", "Mitochondria release the energy stored in food",
                 True, rects=((72.0, 120.0, 300.0, 132.0),)),
    )
    text = (quotes.QUOTES_INTRO + "\n"
            '\u201cThe energy is stored in a molecule called ATP.\u201d [Source: 1.2 Mitochondria '
            '(Page 4) - "The energy is stored in a molecule called ATP"]\n'
            '\u201cMitochondria release the energy stored in food.\u201d [Source: 1.2 Mitochondria '
            '(Page 4) - "Mitochondria release the energy stored in food"]')
    card = AnswerCard("What is ATP?", Mode.BOOK)
    qtbot.addWidget(card)
    card.set_answer(_answer(Outcome.QUOTES, text, citations=cites))
    card.show()
    shown = card.answer_label.text()
    assert shown.startswith("No verified answer could be written")
    assert "[1]" in shown and "[2]" in shown and "[Source:" not in shown
    badges = _badges(card)
    assert "No verified answer: quotes" in badges
    assert not any(b.endswith("confidence") for b in badges), badges
    chips = card.citation_chips()
    assert len(chips) == 2 and all(ch.isEnabled() for ch in chips)
    with qtbot.waitSignal(card.citation_clicked) as blocker:
        qtbot.mouseClick(chips[0], Qt.MouseButton.LeftButton)
    assert blocker.args[0].page == 3
    assert not card.search_book_button.isVisible()


def test_code_fences_are_not_shown_as_backticks(qtbot):
    text = ("Declare a variable with an array type, then create the array:\n```java\n"
            "int[] counts;\n```\nBoth can be one line.")
    card = AnswerCard("How do you declare an array?", Mode.BOOK)
    qtbot.addWidget(card)
    card.set_answer(_answer(Outcome.ANSWER, text))
    shown = card.answer_label.text()
    assert "```" not in shown
    assert "int[] counts;" in shown and shown.endswith("Both can be one line.")


def test_the_books_sentences_in_place_of_the_model_say_so(qtbot):
    """core/answer/choose.py: the card of the book's sentences shown instead of the model's
    answer carries a badge that says they are the book's words, and why."""
    import dataclasses

    cite = Citation("1.2 Mitochondria", 3, "4", "The energy is stored in a molecule called ATP",
                    True, rects=((72.0, 100.0, 300.0, 112.0),))
    text = ('The energy is stored in a molecule called ATP. [Source: 1.2 Mitochondria '
            '(Page 4) - "The energy is stored in a molecule called ATP"]')
    book = dataclasses.replace(
        _answer(Outcome.ANSWER, text, citations=(cite,), confidence=0.55),
        confidence_level="low",
        model="book sentences (extractive), in place of qwen: no answer in time")
    card = AnswerCard("What is ATP?", Mode.BOOK)
    qtbot.addWidget(card)
    card.set_answer(book)
    marks = {w.text(): w.toolTip() for w in card.findChildren(type(card.meta_label))
             if w.objectName() == "badge"}
    assert "Low confidence" in marks
    assert card.meta_label.text().startswith("In the book's own words")
    assert "no answer in time" in card.meta_label.toolTip()
    plain = AnswerCard("What is ATP?", Mode.BOOK)
    qtbot.addWidget(plain)
    plain.set_answer(_answer(Outcome.ANSWER, text, citations=(cite,)))
    assert not plain.meta_label.text().startswith("In the book's own words")


def test_no_high_badge_on_timeout_or_not_covered(qtbot):
    for outcome, text in ((Outcome.TIMEOUT, prompts.TIMEOUT_MESSAGE),
                          (Outcome.NOT_COVERED, prompts.NOT_COVERED)):
        card = AnswerCard("What is ATP?", Mode.BOOK)
        qtbot.addWidget(card)
        card.set_answer(_answer(outcome, text))
        assert "High confidence" not in _badges(card)


def test_search_the_whole_book_asks_again_in_book_mode(opened, qtbot):
    win = opened.window
    chat = win.chat
    qtbot.waitUntil(lambda: chat.book_ready, timeout=120000)
    selection = "Respiration uses oxygen and gives off carbon dioxide."
    chat.set_selection(selection, Mode.SELECTED, pages=(3, 3))
    chat.question_edit.setPlainText("Which pigment absorbs red and blue light?")
    with qtbot.waitSignal(chat.answer_finished, timeout=120000) as blocker:
        qtbot.keyClick(chat.question_edit, Qt.Key.Key_Return)
    first = blocker.args[0]
    assert first.outcome is Outcome.NOT_IN_SELECTION
    assert first.text == prompts.NOT_IN_SELECTION
    card = chat.cards()[-1]
    assert card.search_book_button.isVisible()
    assert "High confidence" not in _badges(card)
    n_cards = len(chat.cards())
    with qtbot.waitSignal(chat.answer_finished, timeout=120000) as blocker:
        qtbot.mouseClick(card.search_book_button, Qt.MouseButton.LeftButton)
    second = blocker.args[0]
    assert len(chat.cards()) == n_cards + 1
    assert second.mode == Mode.BOOK and second.question == first.question
    assert second.query_id != first.query_id  # a new, separately audited question
    assert second.selection == ""  # the selection is not sent with a whole-book question
    assert second.outcome in (Outcome.ANSWER, Outcome.QUOTES)
    assert "Chlorophyll" in second.text
