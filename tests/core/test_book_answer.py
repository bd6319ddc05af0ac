"""The book's sentences in place of a model answer that is less likely right (issue 11:
core/answer/choose.py), for a tier with ``book_sentences`` (the default ``small``).

The model's answers are written by the fake Claude server (the one remote part, on
127.0.0.1) playing such a tier; the extractive rival, the PDF, Qdrant Edge, MiniLM, the
grounding check and the calibrated confidences are real.  One test runs the real small
tier where it is installed.
"""

from __future__ import annotations

import dataclasses

import pytest

from bookreader.config import default_data_dir
from bookreader.core import prompts, quotes
from bookreader.core.answer import choose as book_answer
from bookreader.core.answering import Answerer
from bookreader.core.llm import models, specs
from bookreader.core.types import Mode, Outcome

from biology_text import MITO, PHOTO, ROOTS
from fakes.claude_server import Behaviour, FakeClaudeServer
from indexed_book import indexed_book

CHAPTERS = [
    ("1 Cells", [("1.1 Mitochondria", MITO)]),
    ("2 Plants", [("2.1 Photosynthesis", PHOTO), ("2.2 Roots", ROOTS)]),
]
QUESTION = "Which molecule stores the energy from food?"
_SMALL_FILE = models.installed_path(specs.SMALL, default_data_dir() / "models")


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("book_answer")
    with indexed_book(root, "biology.pdf", CHAPTERS, embedder, lines_per_page=9,
                      running_header=False) as (settings, retriever, pdf):
        yield settings.updated(max_new_tokens=80), retriever, pdf


@pytest.fixture
def tier(book, embedder, monkeypatch):
    """The fake Claude answering as a tier that compares with the book's sentences."""
    from bookreader.core.answer import run as answering_module
    from bookreader.core.llm.specs import spec_for

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    real = spec_for
    spec = dataclasses.replace(spec_for("claude"), answer_quote=True, book_sentences=True)
    monkeypatch.setattr(answering_module, "spec_for",
                        lambda name: spec if name == "claude" else real(name))
    with FakeClaudeServer() as server:
        settings = book[0].updated(claude_base_url=server.url, claude_max_retries=0)
        yield server, Answerer(settings, embedder=embedder, budget_fn=lambda name: 120.0)


def _page_of(pdf, needle):
    return next(i for i in range(pdf.page_count) if needle in pdf.page(i).text)


def _ask(answerer, book, question=QUESTION, mode=Mode.BOOK, **kw):
    return answerer.ask(question, mode=mode, retriever=book[1], pages=book[2],
                        backend="claude", **kw)


def test_a_declined_answer_becomes_the_books_sentence_with_a_verified_citation(book, tier):
    server, answerer = tier
    server.queue(Behaviour.normal(prompts.NOT_COVERED))
    a = _ask(answerer, book)
    assert a.outcome is Outcome.ANSWER and not a.fallback, a.text
    assert "molecule called ATP" in a.text and quotes.QUOTES_INTRO not in a.text
    page = _page_of(book[2], "called ATP")
    assert any(c.page == page and c.verified and "called ATP" in c.excerpt for c in a.citations)
    # where the text came from is said (card and audit), and what the model wrote is kept
    assert a.model.startswith("book sentences") and "could not be verified" in a.model
    assert a.backend == "claude" and prompts.NOT_COVERED in a.raw_output
    assert a.confidence >= book_answer.MIN_CONFIDENCE
    assert a.confidence_signals["extractive"] == 1.0  # judged as the book's sentences
    assert "book_sentences" in a.stage_ms


def test_below_the_least_confidence_the_quotes_card_stays(book, tier, monkeypatch):
    server, answerer = tier
    monkeypatch.setattr(book_answer, "MIN_CONFIDENCE", 1.01)
    server.queue(Behaviour.normal(prompts.NOT_COVERED))
    a = _ask(answerer, book)
    assert a.outcome is Outcome.QUOTES and a.text.startswith(quotes.QUOTES_INTRO)
    assert not a.model.startswith("book sentences")


VERIFIED = ('Mitochondria release the energy stored in food. [Source: 1.1 Mitochondria '
            '(Page 1) - "Mitochondria release the energy stored in food"]\nConfidence: 0.9')


@pytest.mark.parametrize("margin, replaced", [(1.0, False), (-1.0, True)])
def test_a_verified_answer_is_replaced_only_when_the_book_is_the_better_bet(
        book, tier, monkeypatch, margin, replaced):
    server, answerer = tier
    monkeypatch.setattr(book_answer, "MARGIN", margin)
    server.queue(Behaviour.normal(VERIFIED))
    a = _ask(answerer, book)
    assert a.outcome is Outcome.ANSWER and not a.fallback
    assert a.model.startswith("book sentences") is replaced
    if replaced:
        assert "less likely right" in a.model and "called ATP" in a.text
        assert a.raw_output.startswith("Mitochondria release")  # the model's, for the audit
    else:
        assert a.text.startswith("Mitochondria release the energy stored in food.")
    assert all(c.verified for c in a.citations)


def test_selected_text_and_highlight_never_take_the_books_sentences(book, tier, monkeypatch):
    """The selection path touches no store; highlight keeps its page filter: neither
    compares with the extractive answer over retrieved passages."""
    server, answerer = tier
    monkeypatch.setattr(book_answer, "MIN_CONFIDENCE", 0.0)
    server.queue(Behaviour.normal(prompts.NOT_IN_SELECTION))
    s = answerer.ask("Where do plants store sugar?", mode=Mode.SELECTED, selection=MITO,
                     backend="claude")
    assert s.outcome is Outcome.NOT_IN_SELECTION and not s.model.startswith("book sentences")
    page = _page_of(book[2], "Mitochondria release")
    server.queue(Behaviour.normal(prompts.NOT_IN_SELECTION))
    h = answerer.ask("Where do plants store sugar?", mode=Mode.HIGHLIGHT, selection=MITO,
                     retriever=book[1], pages=book[2], page_range=(page, page),
                     backend="claude")
    assert not h.model.startswith("book sentences") and "carrots" not in h.text


def test_a_tier_without_the_flag_keeps_its_quotes(book, embedder, monkeypatch):
    """Claude itself (no ``book_sentences``) is never replaced."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    with FakeClaudeServer() as server:
        settings = book[0].updated(claude_base_url=server.url, claude_max_retries=0)
        answerer = Answerer(settings, embedder=embedder, budget_fn=lambda name: 120.0)
        server.queue(Behaviour.normal(prompts.NOT_COVERED))
        a = _ask(answerer, book)
    assert a.outcome is Outcome.QUOTES and not a.model.startswith("book sentences")


@pytest.mark.skipif(_SMALL_FILE is None,
                    reason="the small tier is not installed (bookreader models install small)")
def test_the_small_tier_out_of_time_answers_with_the_books_sentence(book, embedder, tmp_path):
    """The real default tier with a first-token budget it cannot meet: the book's sentence
    is the answer, and the card says the model gave none in time."""
    import os

    settings = book[0].updated(budgets={"small": {"first_token_s": 0.001}})
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    link = settings.models_dir / _SMALL_FILE.name
    if not link.exists():
        os.symlink(_SMALL_FILE, link)
    answerer = Answerer(settings, embedder=embedder)
    a = answerer.ask(QUESTION, mode=Mode.BOOK, retriever=book[1], pages=book[2],
                     backend="small")
    assert a.outcome is Outcome.ANSWER and "called ATP" in a.text, a.text
    assert a.model.startswith("book sentences") and "no answer in time" in a.model
    assert a.first_token_ms is None or a.first_token_ms >= 0
    assert all(c.verified for c in a.citations)


def test_the_least_confidence_follows_the_recalibration():
    """The threshold was chosen on the scale before the stop-23 recalibration (0.4): it is
    the same threshold on today's scale, so the recalibration changes what the answers
    say of themselves, not which answer is shown.  And one shift for both sets keeps the
    model-versus-book comparison as it was."""
    import math

    from bookreader.core import confidence

    logit = math.log(0.4 / 0.6) + confidence.RECALIBRATION
    assert book_answer.MIN_CONFIDENCE == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-4)
    model, book = confidence.COEFFICIENTS["model"], confidence.COEFFICIENTS["book"]
    signals = {"generation": 0.7, "answer_type": 0.1, "relevance": 0.6, "coverage": 0.5,
               "length": 0.4}
    as_model = confidence.calibrated(signals, model)
    as_book = confidence.calibrated(signals, book)
    before = {name: dict(c, intercept=c["intercept"] - confidence.RECALIBRATION)
              for name, c in (("model", model), ("book", book))}
    assert (as_model > as_book) == (confidence.calibrated(signals, before["model"])
                                    > confidence.calibrated(signals, before["book"]))
    assert as_model > confidence.calibrated(signals, before["model"])
