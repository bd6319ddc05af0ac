"""Train the flashcard model, an experiment off by default (build/card_model.npz).

Usage (``make train-card-model``)::

    PYTHONPATH=src python tools/train_card_model.py [--books ...] [--out FILE]
                                                   [--dump-unjudged FILE] [--lobo]

Training examples are every card candidate the study code makes from the training books
(whole books, chapter by chapter as ``bench/study_quality.py`` makes decks) whose would-be
card id has a hand verdict in ``bench/study_judgments.json`` ("the back, read alone with
the front, defines the front or answers it").  A candidate is any reading of a sentence
as a definition (also those the rules drop, :data:`~bookreader.core.study.terms.FLAGS`)
or its key statement's question; those barred as a person's name or a repeated label are
not candidates.  The held-out books (``HELD_OUT``) are never read here.

A logistic regression over :data:`~bookreader.core.study.card_model.FEATURES`
(standardised, L2, full-batch gradient descent from zero: the result is fixed), each book
weighted equally and the classes balanced.  ``--lobo`` prints leave-one-book-out figures
(trained on the other books, judged on the one left out) for the chosen threshold.  The
threshold is the one whose pooled out-of-book precision (share of kept cards judged ok)
is at least ``--precision`` while keeping the most judged-ok cards.  Prints the
figures, the weights and the file's SHA-256.

``--dump-unjudged FILE`` writes the candidates that have no verdict yet (JSON lines:
id, book, front, back, flags) for reading; nothing is trained.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

BOOKS_DIR = ROOT.parent / "shared" / "eval" / "books"
JUDGMENTS = ROOT / "bench" / "study_judgments.json"
OUT = ROOT / "build" / "card_model.npz"
#: Books whose cards were judged before any change and are kept for the final measure.
HELD_OUT = ("computing_thinkcomplexity2", "py4e")
TRAIN_BOOKS = ("thinkjava2", "philosophy_forallx", "physical_ai_textbook", "math_ladr4e",
               "biology_popgen_coop", "engineering_fluid_mechanics_duque",
               "economics_econometrics_godwin")
L2 = 3e-2
STEPS = 4000
RATE = 0.3


def book_candidates(path: Path) -> list[dict]:
    """Every candidate of the book, chapter by chapter, with its would-be card id and
    its features."""
    from bookreader.core.pdf import PdfBook
    from bookreader.core.study import chapter_scope
    from bookreader.core.study.cards import front_key, readings_of, with_features
    from bookreader.core.study.labels import repeated_labels
    from bookreader.core.study.model import stable_id
    from bookreader.core.study.names import NameEvidence
    from bookreader.core.study.source import read_sentences

    pdf = PdfBook.open(path)
    out = []
    for index, entry in enumerate(pdf.toc):
        if entry.level != 1:
            continue
        scope = chapter_scope(list(pdf.toc), index, pdf.page_count)
        if scope.last - scope.first + 1 > 120:
            continue
        read = read_sentences(pdf, scope.first, scope.last)
        sentences = [s for s in read.sentences if s.chapter == scope.chapter] or read.sentences
        headings = [e.title for e in pdf.toc]
        headings += list(dict.fromkeys(h for s in read.sentences for h in (s.chapter, s.section)))
        names = NameEvidence((s.text for s in read.sentences), headings)
        per_sentence = readings_of(sentences, names=names,
                                   labels=lambda: repeated_labels(pdf))
        for row in with_features(per_sentence, sentences, names):
            for c, x in row:
                out.append({
                    "id": stable_id(pdf.book_id, c.kind, front_key(c.front), c.back),
                    "book": path.stem, "front": c.front, "back": c.back, "flags": c.flags,
                    "form": c.form, "x": x})
    pdf.close()
    return out


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray, float]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    coef = np.zeros(x.shape[1])
    bias = 0.0
    w = w / w.sum()
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(z @ coef + bias)))
        g = (p - y) * w
        coef -= RATE * (z.T @ g + L2 * coef)
        bias -= RATE * float(g.sum())
    return mean, scale, coef, bias


def weights_for(books: list[str], y: np.ndarray) -> np.ndarray:
    """Each book weighs the same, and within it each class half."""
    w = np.zeros(len(y))
    arr = np.array(books)
    for b in set(books):
        for cls in (0, 1):
            m = (arr == b) & (y == cls)
            if m.any():
                w[m] = 1.0 / m.sum()
    return w


def predict(model, x: np.ndarray) -> np.ndarray:
    mean, scale, coef, bias = model
    return 1.0 / (1.0 + np.exp(-(((x - mean) / scale) @ coef + bias)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--books", nargs="+", default=list(TRAIN_BOOKS))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--judgments", type=Path, default=JUDGMENTS)
    ap.add_argument("--precision", type=float, default=0.92,
                    help="least pooled out-of-book share of kept cards judged ok")
    ap.add_argument("--dump-unjudged", type=Path)
    ap.add_argument("--lobo", action="store_true")
    ap.add_argument("--features-cache", type=Path,
                    help="read the candidates from this JSON file when it exists, else "
                    "write them there (for trying settings; delete it after code changes)")
    args = ap.parse_args(argv)
    if set(args.books) & set(HELD_OUT):
        print(f"{', '.join(HELD_OUT)} are held out: not trained on.", file=sys.stderr)
        return 2
    from bookreader.core.study.card_model import FEATURES

    verdicts = json.loads(args.judgments.read_text(encoding="utf-8"))
    if args.features_cache and args.features_cache.exists():
        rows = json.loads(args.features_cache.read_text(encoding="utf-8"))
    else:
        rows = [r for b in args.books for r in book_candidates(BOOKS_DIR / f"{b}.pdf")]
        if args.features_cache:
            args.features_cache.write_text(json.dumps(rows), encoding="utf-8")
    if args.dump_unjudged:
        with args.dump_unjudged.open("w", encoding="utf-8") as f:
            for r in rows:
                if r["id"] not in verdicts:
                    f.write(json.dumps({k: r[k] for k in ("id", "book", "front", "back",
                                                          "flags", "form")},
                                       ensure_ascii=False) + "\n")
        return 0
    seen: set[str] = set()
    data = []
    for r in rows:
        if r["id"] in verdicts and r["id"] not in seen:
            seen.add(r["id"])
            data.append(r)
    x = np.array([r["x"] for r in data], dtype=np.float64)
    y = np.array([1.0 if verdicts[r["id"]]["ok"] else 0.0 for r in data])
    books = [r["book"] for r in data]
    print(f"{len(data)} judged candidates ({int(y.sum())} ok) from {len(set(books))} books")

    # leave one book out: out-of-book probabilities for every judged candidate
    oob = np.zeros(len(y))
    arr = np.array(books)
    for b in sorted(set(books)):
        test = arr == b
        model = fit(x[~test], y[~test], weights_for(list(arr[~test]), y[~test]))
        oob[test] = predict(model, x[test])
    best = (0.5, -1)
    for t in np.arange(0.05, 0.96, 0.01):
        kept = oob >= t
        ok = int((kept & (y == 1)).sum())
        prec = ok / kept.sum() if kept.any() else 0.0
        if prec >= args.precision and ok > best[1]:
            best = (float(t), ok)
    threshold = round(best[0], 2)
    if args.lobo:
        from bookreader.core.study.card_model import FEATURES as names
        rules = x[:, names.index("rule_choice")] > 0
        print(f"rules' own choice among these: {int(rules.sum())} kept, "
              f"{int((rules & (y == 1)).sum())} ok")
        print("| threshold | kept | ok kept | precision | recall |\n|---|---|---|---|---|")
        for t in np.arange(0.1, 0.91, 0.05):
            kept = oob >= t
            ok = int((kept & (y == 1)).sum())
            print(f"| {t:.2f} | {int(kept.sum())} | {ok} | "
                  f"{100 * ok / max(1, kept.sum()):.0f} % | {100 * ok / y.sum():.0f} % |")
        print("| book left out | judged | ok | kept | kept ok (precision) | ok kept (recall) |")
        print("|---|---|---|---|---|---|")
        for b in sorted(set(books)) + ["pooled"]:
            m = np.ones(len(y), bool) if b == "pooled" else arr == b
            kept = m & (oob >= threshold)
            ok_kept = int((kept & (y == 1)).sum())
            print(f"| {b} | {int(m.sum())} | {int(y[m].sum())} | {int(kept.sum())} | "
                  f"{ok_kept} ({100 * ok_kept / max(1, kept.sum()):.0f} %) | "
                  f"{100 * ok_kept / max(1, y[m].sum()):.0f} % |")
    mean, scale, coef, bias = fit(x, y, weights_for(books, y))
    print(f"threshold {threshold} (out-of-book precision >= {args.precision})")
    for name, c in sorted(zip(FEATURES, coef), key=lambda p: -abs(p[1]))[:15]:
        print(f"  {name:<28} {c:+.2f}")
    buf = io.BytesIO()
    np.savez(buf, features=np.array(FEATURES), mean=mean, scale=scale, weights=coef,
             bias=np.float64(bias), threshold=np.float64(threshold))
    blob = buf.getvalue()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    print(f"wrote {args.out} ({len(blob)} bytes), SHA-256 {hashlib.sha256(blob).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
