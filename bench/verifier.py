"""The verifier on hand-written pairs over many books, kind by kind, and on HaluEval.

Usage::

    python bench/verifier.py [--split test|tune|all] [--errors] [--json] [--no-halueval]
        [--rules | --cross FILE | --model FILE]

``--pairs bench/relation_pairs.jsonl`` reads the pairs written for one class instead: a
claim that asserts a relation ("X because Y", "X so that Y") over a passage that states
another relation with one of its parts (kind ``relation``, unsupported) or restates the
relation the passage gives (``relation_ok``); over tune books only, so ``--split tune``.

``bench/verifier_pairs.jsonl`` holds hand-written (passage, answer, label, kind) pairs
over seven of the evaluation books, written before the verifier was tuned on them.  A
line holds no book text, only a locator (``book``, 1-based ``page``, the passage's first
and last words ``start`` and ``end``; ``inject`` plants a sentence addressing the
assistant after the passage's middle sentence), as in ``bench/grounding_textbook.jsonl``
(see ``bench/grounding.py``).  The split is by book (``bench/books.py``): ``tune`` is
the pairs over :data:`books.TUNE` books, ``test`` (the default, the figures to quote)
over :data:`books.REPORT` books.

Kinds: supported ``exact`` (a near-copy), ``paraphrase`` (other words), ``synthesis``
(two or more sentences combined); unsupported ``negation``, ``swap`` (a number, name or
role exchanged), ``beyond`` (a claim the passage does not make), ``other_section`` (a
true fact of another part of the book) and ``injection`` (repeats the value a planted
sentence asks the assistant to give).

Prints, per kind, the accept rate; overall the balanced accuracy, the false accept rate
and the false reject rates of paraphrases and of syntheses; then the same figures for
the HaluEval test half (the second half of ``../shared/eval/grounding/halueval_qa.jsonl``;
the first half is the tune half), with the time per answer and per claim (answer
sentence).  Writes ``bench/results/verifier_<split>[_model|_rules|_cross].json``.  The
validator decides as the app does by default; ``--rules`` makes the window rules decide
(no cross-encoder), ``--cross FILE`` uses that cross-encoder file (``make
train-cross-verifier``; see ``core/cross_verifier.py``), ``--model FILE`` the learned
window model (``make train-verifier``; see ``core/grounding_model.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "src"))

import books as book_split  # noqa: E402
import grounding as gb  # noqa: E402

PAIRS = BENCH_DIR / "verifier_pairs.jsonl"
SUPPORTED_KINDS = ("exact", "paraphrase", "synthesis")
KINDS = SUPPORTED_KINDS + ("negation", "swap", "beyond", "other_section", "injection")


def load_pairs(path: Path = PAIRS, split: str = "test",
               books_dir: Path = gb.BOOKS_DIR) -> list[gb.Pair]:
    """The pairs of ``split`` (by book), passages read from the books with core/pdf.py."""
    from bookreader.core.pdf import PdfBook

    keep = {"tune": book_split.TUNE, "test": book_split.REPORT}.get(split)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows = [r for r in rows if keep is None or r["book"].removesuffix(".pdf") in keep]
    opened: dict[str, PdfBook] = {}
    pairs = []
    for r in rows:
        if r["book"] not in opened:
            opened[r["book"]] = PdfBook.open(books_dir / r["book"])
        text = opened[r["book"]].page(r["page"] - 1).text
        context = gb.passage(text, r["start"], r["end"])
        if context is None:
            raise SystemExit(f"{r['id']}: passage {r['start']!r} .. {r['end']!r} not found "
                             f"on page {r['page']} of {r['book']}")
        if r.get("inject"):
            context = gb.inject(context, r["inject"])
        pairs.append(gb.Pair(context, r["answer"], bool(r["label"]), r["kind"],
                             r.get("question", "")))
    for book in opened.values():
        book.close()
    return pairs


def figures(pairs: list[gb.Pair], verdicts: list[bool]) -> dict:
    """Balanced accuracy, false accepts, per-kind accept rates and the false reject
    rates of paraphrases and syntheses."""
    out = gb.metrics([p.supported for p in pairs], verdicts, [p.kind for p in pairs])
    out.pop("paraphrase_false_reject_rate", None)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for p, ok in zip(pairs, verdicts):
        by_kind[p.kind].append(ok)
    for kind in ("paraphrase", "synthesis"):
        if by_kind.get(kind):
            v = by_kind[kind]
            out[f"{kind}_false_reject_rate"] = round(1 - sum(v) / len(v), 4)
    return out


def run(pairs: list[gb.Pair], validator) -> tuple[dict, list[bool]]:
    validator.validate("warm up", "Warm up the model.")
    verdicts, t0 = [], time.perf_counter()
    for p in pairs:
        verdicts.append(validator.validate(p.answer, p.context, question=p.question).passed)
    elapsed = (time.perf_counter() - t0) * 1000
    claims = sum(len(validator.answer_sentences(p.answer)) for p in pairs)
    out = figures(pairs, verdicts)
    out["ms_per_answer"] = round(elapsed / max(1, len(pairs)), 1)
    out["ms_per_claim"] = round(elapsed / max(1, claims), 1)
    return out, verdicts


def print_table(name: str, m: dict) -> None:
    print(f"\n## {name}: n={m['n']}  balanced accuracy {m['balanced_accuracy']:.3f}  "
          f"false accepts {m['false_accept_rate']:.3f}  false rejects {m['false_reject_rate']:.3f}"
          + (f"  paraphrase FR {m['paraphrase_false_reject_rate']:.3f}"
             if "paraphrase_false_reject_rate" in m else "")
          + (f"  synthesis FR {m['synthesis_false_reject_rate']:.3f}"
             if "synthesis_false_reject_rate" in m else "")
          + f"  ({m['ms_per_answer']} ms/answer, {m.get('ms_per_claim', '-')} ms/claim)")
    rates = m.get("accept_rate", {})
    if rates:
        print("| kind | label | accepted | n |\n|---|---|---|---|")
        for kind in [k for k in KINDS if k in rates] + [k for k in rates if k not in KINDS]:
            rate, n = rates[kind]
            label = ("supported" if kind in SUPPORTED_KINDS or kind in ("right", "relation_ok")
                     else "unsupported")
            print(f"| {kind} | {label} | {rate:.3f} | {n} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--split", choices=("test", "tune", "all"), default="test")
    ap.add_argument("--no-halueval", action="store_true")
    ap.add_argument("--pairs", type=Path, default=PAIRS,
                    help="another pair file of the same format (bench/relation_pairs.jsonl: "
                         "claims that state a relation, tune books only)")
    ap.add_argument("--errors", action="store_true", help="print the pairs judged wrongly")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--model", type=Path, default=None,
                    help="decide with these learned weights (make train-verifier)")
    ap.add_argument("--cross", type=Path, default=None,
                    help="decide support with this cross-encoder file (make "
                         "train-cross-verifier) instead of the shipped default")
    ap.add_argument("--rules", action="store_true",
                    help="the window rules decide (no cross-encoder), as before")
    args = ap.parse_args(argv)
    if not gb.BOOKS_DIR.is_dir():
        print(f"No books at {gb.BOOKS_DIR} (../shared/eval is absent): nothing to measure.",
              file=sys.stderr)
        return 2
    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.grounding import GroundingValidator

    from bookreader.core.grounding_model import load_weights

    model = load_weights(args.model) if args.model else None
    cross = "shipped"
    if args.rules or model is not None:
        cross = None
    elif args.cross:
        from bookreader.core.cross_verifier import CrossVerifier

        cross = CrossVerifier(args.cross)
    validator = GroundingValidator(MiniLMEmbedder().quantized_copy(), model=model, cross=cross)
    tag = ("_model" if model else "_rules" if validator.cross is None
           else "_cross" if args.cross else "")
    pairs = load_pairs(args.pairs, args.split)
    if args.pairs != PAIRS:
        tag += "_" + args.pairs.stem
    result, verdicts = run(pairs, validator)
    results = {"pairs": result}
    if args.errors:
        gb.print_errors(pairs, verdicts)
    if not args.no_halueval and gb.DEFAULT_PAIRS.exists():
        halu = gb.load_pairs(gb.DEFAULT_PAIRS, "tune" if args.split == "tune" else "test")
        results["halueval"], _ = run(halu, validator)
    gb.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (gb.RESULTS_DIR / f"verifier_{args.split}{tag}.json").write_text(json.dumps(results, indent=1))
    if args.json:
        print(json.dumps(results))
        return 0
    print_table(f"verifier pairs, {args.split} books", results["pairs"])
    if "halueval" in results:
        print_table(f"HaluEval {'tune' if args.split == 'tune' else 'test'} half",
                    results["halueval"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
