"""A book another process is indexing right now, and an answer stopped by a time budget.

* Asking about a book that another ``bookreader`` process is still ingesting says so, and
  names that process, instead of "Ingest it again to finish indexing" (which would start a
  second ingest that the book's lock refuses).
* An answer stopped by a front end's time budget (the server's 504) is audited exactly once,
  as a timeout, never also as "stopped by the user", and the instructor's report counts it
  as a timeout, not as a Stop.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pdf_factory import planted_fact_pdf

from bookreader.config import Settings
from bookreader.core.prompts import STOPPED_MESSAGE, TIMEOUT_MESSAGE
from bookreader.errors import BookReaderError, Cancelled, QueryTimeout
from bookreader.library import Library

REPO = Path(__file__).resolve().parents[2]
FACT = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."

# A real ingest in another process, paused in the middle of its embedding until told to go
# on (a line on its stdin): the book is "indexing" and its lock is held.
PAUSED_INGEST = textwrap.dedent(
    """
    import multiprocessing, sys
    from pathlib import Path
    from bookreader.config import Settings
    from bookreader.library import Library

    multiprocessing.current_process().name = "cli"
    lib = Library(Settings(data_dir=Path(sys.argv[1])))
    lib.ingest_batch = 2
    paused = []

    def progress(done, total, message):
        if message == "Embedding" and done >= 2 and not paused:
            paused.append(True)
            print("paused", flush=True)
            sys.stdin.readline()

    lib.ingest(sys.argv[2], progress=progress)
    lib.close()
    print("done", flush=True)
    """
)


@pytest.fixture
def fact_pdf(tmp_path):
    return planted_fact_pdf(tmp_path / "fact.pdf", FACT, fact_page=3, pages=6)


def test_asking_while_another_process_ingests_names_that_process(tmp_path, embedder, fact_pdf):
    data = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSED_INGEST, str(data), str(fact_pdf)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "paused"
        with Library(Settings(data_dir=data), embedder=embedder) as library:
            [book] = library.books()
            assert book.state == "indexing"
            with pytest.raises(BookReaderError) as err:
                library.ask("How many gulls were counted?", book=book.book_id,
                            backend="extractive")
            message = err.value.user_message
            assert "is being indexed now by a `bookreader` command" in message
            assert f"(process {child.pid})" in message
            assert "Ingest it again" not in message
            child.stdin.write("go\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "done"
            answer = library.ask("How many gulls were counted?", book=book.book_id,
                                 backend="extractive")
            assert "4127" in answer.text
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def test_an_interrupted_ingest_still_says_to_ingest_again(tmp_path, embedder, fact_pdf):
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as library:
        library.ingest_batch = 2
        seen: list[int] = []

        def progress(done, total, message):
            if message == "Embedding":
                seen.append(done)

        with pytest.raises(Cancelled):
            library.ingest(fact_pdf, progress=progress, cancel=lambda: bool(seen) and seen[-1] >= 2)
        book_id = library.books()[0].book_id
        # This library still holds the book's store (and its lock), but no ingest runs.
        with pytest.raises(BookReaderError) as err:
            library.ask("How many gulls were counted?", book=book_id, backend="extractive")
        assert "indexing was interrupted" in err.value.user_message
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as later:
        with pytest.raises(BookReaderError) as err:
            later.ask("How many gulls were counted?", book=book_id, backend="extractive")
        assert "indexing was interrupted" in err.value.user_message
        assert "Ingest it again to finish indexing" in err.value.user_message


@pytest.fixture
def library(tmp_path, embedder, fact_pdf):
    with Library(Settings(data_dir=tmp_path / "data"), embedder=embedder) as lib:
        lib.ingest(fact_pdf)
        yield lib


def _session_rows(library, session):
    return [r for r in library.audit.iter_rows() if r["session_id"] == session]


@pytest.mark.parametrize("streamed", [True, False])
def test_a_budget_stop_is_audited_once_as_a_timeout(library, monkeypatch, streamed):
    """What the server does on a 504: its cancel check turns true when the budget runs out,
    after the model started.  One record, outcome timeout; before, two (a Stop and a
    timeout written by the server)."""
    budget_over: list[bool] = []
    inner = library.answerer.ask

    def ask_and_run_out(*args, **kwargs):  # the budget runs out as the model starts
        on_start = kwargs["on_start"]

        def started(provisional):
            on_start(provisional)
            budget_over.append(True)

        return inner(*args, **{**kwargs, "on_start": started})

    monkeypatch.setattr(library.answerer, "ask", ask_and_run_out)
    with pytest.raises(Cancelled):
        library.ask("How many gulls were counted?", book=library.books()[0].book_id,
                    backend="extractive", session_id="budget",
                    on_token=(lambda text: None) if streamed else None,
                    cancel=lambda: bool(budget_over),
                    stop_reason=lambda: QueryTimeout(TIMEOUT_MESSAGE) if budget_over else None)
    rows = [r for r in _session_rows(library, "budget") if r["status"] != "pending"]
    assert len(rows) == 1, [r["error_message"] for r in rows]
    assert rows[0]["outcome"] == "timeout" and rows[0]["error_message"] == TIMEOUT_MESSAGE
    assert not any(r["error_message"] == STOPPED_MESSAGE for r in _session_rows(library, "budget"))


def test_the_report_counts_timeouts_apart_from_stops(library, tmp_path):
    book = library.books()[0].book_id
    with pytest.raises(Cancelled):  # a Stop pressed before the model starts
        library.ask("How many gulls were counted?", book=book, backend="extractive",
                    on_token=lambda text: None, cancel=_true_after_start(library),
                    session_id="report")
    library.audit.record(  # what a server timeout now leaves: one timeout record
        _timeout_answer(library, book), session_id="report")
    out = library.audit.report(tmp_path / "report.html")
    html = out.read_text(encoding="utf-8")
    assert "<b>1</b><span>stopped by the student</span>" in html
    assert "<b>50%</b><span>timed out</span>" in html
    assert "<b>0%</b><span>ended in an error</span>" in html


def _true_after_start(library):
    started: list[bool] = []
    inner = library.answerer.ask

    def ask(*args, **kwargs):
        on_start = kwargs["on_start"]

        def hook(provisional):
            on_start(provisional)
            started.append(True)

        return inner(*args, **{**kwargs, "on_start": hook})

    library.answerer.ask = ask
    return lambda: bool(started)


def _timeout_answer(library, book):
    from bookreader.answer_records import error_answer
    from bookreader.core.types import Mode

    return error_answer("Why gulls?", Mode.BOOK, QueryTimeout(TIMEOUT_MESSAGE),
                        library.book(book), None, "extractive")
