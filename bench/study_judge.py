"""Does the local model, asked as a judge, tell good flashcards from bad ones?

Usage::

    python bench/study_judge.py [--backend small] [--books ...] [--limit N] [--show]

For each book, the whole book's cards are made as ``bench/study_quality.py --cards 400``
makes them (chapter by chapter, a term a later chapter defines again left out) and kept
in ``bench/results/study_judge_cards.json`` (reused on the next run; ``--fresh`` makes
them again).  Every card that has a hand verdict in ``bench/study_judgments.json`` is
shown to the model with a short yes/no question (three invented worked examples, none
from a book) and P(yes) is read from the logits of the model's first answer token:
``P(Yes) / (P(Yes) + P(No))`` over the spellings of both words (temperature 0, nothing
sampled, so the figure is deterministic).

Printed: ROC AUC per book and pooled (of P(yes) against the verdict), the share of good
cards among those kept and how many are kept at a few thresholds, on the tune books
(``bench/books.py`` TUNE) and the others, and the model's seconds per card (with the
machine's load average, since other programs share the cores).  ``--limit N`` judges at
most N cards per book (the first N by id, so two tiers can be compared on the same
cards).  Writes ``bench/results/study_judge_<backend>.json`` (card id -> P(yes)).

Measured (2 cores shared with other jobs, load average 3.4-5.4; 495 of the 643 verdicts
are cards the current rules make, 438 good), ``python bench/study_judge.py --backend
small`` and ``--backend better``:

| book | split | good / judged | AUC small | AUC better |
|---|---|---|---|---|
| thinkjava2 | tune | 56/57 | 0.57 | 0.52 |
| philosophy_forallx | other | 39/41 | 0.36 | 0.99 |
| physical_ai_textbook | tune | 54/57 | 0.69 | 0.39 |
| math_ladr4e | other | 55/58 | 0.83 | 0.75 |
| biology_popgen_coop | other | 15/16 | 0.20 | 0.80 |
| engineering_fluid_mechanics_duque | other | 8/11 | 0.29 | 0.54 |
| economics_econometrics_godwin | tune | 24/30 | 0.86 | 0.93 |
| computing_thinkcomplexity2 | other | 34/59 | 0.66 | 0.73 |
| py4e | tune | 153/166 | 0.67 | 0.89 |
| pooled tune | | 287/310 | 0.70 | 0.83 |
| pooled other | | 151/185 | 0.64 | 0.78 |
| pooled all | | 438/495 | 0.70 | 0.81 |

Better tier, cards kept when P(yes) >= t (precision / share of good cards kept):
t = 0.5 (chosen on the tune books): tune 95.3 % / 91 %, other 89.3 % / 88 % (all cards:
tune 92.6 %, other 81.6 %); t = 0.6: tune 97.4 % / 77 %, other 93.4 % / 56 %.  Small
tier at 0.4: tune 93.6 % / 92 %, other 84.6 % / 87 %; at 0.5 it keeps 39 % of the other
books' good cards.  Seconds per card: small 0.97, better 1.97-2.41 (one thread).
A ~20-page chapter with the better tier judging and phrasing (``bench/study_quality.py
--books py4e thinkjava2 --cards 10 --backend better``): 63 s (py4e, 22 cards) and 45 s
(thinkjava2, 19 cards); the small tier does not judge: 9.7 s and 2.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(BENCH))

from books import TUNE  # noqa: E402
from study_quality import BOOKS_DIR, DEFAULT_BOOKS, chapter_decks, load_model  # noqa: E402

RESULTS = BENCH / "results"
CARDS_CACHE = RESULTS / "study_judge_cards.json"
#: The books with hand verdicts: the four tuned on, then five the rules were not
#: written on.
ALL_BOOKS = (*DEFAULT_BOOKS, "biology_popgen_coop", "engineering_fluid_mechanics_duque",
             "economics_econometrics_godwin", "computing_thinkcomplexity2", "py4e")
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def book_cards(path: Path, n_cards: int = 400) -> list[dict]:
    """The book's cards (id, kind, front, back) as ``study_quality.measure_book`` keeps
    them: chapters in order, chapters over 120 pages skipped, later repeats left out."""
    from bookreader.core.pdf import PdfBook
    from bookreader.core.study.cards import front_key

    pdf = PdfBook.open(path)
    cards: list[dict] = []
    seen: set[str] = set()
    try:
        for _title, _scope, made in chapter_decks(pdf):
            for c in made.cards:
                if front_key(c.front) in seen:
                    continue
                seen.add(front_key(c.front))
                cards.append({"id": c.card_id, "kind": c.kind, "front": c.front,
                              "back": c.back})
            if len(cards) >= n_cards:
                break
    finally:
        pdf.close()
    return cards[:n_cards]


def auc(scores: list[float], labels: list[bool]) -> float | None:
    """ROC AUC (ties count half); None when one class is missing."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def at_threshold(rows: list[tuple[float, bool]], t: float) -> tuple[int, int, int]:
    """(kept, kept good, good) when cards with P(yes) >= t are kept."""
    kept = [y for p, y in rows if p >= t]
    return len(kept), sum(kept), sum(y for _, y in rows)


def _fmt_auc(a: float | None) -> str:
    return "-" if a is None else f"{a:.2f}"


def report(probs: dict[str, float], by_book: dict[str, list[str]], judgments: dict) -> str:
    out = ["| book | split | judged | good | AUC |", "|---|---|---|---|---|"]
    pooled: dict[str, list[tuple[float, bool]]] = {"tune": [], "other": [], "all": []}
    for book, ids in by_book.items():
        rows = [(probs[i], bool(judgments[i]["ok"])) for i in ids if i in probs]
        if not rows:
            continue
        split = "tune" if book in TUNE else "other"
        pooled[split] += rows
        pooled["all"] += rows
        out.append(f"| {book} | {split} | {len(rows)} | {sum(y for _, y in rows)} | "
                   f"{_fmt_auc(auc([p for p, _ in rows], [y for _, y in rows]))} |")
    for name, rows in pooled.items():
        if rows:
            out.append(f"| POOLED {name} | | {len(rows)} | {sum(y for _, y in rows)} | "
                       f"{_fmt_auc(auc([p for p, _ in rows], [y for _, y in rows]))} |")
    out += ["", "| threshold | tune: kept / precision / good kept | other: kept / precision "
            "/ good kept |", "|---|---|---|"]
    for t in (0.0, *THRESHOLDS):
        cells = []
        for name in ("tune", "other"):
            kept, good_kept, good = at_threshold(pooled[name], t)
            prec = f"{100 * good_kept / kept:.1f} %" if kept else "-"
            share = f"{100 * good_kept / good:.0f} %" if good else "-"
            cells.append(f"{kept}/{len(pooled[name])} / {prec} / {share}")
        out.append(f"| {t:.1f} | {cells[0]} | {cells[1]} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="small", help="model tier (tiny, small, better)")
    ap.add_argument("--books", nargs="+", default=list(ALL_BOOKS))
    ap.add_argument("--limit", type=int, default=0, help="judge at most N cards per book")
    ap.add_argument("--judgments", type=Path, default=BENCH / "study_judgments.json")
    ap.add_argument("--fresh", action="store_true", help="make the cards again")
    ap.add_argument("--show", action="store_true", help="print each card with P(yes)")
    args = ap.parse_args(argv)
    if not BOOKS_DIR.exists():
        print(f"No evaluation books at {BOOKS_DIR}; nothing to measure.", file=sys.stderr)
        return 0
    from bookreader.core.study.judge import yes_probability

    judgments = json.loads(args.judgments.read_text(encoding="utf-8"))
    cache = ({} if args.fresh or not CARDS_CACHE.exists()
             else json.loads(CARDS_CACHE.read_text(encoding="utf-8")))
    for book in args.books:
        if book not in cache:
            started = time.perf_counter()
            cache[book] = book_cards(BOOKS_DIR / f"{book}.pdf")
            print(f"{book}: {len(cache[book])} cards made in "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
            RESULTS.mkdir(parents=True, exist_ok=True)
            CARDS_CACHE.write_text(json.dumps(cache, indent=1), encoding="utf-8")
    model, load_s = load_model(args.backend)
    out_path = RESULTS / f"study_judge_{args.backend}.json"
    probs: dict[str, float] = (json.loads(out_path.read_text(encoding="utf-8"))
                               if out_path.exists() else {})
    by_book: dict[str, list[str]] = {}
    seconds, n_asked, loads = 0.0, 0, []
    for book in args.books:
        judged = sorted((c for c in cache[book] if c["id"] in judgments),
                        key=lambda c: c["id"])
        if args.limit:
            judged = judged[:args.limit]
        by_book[book] = [c["id"] for c in judged]
        for c in judged:
            if c["id"] in probs:
                continue
            started = time.perf_counter()
            probs[c["id"]] = yes_probability(model, c["front"], c["back"])
            seconds += time.perf_counter() - started
            n_asked += 1
            if args.show:
                mark = "OK" if judgments[c["id"]]["ok"] else "NO"
                print(f"{probs[c['id']]:.2f} {mark} {c['front']!r} -> {c['back'][:120]!r}")
        loads.append(os.getloadavg()[0])
        RESULTS.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(probs, indent=1), encoding="utf-8")
    print(f"\nModel {args.backend} (load {load_s:.1f} s): {n_asked} cards judged this run, "
          f"{seconds / max(n_asked, 1):.2f} s per card, threads {model.n_threads}, "
          f"load average {min(loads, default=0):.1f}-{max(loads, default=0):.1f} "
          f"on {os.cpu_count()} cores")
    print(report(probs, by_book, judgments))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
