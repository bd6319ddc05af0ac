"""The Library facade: ingest (idempotent, progress, cancel, resume after kill -9), the
catalogue of several books, remove, search, and a fast start."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pdf_factory import book_pdf, encrypted_pdf, filler, planted_fact_pdf, scanned_pdf

from bookreader.config import Settings
from bookreader.core.types import SearchFilter
from bookreader.errors import BookNotFound, Cancelled, PasswordRequired
from bookreader.catalogue import BOOK_FILE
from bookreader.library import Library

FACT = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."
REPO = Path(__file__).resolve().parents[2]


class CountingEmbedder:
    """The real session embedder, counting the chunk texts it is asked to embed."""

    def __init__(self, real) -> None:
        self.real = real
        self.texts = 0
        self.dimension = real.dimension

    def warm_up(self) -> None:
        self.real.warm_up()

    def embed(self, texts, batch_size: int = 32, *, cache: bool = True):
        if not cache:  # a book's chunks (the calibration's probe questions are cached)
            self.texts += len(texts)
        return self.real.embed(texts, batch_size=batch_size, cache=cache)

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)


class Recorder:
    """A progress callback that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, str]] = []

    def __call__(self, done: int, total: int, message: str) -> None:
        self.calls.append((done, total, message))

    def phase(self, message: str) -> list[tuple[int, int]]:
        return [(d, t) for d, t, m in self.calls if m == message]


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pdfs")
    guide = book_pdf(
        folder / "guide.pdf",
        [
            ("Chapter 1 Loops", [("1.1 While", "A while loop repeats its body while the "
                                  "condition is true. " + filler(20, 1)),
                                 ("1.2 For", "A for loop counts through values. " + filler(20, 2))]),
            ("Chapter 2 Arrays", [("2.1 Indexes", "The first index of an array is zero. "
                                   + filler(20, 3))]),
        ],
    )
    return {
        "guide": guide.path,
        "fact": planted_fact_pdf(folder / "fact.pdf", FACT, fact_page=5),
    }


@pytest.fixture(scope="module")
def counting(embedder):
    return CountingEmbedder(embedder)


@pytest.fixture(scope="module")
def lib(tmp_path_factory, counting):
    settings = Settings(data_dir=tmp_path_factory.mktemp("library"))
    library = Library(settings, embedder=counting)
    yield library
    library.close()


@pytest.fixture(scope="module")
def guide_info(lib, pdfs):
    return lib.ingest(pdfs["guide"])


def test_ingest_indexes_the_book(lib, guide_info, pdfs):
    info = guide_info
    assert info.state == "ready" and info.title == "A Generated Test Book"
    assert info.page_count >= 3 and info.chunk_count > 0
    assert info.path == str(pdfs["guide"].resolve())
    record = json.loads((lib.settings.books_dir / info.book_id / BOOK_FILE).read_text())
    assert record["state"] == "ready" and record["chunk_count"] == info.chunk_count
    retriever = lib.retriever(info.book_id)
    assert retriever.store.count() == info.chunk_count
    assert len(retriever.lexical) == info.chunk_count
    r = lib.search(info.book_id, "What is the first index of an array?")
    assert r.passages[0].chunk.chapter == "Chapter 2 Arrays"


def test_ingesting_the_same_file_again_does_nothing(lib, guide_info, pdfs, counting, tmp_path):
    before = counting.texts
    progress = Recorder()
    again = lib.ingest(pdfs["guide"], progress=progress)
    assert again == guide_info
    assert progress.calls == [] and counting.texts == before
    # the same bytes under another name are the same book: only the path is updated
    copy = tmp_path / "renamed copy.pdf"
    shutil.copy(pdfs["guide"], copy)
    moved = lib.ingest(copy)
    assert moved.book_id == guide_info.book_id and moved.path == str(copy.resolve())
    assert counting.texts == before
    assert lib.retriever(moved.book_id).store.count() == guide_info.chunk_count
    lib.ingest(pdfs["guide"])  # back to the original path for the other tests


def test_progress_goes_over_pages_then_chunks(lib, pdfs):
    progress = Recorder()
    info = lib.ingest(pdfs["fact"], progress=progress)
    pages, chunks = progress.phase("Reading pages"), progress.phase("Embedding")
    assert pages[-1] == (info.page_count, info.page_count)
    assert chunks[-1] == (info.chunk_count, info.chunk_count)
    messages = [m for _, _, m in progress.calls]
    assert messages.index("Embedding") > max(i for i, m in enumerate(messages) if m == "Reading pages")
    assert [d for d, _ in chunks] == sorted(d for d, _ in chunks)


def test_catalogue_of_several_books(lib, guide_info, pdfs):
    fact = lib.ingest(pdfs["fact"])
    books = lib.books()
    assert [b.title for b in books] == ["A Generated Test Book", "Planted Fact Book"]
    assert lib.book(fact.book_id) == fact
    assert lib.book(fact.book_id[:6]) == fact
    assert lib.book(pdfs["fact"]) == fact
    assert lib.book(str(pdfs["fact"])) == fact
    with pytest.raises(BookNotFound) as err:
        lib.book("no-such-book")
    assert "bookreader books" in err.value.user_message
    with pytest.raises(BookNotFound):
        lib.book(fact.book_id[:3])  # too short to be a prefix


def test_search_filters_and_chapters(lib, pdfs):
    fact = lib.ingest(pdfs["fact"])
    r = lib.search(fact.book_id, "How many gulls did the lighthouse keeper count?")
    assert FACT in r.passages[0].chunk.text and r.confidence >= 0.6
    outside = lib.search(fact.book_id, "How many gulls did the lighthouse keeper count?",
                         flt=SearchFilter(page_start=0, page_end=3))
    assert all(FACT not in p.chunk.text for p in outside.passages)
    assert all(p.chunk.page_end <= 3 for p in outside.passages)
    chapters = lib.chapters(fact.book_id)
    assert chapters[:2] == ["Part 1", "Part 2"]
    assert lib.match_chapters(fact.book_id, "part 3") == ["Part 3"]
    with pytest.raises(BookNotFound):
        lib.match_chapters(fact.book_id, "Part")  # several match


def test_remove_deletes_the_index_not_the_pdf(tmp_path, embedder, pdfs):
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        info = library.ingest(pdfs["guide"])
        library.search(info.book_id, "loops")  # opens and caches the store
        removed = library.remove(info.book_id[:8])
        assert removed.book_id == info.book_id
        assert library.books() == []
        assert not (library.settings.books_dir / info.book_id).exists()
        with pytest.raises(BookNotFound):
            library.search(info.book_id, "loops")
        assert pdfs["guide"].exists()
        # and it can come back
        assert library.ingest(pdfs["guide"]).chunk_count == info.chunk_count


def test_cancel_then_resume_without_duplicates(tmp_path, embedder, pdfs):
    counting = CountingEmbedder(embedder)
    with Library(Settings(data_dir=tmp_path / "data"), embedder=counting) as library:
        library.ingest_batch = 2
        progress = Recorder()

        def cancel() -> bool:
            return any(d >= 2 for d, _ in progress.phase("Embedding"))

        with pytest.raises(Cancelled):
            library.ingest(pdfs["fact"], progress=progress, cancel=cancel)
        [interrupted] = library.books()
        assert interrupted.state == "indexing"
        assert "again" in interrupted.message
        assert counting.texts == 2
        store = library._store(interrupted.book_id)
        assert store.count() == 2

        resumed = Recorder()
        info = library.ingest(pdfs["fact"], progress=resumed)
        assert info.state == "ready"
        assert resumed.phase("Embedding")[0] == (2, info.chunk_count)
        assert counting.texts == info.chunk_count  # nothing embedded twice
        chunks = list(store.chunks())
        assert len(chunks) == store.count() == info.chunk_count
        assert len({c.chunk_id for c in chunks}) == info.chunk_count
        assert [c.position for c in chunks] == list(range(info.chunk_count))


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from bookreader.config import Settings
    from bookreader.library import Library

    lib = Library(Settings(data_dir=Path(sys.argv[1])))
    lib.ingest_batch = 2

    def progress(done, total, message):
        if message == "Embedding" and done >= 4:
            os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no finally blocks

    lib.ingest(sys.argv[2], progress=progress)
    print("not killed")
    """
)


def test_resume_after_kill_9(tmp_path, embedder, pdfs):
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(data), str(pdfs["fact"])],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        [killed] = library.books()
        assert killed.state == "indexing"
        progress = Recorder()
        info = library.ingest(pdfs["fact"], progress=progress)
        first_done = progress.phase("Embedding")[0][0]
        assert 4 <= first_done < info.chunk_count
        store = library.retriever(info.book_id).store
        chunks = list(store.chunks())
        assert store.count() == len(chunks) == info.chunk_count
        assert len({c.chunk_id for c in chunks}) == info.chunk_count
        r = library.search(info.book_id, "How many gulls were counted?")
        assert FACT in r.passages[0].chunk.text


def test_scanned_pages_are_reported(tmp_path, embedder):
    pdf = scanned_pdf(tmp_path / "scan.pdf", pages=3, text_pages=(1,))
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        info = library.ingest(pdf)
        assert info.state == "ready"
        assert info.pages_without_text == (0, 2)
        assert "OCR" in info.message
        assert info.chunk_count >= 1


def test_fully_scanned_book_has_no_chunks_and_search_says_not_covered(tmp_path, embedder):
    pdf = scanned_pdf(tmp_path / "scan.pdf", pages=2)
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        info = library.ingest(pdf)
        assert info.chunk_count == 0 and info.pages_without_text == (0, 1)
        r = library.search(info.book_id, "anything at all")
        assert r.passages == () and r.confidence == 0.0


def test_encrypted_book_needs_its_password(tmp_path, embedder):
    pdf = encrypted_pdf(tmp_path / "locked.pdf", password="s3cret")
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        with pytest.raises(PasswordRequired) as err:
            library.ingest(pdf)
        assert "locked.pdf" in err.value.user_message
        assert library.books() == []
        info = library.ingest(pdf, password="s3cret")
        assert info.state == "ready" and info.chunk_count >= 1
        r = library.search(info.book_id, "secret page")
        assert r.passages


FAST_START = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from bookreader.config import Settings
    from bookreader.library import Library

    data = Path(sys.argv[1])
    lib = Library(Settings(data_dir=data))
    print(len(lib.books()))
    lib.close()
    heavy = [m for m in ("torch", "sentence_transformers", "sqlalchemy", "qdrant_edge")
             if m in sys.modules]
    print(",".join(heavy))
    print((data / "audit.sqlite3").exists())
    """
)


def test_warm_up_builds_what_the_first_search_would_build(tmp_path, embedder, pdfs,
                                                          monkeypatch):
    """The window warms a book up when it opens: its first question then builds no
    search structure of its own (BM25 postings, the book's terms and vocabulary)."""
    from bookreader.core.lexical import LexicalIndex

    built: list[int] = []
    real = LexicalIndex._build_postings

    def counting_build(self, bm):
        built.append(1)
        return real(self, bm)

    monkeypatch.setattr(LexicalIndex, "_build_postings", counting_build)
    library = Library(Settings(data_dir=tmp_path / "data"), embedder=embedder)
    try:
        info = library.ingest(pdfs["guide"])
        library.warm_up(info.book_id, backend="extractive")
        retriever = library.retriever(info.book_id)
        assert {"book_terms", "_folded_vocabulary"} <= set(vars(retriever))
        before = len(built)  # (ingest builds postings of its own for its calibration)
        assert retriever.search("What does a while loop do?", top_k=3).passages
        assert len(built) == before
    finally:
        library.close()


def test_library_starts_without_loading_models_or_opening_the_audit_log(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", FAST_START, str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    count, heavy, audit_exists = done.stdout.strip().split("\n")
    assert count == "0" and heavy == "" and audit_exists == "False"


def test_ask_is_audited_including_errors(lib, pdfs):
    from bookreader.core.types import Mode
    from bookreader.errors import InvalidInput

    fact = lib.ingest(pdfs["fact"])
    answer = lib.ask("How many gulls were counted?", mode=Mode.BOOK, book=fact.book_id,
                     backend="extractive")
    assert "4127" in answer.text and answer.book_id == fact.book_id
    with pytest.raises(InvalidInput):
        lib.ask("   ", mode=Mode.BOOK, book=fact.book_id, backend="extractive")
    history = lib.history(fact.book_id)
    assert [a.question for a in history[-2:]] == ["How many gulls were counted?", "   "]
    assert history[-2].answer_id == answer.answer_id and not history[-2].error
    assert history[-1].error and history[-1].fallback
    assert (lib.settings.data_dir / "audit.sqlite3").exists()


def test_selected_text_mode_touches_no_store(tmp_path, embedder, pdfs, monkeypatch):
    from bookreader.core.types import Mode

    data = tmp_path / "data"
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        info = library.ingest(pdfs["fact"])
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        def forbidden(*args, **kwargs):
            raise AssertionError("selected-text mode touched the store or the retriever")

        monkeypatch.setattr(Library, "_store", forbidden)
        monkeypatch.setattr(Library, "retriever", forbidden)
        answer = library.ask(
            "What did the keeper count?", mode=Mode.SELECTED, book=info.book_id,
            selection=FACT, backend="extractive",
        )
        assert "4127" in answer.text and answer.in_selected_text is True
        assert answer.retrieval is None
        assert library.history(info.book_id)[-1].answer_id == answer.answer_id


def test_a_book_busy_in_another_library_is_left_as_that_one_records_it(tmp_path, embedder, pdfs):
    from bookreader.errors import BookLocked

    settings = Settings(data_dir=tmp_path / "data")
    first = Library(settings, embedder=embedder)
    second = Library(settings, embedder=embedder)
    try:
        first.ingest_batch = 2
        progress = Recorder()
        with pytest.raises(Cancelled):  # leaves the book half indexed, its store open
            first.ingest(pdfs["fact"], progress=progress,
                         cancel=lambda: bool(progress.phase("Embedding")[1:]))
        with pytest.raises(BookLocked) as err:
            second.ingest(pdfs["fact"])
        assert "in use by" in err.value.user_message
        assert [b.state for b in second.books()] == ["indexing"]
        with pytest.raises(BookLocked):
            second.remove(pdfs["fact"])
    finally:
        first.close()
    assert second.ingest(pdfs["fact"]).state == "ready"
    second.close()


def test_changed_chunk_size_reindexes_without_stale_chunks(tmp_path, embedder, pdfs):
    data = tmp_path / "data"
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        big = library.ingest(pdfs["fact"])
    smaller = Settings(data_dir=data).updated(chunk_max_tokens=128)
    with Library(smaller, embedder=embedder) as library:
        small = library.ingest(pdfs["fact"])
        assert small.book_id == big.book_id and small.chunk_count > big.chunk_count
        store = library.retriever(small.book_id).store
        assert store.count() == small.chunk_count
        assert all(embedder.count_tokens(c.text) <= 126 for c in store.chunks())


def test_a_book_indexed_by_an_older_chunker_is_reindexed(tmp_path, embedder, pdfs):
    """A chunking change reaches users: the library re-indexes a book whose index an older
    chunker wrote (here: before chunks started at each section), with no stale chunks."""
    import bookreader.library as library_mod
    from bookreader.core.chunking import Chunker

    data = tmp_path / "data"
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        info = library.ingest(pdfs["guide"])
        record = library.catalogue.read(info.book_id)
        assert record["params"]["chunker"] == library_mod.CHUNKER_VERSION
        # what an older version left: its version number and chunks that cross sections
        store = library.retriever(info.book_id).store
        pages = list(library.open_pdf(info.book_id).iter_pages())
        old = list(Chunker(embedder.count_tokens, section_breaks=False).chunks(pages, info.book_id))
        assert any("1.2 For" in c.text and c.section == "1.1 While" for c in old)
        store.upsert(old, embedder.embed([c.text for c in old]))
        record["params"] = dict(record["params"], chunker=library_mod.CHUNKER_VERSION - 1)
        library.catalogue.write(record)
    progress = Recorder()
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        again = library.ingest(pdfs["guide"], progress=progress)
        assert progress.phase("Embedding"), "the book was not re-indexed"
        assert library.catalogue.read(info.book_id)["params"]["chunker"] == \
            library_mod.CHUNKER_VERSION
        chunks = list(library.retriever(again.book_id).store.chunks())
        assert len(chunks) == again.chunk_count
        crossing = [c for c in chunks if "1.2 For" in c.text]
        assert crossing and all(c.section == "1.2 For" for c in crossing)
