"""Fixtures for the window tests: a generated book with known words, and the whole app
built offscreen with a recording message sink (no dialog ever blocks a test)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"

import pytest  # noqa: E402

PAGES = [
    ("Preface", ["This small book explains how plants make and use energy.",
                 "Read it with BookReader and ask questions about any page."]),
    ("Chapter 1 Photosynthesis", [
        "Photosynthesis converts light energy into chemical energy.",
        "Plants store this energy in glucose molecules.",
        "Chlorophyll in the chloroplasts absorbs red and blue light.",
        "Oxygen is released as a by-product of splitting water."]),
    ("1.1 The light reactions", [
        "The light reactions take place in the thylakoid membranes.",
        "They produce ATP and NADPH for the Calvin cycle.",
        "Water molecules are split to replace lost electrons."]),
    ("Chapter 2 Respiration", [
        "Cellular respiration releases the energy stored in glucose.",
        "Mitochondria produce most of the ATP a cell needs.",
        "Respiration uses oxygen and gives off carbon dioxide."]),
]


def make_book(path: Path, *, password: str | None = None) -> Path:
    """A four-page PDF: labels i, 1, 2, 3; an outline; one sentence per line."""
    import fitz

    doc = fitz.open()
    for heading, lines in PAGES:
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 90), heading, fontsize=18)
        for i, line in enumerate(lines):
            page.insert_text((72, 140 + i * 22), line, fontsize=12)
    doc.set_toc([[1, "Preface", 1], [1, "Chapter 1 Photosynthesis", 2],
                 [2, "1.1 The light reactions", 3], [1, "Chapter 2 Respiration", 4]])
    doc.set_page_labels([
        {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
        {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1},
    ])
    doc.set_metadata({"title": "Plants and Energy"})
    kw = {}
    if password:
        kw = dict(encryption=fitz.PDF_ENCRYPT_AES_256, user_pw=password, owner_pw=password + "!")
    doc.save(str(path), **kw)
    doc.close()
    return path


@pytest.fixture
def pdf_factory():
    """``make_book`` for tests that need a variant (encrypted...)."""
    return make_book


@pytest.fixture
def book_pdf(tmp_path) -> Path:
    return make_book(tmp_path / "plants.pdf")


@pytest.fixture
def ui_settings(settings):
    return settings.updated(llm_backend="extractive")


@pytest.fixture
def make_app(qtbot, embedder):
    """Build the app (window shown offscreen); closes it and restores the hooks after."""
    from bookreader.app import build_app
    from bookreader.library import Library
    from bookreader.ui.messages import RecordingSink

    built = []
    saved_hooks = (sys.excepthook, threading.excepthook)

    def factory(settings, sink=None):
        sink = sink if sink is not None else RecordingSink()
        ctx = build_app(["test"], settings=settings, sink=sink,
                        library_factory=lambda s: Library(s, embedder=embedder))
        qtbot.addWidget(ctx.window)
        ctx.window.resize(1400, 900)
        built.append(ctx)
        return ctx

    yield factory
    for ctx in built:
        ctx.window.close()
        ctx.lock.unlock()
    sys.excepthook, threading.excepthook = saved_hooks
    import faulthandler

    faulthandler.enable(file=sys.__stderr__)  # build_app pointed it at the data folder's logs
    import logging

    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_bookreader", False):
            root.removeHandler(h)
            h.close()


@pytest.fixture
def opened(make_app, ui_settings, book_pdf, qtbot):
    """The app with the generated book open and its first page painted."""
    ctx = make_app(ui_settings)
    win = ctx.window
    with qtbot.waitSignal(win.reader.first_page_painted, timeout=20000):
        win.open_book(book_pdf)
    return ctx
