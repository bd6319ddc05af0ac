"""A full disk ends in a clear message with nothing half-written in the catalogue (never a
SIGBUS from a memory-mapped shard); a book whose shard or BM25 file is gone is reported as
"damaged: re-index" instead of answering "not covered" from an empty index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from pdf_factory import planted_fact_pdf

from bookreader.config import Settings
from bookreader.core.types import Mode
from bookreader.errors import StoreError
from bookreader.library import LEXICAL_FILE, Library

REPO = Path(__file__).resolve().parents[2]
FACT = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."


@pytest.fixture(scope="module")
def fact_pdf(tmp_path_factory):
    return planted_fact_pdf(tmp_path_factory.mktemp("pdf") / "gulls.pdf", FACT, fact_page=2, pages=4)


@pytest.fixture
def small_disk(tmp_path):
    """A 40 MB tmpfs (root and mount needed; skipped with a message otherwise)."""
    mnt = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip() or done.returncode}); "
                    "the disk-full test needs root and mount")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(folder: Path) -> None:
    with open(folder / "filler.bin", "wb") as fh:
        block = b"\0" * (1 << 20)
        try:
            while True:
                fh.write(block)
                fh.flush()
        except OSError:
            pass


def test_ingest_on_a_small_disk_is_refused_before_writing(small_disk, fact_pdf, embedder):
    settings = Settings(data_dir=small_disk / "data")
    with Library(settings, embedder=embedder) as lib:
        with pytest.raises(StoreError, match="Not enough free disk space to index 'gulls.pdf'"):
            lib.ingest(fact_pdf)
        assert lib.books() == []
    assert not list((small_disk / "data" / "books").glob("*/shard"))


def test_full_disk_question_ends_in_a_clear_error_without_tracebacks(small_disk, tmp_path):
    data = small_disk / "data"
    settings = Settings(data_dir=data).updated(llm_backend="extractive")
    settings.save()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), BOOKREADER_DATA_DIR=str(data))
    ask = [sys.executable, "-m", "bookreader", "ask", "How many gulls were counted?",
           "--mode", "selected", "--selection", FACT]
    first = subprocess.run(ask, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    _fill(small_disk)
    full = subprocess.run(ask, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert full.returncode not in (0, -7, -11), full.stderr[-2000:]  # no SIGBUS, no SIGSEGV
    assert "Traceback" not in full.stderr and "Logging error" not in full.stderr, full.stderr
    # The question is refused before any answer is shown: nothing seen goes unlogged.
    assert "the audit log" in full.stderr and "free disk space" in full.stderr
    assert "gulls" not in full.stdout
    (small_disk / "filler.bin").unlink()
    verify = subprocess.run([sys.executable, "-m", "bookreader", "audit", "verify"],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.fixture
def ready_book(settings, embedder, fact_pdf):
    lib = Library(settings, embedder=embedder)
    info = lib.ingest(fact_pdf)
    yield lib, info
    lib.close()


@pytest.mark.parametrize("lose", ["shard", LEXICAL_FILE])
def test_missing_index_part_is_damaged_and_reindexed(ready_book, settings, fact_pdf, lose):
    lib, info = ready_book
    lib.close()
    part = settings.books_dir / info.book_id / lose
    shutil.rmtree(part) if part.is_dir() else part.unlink()
    with Library(settings, embedder=lib.embedder) as fresh:
        [book] = fresh.books()
        assert book.state == "damaged" and book.message.startswith("Damaged: re-index.")
        with pytest.raises(StoreError, match="its index is damaged"):
            fresh.ask("How many gulls were counted?", mode=Mode.BOOK, book=info.book_id)
        assert not (settings.books_dir / info.book_id / "shard").exists() or lose != "shard"
        [record] = list(fresh.audit.iter_rows())
        assert "its index is damaged" in record["error_message"]
        again = fresh.ingest(fact_pdf)
        assert again.state == "ready" and again.chunk_count == info.chunk_count
        assert any("4127" in p.chunk.text for p in fresh.search(info.book_id, "gulls counted").passages)
