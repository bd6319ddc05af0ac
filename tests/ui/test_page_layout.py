"""Geometry of the page column and word-snapped selection, without widgets."""

from __future__ import annotations

from bookreader.core.types import Word
from bookreader.ui.page_cache import FindResults
from bookreader.ui.page_layout import (PAGE_GAP, PageLayout, WordRef, join_words, line_rects,
                                       selected_refs, word_at)

WORDS = [
    Word("Cells", (10, 10, 40, 20), 0, 0, 0),
    Word("divide", (45, 10, 80, 20), 0, 0, 1),
    Word("often.", (10, 25, 45, 35), 0, 1, 2),
    Word("Next", (10, 60, 35, 70), 1, 0, 3),
]


def test_layout_stacks_pages_and_maps_points_both_ways():
    layout = PageLayout([(600, 800), (600, 800), (300, 400)])
    layout.set_viewport_width(1000)
    layout.set_scale(0.5)
    x0, y0, w0, h0 = layout.page_rect(0)
    _, y1, _, _ = layout.page_rect(1)
    assert (w0, h0) == (300, 400) and y1 == y0 + h0 + PAGE_GAP
    assert layout.page_at_y(y1 + 10) == 1
    assert list(layout.visible_pages(y0, y1 + 5)) == [0, 1]
    cx, cy = layout.to_content(1, 100, 200)
    assert layout.to_page(1, cx, cy) == (100, 200)


def test_word_at_hits_and_snaps_to_the_line_beside_the_point():
    assert word_at(WORDS, 50, 15).text == "divide"
    assert word_at(WORDS, 300, 30).text == "often."  # far right of the second line
    assert word_at(WORDS, 300, 30, snap=False) is None


def test_selection_runs_in_reading_order_and_joins_lines_and_blocks():
    words = {0: WORDS, 1: [Word("Second", (10, 10, 50, 20), 0, 0, 0)]}
    items = selected_refs(WordRef(1, 0), WordRef(0, 1), words)  # dragged backwards
    assert [w.text for _, w in items] == ["divide", "often.", "Next", "Second"]
    assert join_words(items) == "divide\noften.\n\nNext\n\nSecond"


def test_line_rects_merge_a_line_into_one_band():
    assert line_rects(WORDS[:3]) == [(10, 10, 80, 20), (10, 25, 45, 35)]


def test_find_results_keep_the_current_hit_while_pages_arrive():
    found = FindResults("energy")
    assert found.add(3, [(1, 2, 3, 4)]) is True  # the first hit becomes current
    assert found.add(1, [(5, 6, 7, 8), (9, 9, 9, 9)]) is False
    assert found.current_hit() == (3, (1, 2, 3, 4))
    assert found.total == 3
    assert found.step(1) == (1, (5, 6, 7, 8))  # wraps to the start of the book
