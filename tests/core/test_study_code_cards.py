"""Code cards, asked for: a listing whose page says what it does gives a card (the
listing on the front, the book's explaining sentence on the back, cited on its page); a
listing without such a sentence gives none, and without the option there are none at
all (real PDFs, listings set in Courier)."""

from __future__ import annotations

import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.study.code_cards import (
    CODE_QUESTION,
    explains_after,
    explains_before,
    shown_listing,
)
from bookreader.core.study.generate import StudyScope, generate
from bookreader.core.study.model import CARD_CODE
from study_support import AFTER, LEAD_IN, LOOP, code_listing_pdf


@pytest.fixture(scope="module")
def code_book(tmp_path_factory):
    return code_listing_pdf(tmp_path_factory.mktemp("codecards") / "code.pdf")


def _cards(path, code: bool):
    with PdfBook.open(path) as pdf:
        return generate(pdf, pdf.book_id, "cards", StudyScope(0, pdf.page_count - 1),
                        code=code)


def test_an_explained_listing_gives_a_code_card_only_when_asked_for(code_book):
    asked = _cards(code_book, True)
    codes = [c for c in asked.cards if c.kind == CARD_CODE]
    by_back = {c.back: c for c in codes}
    assert set(by_back) == {LEAD_IN[:-1] + ".", AFTER}, by_back
    lead = by_back[LEAD_IN[:-1] + "."]
    assert lead.front.split("\n")[0] == CODE_QUESTION
    assert [ln.strip() for ln in lead.front.split("\n")[1:]] == [ln.strip() for ln in LOOP]
    assert lead.citation.verified and lead.citation.page == 0
    assert "prints the numbers from 1 to 10" in lead.citation.excerpt
    after = by_back[AFTER]
    assert "def bigger(a, b):" in after.front and after.citation.page == 1
    assert after.citation.verified and "larger of its two numbers" in after.citation.excerpt
    # the unexplained listing makes no card
    assert not any("total = total + 5" in c.front for c in asked.cards)
    assert any("Code cards were asked for" in n for n in asked.notes)

    plain = _cards(code_book, False)
    assert not [c for c in plain.cards if c.kind == CARD_CODE]
    assert not any("print(i)" in c.front or "bigger" in c.front for c in plain.cards)
    # the other cards are the same either way
    assert [c.card_id for c in plain.cards] == [
        c.card_id for c in asked.cards if c.kind != CARD_CODE]


def test_a_quiz_never_holds_code_cards(code_book):
    with PdfBook.open(code_book) as pdf:
        quiz = generate(pdf, pdf.book_id, "quiz", StudyScope(0, 1), code=True)
    assert not any("print(i)" in q.prompt or "bigger" in q.prompt for q in quiz.quiz)


def test_which_sentences_say_what_code_does():
    assert explains_before("The following program converts a time of day to minutes:")
    assert explains_before("Here is a function that computes the area of a circle:")
    assert not explains_before("For example:")
    assert not explains_before("This program compiles, but the output is as follows:")
    assert not explains_before("We make the following modifications to our program:")
    assert not explains_before("The following program converts a time of day to minutes.")
    assert explains_after("This loop prints each key and the corresponding value.")
    assert explains_after("The first example computes the logarithm of the ratio.")
    assert not explains_after("The output of this program is shown here.")
    assert not explains_after("This program looks like this when it is finished:")


def test_a_long_listing_is_cut_with_an_ellipsis():
    shown = shown_listing([f"x{i} = {i}" for i in range(30)]).split("\n")
    assert len(shown) == 12 and shown[-1] == "..." and shown[0] == "x0 = 0"


def test_a_code_cards_listing_keeps_its_lines_in_anki_and_markdown(code_book, tmp_path):
    import sqlite3
    import zipfile

    from bookreader.core.study.export import export_cards

    cards = [c for c in _cards(code_book, True).cards if c.kind == CARD_CODE]
    out = export_cards(cards, "anki", tmp_path / "deck.apkg", title="Code", book_id="cd" * 32)
    with zipfile.ZipFile(out) as z:
        (tmp_path / "col.sqlite").write_bytes(z.read("collection.anki2"))
    db = sqlite3.connect(tmp_path / "col.sqlite")
    try:
        fronts = [r[0].split("\x1f")[0] for r in db.execute("select flds from notes")]
    finally:
        db.close()
    assert any("What does this code do?<br>for i in range(1, 11):<br>" in f for f in fronts)
    md = export_cards(cards, "markdown", tmp_path / "cards.md", title="Code",
                      book_id="cd" * 32).read_text(encoding="utf-8")
    assert "## 1. What does this code do?\n\n```\nfor i in range(1, 11):" in md
