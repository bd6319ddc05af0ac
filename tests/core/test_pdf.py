"""core/pdf.py on real PDFs written by tests/pdf_factory.py."""

from __future__ import annotations

import hashlib
import logging

import fitz
import pytest

import pdf_factory as pf
from bookreader.core import pdf as pdfmod
from bookreader.core.pdf import PdfBook, file_book_id
from bookreader.core.pdf_probe import check_pdf, probe_pdf
from bookreader.core.types import Word
from bookreader.errors import BookReaderError, Cancelled, PasswordRequired, PdfError


def close_to(a, b, tol=1.5) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b))


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A generated book: 2 front pages (i, ii), two chapters, outline, headers, footers."""
    path = tmp_path_factory.mktemp("book") / "book.pdf"
    return pf.book_pdf(
        path,
        [
            ("Chapter One Basics", [("1.1 First Steps", pf.filler(40, 1)),
                                    ("1.2 Second Steps", pf.filler(70, 2))]),
            ("Chapter Two Details", [("2.1 Third Steps", pf.filler(60, 3)),
                                     ("2.2 Fourth Steps", pf.filler(20, 4))]),
        ],
        front_pages=2,
    )


# --- identity and opening -----------------------------------------------------------------


def test_book_id_is_the_sha256_prefix_of_the_file(book):
    expected = hashlib.sha256(book.path.read_bytes()).hexdigest()[:16]
    assert file_book_id(book.path) == expected
    with PdfBook.open(book.path) as b:
        assert b.book_id == expected
        assert b.path == book.path
        assert b.page_count == book.page_count
        assert b.title == "A Generated Test Book"


def test_title_falls_back_to_the_file_name(tmp_path):
    path = pf.make_pdf(tmp_path / "my_lecture_notes.pdf", ["Some text on a page."])
    with PdfBook.open(path) as b:
        assert b.title == "my lecture notes"


@pytest.mark.parametrize(
    "make, expected",
    [
        (pf.not_a_pdf, "is not a PDF file"),
        (pf.zero_page_pdf, "has no pages"),
        (pf.huge_page_count_pdf, "impossible number of pages"),
    ],
)
def test_bad_files_raise_a_pdf_error_naming_the_file(tmp_path, make, expected):
    path = make(tmp_path / f"{make.__name__}.pdf")
    with pytest.raises(PdfError) as err:
        PdfBook.open(path)
    assert expected in err.value.user_message
    assert path.name in err.value.user_message
    assert "new copy" in err.value.user_message or "another" in err.value.user_message


def test_missing_empty_and_folder_paths(tmp_path):
    with pytest.raises(PdfError, match="does not exist"):
        PdfBook.open(tmp_path / "nope.pdf")
    with pytest.raises(PdfError, match="is a folder"):
        PdfBook.open(tmp_path)
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(PdfError, match="empty"):
        PdfBook.open(empty)


def test_truncated_file_opens_or_fails_clearly(tmp_path):
    path = pf.truncated_pdf(tmp_path / "cut.pdf")
    try:
        with PdfBook.open(path) as b:
            pages = list(b.iter_pages())
            assert len(pages) == b.page_count >= 1
    except PdfError as exc:
        assert "cut.pdf" in exc.user_message


def test_page_tree_loop_opens_and_reports_the_damaged_page(tmp_path):
    path = pf.page_tree_loop_pdf(tmp_path / "loop.pdf")
    with PdfBook.open(path) as b:
        texts = [p.text for p in b.iter_pages()]
        assert "Hello page" in texts[0]
        assert set(b.damaged_pages()) == set(range(1, b.page_count))
        assert b.pages_without_text() == list(range(1, b.page_count))
        with pytest.raises(PdfError, match="could not be drawn"):
            b.render(1, 1.0)


def test_outline_loop_opens_with_a_finite_outline(tmp_path):
    path = pf.outline_loop_pdf(tmp_path / "oloop.pdf")
    with PdfBook.open(path) as b:
        assert len(b.toc) <= 2
        assert [p.text for p in b.iter_pages()] == ["Hello page", "Hello page"]


def test_mupdf_messages_go_to_logging_not_stderr(tmp_path, capfd, caplog):
    caplog.set_level(logging.INFO, logger="bookreader.mupdf")
    path = pf.page_tree_loop_pdf(tmp_path / "loop.pdf")
    with PdfBook.open(path) as b:
        list(b.iter_pages())
    err = capfd.readouterr().err
    assert "cycle" not in err and "MuPDF error" not in err
    assert any(r.name == "bookreader.mupdf" for r in caplog.records)


# --- passwords ----------------------------------------------------------------------------


def test_password_missing_wrong_and_right(tmp_path):
    path = pf.encrypted_pdf(tmp_path / "locked.pdf", "s3cret")
    with pytest.raises(PasswordRequired) as err:
        PdfBook.open(path)
    assert not err.value.wrong_password
    assert err.value.path == str(path)
    assert "locked.pdf" in err.value.user_message and "password" in err.value.user_message
    with pytest.raises(PasswordRequired) as err:
        PdfBook.open(path, password="guess")
    assert err.value.wrong_password
    assert "locked.pdf" in err.value.user_message and "wrong" in err.value.user_message
    with PdfBook.open(path, password="s3cret") as b:
        assert b.page(0).text.startswith("Secret page one.")


def test_owner_password_also_opens(tmp_path):
    path = pf.encrypted_pdf(tmp_path / "locked.pdf", "user", owner_password="owner")
    with PdfBook.open(path, password="owner") as b:
        assert "Secret page two." in b.page(1).text


def test_password_is_saslprep_normalised(tmp_path):
    # AES-256 (R6) passwords are SASLprep'd: a soft hyphen is dropped, "ª" becomes "a".
    path = pf.encrypted_pdf(tmp_path / "sasl.pdf", "SaSLprep")
    with PdfBook.open(path, password="S\u00aaSL\u00adprep") as b:
        assert b.page_count == 2


# --- labels, outline, chapters ------------------------------------------------------------


def test_page_labels_and_find_label(book):
    with PdfBook.open(book.path) as b:
        assert [b.label(i) for i in range(b.page_count)] == book.labels
        assert b.label(0) == "i" and b.label(1) == "ii" and b.label(2) == "1"
        assert b.page(3).label == "2"
        assert b.find_label("1") == 2
        assert b.find_label("ii") == 1
        assert b.find_label("II") == 1
        assert b.find_label("xl") is None


def test_labels_without_label_rules_are_physical_numbers(tmp_path):
    path = pf.make_pdf(tmp_path / "plain.pdf", ["one", "two", "three"])
    with PdfBook.open(path) as b:
        assert [b.label(i) for i in range(3)] == ["1", "2", "3"]
        assert b.find_label("3") == 2


def test_outline_gives_chapter_and_section_of_each_page(book):
    with PdfBook.open(book.path) as b:
        assert [(e.level, e.title, e.page) for e in b.toc][:2] == [
            (1, "Chapter One Basics", book.chapter_pages["Chapter One Basics"]),
            (2, "1.1 First Steps", book.section_pages["1.1 First Steps"]),
        ]
        assert b.page(0).chapter == "" and b.page(1).section == ""
        first = b.page(book.chapter_pages["Chapter One Basics"])
        assert first.chapter == "Chapter One Basics"
        # 1.1 starts below the chapter title: a section start inside the page.
        (offset, chapter, section), = first.section_starts
        assert (chapter, section) == ("Chapter One Basics", "1.1 First Steps")
        assert first.text[offset:].startswith("1.1 First Steps")
        assert first.section_at(offset - 1) == ("Chapter One Basics", "Chapter One Basics")
        assert first.section_at(offset + 5) == ("Chapter One Basics", "1.1 First Steps")
        last = b.page(b.page_count - 1)
        assert last.chapter == "Chapter Two Details"
        assert last.section == "2.2 Fourth Steps" or last.section_at(len(last.text)) == (
            "Chapter Two Details", "2.2 Fourth Steps")
        # A page continuing a section keeps it at the top.
        p = book.section_pages["1.2 Second Steps"] + 1
        assert b.page(p).section == "1.2 Second Steps" and b.page(p).section_starts == ()


def test_headings_by_font_size_when_there_is_no_outline(tmp_path):
    path = pf.headings_pdf(tmp_path / "headings.pdf", chapters=3, sections=2)
    with PdfBook.open(path) as b:
        toc = [(e.level, e.title, e.page) for e in b.toc]
        assert toc[:3] == [(1, "Chapter 1 Topic 1", 0), (2, "Section 1.1 Detail", 0),
                           (2, "Section 1.2 Detail", 0)]
        assert len(toc) == 9
        assert b.page(1).chapter == "Chapter 1 Topic 1"
        assert b.page(1).section == "Section 1.2 Detail"
        assert b.page(4).chapter == "Chapter 3 Topic 3"
        # A chapter title high on its page is a heading, not a running header.
        assert b.page(2).text.startswith("Chapter 2 Topic 2")


# --- cleaning -----------------------------------------------------------------------------


def test_running_headers_and_page_numbers_are_removed(book):
    with PdfBook.open(book.path) as b, fitz.open(book.path) as raw:
        checked = 0
        for i in range(book.front_pages, b.page_count):
            raw_text = raw[i].get_text()
            page = b.page(i)
            lines = page.text.splitlines()
            assert page.label not in lines, f"page number left on page {i}"
            if "A Generated Test Book" in raw_text:
                assert "A Generated Test Book" not in page.text
                checked += 1
            chapter = page.chapter
            if raw_text.startswith(chapter) and i not in book.chapter_pages.values():
                assert not page.text.startswith(chapter)
        assert checked >= 1
        # Chapter titles on their opening pages stay.
        assert b.page(book.chapter_pages["Chapter Two Details"]).text.startswith(
            "Chapter Two Details")


def test_ligatures_are_spelled_out(tmp_path):
    path = pf.ligature_pdf(tmp_path / "lig.pdf")
    with fitz.open(path) as raw:
        assert "\ufb01" in raw[0].get_text(flags=fitz.TEXT_PRESERVE_LIGATURES)
    with PdfBook.open(path) as b:
        text = b.page(0).text
        assert "The first effect of the workflow is an office efflux." in text
        assert not any("\ufb00" <= ch <= "\ufb06" for ch in text)
        assert [w.text for w in b.words(0)][:3] == ["The", "first", "effect"]


def test_a_mathematical_letter_glued_to_a_word_is_split_from_it(tmp_path):
    path = pf.math_letters_pdf(tmp_path / "math.pdf")
    with fitz.open(path) as raw:
        assert "\U0001d44ais a function" in raw[0].get_text()  # no space in the PDF
    with PdfBook.open(path) as b:
        text = b.page(0).text
        assert "A linear map from \U0001d449 to \U0001d44a is a function" in text
        assert "The product \U0001d449\U0001d44a stays one word." in text  # letters only
        words = {w.text: w.rect for w in b.words(0)}
        assert words["\U0001d44a"][2] <= words["is"][0] + 0.01  # the box is shared out
        assert b.search_rects(0, "from \U0001d449 to \U0001d44a is a function")


def test_draft_cross_reference_keys_are_not_text(tmp_path):
    path = pf.draft_keys_pdf(tmp_path / "draft.pdf")
    with fitz.open(path) as raw:
        assert "{eq:continuity0}" in raw[0].get_text()  # the keys are on the page
    with PdfBook.open(path) as b:
        text = b.page(0).text
        words = [w.text for w in b.words(0)]
    for key in ("{sec:continuity}", "ec:mass_balance}", "{eq:continuity0}"):
        assert key not in text and key not in words
    assert "The balance reads dm/dt = 0 for a closed volume. (2.1)" in text
    assert "2.2 The continuity equation" in text
    # braces and colons that belong to code or prose stay
    assert 'print(f"{rate:.2f}") # {note:done}' in text
    assert "A set such as {a:b} pairs each key with its value." in text


def test_words_hyphenated_across_lines_are_joined(tmp_path):
    path = pf.hyphenated_pdf(tmp_path / "hyph.pdf")
    with PdfBook.open(path) as b:
        text = b.page(0).text
        assert "the information\nretrieval system" in text
        assert "informa-" not in text
        assert "10 -\n20 pages" in text  # a dash before a number is not a hyphenation
        assert "with a dash -\nThen" in text  # nor one before a capital
        words = b.words(0)
        info = next(w for w in words if w.text == "information")
        assert len(info.rects) == 2
        tion_line = pf.Line("tion retrieval system that indexes textbooks.", pf.MARGIN, 115)
        assert close_to(info.more_rects[0], tion_line.word_rects()["tion"])
        assert "tion" not in [w.text for w in words]


def test_compounds_split_at_a_line_end_keep_their_hyphen(tmp_path):
    path = pf.compound_hyphen_pdf(tmp_path / "compound.pdf")
    with PdfBook.open(path) as b:
        text = b.page(0).text
        assert "need safe human-robot\ninteraction," in text
        assert "has an object-oriented\ndesign" in text
        assert "every information\nchannel" in text  # a broken word is still joined
        assert "humanrobot" not in text and "objectoriented" not in text
        words = b.words(0)
        assert [w.text for w in words].count("human-robot") == 1
        assert "robot" not in [w.text for w in words]
        first, second = (pf.Line(t, pf.MARGIN, 100 + 15 * k) for k, t in enumerate(pf.COMPOUND_LINES[:2]))
        human = next(w for w in words if w.text == "human-robot")
        assert close_to(human.rect, first.word_rects()["human-"])
        assert len(human.more_rects) == 1 and close_to(human.more_rects[0], second.word_rects()["robot"])


def test_a_compound_is_highlighted_on_both_lines_whichever_way_it_is_quoted(tmp_path):
    path = pf.compound_hyphen_pdf(tmp_path / "compound.pdf")
    first, second = (pf.Line(t, pf.MARGIN, 100 + 15 * k) for k, t in enumerate(pf.COMPOUND_LINES[:2]))
    with PdfBook.open(path) as b:
        for query in ("human-robot", "humanrobot", "safe human-robot interaction",
                      "safe humanrobot interaction"):
            rects = b.search_rects(0, query)
            assert any(close_to(r[2:], first.word_rects()["human-"][2:]) for r in rects), query
            assert any(close_to(r[:2], second.word_rects()["robot"][:2]) for r in rects), query
            assert all(r[1] < second.word_rects()["interaction,"][3] for r in rects), query


@pytest.mark.parametrize(("head", "tail", "reading"), [
    ("informa", "tion", ""),  # the joined word is listed
    ("object", "oriented", "-"),  # two listed words, the joined one is not
    ("(human", "robot)", "-"),
    ("decision", "making", "-"),
    ("un", "ambiguously.", ""),  # a prefix English writes solid
    ("self", "explanatory,", "-"),  # ... and one it never does
    ("well", "formatted", "-"),  # "formatted" is listed through "format"
    ("mbox", "short.txt", "-"),  # a file name is not a broken word
    ("(upper", "and", None),  # a suspended hyphen: "upper- and lower-case"
    ("^X", "mbox.txt", None),  # code
    ("subtrac", "tion,", ""),  # neither half is a word
])
def test_line_end_hyphens_are_read_with_the_word_list(head, tail, reading):
    from bookreader.core.hyphenation import line_end_hyphen
    from bookreader.core.hyphenation import english_words

    assert line_end_hyphen(head, tail, english_words()) == reading


def test_the_word_list_is_the_bundled_models_vocabulary():
    from bookreader.core import embedding, hyphenation

    assert hyphenation.MODEL_PACKAGE == embedding.MODEL_PACKAGE
    assert hyphenation.vocabulary_file() is not None
    words = hyphenation.english_words()
    assert len(words) > 20_000 and {"information", "oriented", "robot"} <= words
    assert "##ing" not in words and "[CLS]" not in words


def test_the_page_itself_decides_before_the_word_list():
    from bookreader.core.hyphenation import line_end_hyphen
    from bookreader.core.hyphenation import english_words

    words = english_words()
    assert line_end_hyphen("comma", "separated", words) == ""  # "comma" is not listed
    assert line_end_hyphen("comma", "separated", words, {"comma-separated"}) == "-"
    assert line_end_hyphen("object", "oriented", words, {"objectoriented"}) == ""
    # Without a word list (the model package missing) only the page keeps a hyphen.
    assert line_end_hyphen("object", "oriented", frozenset()) == ""
    assert line_end_hyphen("human", "robot", frozenset(), {"human-robot"}) == "-"


def test_two_columns_are_read_column_by_column(tmp_path):
    path = pf.two_column_pdf(tmp_path / "cols.pdf")
    with PdfBook.open(path) as b:
        text = b.page(0).text
        assert text.startswith("A Two Column Article Title")
        left8 = text.index("Left column sentence number 8.")
        right1 = text.index("Right column sentence number 1.")
        assert left8 < right1
        assert text.index("Left column sentence number 1.") < text.index("Left column sentence number 2.")


def test_a_margin_note_is_a_paragraph_of_its_own(tmp_path):
    # MuPDF puts a note set in the margin, in smaller type, into one block with the body
    # line beside it; read as one paragraph the note ran into the body's sentence.
    lines = [pf.Line("Earlier paragraph ends here with a full stop.", 72, 100),
             pf.Line("2.4", 72, 130, 11, "hebo"), pf.Line("Sorting by merging", 100, 130, 11, "hebo"),
             pf.Line("a merge sort is a sorting method", 400, 140, 8),
             pf.Line("that splits a list in halves and", 400, 150, 8),
             pf.Line("merges the sorted halves again.", 400, 160, 8),
             pf.Line("The body text goes on below the heading as usual.", 72, 160)]
    path = pf.make_pdf(tmp_path / "note.pdf", [lines])
    with PdfBook.open(path) as b:
        paragraphs = b.page(0).text.split("\n\n")
    assert "The body text goes on below the heading as usual." in paragraphs
    assert ("a merge sort is a sorting method\nthat splits a list in halves and\n"
            "merges the sorted halves again.") in paragraphs


def test_figures_side_by_side_in_two_sizes_stay_one_block():
    from bookreader.core.pdf_layout import TextBlock, TextLine, split_side_by_side

    def line(text, x, y, size):
        return TextLine([Word(w, (x, y, x + 10, y + 8), 0, 0, -1) for w in text.split()],
                        (x, y, x + 6 * len(text), y + 8), size, False, 0)

    cells = TextBlock([line("Year", 72, 100, 10.0), line("2019 2020", 200, 100, 8.0),
                       line("Rate", 72, 110, 10.0), line("0.25 0.50", 200, 110, 8.0)],
                      (72, 100, 260, 118))
    assert split_side_by_side(cells) == [cells]  # a table's figures, not a second text
    words = TextBlock([line("Sorting by merging", 72, 100, 11.0),
                       line("a merge sort splits", 400, 100, 8.0),
                       line("lists into halves", 400, 110, 8.0)], (72, 100, 520, 118))
    parts = split_side_by_side(words)
    assert [[ln.text for ln in p.lines] for p in parts] == [
        ["Sorting by merging"], ["a merge sort splits", "lists into halves"]]


# --- words, search, render ----------------------------------------------------------------


def test_words_have_known_boxes_in_reading_order(tmp_path):
    lines = [pf.Line("Alpha beta gamma delta.", 72, 120), pf.Line("Epsilon zeta eta.", 72, 140)]
    path = pf.make_pdf(tmp_path / "words.pdf", [lines])
    with PdfBook.open(path) as b:
        words = b.words(0)
        assert [w.text for w in words] == ["Alpha", "beta", "gamma", "delta.", "Epsilon", "zeta", "eta."]
        assert [w.index for w in words] == list(range(7))
        expected = {**lines[0].word_rects(), **lines[1].word_rects()}
        for w in words:
            assert close_to(w.rect, expected[w.text]), (w.text, w.rect, expected[w.text])
        assert " ".join(w.text for w in words) == " ".join(b.page(0).text.split())
        assert words[0].line != words[4].line or words[0].block != words[4].block


def test_search_rects_finds_excerpts(tmp_path):
    path = pf.hyphenated_pdf(tmp_path / "hyph.pdf")
    first = pf.Line("Reading order matters for the informa-", pf.MARGIN, 100)
    with PdfBook.open(path) as b:
        rects = b.search_rects(0, "Reading order matters")
        assert len(rects) == 1
        want = first.word_rects()
        assert close_to(rects[0][:2], want["Reading"][:2])
        assert abs(rects[0][2] - want["matters"].x1) < 1.5
        # Across a line break and a hyphenation, with odd spacing and quotes.
        rects = b.search_rects(0, '"the   information retrieval system"')
        assert len(rects) >= 2
        assert {round(r[1]) for r in rects} >= {round(want["the"].y0)}
        # Pieces around an ellipsis are found separately; a cut word at an end is tolerated.
        rects = b.search_rects(0, "ding order matters for ... hybrid search with dense")
        assert len(rects) >= 2
        assert b.search_rects(0, "nothing like this is on the page") == []


def test_located_excerpts_are_remembered_and_callers_get_their_own_list(tmp_path):
    path = pf.hyphenated_pdf(tmp_path / "hyph.pdf")
    with PdfBook.open(path) as b:
        first = b.search_rects(0, "Reading order matters")
        first.append((0.0, 0.0, 1.0, 1.0))  # a caller's own list: the cache is not touched
        again = b.search_rects(0, "Reading order matters")
        assert len(again) == 1 and again == first[:1]
        assert (0, "Reading order matters") in b._rects_cache
        assert b.search_rects(1 - 1, "nothing like this is on the page") == []


def test_render_returns_rgb_samples(tmp_path):
    path = pf.make_pdf(tmp_path / "r.pdf", ["Render me."])
    with PdfBook.open(path) as b:
        samples, w, h, stride = b.render(0, 0.5)
        assert (w, h) == (306, 396)
        assert stride >= w * 3 and len(samples) == stride * h
        assert min(samples) < 100 < max(samples)  # text (dark) on white


def test_rotated_pages_use_display_coordinates(tmp_path):
    path = pf.make_pdf(tmp_path / "rot.pdf", [[pf.Line("Turned page text", 72, 100)]])
    with fitz.open(path) as doc:
        doc[0].set_rotation(90)
        doc.save(tmp_path / "rot90.pdf")
    with PdfBook.open(tmp_path / "rot90.pdf") as b:
        assert b.page_size(0) == (792, 612)
        page = b.page(0)
        assert (page.width, page.height) == (792, 612)
        for w in b.words(0):
            assert 0 <= w.rect[0] < w.rect[2] <= 792 and 0 <= w.rect[1] < w.rect[3] <= 612
        _, w, h, _ = b.render(0, 1.0)
        assert (w, h) == (792, 612)
        assert b.search_rects(0, "Turned page")[0] == pytest.approx(
            (min(x.rect[0] for x in b.words(0)[:2]), b.words(0)[0].rect[1],
             b.words(0)[1].rect[2], b.words(0)[1].rect[3]), abs=1.5)


def test_bad_page_index_and_closed_book(book):
    b = PdfBook.open(book.path)
    with pytest.raises(PdfError, match="no page"):
        b.page(book.page_count)
    with pytest.raises(PdfError):
        b.words(-1)
    b.close()
    with pytest.raises(PdfError, match="closed"):
        b.page(0)


# --- scanned pages, long books, progress --------------------------------------------------


def test_scanned_pages_are_listed_and_the_book_still_opens(tmp_path):
    path = pf.scanned_pdf(tmp_path / "scan.pdf", pages=4, text_pages=[1])
    with PdfBook.open(path) as b:
        pages = list(b.iter_pages())
        assert len(pages) == 4
        assert [p.has_text_layer for p in pages] == [False, True, False, False]
        assert b.pages_without_text() == [0, 2, 3]
        msg = b.text_layer_message()
        assert "pages 1, 3-4" in msg and "OCR" in msg and "scan.pdf" in msg


def test_all_pages_scanned_and_blank_messages(tmp_path):
    with PdfBook.open(pf.scanned_pdf(tmp_path / "all.pdf", pages=2)) as b:
        assert "scanned book" in b.text_layer_message() and "OCR" in b.text_layer_message()
    blank = pf.make_pdf(tmp_path / "blank.pdf", [[], []])
    with PdfBook.open(blank) as b:
        assert b.pages_without_text() == [0, 1]
        assert "no text at all" in b.text_layer_message()
    with PdfBook.open(pf.make_pdf(tmp_path / "fine.pdf", ["Text."])) as b:
        assert b.text_layer_message() == ""


def test_long_book_is_read_page_by_page_with_bounded_caches(tmp_path):
    path = pf.big_pdf(tmp_path / "big.pdf", pages=1200)
    calls = []
    with PdfBook.open(path) as b:
        n = 0
        for page in b.iter_pages(progress=lambda d, t, m: calls.append((d, t))):
            assert page.text.startswith(f"Page {page.index + 1} of the long book.")
            n += 1
            assert len(b._pages) <= pdfmod.PAGE_CACHE_SIZE
            assert len(b._extracted) <= pdfmod.PAGE_CACHE_SIZE
        assert n == 1200
        assert calls[0] == (1, 1200) and calls[-1] == (1200, 1200) and len(calls) == 1200


def test_iter_pages_can_be_cancelled(book):
    seen = []
    with PdfBook.open(book.path) as b:
        with pytest.raises(Cancelled):
            for page in b.iter_pages(cancel=lambda: len(seen) >= 2):
                seen.append(page.index)
    assert seen == [0, 1]


# --- reading in a child process -----------------------------------------------------------


def test_probe_reads_the_whole_book_in_a_child(book, tmp_path):
    ok = probe_pdf(book.path, start_method="fork")
    assert ok.outcome == "ok" and ok.pages == book.page_count and ok.chars > 1000
    bad = probe_pdf(pf.not_a_pdf(tmp_path / "x.pdf"), start_method="fork")
    assert bad.outcome == "error" and bad.error_type == "PdfError" and "x.pdf" in bad.message
    locked = pf.encrypted_pdf(tmp_path / "l.pdf", "pw")
    assert probe_pdf(locked, start_method="fork").error_type == "PasswordRequired"
    assert probe_pdf(locked, "pw", start_method="fork").outcome == "ok"


def test_probe_time_limit_and_check_pdf(book, tmp_path):
    # A zero time limit cannot be met by any child: the result is a timeout, not a hang.
    slow = probe_pdf(book.path, timeout=0.0, start_method="fork")
    assert slow.outcome == "timeout" and not slow.clear
    assert check_pdf(book.path).outcome == "ok"
    with pytest.raises(PasswordRequired):
        check_pdf(pf.encrypted_pdf(tmp_path / "l.pdf", "pw"))
    with pytest.raises(BookReaderError, match="not a PDF"):
        check_pdf(pf.not_a_pdf(tmp_path / "n.pdf"))


# --- the pure helpers ---------------------------------------------------------------------


def test_text_normalisation_and_signatures():
    from bookreader.core import pdf_layout as lay

    assert lay.normalize_text("e\ufb03cient \ufb01nal\u00a0step\u00ad") == "efficient final step"
    assert lay.normalize_text("a\u2029b") == "a b"
    assert lay.split_word("a b", (0, 0, 30, 10)) == [("a", (0, 0, 10, 10)), ("b", (20, 0, 30, 10))]
    assert lay.line_signature("Chapter 3 Loops 47") == lay.line_signature("Chapter 3 Loops 49")
    assert lay.line_signature("Preface xii") == lay.line_signature("Preface xiv")
    assert lay.is_page_number_line("- 17 -", "17", 30)
    assert lay.is_page_number_line("Page 30 of 90", "xii", 30)
    assert not lay.is_page_number_line("17 apples", "17", 30)
    assert lay.matches_title("1.7 Using Escape Sequences", {lay.title_key("1.7. Using Escape Sequences")})
    assert lay.format_page_list([0, 1, 2, 6]) == "pages 1-3, 7"
    assert lay.format_page_list([4]) == "page 5"


def test_token_matching_tolerates_cut_words():
    from bookreader.core import pdf_layout as lay

    page = lay.match_tokens("The quick brown fox jumps over the lazy dog today")
    assert lay.find_token_run(page, lay.match_tokens("brown fox jumps")) == (2, 5)
    # Cut at both ends ("ick", "laz") and one word different: the middle still matches.
    assert lay.find_token_run(page, lay.match_tokens("ick brown fox jumps over the laz")) == (2, 7)
    assert lay.find_token_run(page, lay.match_tokens("completely unrelated words here")) is None


def test_page_label_rules():
    from bookreader.core.pdf_outline import page_labels

    rules = [
        {"startpage": 0, "prefix": "<FEFF0043>", "style": "D", "firstpagenum": 1},
        {"startpage": 1, "prefix": "", "style": "r", "firstpagenum": 4},
        {"startpage": 3, "prefix": "A-", "style": "D", "firstpagenum": 1},
        {"startpage": 5, "prefix": "", "style": "a", "firstpagenum": 27},
        {"startpage": 6, "prefix": "", "firstpagenum": 1},
    ]
    assert page_labels(rules, 7) == ["C1", "iv", "v", "A-1", "A-2", "aa", "7"]
    assert page_labels([], 2) == ["1", "2"]
