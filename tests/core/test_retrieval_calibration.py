"""The per-book calibration of the retrieval confidence, on a real PDF ingested into a real
Library (Qdrant Edge shard, BM25, the bundled MiniLM).

* The calibration is measured at the end of ingest and stored in the book's folder; a book
  indexed before it existed is calibrated once, on first use, and the file written then.
* The confidence is relative to the book's own baselines (off-topic and in-book probes).
* A question that names a heading of the book, or asks what a term is that a top passage
  defines, is covered whatever its cosine; unrelated questions stay declined.
"""

from __future__ import annotations

import json

import pytest

from bookreader.config import Settings
from bookreader.core import retrieval_calibration as rc
from bookreader.core import retrieval_priors as priors_mod
from bookreader.core import retrieval_terms as rt
from bookreader.core.retrieval import HybridRetriever
from bookreader.core.retrieval_calibration import BookCalibration, Evidence
from bookreader.core.types import Chunk
from bookreader.library import Library

from pdf_factory import book_pdf

#: A small econometrics book: prose sections and one that is mostly formulas (whose
#: cosine with any question in words is low).
CHAPTERS = [
    ("1 Regression", [
        ("1.1 Ordinary Least Squares",
         "Ordinary least squares chooses the intercept and the slope that make the sum of "
         "the squared residuals as small as possible. The fitted line passes through the "
         "point of means of the two variables."),
        ("1.2 Normal Equations",
         "Let y = Xb + e. Then X'y = X'Xb, so b = (X'X)^-1 X'y when X'X is invertible; "
         "with k = 2, b1 = Sxy / Sxx and b0 = ybar - b1 xbar."),
        ("1.3 Goodness of Fit",
         "The coefficient of determination is the share of the variance of the dependent "
         "variable that the regression explains. It never falls when a regressor is added, "
         "which is why the adjusted version penalises extra regressors."),
    ]),
    ("2 Inference", [
        ("2.1 Hypothesis Tests",
         "A hypothesis test compares an estimate with the value the null hypothesis "
         "states. The p-value is the probability of a test statistic at least as extreme "
         "as the one observed if the null hypothesis is true."),
        ("2.2 Confidence Intervals",
         "A 95 percent confidence interval is the estimate plus or minus 1.96 standard "
         "errors in large samples. Intervals built this way cover the true coefficient in "
         "95 of 100 repeated samples."),
        ("2.3 Heteroskedasticity",
         "Heteroskedasticity is a variance of the errors that changes with the regressors. "
         "The estimates stay unbiased but the usual standard errors are wrong, so robust "
         "standard errors are reported instead."),
    ]),
    ("3 Exercises", [
        ("3.1 Practice Problems",
         "Exercise 1: Estimate a regression of wages on schooling. Exercise 2: Test whether "
         "the slope is zero."),
    ]),
]


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    """(settings, book id) of the book, ingested into a real library."""
    root = tmp_path_factory.mktemp("calibration")
    settings = Settings(data_dir=root / "data")
    settings.ensure_dirs()
    spec = book_pdf(root / "regression.pdf", CHAPTERS)
    with Library(settings, embedder=embedder) as lib:
        book_id = lib.ingest(spec.path).book_id
    return settings, book_id


@pytest.fixture
def library(book, embedder):
    settings, book_id = book
    lib = Library(settings, embedder=embedder)
    yield lib, book_id, settings.books_dir / book_id
    lib.close()


def _refuse_to_calibrate(monkeypatch):
    def refuse(self):
        raise AssertionError("calibrated again although the stored calibration is valid")

    monkeypatch.setattr(HybridRetriever, "calibrate", refuse)


def test_ingest_stores_the_calibration_and_the_library_reuses_it(library, monkeypatch):
    lib, book_id, folder = library
    data = json.loads((folder / rc.CALIBRATION_FILE).read_text(encoding="utf-8"))
    assert data["version"] == rc.CALIBRATION_VERSION
    assert data["headings"] >= 5  # the sections of two terms or more, not the exercises
    assert 0.0 < data["off_topic"] < data["inside"] < 1.0
    _refuse_to_calibrate(monkeypatch)
    retriever = lib.retriever(book_id)
    assert retriever.calibration == BookCalibration(**data)
    assert retriever.is_covered(retriever.search("What does ordinary least squares minimise?"))


def test_a_book_indexed_before_is_calibrated_once_on_first_use(library, embedder, monkeypatch):
    lib, book_id, folder = library
    stored = json.loads((folder / rc.CALIBRATION_FILE).read_text(encoding="utf-8"))
    (folder / rc.CALIBRATION_FILE).unlink()  # as a book indexed by an older version
    first = lib.retriever(book_id).calibration
    assert json.loads((folder / rc.CALIBRATION_FILE).read_text(encoding="utf-8")) == stored
    assert first == BookCalibration(**stored)
    # a stored file of an older version is measured again as well
    (folder / rc.CALIBRATION_FILE).write_text(json.dumps({**stored, "version": 0}))
    with Library(lib.settings, embedder=embedder) as again:
        assert again.retriever(book_id).calibration == first
    assert json.loads((folder / rc.CALIBRATION_FILE).read_text(encoding="utf-8")) == stored
    _refuse_to_calibrate(monkeypatch)  # from now on it is read, not measured
    with Library(lib.settings, embedder=embedder) as third:
        assert third.retriever(book_id).calibration == first


def test_unrelated_questions_are_declined(library):
    lib, book_id, _ = library
    retriever = lib.retriever(book_id)
    for question in ("How do I repot an orchid?", "Who won the Tour de France in 1990?",
                     "What is the best way to learn the piano as an adult?"):
        r = retriever.search(question)
        assert not retriever.is_covered(r), (question, r.confidence)


@pytest.mark.parametrize("question", [
    "Explain the normal equations",  # names a heading of mostly formulas
    "What are the normal equations?",
    "Tell me about goodness of fit",  # the former fixed formula said 0.56: not covered
])
def test_a_question_naming_a_heading_is_covered(library, monkeypatch, question):
    lib, book_id, _ = library
    retriever = lib.retriever(book_id)
    r, parts = retriever.explain(question)
    assert parts["form"] == 1.0
    assert retriever.is_covered(r), r.confidence
    assert any(h in r.passages[0].chunk.text for h in ("Normal Equations", "Goodness of Fit"))


def test_what_is_x_is_covered_when_a_top_passage_defines_x(library):
    lib, book_id, _ = library
    retriever = lib.retriever(book_id)
    r, parts = retriever.explain("What is heteroskedasticity?")
    assert parts["form"] == 1.0 and retriever.is_covered(r)
    # a term no passage defines gets no such help
    r, parts = retriever.explain("What is cointegration?")
    assert parts["form"] == 0.0


def test_covered_by_form_needs_every_term_of_a_heading_of_two_terms():
    def passage(section: str):
        from bookreader.core.types import Passage

        return Passage(Chunk("c", "b", 0, "Some text.", 0, 0, "1", "1", "", section, 0, 9),
                       0.5, 0.5, 0.0)

    def never(chunk: Chunk) -> bool:
        return False

    headings = priors_mod.chunk_heading_terms
    top = [passage("2.3 Confidence Intervals")]
    assert rt.covered_by_form("How do I read confidence intervals?", top, headings, never)
    assert not rt.covered_by_form("How confident is the estimate?", top, headings, never)
    # a heading of one term is too common to name a section
    assert not rt.covered_by_form("What is a variable?", [passage("Variables")], headings, never)


def test_the_same_evidence_means_less_in_a_book_whose_cosines_run_higher():
    low = BookCalibration(off_topic=0.10, inside=0.50, chunk_count=1, headings=10)
    high = BookCalibration(off_topic=0.20, inside=0.65, chunk_count=1, headings=10)
    e = Evidence(0.35, 0.5)
    assert high.confidence(e) < low.confidence(e)
    # the midpoint sits between the book's two baselines
    for book in (low, high):
        assert book.off_topic < book.midpoint < book.inside
    # without headings to probe, the scale falls back to the smallest gap
    bare = BookCalibration.from_probes([0.1, 0.2, 0.3], [], chunk_count=1)
    assert bare.gap == pytest.approx(rc.MIN_GAP) and bare.off_topic == 0.2


def test_heading_probes_skip_apparatus_and_one_term_headings():
    def chunk(section: str) -> Chunk:
        return Chunk("c", "b", 0, "text", 40, 40, "41", "41", "", section, 0, 4)

    chunks = [chunk(s) for s in ("4.1 Confidence Intervals", "4.2 Exercises", "Variables",
                                 "4.1 Confidence Intervals", "4.3 Robust Standard Errors")]
    probes = rc.heading_probes(chunks, priors_mod.not_a_topic, priors_mod.chunk_headings)
    assert probes == ["4.1 Confidence Intervals", "4.3 Robust Standard Errors"]
    many = [chunk(f"{i}.1 Topic number {i}") for i in range(200)]
    assert len(rc.heading_probes(many, priors_mod.not_a_topic,
                                 priors_mod.chunk_headings)) == rc.MAX_HEADING_PROBES


def test_a_specialised_word_the_book_never_uses_is_unknown(library, embedder):
    lib, book_id, _ = library
    retriever = lib.retriever(book_id)
    knows, pieces = retriever.lexical.knows, embedder.count_tokens
    assert rt.unknown_word("cointegration", knows, pieces)  # a term of the field, not here
    assert rt.unknown_word("ARIMA", knows, pieces)
    assert not rt.unknown_word("heteroskedasticity", knows, pieces)  # the book uses it
    assert not rt.unknown_word("plain", knows, pieces)  # an everyday word
    assert not rt.unknown_word("0/1", knows, pieces)
    r, parts = retriever.explain("How do I test for cointegration with the Engle-Granger test?")
    assert parts["unknown"] == 1.0 and not retriever.is_covered(r)
    assert retriever.explain("How do robust standard errors help?")[1]["unknown"] == 0.0
