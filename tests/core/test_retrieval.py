"""Hybrid retrieval over a real Qdrant Edge shard, the real BM25 index and the real MiniLM."""

from __future__ import annotations

import dataclasses

import pytest

from bookreader.config import Settings
from bookreader.core.chunking import Chunker
from bookreader.core import retrieval_priors as priors_mod
from bookreader.core.lexical import LexicalIndex
from bookreader.core.retrieval import HybridRetriever, is_covered
from bookreader.core.retrieval_calibration import BookCalibration, Evidence
from bookreader.core.retrieval_terms import query_terms, term_coverage
from bookreader.core.store.base import open_store
from bookreader.core.types import Page, SearchFilter
from bookreader.errors import InvalidInput, QueryTimeout

# (chapter, section, text): one page each, distinct topics of a small programming book.
PAGES = [
    ("1 Basics", "1.1 Compiling", "The Java compiler translates source code into byte code. "
     "The Java Virtual Machine then interprets the byte code, so the same class file runs on "
     "any operating system. Compile a program with the javac command."),
    ("1 Basics", "1.2 Printing", "To display text on the screen, call System.out.println with "
     "a string argument. The println method prints the text and then moves to a new line, "
     "while print stays on the same line."),
    ("1 Basics", "1.3 Variables", "A variable is a named location that stores a value. Before "
     "you use a variable you declare it with a type such as int or double, and an assignment "
     "statement gives it a value."),
    ("2 Control flow", "2.1 Conditions", "An if statement runs a block of code only when its "
     "boolean condition is true. An else clause gives an alternative block for the false case, "
     "and conditions can be chained with else if."),
    ("2 Control flow", "2.2 Loops", "A while loop repeats its body as long as the condition "
     "stays true. A for loop puts the initialization, the condition and the update in one "
     "header, which makes counting loops easy to read."),
    ("2 Control flow", "2.3 Recursion", "A recursive method calls itself. Every recursion needs "
     "a base case that stops it; otherwise the calls never end and the program fails with a "
     "stack overflow error."),
    ("3 Data", "3.1 Arrays", "An array holds a fixed number of values of the same type. The "
     "index of the first element is zero, and reading past the last element throws an "
     "ArrayIndexOutOfBoundsException."),
    ("3 Data", "3.2 Strings", "Strings are immutable: methods like toUpperCase and substring "
     "return new strings instead of changing the original. Compare strings with the equals "
     "method, not with the == operator."),
    ("3 Data", "3.3 Objects", "A class defines the fields and methods of its objects. The new "
     "operator creates an object and calls a constructor, which initializes the instance "
     "variables."),
]


@pytest.fixture(scope="module")
def book_settings(tmp_path_factory):
    s = Settings(data_dir=tmp_path_factory.mktemp("retrieval-data"))
    s.ensure_dirs()
    return s


@pytest.fixture(scope="module")
def indexed(book_settings, embedder):
    pages = [Page(i, str(i + 1), text, ch, sec) for i, (ch, sec, text) in enumerate(PAGES)]
    chunker = Chunker(embedder.count_tokens, max_tokens=64, overlap=0.2)  # ~1-3 chunks a page
    chunks = list(chunker.chunks(pages, "testbook"))
    store = open_store(book_settings, "testbook")
    store.upsert(chunks, embedder.embed([c.text for c in chunks]))
    lexical = LexicalIndex.build(chunks)
    yield store, lexical, chunks
    store.close()


@pytest.fixture(scope="module")
def retriever(indexed, embedder, book_settings):
    store, lexical, _ = indexed
    return HybridRetriever(store, lexical, embedder, book_settings)


def test_finds_the_page_that_answers(retriever):
    cases = {
        "How does Java turn source code into byte code?": 0,
        "What happens when a recursive method has no base case?": 5,
        "What is the index of the first element of an array?": 6,
        "How should I compare two strings?": 7,
    }
    for question, page in cases.items():
        r = retriever.search(question, top_k=5)
        assert r.passages[0].chunk.page_start == page, (question, r.passages[0].chunk.text)


def test_in_scope_questions_are_covered_and_unrelated_ones_are_not(retriever):
    for question in ("How do I write a while loop?", "What does a constructor do?"):
        r = retriever.search(question)
        assert retriever.is_covered(r), (question, r.confidence)
        assert r.confidence >= 0.6
    for question in (
        "What is the capital of Australia?",
        "How long should I bake a chocolate cake?",
        "Who won the football world cup in 1998?",
    ):
        r = retriever.search(question)
        assert not retriever.is_covered(r), (question, r.confidence)
        assert r.confidence < 0.6


def test_scores_are_normalised_blended_and_sorted(retriever, book_settings):
    r = retriever.search("loop condition", top_k=5)
    assert len(r.passages) == 5
    assert 0.0 <= r.confidence <= 1.0 and r.latency_ms > 0
    scores = [p.score for p in r.passages]
    assert scores == sorted(scores, reverse=True)
    wd = book_settings.dense_weight
    q_terms = set(query_terms("loop condition"))
    for p in r.passages:
        assert 0.0 <= p.dense_score <= 1.0 and 0.0 <= p.bm25_score <= 1.0
        # the blend plus the heading prior ("2.2 Loops" holds "loop"; no apparatus here)
        prior = priors_mod.HEADING_WEIGHT * priors_mod.heading_match(q_terms, p.chunk)
        assert p.score == pytest.approx(wd * p.dense_score + (1 - wd) * p.bm25_score + prior)
    assert any(priors_mod.heading_match(q_terms, p.chunk) > 0 for p in r.passages)
    assert len({p.chunk.chunk_id for p in r.passages}) == 5


def test_dense_score_is_the_cosine_and_bm25_is_relative_to_the_best(retriever, embedder):
    query = "How does a while loop decide to stop?"
    r = retriever.search(query, top_k=3)
    q = embedder.embed([query])[0]
    for p in r.passages:
        cosine = float(embedder.embed([p.chunk.text])[0] @ q)
        assert p.dense_score == pytest.approx(max(cosine, 0.0), abs=1e-4)
    raw = dict((c.chunk_id, s) for c, s in retriever.lexical.scores(query))
    best = max(raw.values())
    for p in r.passages:
        assert p.bm25_score == pytest.approx(raw[p.chunk.chunk_id] / best)


def test_bm25_finds_exact_code_identifiers(retriever):
    r = retriever.search("ArrayIndexOutOfBoundsException", top_k=3)
    assert r.passages[0].chunk.page_start == 6
    assert r.passages[0].bm25_score == 1.0
    r = retriever.search("System.out.println", top_k=3)
    assert r.passages[0].chunk.page_start == 1


def test_weights_are_configurable(indexed, embedder, book_settings):
    store, lexical, _ = indexed
    dense_only = HybridRetriever(
        store, lexical, embedder, dataclasses.replace(book_settings, dense_weight=1.0)
    )
    bm25_only = HybridRetriever(
        store, lexical, embedder, dataclasses.replace(book_settings, dense_weight=0.0)
    )
    q_terms = set(query_terms("strings are immutable"))

    def prior(p):  # the heading prior ("3.2 Strings"), on top of either weighting
        return priors_mod.HEADING_WEIGHT * priors_mod.heading_match(q_terms, p.chunk)

    for p in dense_only.search("strings are immutable").passages:
        assert p.score == pytest.approx(p.dense_score + prior(p))
    for p in bm25_only.search("strings are immutable").passages:
        assert p.score == pytest.approx(p.bm25_score + prior(p))


def test_page_range_and_chapter_filters(retriever):
    flt = SearchFilter(page_start=3, page_end=5)
    r = retriever.search("arrays and strings", top_k=5, flt=flt)
    assert r.passages and r.filter == flt
    assert all(3 <= p.chunk.page_start and p.chunk.page_end <= 5 for p in r.passages)
    r = retriever.search("compiler byte code", top_k=10, flt=SearchFilter(chapters=("3 Data",)))
    assert r.passages and all(p.chunk.chapter == "3 Data" for p in r.passages)
    empty = retriever.search("loops", flt=SearchFilter(page_start=100, page_end=200))
    assert empty.passages == () and empty.confidence == 0.0 and not is_covered(empty, 0.6)


def test_time_budget(indexed, embedder, book_settings):
    store, lexical, _ = indexed
    no_time = HybridRetriever(
        store, lexical, embedder, dataclasses.replace(book_settings, retrieval_timeout_s=0.0)
    )
    with pytest.raises(QueryTimeout) as err:
        no_time.search("loops")
    assert err.value.user_message == "Query processing timed out. Try a simpler question."


def test_empty_query_is_refused(retriever):
    with pytest.raises(InvalidInput):
        retriever.search("   ")


def test_without_a_lexical_index_search_is_dense_only(indexed, embedder, book_settings):
    store, _, _ = indexed
    r = HybridRetriever(store, None, embedder, book_settings).search("What is a recursive method?")
    assert r.passages[0].chunk.page_start == 5
    assert all(p.bm25_score == 0.0 for p in r.passages)


def test_confidence_function_is_monotone_and_bounded():
    book = BookCalibration(off_topic=0.15, inside=0.6, chunk_count=1, headings=1)
    low = book.confidence(Evidence(0.1, 0.0))
    mid = book.confidence(Evidence(0.45, 0.5))
    high = book.confidence(Evidence(0.8, 1.0))
    assert 0.0 <= low < mid < high <= 1.0
    assert book.confidence(Evidence(0.5, 1.0)) > book.confidence(Evidence(0.5, 0.0))
    assert term_coverage("while loops", ["A while loop repeats."]) == 1.0
    assert term_coverage("bake a cake", ["A while loop repeats."]) == 0.0
    assert term_coverage("the of and", ["anything"]) == 0.0
