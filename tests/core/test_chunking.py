"""Chunking: sized in MiniLM word pieces, sentence-aware, overlapping, chapter-bound, streaming."""

from __future__ import annotations

import itertools

import fitz
import pytest

from bookreader.core.chunking import (
    SPECIAL_TOKENS,
    Chunker,
    SentenceSplitter,
    chunk_id_for,
    join_segments,
)
from bookreader.core.types import Page

TOPICS = ["loop", "variable", "method", "class", "object", "string", "array", "integer",
          "recursion", "exception", "interface", "package", "compiler", "debugger"]


def sentence(i: int) -> str:
    words = [TOPICS[(i * 7 + k) % len(TOPICS)] for k in range(6 + i % 17)]
    return f"Sentence {i} says that the " + " ".join(words) + " matters."


def page_text(start: int, n: int) -> str:
    return " ".join(sentence(i) for i in range(start, start + n))


def make_pages(n_pages: int, per_page: int = 12, chapter_every: int = 0) -> list[Page]:
    pages = []
    for p in range(n_pages):
        chapter = f"Chapter {p // chapter_every + 1}" if chapter_every else "Only chapter"
        pages.append(Page(p, str(p + 1), page_text(p * per_page, per_page), chapter, "S"))
    return pages


@pytest.fixture(scope="module")
def count(embedder):
    return embedder.count_tokens


@pytest.fixture(scope="module")
def chunker(count):
    return Chunker(count, max_tokens=256, overlap=0.2)


def norm(text: str) -> str:
    return " ".join(text.split())


def test_every_chunk_fits_the_model_window(chunker, count, embedder):
    chunks = list(chunker.chunks(make_pages(20), "book"))
    assert len(chunks) > 10
    for c in chunks:
        n = count(c.text)
        assert n + SPECIAL_TOKENS <= 256, (n, c.text[:80])
        # the real tokenizer the model uses agrees: nothing would be cut
        ids = embedder.tokenizer(c.text, truncation=False)["input_ids"]
        assert len(ids) <= embedder.max_seq_length
    # chunks are not wastefully small: most are well filled
    filled = [count(c.text) for c in chunks[:-1]]
    assert sum(filled) / len(filled) > 0.75 * chunker.budget


def test_chunks_end_on_sentence_boundaries_and_overlap_about_a_fifth(chunker, count):
    chunks = list(chunker.chunks(make_pages(10), "book"))
    shares = []
    for a, b in zip(chunks, chunks[1:]):
        assert a.text.endswith("matters."), a.text[-40:]
        assert b.text.startswith("Sentence "), b.text[:40]
        # the next chunk starts with the last sentences of the previous one
        first_sentence = b.text.split(" matters.")[0] + " matters."
        assert first_sentence in a.text
        overlap = 0
        for k in range(len(b.text), 0, -1):
            if a.text.endswith(b.text[:k]):
                overlap = count(b.text[:k])
                break
        assert overlap > 0
        shares.append(overlap / chunker.budget)
    mean = sum(shares) / len(shares)
    assert 0.1 <= mean <= 0.35, shares


def test_text_is_never_lost(chunker):
    pages = make_pages(6)
    chunks = list(chunker.chunks(pages, "book"))
    joined = " ".join(c.text for c in chunks)
    for i in range(6 * 12):
        assert sentence(i) in joined


def test_chunks_never_cross_a_chapter_boundary(chunker):
    pages = make_pages(12, chapter_every=4)
    chapter_of = {p.index: p.chapter for p in pages}
    chunks = list(chunker.chunks(pages, "book"))
    assert {c.chapter for c in chunks} == {"Chapter 1", "Chapter 2", "Chapter 3"}
    for c in chunks:
        assert all(chapter_of[i] == c.chapter for i in range(c.page_start, c.page_end + 1))
    # the first sentence of each chapter starts a chunk
    for first_page in (4, 8):
        starts = [c for c in chunks if c.page_start == first_page and c.char_start == 0]
        assert starts, f"no chunk starts chapter at page {first_page}"


def test_tiny_tail_is_merged(chunker, count):
    body = make_pages(3)
    tail = Page(3, "4", "Short last words.", "Only chapter", "S")
    chunks = list(chunker.chunks([*body, tail], "book"))
    assert "Short last words." in chunks[-1].text
    assert count(chunks[-1].text) >= chunker.tiny_tokens
    assert sum("Short last words." in c.text for c in chunks) == 1


def test_a_tiny_chapter_is_its_own_chunk(chunker):
    pages = [Page(0, "1", "Preface. Thanks to all.", "Preface", ""), *make_pages(2)[0:0]]
    pages += [Page(1, "2", page_text(0, 12), "Chapter 1", "Intro")]
    chunks = list(chunker.chunks(pages, "book"))
    assert chunks[0].text == "Preface. Thanks to all."
    assert chunks[0].chapter == "Preface"
    assert all(c.chapter == "Chapter 1" for c in chunks[1:])


def test_ids_are_stable_unique_and_depend_on_book_position_and_text(chunker):
    pages = make_pages(8)
    a = list(chunker.chunks(pages, "book-a"))
    again = list(chunker.chunks(pages, "book-a"))
    other = list(chunker.chunks(pages, "book-b"))
    assert [c.chunk_id for c in a] == [c.chunk_id for c in again]
    assert len({c.chunk_id for c in a}) == len(a)
    assert not {c.chunk_id for c in a} & {c.chunk_id for c in other}
    assert [c.position for c in a] == list(range(len(a)))
    assert a[0].chunk_id == chunk_id_for("book-a", 0, a[0].text)
    assert chunk_id_for("book-a", 1, a[0].text) != a[0].chunk_id


def test_offsets_and_labels_point_into_the_page_text(chunker):
    pages = [
        Page(i, label, page_text(i * 12, 12), "Only chapter", "S")
        for i, label in enumerate(["xi", "xii", "1", "2", "3", "4"])
    ]
    by_index = {p.index: p for p in pages}
    chunks = list(chunker.chunks(pages, "book"))
    for c in chunks:
        start_page, end_page = by_index[c.page_start], by_index[c.page_end]
        assert c.label_start == start_page.label and c.label_end == end_page.label
        assert c.text.startswith(norm(start_page.text[c.char_start:])[:40])
        assert norm(end_page.text[: c.char_end]).endswith(c.text[-40:])
        if c.page_start == c.page_end:
            assert norm(start_page.text[c.char_start : c.char_end]) == c.text
    assert chunks[0].page_label.startswith("xi")


def test_a_sentence_cut_by_a_page_break_is_joined(chunker):
    pages = [
        Page(0, "1", "The first page is complete. The compiler translates source code", "C", ""),
        Page(1, "2", "into byte code before it runs. Another sentence follows.", "C", ""),
    ]
    chunks = list(chunker.chunks(pages, "book"))
    assert len(chunks) == 1
    assert "The compiler translates source code into byte code before it runs." in chunks[0].text
    assert (chunks[0].page_start, chunks[0].page_end) == (0, 1)


def test_an_endless_sentence_is_cut_between_words(chunker, count):
    words = " ".join(f"token{i}" for i in range(1500))  # no punctuation at all
    pages = [Page(0, "1", words, "C", "")]
    chunks = list(chunker.chunks(pages, "book"))
    assert len(chunks) >= 5
    for c in chunks:
        assert count(c.text) <= chunker.budget
        assert c.text.split()[0].startswith("token") and c.text.split()[-1].startswith("token")
    assert "token0" in chunks[0].text and "token1499" in chunks[-1].text
    # offsets of the pieces are exact
    for c in chunks:
        assert norm(words[c.char_start : c.char_end]) == c.text


def test_one_absurdly_long_word_is_cut_too(chunker, count):
    blob = "x" * 5000
    chunks = list(chunker.chunks([Page(0, "1", f"Data: {blob} end.", "C", "")], "book"))
    assert all(count(c.text) <= chunker.budget for c in chunks)
    assert sum(c.text.count("x") for c in chunks) >= 5000


def test_empty_and_textless_pages_give_no_chunks(chunker):
    pages = [Page(0, "1", "", "C", "", has_text_layer=False), Page(1, "2", "  \n ", "C", "")]
    assert list(chunker.chunks(pages, "book")) == []


def test_chunking_streams_pages(chunker):
    pulled = []

    def pages():
        for p in range(5000):  # a book far larger than anything held in memory
            pulled.append(p)
            yield Page(p, str(p + 1), page_text(p * 12, 12), "Only chapter", "S")

    first = list(itertools.islice(chunker.chunks(pages(), "book"), 3))
    assert len(first) == 3
    assert len(pulled) < 10


def test_sentence_splitter_knows_abbreviations_and_paragraphs():
    splitter = SentenceSplitter()
    text = "Use a loop, e.g. a while loop. Then stop.\n\nHeading without a stop\nBody text here."
    sentences = [text[s:e] for s, e in splitter.spans(text)]
    assert sentences[0] == "Use a loop, e.g. a while loop."
    assert sentences[1] == "Then stop."
    assert "Heading without a stop" in sentences[2]
    assert len(sentences) == 3


def test_a_sentence_that_runs_through_a_displayed_formula_is_one_sentence():
    from bookreader.core.sentences import split_sentences

    lead = "A list of vectors is linearly independent if the only choice of scalars that makes"
    display = "\U0001d44e1\U0001d4631 + \u22ef + \U0001d44e\U0001d45a\U0001d463\U0001d45a = 0"
    rest = "is \U0001d44e1 = \u22ef = \U0001d44e\U0001d45a = 0."
    after = "The empty list is also declared to be linearly independent."
    text = join_segments([lead, display, rest, after], [0, 2, 0, 0])
    assert split_sentences(text) == [f"{lead} {display} {rest}", after]
    # A sentence that opens anew after the display stands alone.
    lead = "The probability that an offspring is homozygous is,"
    display = "\u2211 p\u1d62 \u2264 1"
    text = join_segments([lead, display, "Therefore the frequencies change."])
    assert split_sentences(text) == [f"{lead} {display}", "Therefore the frequencies change."]
    # A heading (short, no sentence) is not run into the formula after it.
    text = join_segments(["Euler equations", "\u2202u/\u2202t = 0", "where u is the velocity."])
    assert text.startswith("Euler equations\n\n")


def test_chunks_from_a_real_pdf(tmp_path, chunker, count):
    from bookreader.core.pdf import PdfBook

    doc = fitz.open()
    for i in range(4):
        page = doc.new_page()
        page.insert_textbox(fitz.Rect(72, 72, 540, 770), page_text(i * 14, 14), fontsize=10)
    doc.set_toc([[1, "Chapter One", 1], [1, "Chapter Two", 3]])
    path = tmp_path / "book.pdf"
    doc.save(path)
    with PdfBook.open(path) as book:
        pages = list(book.iter_pages())
        chunks = list(chunker.chunks(iter(pages), book.book_id))
    assert {c.chapter for c in chunks} == {"Chapter One", "Chapter Two"}
    assert all(count(c.text) <= chunker.budget for c in chunks)
    for c in chunks:
        page = pages[c.page_start]
        assert c.text.startswith(norm(page.text[c.char_start:])[:30])


def test_a_chapter_starting_mid_page_starts_a_new_chunk(chunker):
    first = page_text(0, 6)
    second = "Chapter 2 Loops\n" + page_text(100, 6)
    text = first + "\n" + second
    cut = len(first) + 1
    page = Page(0, "1", text, "Chapter 1", "1.1", section_starts=((cut, "Chapter 2", "2.1"),))
    nxt = Page(1, "2", page_text(200, 6), "Chapter 2", "2.1")
    chunks = list(chunker.chunks([page, nxt], "book"))
    assert [c.chapter for c in chunks][0] == "Chapter 1"
    ch1 = [c for c in chunks if c.chapter == "Chapter 1"]
    ch2 = [c for c in chunks if c.chapter == "Chapter 2"]
    assert ch1 and ch2
    assert all("Chapter 2 Loops" not in c.text for c in ch1)
    assert ch2[0].text.startswith("Chapter 2 Loops") and ch2[0].char_start == cut
    assert ch2[0].section == "2.1" and ch2[0].page_start == 0


def test_sentence_splitter_leaves_code_numbers_and_initials_alone():
    splitter = SentenceSplitter()
    text = ("Call System.out.println to print. Pi is about 3.14 here. See Fig. 2 and "
            "Dr. Jones, as J. R. Smith wrote? Yes! \"Quoted.\" (A remark.) Last one")
    sentences = [text[s:e] for s, e in splitter.spans(text)]
    assert sentences == [
        "Call System.out.println to print.", "Pi is about 3.14 here.",
        "See Fig. 2 and Dr. Jones, as J. R. Smith wrote?", "Yes!", "\"Quoted.\"",
        "(A remark.)", "Last one",
    ]


def test_a_heading_stays_its_own_sentence_inside_a_chunk():
    from bookreader.core.sentences import split_sentences

    text = join_segments(["The report is one page.", "4.6 Retention and archiving",
                          "Records are kept for 365 days."])
    assert text == ("The report is one page. 4.6 Retention and archiving\n\n"
                    "Records are kept for 365 days.")
    assert split_sentences(text) == ["The report is one page.", "4.6 Retention and archiving",
                                     "Records are kept for 365 days."]


def test_a_heading_at_the_foot_of_a_page_is_not_joined_to_the_next_page(chunker, sample_pdf):
    from bookreader.core.pdf import PdfBook

    book = PdfBook.open(sample_pdf)
    pages = [book.page(i) for i in range(book.page_count)]
    foot = [p for p in pages if p.text.rstrip().endswith("2.2 Asking about selected text")]
    assert foot, "the sample book's layout moved the heading; pick another one"
    text = "\n".join(c.text for c in chunker.chunks(pages, "b"))
    assert "2.2 Asking about selected text\n\nSelect a passage" in text
    assert "2.2 Asking about selected text Select" not in text


def _section_book(tmp_path, sections):
    from pdf_factory import book_pdf

    from bookreader.core.pdf import PdfBook

    from pdf_factory import filler

    # two chapters: with a single one, the outline's sections would be read as chapters
    spec = book_pdf(tmp_path / "sections.pdf", [("Chapter One Travels", sections),
                                                ("Chapter Two", [("2.1 End", filler(3, 9))])])
    with PdfBook.open(spec.path) as book:
        return list(book.iter_pages())


def test_a_section_starts_a_new_chunk_with_its_heading(tmp_path, chunker):
    """A chunk that ran on into the next section would carry that section's heading under
    the previous section's name, split from the text it introduces (the Physical AI
    book's "Q-Learning and Deep Q-Networks" sat at the end of a supervised-learning chunk)."""
    from pdf_factory import filler

    sections = [("1.1 Rivers and deltas", filler(20, 1)), ("1.2 Early railways", filler(20, 2)),
                ("1.3 Glaciers", filler(20, 3))]
    pages = _section_book(tmp_path, sections)
    chunks = [c for c in chunker.chunks(pages, "b") if c.chapter == "Chapter One Travels"]
    assert len(chunks) >= 6  # every section needs more than one chunk
    for title, _ in sections[1:]:
        holding = [c for c in chunks if title in c.text]
        assert holding, title
        assert all(c.text.startswith(title) and c.section == title for c in holding), [
            (c.section, c.text[:40]) for c in holding]
    for c in chunks:  # and no chunk mixes two sections
        assert sum(title in c.text for title, _ in sections) <= 1
    # the sections' text is all there, in order
    text = " ".join(norm(c.text) for c in chunks)
    for _title, body in sections:
        assert norm(body)[:60] in text


def test_a_tiny_section_shares_a_chunk_with_the_next_one(tmp_path, chunker):
    from pdf_factory import filler

    sections = [("1.1 A note", "Read this first."), ("1.2 Early railways", filler(20, 2))]
    pages = _section_book(tmp_path, sections)
    chunks = [c for c in chunker.chunks(pages, "b") if c.chapter == "Chapter One Travels"]
    first = chunks[0]
    # the chapter title and the two-line section are not chunks of their own
    assert first.text.startswith("Chapter One Travels") and "1.2 Early railways" in first.text
    assert first.section in ("Chapter One Travels", "1.1 A note")
    assert all(chunker._count(c.text) >= chunker.tiny_tokens for c in chunks)


def test_section_breaks_can_be_switched_off(tmp_path, count):
    from pdf_factory import filler

    sections = [("1.1 Rivers and deltas", filler(20, 1)), ("1.2 Early railways", filler(20, 2))]
    pages = _section_book(tmp_path, sections)
    old = list(Chunker(count, max_tokens=256, section_breaks=False).chunks(pages, "b"))
    crossing = [c for c in old if "1.2 Early railways" in c.text]
    assert any(c.section == "1.1 Rivers and deltas" for c in crossing)
