"""Spaced review with FSRS over simulated days, and the Anki, CSV and Markdown exports."""

from __future__ import annotations

import csv
import io
import sqlite3
import zipfile
from datetime import datetime, timedelta, timezone

import pytest

from bookreader.core.study.export import ANKI_MODEL_NAME, export_cards
from bookreader.core.study.model import CARD_TERM, StudyCard
from bookreader.core.study.review import ReviewDeck
from bookreader.core.types import Citation
from bookreader.errors import BookReaderError, InvalidInput

DAY0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def _card(n: int, front: str = "", back: str = "") -> StudyCard:
    cit = Citation(section="2.1 Buying and Selling", page=4 + n, page_label=str(3 + n),
                   excerpt=f"Excerpt number {n} as printed on its page.", verified=True)
    return StudyCard(card_id=f"{n:016x}", kind=CARD_TERM, front=front or f"term {n}",
                     back=back or f"The definition of term {n}.", citation=cit,
                     chapter="2 Markets and Prices", term=front or f"term {n}")


def test_new_cards_are_due_and_good_ratings_space_them_out_over_days(tmp_path):
    deck = ReviewDeck(tmp_path)
    assert deck.add([_card(1), _card(2)], now=DAY0) == 2
    assert deck.add([_card(1)], now=DAY0) == 0  # kept once, its schedule untouched
    assert [c.card_id for c in deck.due(DAY0)] == [_card(1).card_id, _card(2).card_id]

    now = DAY0
    intervals = []
    last_due = now
    for _ in range(60):  # simulated days: review card 1 "good" whenever it is due
        if deck.due(now) and _card(1).card_id in {c.card_id for c in deck.due(now)}:
            due = deck.rate(_card(1).card_id, 3, now)
            intervals.append(due - now)
            last_due = due
        now += timedelta(days=1)
    long_ones = [i for i in intervals if i >= timedelta(days=1)]
    assert len(long_ones) >= 3
    assert long_ones == sorted(long_ones) and long_ones[-1] > long_ones[0]
    assert last_due > DAY0 + timedelta(days=20)

    # "again" brings a card back within minutes
    due = deck.rate(_card(2).card_id, 1, DAY0)
    assert due - DAY0 < timedelta(hours=1)

    reopened = ReviewDeck(tmp_path)  # schedules survive a restart
    assert reopened.next_due(_card(1).card_id) == deck.next_due(_card(1).card_id)
    assert reopened.stats(now)["reviews"] == deck.stats(now)["reviews"] >= 4
    assert reopened.cards()[0].citation.excerpt == _card(1).citation.excerpt


def test_bad_ratings_and_unknown_cards_are_refused(tmp_path):
    deck = ReviewDeck(tmp_path)
    deck.add([_card(1)], now=DAY0)
    with pytest.raises(InvalidInput, match="rating"):
        deck.rate(_card(1).card_id, 5, DAY0)
    with pytest.raises(InvalidInput, match="No saved study card"):
        deck.rate("ffff", 3, DAY0)


def test_a_damaged_deck_file_says_what_to_do(tmp_path):
    (tmp_path / "study.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BookReaderError, match="Move the file away"):
        ReviewDeck(tmp_path)


def test_anki_package_reads_back_from_its_sqlite(tmp_path):
    cards = [_card(1), _card(2, "opportunity cost", "The value of the best <alternative>.")]
    out = export_cards(cards, "anki", tmp_path / "deck.apkg", title="Test Book",
                       book_id="ab" * 32)
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        assert "collection.anki2" in names
        (tmp_path / "col.sqlite").write_bytes(z.read("collection.anki2"))
    db = sqlite3.connect(tmp_path / "col.sqlite")
    try:
        rows = [r[0].split("\x1f") for r in db.execute("select flds from notes order by id")]
        models = db.execute("select models from col").fetchone()[0]
    finally:
        db.close()
    assert ANKI_MODEL_NAME in models
    assert ["term 1", "The definition of term 1."] == rows[0][:2]
    assert rows[1][1] == "The value of the best &lt;alternative&gt;."
    assert "page 5" in rows[1][2] and "Excerpt number 2" in rows[1][2]
    again = export_cards(cards, "anki", tmp_path / "deck2.apkg", title="Test Book",
                         book_id="ab" * 32)
    assert again.exists()


def test_csv_is_formula_safe_and_markdown_carries_citations(tmp_path):
    cards = [_card(1, "=HYPERLINK(\"x\")", "+1 is not a formula"), _card(2)]
    out = export_cards(cards, "csv", tmp_path / "cards.csv", title="T", book_id="ab" * 32)
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    assert rows[0][:3] == ["front", "back", "kind"]
    assert rows[1][0] == "'=HYPERLINK(\"x\")" and rows[1][1] == "'+1 is not a formula"
    assert rows[2][5] == "5" and rows[2][6] == "7"  # printed label, PDF page (1-based)
    md = export_cards(cards, "markdown", tmp_path / "cards.md", title="T",
                      book_id="ab" * 32).read_text(encoding="utf-8")
    assert "## 2. term 2" in md
    assert "> 2.1 Buying and Selling, page 5: \u201cExcerpt number 2" in md


def test_export_refuses_nothing_and_unknown_formats(tmp_path):
    with pytest.raises(InvalidInput, match="no cards"):
        export_cards([], "csv", tmp_path / "x.csv", title="T", book_id="ab")
    with pytest.raises(InvalidInput, match="Unknown export format"):
        export_cards([_card(1)], "pdf", tmp_path / "x.pdf", title="T", book_id="ab")
