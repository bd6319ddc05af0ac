"""The selected-text and highlight guarantees hold with every backend a student can choose.

Zero leakage must not depend on the model.  In selected-text mode no store, retriever or
database is touched and the prompt holds the selection only; in highlight mode the prompt
holds the selection and passages of the selection's own pages only; and whatever a model
writes from its own knowledge must not get past the check.  Checked with the extractive
backend, the bundled tiny tier, the small and better tiers where they are installed
(``make install`` installs small; the tests skip a tier that is not, saying how to install
it) and Claude through the local fake server, playing a model that "knows" the secret
kept on another page of the book.
"""

from __future__ import annotations

import os
import sqlite3

import pytest

from bookreader.config import Settings, default_data_dir
from bookreader.core import prompts
from bookreader.core.answering import Answerer
from bookreader.core.llm import models, specs
from bookreader.core.types import Mode, Outcome

from fakes.claude_server import Behaviour, FakeClaudeServer
from pdf_factory import book_pdf

SECRET = "QX-7741"
MITO = ("Mitochondria release the energy stored in food. The energy is stored in a molecule "
        "called ATP. Cells that need much energy, such as muscle cells, hold many mitochondria.")
PHOTO = ("Photosynthesis takes place in the chloroplasts of leaf cells. Chlorophyll absorbs red "
         "and blue light and reflects green light. Plants release oxygen as a by-product.")
HARBOUR = ("The harbour was quiet in the early morning. Fishing boats returned with their nets "
           "folded. ")
CHAPTERS = [
    ("1 Cells", [("1.1 Mitochondria", MITO)]),
    ("2 Plants", [("2.1 Photosynthesis", PHOTO)]),
    ("3 Harbours", [("3.1 Vaults", f"{HARBOUR} The Zanzibar vault opens only with the brass "
                                   f"code {SECRET}. {HARBOUR}")]),
]
QUESTION = "Which code opens the Zanzibar vault?"
#: What Claude is made to answer: the secret, with a citation of the selection.
LEAK = (f"The Zanzibar vault opens with the brass code {SECRET}. "
        f'[Source: Selected text - "The energy is stored in a molecule called ATP"]')

# Found before the tests' own data folders replace the user's (where `make install` puts it).
_USER_MODELS = default_data_dir() / "models"
TIER_FILES = {spec.name: models.installed_path(spec, _USER_MODELS)
              for spec in (specs.SMALL, specs.BETTER)}


def _tier(name: str):
    return pytest.param(name, id=name, marks=pytest.mark.skipif(
        TIER_FILES[name] is None,
        reason=f"the {name} tier is not installed (bookreader models install {name})"))


BACKENDS = ["extractive", "bundled", _tier("small"), _tier("better"), "claude"]


@pytest.fixture(scope="module")
def book(tmp_path_factory, embedder):
    from bookreader.library import Library

    root = tmp_path_factory.mktemp("guarantees")
    generous = {"first_token_s": 300.0}  # a loaded CI machine must not time out
    settings = Settings(data_dir=root / "data").updated(
        budgets={"tiny": generous, "small": generous, "better": generous},
        max_new_tokens=80, claude_max_retries=0,
    )
    settings.ensure_dirs()
    for path in TIER_FILES.values():
        if path is not None:  # the tier's file, linked as `bookreader models install` puts it
            os.symlink(path, settings.models_dir / path.name)
    spec = book_pdf(root / "biology.pdf", CHAPTERS, lines_per_page=9, running_header=False)
    lib = Library(settings, embedder=embedder)
    info = lib.ingest(spec.path)
    yield settings, spec, lib.retriever(info.book_id), lib.open_pdf(info.book_id)
    lib.close()


@pytest.fixture()
def ask(book, embedder, monkeypatch):
    """``ask(backend, **kwargs)``: the answer, with Claude's reply set to :data:`LEAK`."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    with FakeClaudeServer() as server:
        settings = book[0].updated(claude_base_url=server.url)
        answerer = Answerer(settings, embedder=embedder, budget_fn=lambda name: (300.0, 300.0))

        def run(backend: str, **kwargs):
            server.queue(Behaviour.normal(LEAK))
            return answerer.ask(QUESTION, backend=backend, **kwargs)

        yield run


@pytest.mark.parametrize("backend", BACKENDS)
def test_selected_text_touches_no_store_and_leaks_nothing(book, ask, monkeypatch, backend):
    import bookreader.core.retrieval as retrieval_mod
    import bookreader.core.store.base as store_base

    def forbidden(*a, **k):
        raise AssertionError("store, retriever or database used in selected-text mode")

    monkeypatch.setattr(store_base, "open_store", forbidden)
    monkeypatch.setattr(retrieval_mod.HybridRetriever, "search", forbidden)
    monkeypatch.setattr(sqlite3, "connect", forbidden)
    a = ask(backend, mode=Mode.SELECTED, selection=MITO)
    assert not a.error and a.retrieval is None
    assert all(SECRET not in m.content and "Zanzibar vault opens" not in m.content
               for m in a.prompt[1:])  # the system prompt is the rules; the rest is data
    assert SECRET not in a.text
    assert all(c.section == "Selected text" for c in a.citations)
    # The selection does not say it: the fixed sentence, or (a model's free choice) an
    # answer every sentence of which the check found in the selection.
    assert a.outcome is Outcome.NOT_IN_SELECTION and a.text == prompts.NOT_IN_SELECTION or (
        a.outcome is Outcome.ANSWER and a.validation is not None and a.validation.passed)
    if backend == "claude":
        assert SECRET in a.raw_output and a.replaced_by_validator  # the leak was stopped


@pytest.mark.parametrize("backend", BACKENDS)
def test_highlight_reads_only_the_selections_pages(book, ask, backend):
    settings, spec, retriever, pdf = book
    start, end = spec.chapter_pages["1 Cells"], spec.chapter_pages["2 Plants"] - 1
    secret_page = next(i for i in range(pdf.page_count) if SECRET in pdf.page(i).text)
    assert not start <= secret_page <= end
    a = ask(backend, mode=Mode.HIGHLIGHT, selection=MITO, retriever=retriever, pages=pdf,
            page_range=(start, end))
    assert not a.error and a.retrieval is not None
    assert a.retrieval.filter.page_start == start and a.retrieval.filter.page_end == end
    assert all(start <= p.chunk.page_start and p.chunk.page_end <= end
               for p in a.retrieval.passages)
    assert all(SECRET not in m.content for m in a.prompt)
    assert SECRET not in a.text
    assert all(c.page == -1 or start <= c.page <= end for c in a.citations)
    if backend != "claude":
        assert SECRET not in a.raw_output  # the model never saw it
    else:
        assert a.replaced_by_validator and a.fallback
