"""``python tools/study_screenshots.py --book PDF --chapter TITLE``: pictures of the Study panel.

Opens the book in the real window (library in its own process, as in the app), waits for
its index, picks the outline entry ``--chapter`` in the Study panel and writes to ``--out``
(default ``docs/screenshots``):

1. ``study-panel.png``: the chapter's flashcards, the first card flipped with its source;
2. ``study-card-citation.png``: that card's citation followed: the page with the excerpt
   highlighted;
3. ``study-quiz-result.png``: a quiz on the chapter, answered (all right but the second)
   and checked: every item with its verdict and citation.

Offscreen by default (or under Xvfb); ``--data-dir`` keeps the index between runs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshots import _pump, _settle  # noqa: E402
from window_trial import (HEIGHT, WIDTH, Trial, _choose_platform,  # noqa: E402
                          _default_app, _settings_for)

REPO = Path(__file__).resolve().parent.parent


def _answer_quiz(view) -> None:
    """Every item right but the second, as a student's attempt looks."""
    for n, w in enumerate(view.items):
        right = n != 1
        if w.edit is not None:
            w.edit.setText(w.item.answer if right else "a wrong guess")
            continue
        for b in w.group.buttons():
            if (b.text() == w.item.answer) == right:
                b.setChecked(True)
                break


def shoot(book: Path, chapter: str, out: Path, data_dir: Path | None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bookreader-study-shots-") as tmp:
        _choose_platform(Path(tmp))
        data = data_dir or Path(tmp) / "data"
        settings = _settings_for(data, "extractive", data_dir is None)
        ctx = _default_app(settings)
        win, qapp = ctx.window, ctx.qapp
        written: list[Path] = []
        try:
            win.resize(WIDTH, HEIGHT)
            win.show()
            win.default_dock_sizes()
            Trial(ctx, out, print).open_book(book, 1800)
            panel = win.study
            _pump(qapp, lambda: panel.book_id is not None, 120, "the Study panel's book")
            win.study_dock.show()
            win.study_dock.raise_()
            index = next(i for i, e in enumerate(panel.toc) if e.title == chapter)
            panel.choose_entry(index)
            made: list = []
            panel.set_ready.connect(made.append)
            panel.generate("cards")
            _pump(qapp, lambda: bool(made), 300, "the flashcards")
            panel.cards_view.flip()
            _settle(qapp, 1.0)
            written.append(out / "study-panel.png")
            win.grab().save(str(written[-1]))

            card = made[-1].cards[0]
            shown: list = []
            win.reader.citation_shown.connect(shown.append)
            chip = panel.cards_view.chip_row.itemAt(0).widget()
            chip.click()
            _pump(qapp, lambda: bool(shown) and win.reader.is_page_rendered(card.citation.page),
                  60, "the cited page")
            _settle(qapp, 1.5)
            written.append(out / "study-card-citation.png")
            win.grab().save(str(written[-1]))

            panel.generate("quiz")
            _pump(qapp, lambda: len(made) > 1, 300, "the quiz")
            _answer_quiz(panel.quiz_view)
            panel.quiz_view.check()
            _settle(qapp, 1.0)
            written.append(out / "study-quiz-result.png")
            win.grab().save(str(written[-1]))
        finally:
            win.close()
            ctx.lock.unlock()
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--book", type=Path, required=True)
    ap.add_argument("--chapter", required=True, help="an outline entry's exact title")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    ap.add_argument("--data-dir", type=Path)
    args = ap.parse_args(argv)
    for path in shoot(args.book, args.chapter, args.out, args.data_dir):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
