"""One contract every VectorStore passes: Qdrant Edge (a real shard in a temp dir),
qdrant-client's local mode (a real local collection in a temp dir), and a Qdrant server
over HTTP through qdrant-client (``--store qdrant:URL``; the server is the local stand-in
in tests/fakes/qdrant_server.py, as no Qdrant server binary installs here).

The expected results are computed independently with numpy (brute-force cosine over the
chunks the filter accepts), so the stores are checked against the definition, not against
each other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

from bookreader.core.store.base import VectorStore, open_store
from bookreader.core.store.edge import EdgeStore
from bookreader.core.store.server import ServerStore
from bookreader.core.types import Chunk, SearchFilter
from bookreader.errors import BookLocked, StoreError
from fakes.qdrant_server import FakeQdrantServer

DIM = 384
BOOK = "f00dbabe1234"
CHAPTERS = ("1 Getting started", "2 Variables and operators", "3 Input and output")


def make_chunks(n: int = 60, book_id: str = BOOK) -> list[Chunk]:
    """``n`` chunks over 3 chapters; every 4th chunk spans two pages."""
    chunks = []
    for i in range(n):
        page = i // 2
        end = page + (1 if i % 4 == 3 else 0)
        chunks.append(
            Chunk(
                chunk_id=f"{book_id}-{i:04d}",
                book_id=book_id,
                position=i,
                text=f"Chunk {i}: System.out.println(\"héllo\") — ünïcode ✓ {'x' * (i % 7)}",
                page_start=page,
                page_end=end,
                label_start="xii" if page == 0 else str(page - 1),
                label_end="xii" if end == 0 else str(end - 1),
                chapter=CHAPTERS[min(i * len(CHAPTERS) // n, len(CHAPTERS) - 1)],
                section=f"{i // 10}.{i % 10} Section" if i % 5 else "",
                char_start=(i * 37) % 500,
                char_end=(i * 37) % 500 + 120,
            )
        )
    return chunks


def make_vectors(n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_force(chunks, vectors, query, top_k, flt=None):
    """Chunk ids of the true top_k by cosine among the chunks ``flt`` accepts."""
    sims = vectors @ query
    order = [i for i in np.argsort(-sims) if flt is None or flt.accepts(chunks[i])]
    return [chunks[i].chunk_id for i in order[:top_k]]


# --- the two backends -----------------------------------------------------------------------
class Backend:
    """Opens (and reopens) one backend's store for a book in a temp folder."""

    def __init__(self, kind: str, root: Path, url: str = "") -> None:
        self.kind = kind
        self.root = root
        self.url = url
        self.server: Optional[FakeQdrantServer] = None
        self.opened: list[VectorStore] = []

    def shard_path(self, book_id: str = BOOK) -> Path:
        return self.root / "books" / book_id / "shard"

    def open(self, book_id: str = BOOK) -> VectorStore:
        if self.kind == "edge":
            store = EdgeStore(self.shard_path(book_id), book_id, dimension=DIM)
        elif self.kind == "server-http":
            store = ServerStore(book_id, dimension=DIM, url=self.url)
        else:
            # qdrant-client local mode, persisted to a folder so reopening can be tested.
            store = ServerStore(
                book_id, dimension=DIM, location=str(self.root / "qdrant-local" / book_id)
            )
        self.opened.append(store)
        return store


KINDS = ["edge", "server-local", "server-http"]


@contextlib.contextmanager
def opened_backend(kind: str, root: Path):
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(FakeQdrantServer()) if kind == "server-http" else None
        b = Backend(kind, root, server.url if server else "")
        b.server = server
        try:
            yield b
        finally:
            for store in b.opened:
                store.close()


@pytest.fixture(params=KINDS)
def backend(request, tmp_path):
    with opened_backend(request.param, tmp_path) as b:
        yield b


def fill(backend: Backend):
    """Open a store and upsert 60 chunks into it, shuffled, in two calls."""
    chunks = make_chunks()
    vectors = make_vectors(len(chunks))
    order = np.random.default_rng(1).permutation(len(chunks))
    store = backend.open()
    half = len(order) // 2
    for part in (order[:half], order[half:]):
        store.upsert([chunks[i] for i in part], vectors[part])
    return store, chunks, vectors


@pytest.fixture(scope="module", params=KINDS)
def filled_ro(request, tmp_path_factory):
    """A filled store shared by the tests that only read (one per backend and module)."""
    with opened_backend(request.param, tmp_path_factory.mktemp(request.param)) as b:
        yield fill(b)


@pytest.fixture
def filled(backend):
    """A filled store of the test's own, for tests that change or close it."""
    return fill(backend)


# --- the contract ---------------------------------------------------------------------------
def test_is_a_vector_store(filled_ro):
    store, _, _ = filled_ro
    assert isinstance(store, VectorStore)
    assert store.book_id == BOOK


def test_count_after_upsert(filled_ro):
    store, chunks, _ = filled_ro
    assert store.count() == len(chunks)


def test_search_returns_true_nearest_neighbours_best_first(filled_ro):
    store, chunks, vectors = filled_ro
    for probe in (0, 17, 59):
        hits = store.search(vectors[probe], top_k=5)
        assert [c.chunk_id for c, _ in hits] == brute_force(chunks, vectors, vectors[probe], 5)
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True)
        assert scores[0] == pytest.approx(1.0, abs=1e-4)  # cosine of a vector with itself
        assert all(-1.0001 <= s <= 1.0001 for s in scores)


def test_search_with_an_unnormalised_query_uses_cosine(filled_ro):
    store, chunks, vectors = filled_ro
    hits = store.search(vectors[9] * 3.5, top_k=3)
    assert hits[0][0].chunk_id == chunks[9].chunk_id
    assert hits[0][1] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize(
    "flt",
    [
        SearchFilter(page_start=5, page_end=9),
        SearchFilter(page_start=20),
        SearchFilter(page_end=3),
        SearchFilter(chapters=(CHAPTERS[1],)),
        SearchFilter(chapters=(CHAPTERS[0], CHAPTERS[2])),
        SearchFilter(page_start=8, page_end=25, chapters=(CHAPTERS[1],)),
    ],
    ids=["pages", "from-page", "to-page", "chapter", "two-chapters", "pages-and-chapter"],
)
def test_filtered_search_matches_brute_force(filled_ro, flt):
    store, chunks, vectors = filled_ro
    query = make_vectors(1, seed=99)[0]
    hits = store.search(query, top_k=6, flt=flt)
    assert hits, "the filter accepts some chunks"
    assert all(flt.accepts(c) for c, _ in hits)
    assert [c.chunk_id for c, _ in hits] == brute_force(chunks, vectors, query, 6, flt)


def test_page_filter_needs_the_whole_chunk_inside(filled_ro):
    store, chunks, vectors = filled_ro
    # chunk 3 spans pages 1-2: a filter ending at page 1 must exclude it.
    assert (chunks[3].page_start, chunks[3].page_end) == (1, 2)
    hits = store.search(vectors[3], top_k=60, flt=SearchFilter(page_start=0, page_end=1))
    ids = {c.chunk_id for c, _ in hits}
    assert chunks[3].chunk_id not in ids
    assert ids == {c.chunk_id for c in chunks if c.page_end <= 1}


def test_filter_accepting_nothing_returns_nothing(filled_ro):
    store, _, vectors = filled_ro
    assert store.search(vectors[0], 5, SearchFilter(chapters=("No such chapter",))) == []
    assert store.chunks(SearchFilter(page_start=1000)) == []


def test_chunks_come_in_position_order(filled_ro):
    store, chunks, _ = filled_ro
    assert list(store.chunks()) == chunks


def test_chunks_respect_the_filter(filled_ro):
    store, chunks, _ = filled_ro
    flt = SearchFilter(page_start=4, page_end=20, chapters=(CHAPTERS[0], CHAPTERS[1]))
    assert list(store.chunks(flt)) == [c for c in chunks if flt.accepts(c)]


def test_payload_round_trips_every_chunk_field(filled_ro):
    store, chunks, vectors = filled_ro
    got = {c.chunk_id: c for c in store.chunks()}
    for original in chunks:
        assert dataclasses.asdict(got[original.chunk_id]) == dataclasses.asdict(original)
    hit, _ = store.search(vectors[0], 1)[0]
    assert hit == chunks[0]
    assert hit.label_start == "xii" and "ünïcode ✓" in hit.text


def test_existing_ids(filled_ro):
    store, chunks, _ = filled_ro
    asked = [chunks[0].chunk_id, chunks[42].chunk_id, "not-stored", "also-missing"]
    assert store.existing_ids(asked) == {chunks[0].chunk_id, chunks[42].chunk_id}
    assert store.existing_ids([]) == set()
    assert store.existing_ids([c.chunk_id for c in chunks]) == {c.chunk_id for c in chunks}


def test_reupsert_is_idempotent_and_replaces(filled):
    store, chunks, vectors = filled
    store.upsert(chunks, vectors)
    assert store.count() == len(chunks)
    # read every chunk once first: a store that caches what it read must not serve the
    # old text after the chunk is written again
    assert len(store.search(vectors[5], len(chunks))) == len(chunks)
    changed = dataclasses.replace(chunks[5], text="replaced text", section="New")
    new_vector = make_vectors(1, seed=5)[0]
    store.upsert([changed], new_vector[None, :])
    assert store.count() == len(chunks)
    hit, score = store.search(new_vector, 1)[0]
    assert hit == changed and score == pytest.approx(1.0, abs=1e-4)


def test_empty_upsert_and_zero_top_k(backend):
    store = backend.open()
    store.upsert([], np.zeros((0, DIM), dtype=np.float32))
    assert store.count() == 0
    assert store.chunks() == []
    assert store.search(make_vectors(1)[0], 5) == []
    store.upsert(make_chunks(3), make_vectors(3))
    assert store.search(make_vectors(1)[0], 0) == []


def test_wrong_vector_shapes_are_rejected(backend):
    store = backend.open()
    chunks = make_chunks(2)
    with pytest.raises(ValueError):
        store.upsert(chunks, make_vectors(3))
    with pytest.raises(ValueError):
        store.upsert(chunks, np.ones((2, 10), dtype=np.float32))
    with pytest.raises(ValueError):
        store.search(np.ones(10, dtype=np.float32), 3)
    assert store.count() == 0


def test_close_twice_and_use_after_close(filled):
    store, _, vectors = filled
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.search(vectors[0], 3)


def test_reopen_keeps_everything(backend):
    chunks = make_chunks(25)
    vectors = make_vectors(25)
    store = backend.open()
    store.upsert(chunks, vectors)
    store.close()
    again = backend.open()
    assert again.count() == 25
    assert list(again.chunks()) == chunks
    assert again.search(vectors[11], 1)[0][0] == chunks[11]


def test_drop_removes_the_book(backend):
    store = backend.open()
    store.upsert(make_chunks(10), make_vectors(10))
    store.drop()
    if backend.kind == "edge":
        assert not backend.shard_path().exists()
    fresh = backend.open()
    assert fresh.count() == 0


def test_books_are_separate(backend):
    a = backend.open("aaaa")
    b = backend.open("bbbb")
    a.upsert(make_chunks(4, "aaaa"), make_vectors(4))
    b.upsert(make_chunks(6, "bbbb"), make_vectors(6, seed=3))
    assert (a.count(), b.count()) == (4, 6)
    assert {c.book_id for c in b.chunks()} == {"bbbb"}


# --- processes: durability and the per-book lock ------------------------------------------------
CHILD = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    import numpy as np
    sys.path.insert(0, {tests_dir!r})
    from contracts.test_store_contract import Backend, make_chunks, make_vectors
    backend = Backend({kind!r}, Path({root!r}))
    mode = sys.argv[1]
    try:
        store = backend.open()
    except Exception as exc:
        print(json.dumps({{"error": type(exc).__name__, "message": str(exc)}}), flush=True)
        sys.exit(0)
    if mode == "upsert-and-die":
        store.upsert(make_chunks(30), make_vectors(30))
        print(json.dumps({{"upserted": 30}}), flush=True)
        os._exit(9)  # no close(), no flush at exit: like a killed process
    print(json.dumps({{"ready": True}}), flush=True)
    sys.stdin.readline()  # hold the book open until the parent says so (or kills us)
    store.close()
    """
)


def spawn(backend: Backend, mode: str) -> subprocess.Popen:
    code = CHILD.format(
        tests_dir=str(Path(__file__).resolve().parent.parent),
        kind=backend.kind,
        root=str(backend.root),
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def read_line(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    assert line, f"child exited without output (code {proc.wait()})"
    return json.loads(line)


def _local_only(backend: Backend) -> None:
    if backend.kind == "server-http":
        pytest.skip("a Qdrant server keeps the data itself and serves every process: "
                    "no per-book lock (see test_server_books_open_in_several_clients_at_once)")


def test_upsert_is_durable_when_the_process_dies(backend):
    _local_only(backend)
    proc = spawn(backend, "upsert-and-die")
    assert read_line(proc) == {"upserted": 30}
    assert proc.wait(timeout=60) == 9
    store = backend.open()  # resuming an ingest: what was upserted is there
    assert store.count() == 30
    assert store.existing_ids([c.chunk_id for c in make_chunks(30)]) == {
        c.chunk_id for c in make_chunks(30)
    }


def test_second_process_gets_book_locked_and_lock_dies_with_the_owner(backend):
    _local_only(backend)
    owner = spawn(backend, "hold")
    try:
        assert read_line(owner) == {"ready": True}
        other = spawn(backend, "hold")
        reply = read_line(other)
        other.wait(timeout=60)
        assert reply["error"] == "BookLocked"
        assert "in use by" in reply["message"]
        assert "try again" in reply["message"]
        assert "Traceback" not in reply["message"]
        with pytest.raises(BookLocked):  # this process too
            backend.open()
    finally:
        owner.kill()  # SIGKILL: no cleanup runs in the owner
        owner.wait(timeout=60)
    store = backend.open()  # the OS released the lock with the dead process
    assert store.count() == 0


# --- backend-specific errors ---------------------------------------------------------------
def test_edge_damaged_shard_says_reindex(tmp_path):
    backend = Backend("edge", tmp_path)
    store = backend.open()
    store.upsert(make_chunks(5), make_vectors(5))
    store.close()
    (backend.shard_path() / "edge_config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError) as info:
        backend.open()
    assert "Re-index the book" in info.value.user_message
    assert str(backend.shard_path()) in info.value.user_message
    # the failed open released the lock: a repaired folder opens again
    (backend.shard_path() / "edge_config.json").unlink()
    assert backend.open().count() == 5


def test_edge_shard_of_another_dimension_says_reindex(tmp_path):
    path = tmp_path / "books" / BOOK / "shard"
    EdgeStore(path, BOOK, dimension=DIM).close()
    with pytest.raises(StoreError, match="Re-index the book"):
        EdgeStore(path, BOOK, dimension=128)


def test_edge_unwritable_data_folder(tmp_path):
    blocker = tmp_path / "books"
    blocker.write_text("a file where the books folder should be", encoding="utf-8")
    with pytest.raises(StoreError, match="writable"):
        EdgeStore(blocker / BOOK / "shard", BOOK)


def test_server_unreachable_url_says_what_to_do():
    import socket

    with socket.socket() as s:  # a port that is certainly closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StoreError) as info:
        ServerStore(BOOK, url=f"http://127.0.0.1:{port}")
    msg = info.value.user_message
    assert f"127.0.0.1:{port}" in msg and "qdrant_url" in msg


def test_server_without_address_says_what_to_do():
    with pytest.raises(StoreError, match="qdrant_url"):
        ServerStore(BOOK)


def test_open_store_defaults_to_edge_in_the_data_folder(settings):
    store = open_store(settings, BOOK)
    try:
        assert isinstance(store, EdgeStore)
        assert store.path == settings.books_dir / BOOK / "shard"
        store.upsert(make_chunks(2), make_vectors(2))
        assert store.count() == 2
    finally:
        store.close()


def test_open_store_server_backend_uses_the_url(settings):
    with pytest.raises(StoreError, match="qdrant_url"):
        open_store(settings.updated(store_backend="server", qdrant_url=""), BOOK)


def test_server_books_open_in_several_clients_at_once(tmp_path):
    """Several ``bookreader serve`` processes share one Qdrant server: each opens the same
    book (no lock), and what one writes the other reads."""
    with opened_backend("server-http", tmp_path) as b:
        first, second = b.open(), b.open()
        chunks, vectors = make_chunks(12), make_vectors(12)
        first.upsert(chunks, vectors)
        assert second.count() == 12
        assert second.search(vectors[5], 1)[0][0] == chunks[5]
        assert b.server is not None  # and all of it went over HTTP
        assert {("PUT", f"/collections/book_{BOOK}/points"),
                ("POST", f"/collections/book_{BOOK}/points/query")} <= set(b.server.requests)
