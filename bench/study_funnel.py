"""Where flashcard candidates are dropped, book by book: a funnel.

Usage::

    python bench/study_funnel.py [--books thinkjava2 py4e ...] [--examples N]

For each book, chapter by chapter as ``bench/study_quality.py`` makes them (outline level
1, chapters over 120 pages skipped), counts: studyable sentences -> sentences with a
reading as a definition (:func:`bookreader.core.study.terms.readings`) -> readings each
rule drops (a reading can break several; "only" counts those a single rule drops) ->
definitions and key statements (and the cards running prose gives where a sentence
defines nothing, :mod:`bookreader.core.study.prose`, by kind and form) -> after the name
and label checks -> after the card model
(with ``--model``) -> after deduplication -> after citing -> after a later chapter's
repeat.  ``--examples N`` prints N sentences a single rule dropped, per rule.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOOKS_DIR = REPO.parent / "shared" / "eval" / "books"
sys.path.insert(0, str(REPO / "src"))


def funnel(path: Path, examples: int, model=None) -> tuple[Counter, dict]:
    from bookreader.core.pdf import PdfBook
    from bookreader.core.study import chapter_scope
    from bookreader.core.study.cards import candidates, front_key, make_cards
    from bookreader.core.study.labels import repeated_labels
    from bookreader.core.study.names import NameEvidence
    from bookreader.core.study.source import Citer, read_sentences
    from bookreader.core.study.prose import prose_cards
    from bookreader.core.study.terms import question_for, readings

    pdf = PdfBook.open(path)
    n: Counter = Counter()
    shown: dict[str, list[str]] = defaultdict(list)
    seen: set[str] = set()
    for index, e in enumerate(pdf.toc):
        if e.level != 1:
            continue
        scope = chapter_scope(list(pdf.toc), index, pdf.page_count)
        if scope.last - scope.first + 1 > 120:
            n["chapters skipped (over 120 pages)"] += 1
            continue
        read = read_sentences(pdf, scope.first, scope.last)
        sentences = [s for s in read.sentences if s.chapter == scope.chapter] or read.sentences
        n["1 studyable sentences"] += len(sentences)
        defined: set[int] = set()
        for s in sentences:
            rs = list(readings(s.text, s.glossary))
            if rs:
                n["2 sentences with a reading"] += 1
            if rs and all(f for _, f in rs):
                n["3 all readings dropped by rules"] += 1
                for f in {f for _, fs in rs for f in fs}:
                    n[f"3 rule: {f}"] += 1
                if len(rs) == 1 and len(rs[0][1]) == 1:
                    n[f"3 only: {rs[0][1][0]}"] += 1
                    if len(shown[rs[0][1][0]]) < examples:
                        shown[rs[0][1][0]].append(f"{rs[0][0].term!r} <- {s.text[:160]!r}")
            elif rs:
                n["4 definitions"] += 1
                defined.add(s.position)
            elif question_for(s.text) is not None:
                n["4 key statements"] += 1
        for _, kind, _, _, _, form in prose_cards(sentences, defined):
            n[f"4 prose: {kind} ({form})"] += 1
        headings = [t.title for t in pdf.toc] + list(dict.fromkeys(
            h for s in read.sentences for h in (s.chapter, s.section)))
        names = NameEvidence((s.text for s in read.sentences), headings)
        found = candidates(sentences, names=names, labels=lambda: repeated_labels(pdf))
        n["5 after name/label checks"] += len(found)
        kept = found
        if model is not None:
            kept = candidates(sentences, names=names, labels=lambda: repeated_labels(pdf),
                              model=model)
            n["6 after the card model"] += len(kept)
        n["7 distinct fronts"] += len({front_key(c.front) for c in kept})
        cards = make_cards(sentences, Citer(pdf), pdf.book_id, names=names,
                           labels=lambda: repeated_labels(pdf), model=model)
        n["8 cited cards"] += len(cards)
        for c in cards:
            if front_key(c.front) not in seen:
                seen.add(front_key(c.front))
                n["9 cards (no later repeat)"] += 1
    pdf.close()
    return n, shown


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--books", nargs="+", default=["thinkjava2", "philosophy_forallx",
                                                   "physical_ai_textbook", "math_ladr4e"])
    ap.add_argument("--examples", type=int, default=0)
    ap.add_argument("--model", type=Path, help="card model weights (.npz) to choose the "
                    "candidates (tools/train_card_model.py); default: the rules alone")
    args = ap.parse_args(argv)
    model = None
    if args.model:
        from bookreader.core.study.card_model import load_weights

        model = load_weights(args.model)
    for b in args.books:
        n, shown = funnel(BOOKS_DIR / f"{b}.pdf", args.examples, model)
        print(f"\n## {b}")
        for k in sorted(n):
            print(f"  {k:<40} {n[k]:>6}")
        for rule, items in shown.items():
            print(f"  -- dropped only by {rule}:")
            for t in items:
                print(f"     {t}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
