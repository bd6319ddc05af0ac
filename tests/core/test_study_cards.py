"""Flashcards, quizzes and summaries from a real PDF, every item cited on its page."""

from __future__ import annotations

import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.sentences import key_only
from bookreader.core.study import StudyScope, chapter_scope, generate
from bookreader.core.study.model import CARD_TERM, QUIZ_CHOICE, QUIZ_CLOZE, QUIZ_TRUE_FALSE
from bookreader.core.study.quiz import answerable
from bookreader.core.study.source import Citer, StudySentence
from bookreader.errors import Cancelled, InvalidInput
from study_support import (
    CAPTION,
    CHAPTERS,
    CODE_LINE,
    EXERCISE_SENTENCE,
    GLOSSARY,
    RUNNING_DEFINITIONS_1,
    RUNNING_DEFINITIONS_2,
    VOCABULARY,
    study_book,
)


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    spec = study_book(tmp_path_factory.mktemp("study") / "study.pdf")
    pdf = PdfBook.open(spec.path)
    yield pdf
    pdf.close()


def _chapter(book, n: int, kind: str = "cards", **kw):
    return generate(book, book.book_id, kind, chapter_scope(book.toc, CHAPTERS[n],
                                                           book.page_count), **kw)


def _assert_cited_on_page(book, citation):
    assert citation.verified and not citation.repaired
    assert key_only(citation.excerpt) in key_only(book.page(citation.page).text)
    assert citation.page_label == book.page(citation.page).label
    assert citation.rects, "the reader needs the excerpt's boxes to highlight it"


def test_vocabulary_entries_and_running_definitions_become_cited_term_cards(book):
    made = _chapter(book, 0)
    by_front = {c.front: c for c in made.cards}
    for term, definition in VOCABULARY.items():
        assert by_front[term].back == definition
        assert by_front[term].citation.section == "1.2 Vocabulary"
    for sentence, term in zip(RUNNING_DEFINITIONS_1, ("mitochondrion", "Osmosis", "enzyme")):
        assert by_front[term].back == sentence
        assert by_front[term].kind == CARD_TERM
    for card in made.cards:
        _assert_cited_on_page(book, card.citation)
        assert key_only(card.back) in key_only(card.citation.excerpt)
    assert len({c.front.casefold() for c in made.cards}) == len(made.cards)


def test_exercises_captions_and_code_make_no_cards(book):
    made = _chapter(book, 0)
    backs = " ".join(c.back for c in made.cards)
    assert "vacuole" not in backs and key_only(EXERCISE_SENTENCE) not in key_only(backs)
    assert "membrane is a thin layer" not in backs, CAPTION
    assert "buffer" not in backs, CODE_LINE


def test_definitions_in_running_text_and_a_glossary_without_colons(book):
    made = _chapter(book, 1)
    by_front = {c.front: c for c in made.cards}
    for sentence, term in zip(RUNNING_DEFINITIONS_2,
                              ("Supply", "Demand", "equilibrium price", "Inflation")):
        assert by_front[term].back == sentence
    for term, definition in GLOSSARY.items():
        assert by_front[term].back == definition
    assert all(c.chapter == CHAPTERS[1] for c in made.cards)


def test_a_chapter_without_definitions_and_a_scanned_page(book):
    made = _chapter(book, 2)
    assert made.cards == ()
    assert book.page_count - 1 in made.pages_without_text
    assert any("without a text layer (scanned images)" in n and "OCR" in n for n in made.notes)
    assert any("Nothing to study" in n for n in made.notes)


def test_a_blank_page_is_skipped_without_calling_it_scanned(tmp_path):
    import fitz

    path = tmp_path / "blank.pdf"
    with fitz.open() as doc:
        page = doc.new_page()
        page.insert_textbox(fitz.Rect(72, 72, 520, 400), " ".join(RUNNING_DEFINITIONS_1),
                            fontsize=11)
        doc.new_page()  # nothing on it: not a scan
        doc.save(path)
    with PdfBook.open(path) as pdf:
        made = generate(pdf, pdf.book_id, "cards", StudyScope(0, 1))
    assert made.cards
    assert made.pages_without_text == (1,)
    assert not any("scanned" in n or "text layer" in n for n in made.notes)


def test_a_back_not_found_on_its_page_is_not_cited(book):
    made = _chapter(book, 0)
    card = next(c for c in made.cards if c.front == "enzyme")
    citer = Citer(book)
    real = StudySentence(card.back, card.citation.page, card.citation.page_label, CHAPTERS[0],
                         card.citation.section, 0, 0)
    assert citer.cite(real) is not None
    altered = StudySentence(card.back.replace("protein", "sugar"), card.citation.page,
                            card.citation.page_label, CHAPTERS[0], card.citation.section, 0, 0)
    assert citer.cite(altered) is None
    other_page = StudySentence(card.back, card.citation.page + 1, card.citation.page_label,
                               CHAPTERS[0], card.citation.section, 0, 0)
    assert citer.cite(other_page) is None
    assert citer.rejected == 2


def test_quiz_items_are_answerable_from_their_cited_sentence(book):
    quiz = _chapter(book, 0, "quiz").quiz + _chapter(book, 1, "quiz").quiz
    kinds = {q.kind for q in quiz}
    assert {QUIZ_CLOZE, QUIZ_CHOICE, QUIZ_TRUE_FALSE} <= kinds
    for q in quiz:
        assert answerable(q), q
        _assert_cited_on_page(book, q.citation)
        if q.kind == QUIZ_CHOICE:
            assert q.answer in q.options and len(set(q.options)) == len(q.options) >= 3
        if q.kind == QUIZ_CLOZE:
            assert "_____" in q.prompt and q.answer.casefold() not in q.prompt.casefold()
        assert q.is_correct(q.answer)


def test_summary_is_cited_and_in_reading_order(book):
    made = _chapter(book, 0, "summary")
    assert len(made.summary) >= 3
    places = [(ln.citation.page, book.page(ln.citation.page).text.find(ln.citation.excerpt))
              for ln in made.summary]
    assert places == sorted(places)
    for ln in made.summary:
        _assert_cited_on_page(book, ln.citation)
        assert key_only(ln.text) == key_only(ln.citation.excerpt)


def test_selection_keeps_only_the_selected_sentences(book):
    card_page = book.toc[1].page
    selection = RUNNING_DEFINITIONS_1[0] + " " + RUNNING_DEFINITIONS_1[1]
    made = generate(book, book.book_id, "cards",
                    StudyScope(card_page, card_page + 1, selection=selection))
    assert sorted(c.front for c in made.cards) == ["Osmosis", "mitochondrion"]


def test_progress_is_reported_and_cancel_stops(book):
    calls = []
    _chapter(book, 0, progress=lambda d, t, m: calls.append((d, t, m)))
    assert calls and calls[-1][0] == calls[-1][1]
    with pytest.raises(Cancelled):
        _chapter(book, 0, cancel=lambda: True)


def test_bad_scopes_say_what_to_do(book):
    with pytest.raises(InvalidInput, match="not in this book"):
        generate(book, book.book_id, "cards", StudyScope(0, book.page_count + 3))
    with pytest.raises(InvalidInput, match="outline"):
        chapter_scope(book.toc, "No Such Chapter", book.page_count)
    with pytest.raises(InvalidInput, match="Unknown study tool"):
        generate(book, book.book_id, "poems", StudyScope(0, 1))
