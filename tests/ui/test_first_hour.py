"""A student's first hour: the defects a newcomer hit, each kept fixed by a test that
failed before its fix (menu slots, reading positions, the start, titles, chips, stray
spaces, the contents and Find, rendering during Find, the audit count)."""

from __future__ import annotations

import sys
import threading
import uuid
from pathlib import Path

import fitz
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from bookreader.core.types import Answer, Citation, ConfidenceLevel, Mode, Outcome
from bookreader.ui.answer_card import AnswerCard, CitationChip


@pytest.fixture
def other_book(pdf_factory, tmp_path) -> Path:
    """A second book (other bytes, so another book id) with the same four pages."""
    path = tmp_path / "other.pdf"
    pdf_factory(path)
    doc = fitz.open(str(path))
    doc.set_metadata({"title": "Plants and Energy, second copy"})
    doc.save(str(path), incremental=True, encryption=fitz.PDF_ENCRYPT_KEEP)
    doc.close()
    return path


# --- 1. menu actions -------------------------------------------------------------------------
def test_file_export_conversation_from_the_menu_writes_the_file(opened, qtbot, tmp_path,
                                                                 monkeypatch):
    """The action's triggered(bool) used to arrive as the file name (False)."""
    win = opened.window
    qtbot.waitUntil(lambda: win.service.book_for_path(win.current_path) is not None,
                    timeout=120000)
    out = tmp_path / "talk.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(out), "Markdown (*.md)")))
    with qtbot.waitSignal(win.conversation_exported, timeout=60000) as blocker:
        win.export_conversation_action.trigger()
    assert blocker.args[0] == str(out) and out.is_file()


def test_every_menu_action_and_recent_entry_gets_no_checked_flag(opened, qtbot, other_book):
    """Open recent's entries open their book (a ``lambda p=p`` got the checked flag as
    its path), and every action of the window calls its slot without arguments."""
    win = opened.window
    with qtbot.waitSignal(win.book_opened, timeout=20000):
        win.open_book(other_book)
    win._fill_recent_menu()
    entries = [a for a in win.recent_menu.actions() if a.data()]
    assert [Path(a.data()).name for a in entries] == ["other.pdf", "plants.pdf"]
    with qtbot.waitSignal(win.book_opened, timeout=20000) as blocker:
        entries[1].trigger()
    assert Path(blocker.args[0].path).name == "plants.pdf"


# --- 2. reading positions ------------------------------------------------------------------------
def test_switching_books_keeps_the_page_of_the_book_left(opened, qtbot, other_book):
    win = opened.window
    first = win.current_path
    win.reader.go_to_page(2)
    assert win.last_page(first) == 2
    with qtbot.waitSignal(win.book_opened, timeout=20000):
        win.open_book(other_book)
    assert win.last_page(first) == 2  # was 0: the new layout's first page, written for it
    with qtbot.waitSignal(win.book_opened, timeout=20000):
        win.open_book(first)
    assert win.reader.current_page() == 2


# --- 3. a new start ---------------------------------------------------------------------------
@pytest.fixture
def gated_app(qtbot, embedder):
    """Build the app whose library waits for ``gate`` before it opens (the catalogue then
    arrives after the book has opened, as it does while the library process starts)."""
    from bookreader.app import build_app
    from bookreader.library import Library
    from bookreader.ui.messages import RecordingSink

    built = []
    saved_hooks = (sys.excepthook, threading.excepthook)

    def factory(settings, gate: threading.Event):
        def library(s):
            gate.wait(60)
            return Library(s, embedder=embedder)

        ctx = build_app(["test"], settings=settings, sink=RecordingSink(),
                        library_factory=library)
        qtbot.addWidget(ctx.window)
        ctx.window.resize(1400, 900)
        built.append((ctx, gate))
        return ctx

    yield factory
    for ctx, gate in built:
        gate.set()
        ctx.window.close()
        ctx.lock.unlock()
    sys.excepthook, threading.excepthook = saved_hooks


def test_a_new_start_reopens_the_last_book_at_its_page_without_flashes(
        make_app, gated_app, ui_settings, book_pdf, qtbot):
    from bookreader.app import start_book

    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(ctx.service.ingest_finished, timeout=120000):
        win.open_book(book_pdf)
    win.reader.go_to_page(2)
    win.close()
    ctx.lock.unlock()

    gate = threading.Event()
    again = gated_app(ui_settings, gate)
    win = again.window
    book = start_book(again)
    assert book is not None and book.name == "plants.pdf"  # not the sample guide
    queued: list[str] = []
    again.service.ingest_queued.connect(queued.append)
    win.open_book(book)
    # Before the book is open: a neutral note, not "No book open" / "no outline".
    assert win.chat.book_label.text() == "Opening Plants and Energy…"
    assert win.toc_panel.empty.text() == "Opening the book…"
    with qtbot.waitSignal(win.book_opened, timeout=20000):
        pass
    assert win.reader.current_page() == 2
    assert "Indexing" not in win.chat.status_label.text()
    gate.set()  # now the library opens and reads its catalogue
    qtbot.waitUntil(lambda: win.chat.book_ready, timeout=60000)
    assert queued == []  # an indexed book is not indexed again
    assert "Indexing" not in win.chat.status_label.text()


# --- 5. titles and Open recent ---------------------------------------------------------------
def test_the_title_comes_from_the_metadata_else_the_title_page(tmp_path):
    """The title the window and the library show (read by the sandbox, which knows the
    pages never to parse in the window's process)."""
    from pdf_factory import Line, make_pdf

    from bookreader.core import sandbox

    pages = [[Line("Introduction to", 72, 200, size=28), Line("Econometrics", 72, 240, size=28),
              Line("A. Author", 72, 300, size=16), Line("Some small print", 72, 700, size=9)],
             "Chapter 1. The first chapter says what econometrics is about."]

    def title(name: str, **kw) -> str:
        return sandbox.scan_pdf(str(make_pdf(tmp_path / name, pages, **kw)), None).title

    assert title("economics_econometrics_godwin.pdf") == "Introduction to Econometrics"
    assert title("named.pdf", metadata={"title": "The Real Title"}) == "The Real Title"
    assert title("w.pdf", metadata={"title": "Microsoft Word - ch1.docx"}) == (
        "Introduction to Econometrics")
    plain = make_pdf(tmp_path / "plain_name.pdf", ["Only body text on this page."])
    assert sandbox.scan_pdf(str(plain), None).title == "plain name"


def test_open_recent_is_cut_in_the_middle_with_the_path_in_its_tooltip(opened, qtbot):
    win = opened.window
    long_title = "A Very Long Title About Plants, Energy and the Chemistry of Light " * 3
    win._remember_title(win.current_path, long_title.strip())
    win._fill_recent_menu()
    action = next(a for a in win.recent_menu.actions() if a.data())
    text = action.text()
    assert action.toolTip() == win.current_path
    assert "…" in text and text.startswith("A Very Long") and text.endswith("Light")


# --- 6. citation chips --------------------------------------------------------------------------
@pytest.mark.parametrize("section", ["Fixing heteroskedasticity: robust standard errors",
                                     "Why R2 always rises when a variable is added"])
def test_citation_chips_are_cut_between_words(qtbot, section):
    chip = CitationChip(Citation(section, 4, "5", "An excerpt.", True), 1)
    qtbot.addWidget(chip)
    shown = chip.text().split("·", 1)[1].split()
    assert "…" in shown
    assert all(w == "…" or w in section.split() for w in shown), chip.text()


# --- 7. stray spaces -----------------------------------------------------------------------------
def _answer(text: str, citations=(), **kw) -> Answer:
    base = dict(query_id=str(uuid.uuid4()), answer_id=str(uuid.uuid4()),
                question="Why does the adjusted R2 fall?", mode=Mode.BOOK, text=text,
                fallback=False, in_selected_text=None, confidence=0.8,
                confidence_level=ConfidenceLevel.HIGH, citations=tuple(citations),
                backend="small", model="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                latency_ms=4200.0, outcome=Outcome.ANSWER)
    base.update(kw)
    return Answer(**base)


def test_answer_cards_show_tidy_text_and_keep_the_excerpt(qtbot):
    excerpt = "R2 rises , but the adjusted ( ¯R2) may fall"
    cite = Citation("6.2 Goodness of fit", 40, "41", excerpt, True)
    text = (f'Y , but the adjusted ( ¯R2) may fall . [Source: 6.2 Goodness of fit (Page 41) - '
            f'"{excerpt}"]')
    card = AnswerCard("Why?", Mode.BOOK)
    qtbot.addWidget(card)
    card.set_answer(_answer(text, (cite,)))
    shown = card.answer_label.text()
    assert "Y, but the adjusted (¯R2) may fall." in shown
    assert " ," not in shown and "( " not in shown
    assert card.answer is not None and card.answer.citations[0].excerpt == excerpt


# --- 8. contents and Find -----------------------------------------------------------------------
def test_clicking_a_contents_entry_highlights_that_entry(make_app, ui_settings, qtbot, tmp_path):
    from pdf_factory import make_pdf

    pages = [f"Page {i + 1} text about the subject of chapter {i // 2 + 1}." for i in range(5)]
    toc = [(1, "Chapter 1", 0), (2, "1.1 Section", 1), (3, "1.1.1 Subsection", 1),
           (1, "Chapter 2", 3)]
    path = make_pdf(tmp_path / "nested.pdf", pages, toc=toc)
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(win.book_opened, timeout=20000):
        win.open_book(path)
    tree = win.toc_panel.tree
    tree.expandAll()
    section = tree.topLevelItem(0).child(0)
    assert section.text(0) == "1.1 Section"
    rect = tree.visualItemRect(section)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert win.reader.current_page() == 1
    assert tree.currentItem() is section  # not its first subsection, on the same page
    win.reader.go_to_page(3)
    assert tree.currentItem().text(0) == "Chapter 2"


def test_find_says_counting_until_every_page_was_searched(opened, qtbot):
    win = opened.window
    bar = win.find_bar
    shown: list[str] = []
    win.reader.find_changed.connect(lambda *_: shown.append(bar.count.text()))
    win.find_action.trigger()
    bar.edit.setText("energy")
    with qtbot.waitSignal(win.reader.find_finished, timeout=20000) as blocker:
        qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    total = blocker.args[0]
    assert total >= 3
    assert shown and all(t in ("", "Searching…", "counting…") for t in shown), shown
    assert bar.count.text() == f"{win.reader.find_current() + 1} of {total}"


# --- 9. the page a Find jumps to is drawn first --------------------------------------------
def test_the_page_find_jumps_to_is_drawn_before_the_search_ends(make_app, ui_settings, qtbot,
                                                               tmp_path):
    from pdf_factory import make_pdf

    pages = [f"Filler page {i + 1} about nothing in particular." for i in range(40)]
    for i in range(30, 40):
        pages[i] = f"Page {i + 1} mentions the zeppelin once."
    path = make_pdf(tmp_path / "long.pdf", pages)
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(win.reader.first_page_painted, timeout=20000):
        win.open_book(path)
    events: list[str] = []
    win.document.page_rendered.connect(lambda r: events.append(f"render {r.page}"))
    win.document.find_finished.connect(lambda *_: events.append("finished"))
    with qtbot.waitSignal(win.document.find_finished, timeout=30000):
        win.reader.find("zeppelin")
    assert win.reader.current_page() == 30
    assert "render 30" in events
    assert events.index("render 30") < events.index("finished"), events


# --- 10. the audit dialog counts questions ---------------------------------------------------
def test_the_audit_dialog_counts_questions_not_records(opened, qtbot, tmp_path):
    win = opened.window
    chat = win.chat
    words = win.reader.words(0)
    for question in ("What does this book explain?", "What can you ask about?"):
        chat.set_selection(" ".join(w.text for w in words), Mode.SELECTED, (0, 0))
        with qtbot.waitSignal(chat.answer_finished, timeout=120000):
            chat.ask(question)
    dialog = win.show_audit()
    out = tmp_path / "audit.jsonl"
    dialog.format_combo.setCurrentIndex(dialog.format_combo.findData("jsonl"))
    dialog.export_path.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=30000) as blocker:
        dialog.export_button.click()
    questions, records, _ = blocker.args
    assert (questions, records) == (2, 4)
    assert dialog.status.text().startswith("Exported 2 questions (4 records")
    dialog.reject()
