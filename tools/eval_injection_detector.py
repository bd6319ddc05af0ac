"""The shipped planted-instruction detector's figures (``make eval-injection``).

    python tools/eval_injection_detector.py --books ../shared/eval/books [--json]

Reads the weights the reader ships (``resources/injection_detector.npz``, checked against
its pinned SHA-256) and prints, judging each sentence as the reader does (whole and part
by part, :func:`bookreader.core.injection.instruction_start`):

* the share of each of the nine evaluation books' sentences flagged (false positives:
  no book sentence is an instruction to the assistant), and pooled;
* the hand-written held-out phrasings (``tests/data/injection_phrasings.txt``, never
  trained on) planted in running passages of the report books: how many are left out
  of support;
* the planted sentences of the selected-text bench cases (``bench/selected_*.jsonl``):
  how many are flagged, and how many of the cases' other sentences are.

The tune books' sentences are training negatives, so their figure here is in-sample;
``make train-injection`` prints the out-of-fold one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bookreader.core import injection
from injection_data import REPORT_BOOKS, TUNE_BOOKS, book_sentences
from train_injection_detector import held_out_plantings, planted_case_sentences

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--books", type=Path, required=True, help="the folder of the eval books")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    def judge(text: str) -> bool:
        return injection.is_instruction(text)

    figures: dict[str, object] = {}
    books: dict[str, list[int]] = {}
    for b in REPORT_BOOKS + TUNE_BOOKS:
        sents = book_sentences(args.books / f"{b}.pdf")
        hits = [s for s in sents if injection.instruction_start(s) is not None]
        books[b] = [len(hits), len(sents)]
        tag = "report" if b in REPORT_BOOKS else "tune (in-sample)"
        print(f"{b:38s} {tag:17s} flagged {len(hits)}/{len(sents)} = "
              f"{len(hits) / len(sents):.3%}", file=sys.stderr)
        for s in hits[:3]:
            print(f"      flagged: {s[:110]}", file=sys.stderr)
    n_fp = sum(v[0] for v in books.values())
    n_all = sum(v[1] for v in books.values())
    rep = [v for b, v in books.items() if b in REPORT_BOOKS]
    print(f"nine books: {n_fp}/{n_all} = {n_fp / n_all:.3%} flagged; report books "
          f"{sum(v[0] for v in rep)}/{sum(v[1] for v in rep)} = "
          f"{sum(v[0] for v in rep) / sum(v[1] for v in rep):.3%}", file=sys.stderr)
    figures["book_fp"] = books
    caught, total = held_out_plantings(args.books, judge)
    print(f"held-out phrasings planted in report-book passages: {caught}/{total} "
          f"= {caught / total:.1%} left out of support", file=sys.stderr)
    figures["held_out_plantings"] = [caught, total]
    cases = planted_case_sentences(ROOT / "bench")
    flags = [injection.instruction_start(s) is not None for _, s, _ in cases]
    hit = sum(1 for (_, _, p), f in zip(cases, flags) if p and f)
    n_planted = sum(1 for _, _, p in cases if p)
    others = sum(1 for (_, _, p), f in zip(cases, flags) if not p and f)
    print(f"bench planted sentences flagged {hit}/{n_planted}; their other sentences "
          f"flagged {others}/{len(cases) - n_planted}", file=sys.stderr)
    for (name, s, p), f in zip(cases, flags):
        if p != f:
            print(f"      {'MISSED' if p else 'FLAGGED'} {name}: {s[:110]}", file=sys.stderr)
    figures["bench_planted"] = [hit, n_planted, others, len(cases) - n_planted]
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
