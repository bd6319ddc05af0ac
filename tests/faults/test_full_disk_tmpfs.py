"""A disk that another program fills while a book is being indexed, on a real small tmpfs.

Qdrant Edge writes through memory maps; on a full disk a write into a hole of a mapped file
was a SIGBUS that killed the process with no message and left the book "indexing".  Now the
store gives its files their blocks before each write, so the ingest ends with the disk-full
message, the process lives on, the next start says why the book is unfinished, and the
audit log on the same full disk fails with an error, never a signal.

Needs ``mount -t tmpfs`` (root); skips with a message where mounting is not permitted.
The ingest runs in a child process so that a SIGBUS fails this test instead of killing the
test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pdf_factory import planted_fact_pdf

from bookreader.config import Settings
from bookreader.library import Library

REPO = Path(__file__).resolve().parents[2]
FACT = "The lighthouse keeper Marguerite Okonkwo counted exactly 4127 gulls on Tuesday."

# Ingest on the tmpfs; once a few chunks are stored, "another program" fills the disk to
# the last byte.  Prints the error the ingest ended with, then what the audit log does on
# the full disk.
FILL_DURING_INGEST = textwrap.dedent(
    """
    import os, random, sys
    from pathlib import Path
    from bookreader.config import Settings
    from bookreader.library import Library
    from bookreader.errors import BookReaderError

    data, pdf, filler = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    sys.path.insert(0, os.environ["BOOKREADER_TEST_TOOLS"])
    from audit_samples import make_answer
    lib = Library(Settings(data_dir=data))
    lib.ingest_batch = 2
    lib.audit.record(make_answer(random.Random(2)), session_id="s")  # open, with a record

    def fill():
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\\1" * size)
            except OSError:
                pass
        os.close(fd)

    def progress(done, total, message):
        if message == "Embedding" and done >= 4 and not os.path.exists(filler):
            fill()

    try:
        lib.ingest(pdf, progress=progress)
        print("INGEST: finished")
    except BookReaderError as exc:
        print("INGEST:", type(exc).__name__, exc.user_message)
    try:
        for _ in range(50):
            lib.audit.record(make_answer(random.Random(3), passage_chars=4000), session_id="s")
        print("AUDIT: recorded")
    except BookReaderError as exc:
        print("AUDIT:", type(exc).__name__, exc.user_message)
    try:
        lib.close()
    except BookReaderError as exc:
        print("CLOSE:", exc.user_message)
    print("ALIVE")
    """
)


@pytest.fixture
def small_tmpfs(tmp_path):
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not permitted'}); "
                    "the full-disk test needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_disk_filled_during_ingest_ends_with_the_disk_full_message(small_tmpfs, tmp_path,
                                                                      embedder):
    data = small_tmpfs / "data"
    filler = small_tmpfs / "other-program.bin"
    pdf = planted_fact_pdf(tmp_path / "fact.pdf", FACT, fact_page=7, pages=14)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    done = subprocess.run(
        [sys.executable, "-c", FILL_DURING_INGEST, str(data), str(pdf), str(filler)],
        capture_output=True, text=True, timeout=900, cwd=REPO, env=env,
    )
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
    out = done.stdout
    assert "ALIVE" in out
    ingest_line = next(line for line in out.splitlines() if line.startswith("INGEST:"))
    assert "StoreError The disk is full: cannot write the index" in ingest_line
    audit_line = next(line for line in out.splitlines() if line.startswith("AUDIT:"))
    assert "StoreError Cannot write to the audit log" in audit_line
    assert "disk is full" in audit_line

    # The next start, with the disk still full, says why the book is unfinished.
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        [book] = library.books()
        assert book.state == "indexing"
        assert book.message.startswith("Indexing stopped: the disk holding the data folder "
                                       "is full")
    # Space freed: ingesting again resumes and finishes.
    filler.unlink()
    with Library(Settings(data_dir=data), embedder=embedder) as library:
        info = library.ingest(pdf)
        assert info.state == "ready"
        hits = library.search(info.book_id, "How many gulls were counted?", top_k=3)
        assert any("4127" in p.chunk.text for p in hits.passages)
