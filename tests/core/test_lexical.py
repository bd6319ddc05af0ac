"""BM25 over the code-aware tokenizer: tokens, ranking, filters, persistence."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from bookreader.core.lexical import LexicalIndex, tokenize
from bookreader.core.types import Chunk, SearchFilter
from bookreader.errors import Cancelled

TEXTS = [
    # chapter 1, pages 0-3
    "To print a line, Java programs call System.out.println with a string argument.",
    "Comments start with two slashes and the compiler ignores them completely.",
    "A for loop repeats a block a fixed number of times using a counter variable.",
    "A while loop keeps running while its condition stays true; it may never run.",
    # chapter 2, pages 4-7
    "An ArrayList grows as you add elements, unlike a fixed-size array.",
    "The method parseInt converts a String of digits into an int value.",
    "Recursion means a method calls itself; each call gets its own stack frame.",
    "Strings are immutable: methods like toUpperCase return a new String object.",
]
CHAPTERS = ["1 Basics"] * 4 + ["2 Objects"] * 4


def make_chunks(texts=TEXTS) -> list[Chunk]:
    return [
        Chunk(
            chunk_id=f"c{i}",
            book_id="book",
            position=i,
            text=t,
            page_start=i,
            page_end=i + (1 if i == 3 else 0),  # chunk 3 spans pages 3-4
            label_start=str(i + 1),
            label_end=str(i + 1 + (1 if i == 3 else 0)),
            chapter=CHAPTERS[i % len(CHAPTERS)],
            section="",
            char_start=0,
            char_end=len(t),
        )
        for i, t in enumerate(texts)
    ]


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    return LexicalIndex.build(make_chunks())


# --- tokenizer -------------------------------------------------------------------------------
def test_dotted_code_token_keeps_whole_and_parts():
    tokens = tokenize("System.out.println")
    assert tokens[0] == "system.out.println"
    assert {"system", "out", "println"} <= set(tokens)


def test_camel_case_and_snake_case_are_split_too():
    assert {"arraylist", "array", "list"} <= set(tokenize("ArrayList"))
    assert {"parseint", "pars", "int"} <= set(tokenize("parseInt"))
    assert {"htmlparser", "html", "parser"} <= set(tokenize("HTMLParser"))
    assert {"max_value", "max", "valu"} <= set(tokenize("MAX_VALUE"))


def test_lowercase_stop_words_and_porter_stemming():
    assert tokenize("The Running of THE Runners") == ["run", "runner"]
    assert tokenize("the and of a an is") == []
    assert tokenize("") == []


def test_code_keywords_are_not_stop_words():
    assert tokenize("for loop") == ["for", "loop"]
    assert tokenize("while loop") == ["while", "loop"]
    assert "this" in tokenize("the this keyword")


def test_numbers_languages_and_apostrophes():
    assert "3.14" in tokenize("pi is about 3.14.")
    assert "3" not in tokenize("pi is about 3.14.")  # a decimal stays one token
    assert {"c++", "c#"} <= set(tokenize("C++ and C# differ"))
    assert tokenize("Java's don't") == ["java"]  # possessive dropped, contraction a stop word


def test_a_greek_letter_symbol_reads_as_its_name():
    assert tokenize("the slope β1") == tokenize("the slope beta 1") == ["slope", "beta", "1"]
    assert tokenize("𝛽̂1 and σ² and ϕ") == ["beta", "1", "sigma", "²", "phi"]  # maths forms
    assert tokenize("the word λόγος") == ["word", "λόγος"]  # a Greek word stays a word
    assert tokenize("∇ and ∂") == []  # operators are no letters


def test_a_student_typing_a_greek_letter_by_name_finds_the_symbol():
    chunks = make_chunks(["The estimate β̂1 is unbiased when the errors have mean zero.",
                          "The variance of the errors is written as a constant."])
    assert LexicalIndex.build(chunks).scores("what does beta 1 estimate")[0][0].chunk_id == "c0"


def test_sentence_punctuation_is_not_part_of_tokens():
    assert tokenize("It compiles. Then it runs!") == ["compil", "run"]


def test_stemming_needs_no_downloaded_data(monkeypatch, tmp_path):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # an empty data folder
    assert tokenize("Compilers compiling compiled code") == ["compil", "compil", "compil", "code"]


# --- ranking -----------------------------------------------------------------------------------
def test_exact_identifier_finds_its_chunk(index):
    best, score = index.scores("System.out.println")[0]
    assert best.chunk_id == "c0" and score > 0


def test_words_find_a_camel_case_identifier(index):
    assert index.scores("array list")[0][0].chunk_id == "c4"
    assert index.scores("how does parseInt work")[0][0].chunk_id == "c5"


def test_for_and_while_loops_are_told_apart(index):
    assert index.scores("for loop")[0][0].chunk_id == "c2"
    assert index.scores("while loop")[0][0].chunk_id == "c3"


def test_scores_are_raw_bm25_best_first(index):
    query = "method call recursion stack"
    got = index.scores(query)
    assert len(got) == len(TEXTS)
    values = [s for _, s in got]
    assert values == sorted(values, reverse=True)
    reference = BM25Okapi([tokenize(t) for t in TEXTS]).get_scores(tokenize(query))
    by_id = {c.chunk_id: s for c, s in got}
    assert [by_id[f"c{i}"] for i in range(len(TEXTS))] == pytest.approx(list(reference))
    assert got[0][0].chunk_id == "c6"


def test_filter_keeps_only_chunks_inside(index):
    flt = SearchFilter(page_start=2, page_end=6, chapters=("2 Objects",))
    got = index.scores("loop string method", flt)
    assert [c.chunk_id for c, _ in got] and all(flt.accepts(c) for c, _ in got)
    assert {c.chunk_id for c, _ in got} == {"c4", "c5", "c6"}
    # chunk 3 (pages 3-4) is not wholly inside pages 4-7
    assert "c3" not in {c.chunk_id for c, _ in index.scores("loop", SearchFilter(page_start=4))}


def test_filtered_scores_equal_unfiltered_scores(index):
    full = {c.chunk_id: s for c, s in index.scores("string method value")}
    part = index.scores("string method value", SearchFilter(chapters=("2 Objects",)))
    assert {c.chunk_id: s for c, s in part} == pytest.approx({c.chunk_id: full[c.chunk_id] for c, _ in part})


def test_top_k_and_filter_matching_nothing(index):
    assert len(index.scores("loop", top_k=2)) == 2
    assert index.scores("loop", SearchFilter(chapters=("No such chapter",))) == []


def test_query_without_terms_scores_zero(index):
    got = index.scores("the of and")
    assert len(got) == len(TEXTS) and all(s == 0.0 for _, s in got)


def test_empty_and_stopword_only_books(tmp_path):
    assert LexicalIndex.build([]).scores("anything") == []
    idx = LexicalIndex.build(make_chunks(["the and of", "a an the"]))
    assert [s for _, s in idx.scores("the loop")] == [0.0, 0.0]


def test_build_reports_progress_and_can_be_cancelled():
    calls = []
    LexicalIndex.build(make_chunks(), progress=lambda d, t, m: calls.append((d, t)))
    assert calls[-1] == (len(TEXTS), len(TEXTS))
    with pytest.raises(Cancelled):
        LexicalIndex.build(make_chunks(), cancel=lambda: True)


# --- persistence -------------------------------------------------------------------------------
def test_save_and_load_give_the_same_scores(index, tmp_path):
    path = tmp_path / "book" / "bm25.json.gz"
    index.save(path)
    loaded = LexicalIndex.load(path, make_chunks())
    assert loaded is not None and len(loaded) == len(TEXTS)
    for query in ("System.out.println", "for loop", "immutable strings"):
        assert loaded.scores(query) == index.scores(query)


def test_load_returns_none_when_it_must_rebuild(index, tmp_path):
    path = tmp_path / "bm25.json.gz"
    assert LexicalIndex.load(path, make_chunks()) is None  # missing
    index.save(path)
    assert LexicalIndex.load(path, make_chunks()[:-1]) is None  # the chunks changed
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    data["tokenizer_version"] = -1
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(data, fh)
    assert LexicalIndex.load(path, make_chunks()) is None  # another tokenizer
    path.write_bytes(b"not gzip at all")
    assert LexicalIndex.load(path, make_chunks()) is None  # damaged


def test_load_follows_the_given_chunk_order(index, tmp_path):
    path = tmp_path / "bm25.json.gz"
    index.save(path)
    shuffled = [make_chunks()[i] for i in np.random.default_rng(3).permutation(len(TEXTS))]
    loaded = LexicalIndex.load(path, shuffled)
    assert loaded is not None
    assert loaded.scores("ArrayList")[0][0].chunk_id == "c4"
    assert dict((c.chunk_id, s) for c, s in loaded.scores("loop")) == pytest.approx(
        dict((c.chunk_id, s) for c, s in index.scores("loop"))
    )


def test_scores_equal_rank_bm25_on_a_larger_corpus():
    """The postings-based scorer gives exactly rank_bm25's get_scores, filters included."""
    rng = np.random.default_rng(11)
    vocab = [f"term{i}" for i in range(300)] + ["loop", "method", "string", "array"]
    weights = 1.0 / np.arange(1, len(vocab) + 1)  # Zipf-like: some terms in most chunks
    weights /= weights.sum()
    texts = [" ".join(rng.choice(vocab, size=rng.integers(5, 80), p=weights)) for _ in range(240)]
    texts[7] = "the of and"  # a chunk with no terms at all
    chunks = [
        Chunk(f"d{i}", "b", i, t, i // 3, i // 3, "", "", f"ch{i // 60}", "", 0, len(t))
        for i, t in enumerate(texts)
    ]
    index = LexicalIndex.build(chunks)
    reference = BM25Okapi([tokenize(t) for t in texts])
    flt = SearchFilter(page_start=10, page_end=60, chapters=("ch1", "ch2"))
    for _ in range(25):
        query = " ".join(rng.choice(vocab, size=rng.integers(1, 6), p=weights))
        expected = reference.get_scores(tokenize(query))
        got = {c.position: s for c, s in index.scores(query)}
        assert [got[i] for i in range(len(texts))] == pytest.approx(list(expected))
        filtered = index.scores(query, flt)
        assert {c.position for c, _ in filtered} == {c.position for c in chunks if flt.accepts(c)}
        assert [s for _, s in filtered] == sorted((s for _, s in filtered), reverse=True)
        assert all(s == pytest.approx(expected[c.position]) for c, s in filtered)
