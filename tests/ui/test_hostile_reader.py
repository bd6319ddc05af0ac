"""The reader window opens a file only after the sandbox has read it: a PDF that crashes
MuPDF is refused with a message (the window stays up), and a decompression-bomb page is a
placeholder that says why, never parsed in the window's process."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))

from hostile_pdfs import bomb_pdf, deep_outline_pdf  # noqa: E402


def test_deep_outline_is_refused_and_the_window_stays_up(make_app, ui_settings, tmp_path, qtbot):
    deep = deep_outline_pdf(tmp_path / "deep.pdf", 60_000)
    ctx = make_app(ui_settings)
    with qtbot.waitSignal(ctx.window.document.open_failed, timeout=60000):
        ctx.window.open_book(deep)
    [(_title, message)] = ctx.sink.errors
    assert "could not be read safely" in message and "outline is nested too deeply" in message
    assert not ctx.sink.crashes
    assert ctx.window.reader.meta is None and ctx.window.isVisible()


def test_bomb_page_is_a_placeholder_saying_why(make_app, ui_settings, tmp_path, qtbot):
    bomb = bomb_pdf(tmp_path / "bomb.pdf", 80)
    ctx = make_app(ui_settings)
    with qtbot.waitSignal(ctx.window.document.page_failed, timeout=60000) as blocker:
        ctx.window.open_book(bomb)
    page, message = blocker.args
    assert page == 0
    assert "is not shown" in message and "decompression bomb" in message
    assert not ctx.sink.crashes
