"""How well the grounding validator tells supported answers from invented ones.

Usage::

    python bench/grounding.py [--pairs FILE.jsonl] [--split all|tune|test] [--json]
    python bench/grounding.py --textbook [--split tune|test]   # the textbook set
    python bench/grounding.py --tune            # grid search on both tune halves

``--pairs`` lines are ``{"context", "answer", "supported": bool}`` (other fields ignored).
Three other formats are converted on the fly:

* HaluEval QA (``knowledge``, ``question``, ``right_answer``, ``hallucinated_answer``; the
  default, ``../shared/eval/grounding/halueval_qa.jsonl``): the right answer is supported
  by the knowledge, the hallucinated one is not.  ``--split tune`` takes the first half
  of the items (used to choose the thresholds), ``--split test`` the second half.
* RGB (``positive``, ``positive_wrong``, ``answer``, ``fakeanswer``): four pairs per item,
  grounding meaning "said by the context", not "true": the positive passages support the
  answer and not the fake answer; the passages with the planted false answer support the
  fake answer and not the real one.
* The textbook set (``bench/grounding_textbook.jsonl``, ``--textbook``): hand-written
  answers over passages of the three shared books.  A line holds no book text, only a
  locator: ``book`` (file name in ``../shared/eval/books``), ``page`` (1-based physical
  page), ``start`` and ``end`` (the passage's first and last words; whitespace is
  ignored when matching), optionally ``inject`` (an instruction planted after the
  passage's middle sentence, for injection cases) and ``question``; then ``answer``,
  ``label`` and ``kind``.  The passage is read with the project's own ``core/pdf.py``.
  Split: within each kind, pairs ordered by the SHA-1 of their id alternate tune/test;
  a line with ``"split": "tune"`` (pairs added later, so that adding them moves no
  existing pair between the halves) belongs to that half only.

Metrics: ``balanced_accuracy`` (mean of the true-accept and true-reject rates),
``false_accept_rate`` (unsupported answers that pass), ``false_reject_rate`` (supported
answers that fail), ``paraphrase_false_reject_rate`` (textbook set: correct paraphrases
and syntheses that fail), ``accept_rate`` per kind, ``ms_per_answer`` (validate() wall
time after a warm-up, the context's embeddings cached across the answers of a context as
in the answerer) and ``n``.  The question is passed to the validator where the pair has
one (the tautology check).  Prints a table, or JSON with ``--json``; writes
``bench/results/grounding_<name>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterable, NamedTuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
EVAL_DIR = BENCH_DIR.parent.parent / "shared" / "eval"
DEFAULT_PAIRS = EVAL_DIR / "grounding" / "halueval_qa.jsonl"
TEXTBOOK_PAIRS = BENCH_DIR / "grounding_textbook.jsonl"
BOOKS_DIR = EVAL_DIR / "books"
#: Kinds whose false rejects the paraphrase target (<= 15 %) counts.
PARAPHRASE_KINDS = ("paraphrase", "synthesis")


class Pair(NamedTuple):
    context: str
    answer: str
    supported: bool
    kind: str = ""
    question: str = ""


def _first(value) -> str:
    while isinstance(value, list):
        value = value[0] if value else ""
    return str(value)


def convert(row: dict) -> list[Pair]:
    """The pairs of one input line (HaluEval, RGB or plain)."""
    if "knowledge" in row and "right_answer" in row:
        q = row.get("question", "")
        return [
            Pair(row["knowledge"], row["right_answer"], True, "right", q),
            Pair(row["knowledge"], row["hallucinated_answer"], False, "hallucinated", q),
        ]
    if "positive" in row and "fakeanswer" in row:
        pos = " ".join(row["positive"])
        wrong = " ".join(row.get("positive_wrong") or [])
        answer, fake = _first(row["answer"]), _first(row["fakeanswer"])
        q = row.get("query", "")
        pairs = [Pair(pos, answer, True, "answer", q), Pair(pos, fake, False, "fake", q)]
        if wrong:
            pairs += [Pair(wrong, fake, True, "fake_in_context", q),
                      Pair(wrong, answer, False, "answer_not_in_context", q)]
        return pairs
    return [Pair(row["context"], row["answer"], bool(row["supported"]), row.get("kind", ""),
                 row.get("question", ""))]


def load_pairs(path: Path, split: str = "all") -> list[Pair]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    half = len(rows) // 2
    if split == "tune":
        rows = rows[:half]
    elif split == "test":
        rows = rows[half:]
    return [p for row in rows for p in convert(row)]


# --- the textbook set --------------------------------------------------------------------
def _loose(text: str) -> str:
    """A pattern for ``text`` that ignores whitespace (PDF line breaks) between characters."""
    return r"\s*".join(re.escape(c) for c in "".join(text.split()))


def passage(page_text: str, start: str, end: str) -> str | None:
    """The span of ``page_text`` from the ``start`` words through the ``end`` words."""
    m = re.search(_loose(start), page_text)
    if not m:
        return None
    e = re.search(_loose(end), page_text[m.start():])
    return page_text[m.start(): m.start() + e.end()] if e else None


def inject(context: str, instruction: str) -> str:
    """``context`` with ``instruction`` planted after its middle sentence."""
    from bookreader.core.sentences import split_sentences

    sents = split_sentences(context)
    anchor = sents[max(0, len(sents) // 2 - 1)]
    at = context.find(anchor) + len(anchor)
    return f"{context[:at]}\n\n{instruction}\n\n{context[at:].lstrip()}"


def textbook_split(rows: list[dict], split: str) -> list[dict]:
    """Within each kind, rows ordered by the SHA-1 of their id alternate tune, test."""
    if split == "all":
        return rows
    by_kind: dict[str, list[dict]] = defaultdict(list)
    keep = []
    for r in rows:
        if r.get("split"):  # added later to one half explicitly; the others keep their half
            if r["split"] == split:
                keep.append(r)
            continue
        by_kind[r["kind"]].append(r)
    for kind_rows in by_kind.values():
        kind_rows.sort(key=lambda r: hashlib.sha1(r["id"].encode()).hexdigest())
        keep += kind_rows[(0 if split == "tune" else 1)::2]
    order = {r["id"]: i for i, r in enumerate(rows)}
    return sorted(keep, key=lambda r: order[r["id"]])


def load_textbook(path: Path, split: str = "all", books_dir: Path = BOOKS_DIR) -> list[Pair]:
    """The textbook pairs, their passages read from the shared books with core/pdf.py."""
    from bookreader.core.pdf import PdfBook

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = textbook_split(rows, split)
    books: dict[str, PdfBook] = {}
    pairs = []
    for r in rows:
        if r["book"] not in books:
            books[r["book"]] = PdfBook.open(books_dir / r["book"])
        text = books[r["book"]].page(r["page"] - 1).text
        context = passage(text, r["start"], r["end"])
        if context is None:
            raise SystemExit(f"{r['id']}: passage {r['start']!r} .. {r['end']!r} not found on "
                             f"page {r['page']} of {r['book']}")
        if r.get("inject"):
            context = inject(context, r["inject"])
        pairs.append(Pair(context, r["answer"], bool(r["label"]), r["kind"], r.get("question", "")))
    for book in books.values():
        book.close()
    return pairs


# --- metrics -----------------------------------------------------------------------------
def metrics(labels: Iterable[bool], verdicts: Iterable[bool], kinds: Iterable[str] = ()) -> dict:
    tp = fn = tn = fp = 0
    labels, verdicts, kinds = list(labels), list(verdicts), list(kinds)
    for gold, ok in zip(labels, verdicts):
        if gold and ok:
            tp += 1
        elif gold:
            fn += 1
        elif ok:
            fp += 1
        else:
            tn += 1
    pos, neg = tp + fn, tn + fp
    tpr = tp / pos if pos else 0.0
    tnr = tn / neg if neg else 0.0
    out = {
        "balanced_accuracy": round((tpr + tnr) / 2, 4),
        "false_accept_rate": round(fp / neg if neg else 0.0, 4),
        "false_reject_rate": round(fn / pos if pos else 0.0, 4),
        "n": pos + neg,
    }
    if kinds:
        per: dict[str, list[bool]] = defaultdict(list)
        for kind, ok in zip(kinds, verdicts):
            per[kind].append(ok)
        out["accept_rate"] = {k: [round(sum(v) / len(v), 3), len(v)] for k, v in sorted(per.items())}
        para = [ok for kind, ok in zip(kinds, verdicts) if kind in PARAPHRASE_KINDS]
        if para:
            out["paraphrase_false_reject_rate"] = round(1 - sum(para) / len(para), 4)
    return out


def run(pairs: list[Pair], validator) -> tuple[dict, list[bool]]:
    validator.validate("warm up", "Warm up the model.")
    verdicts, total_ms = [], 0.0
    for p in pairs:
        t0 = time.perf_counter()
        v = validator.validate(p.answer, p.context, question=p.question)
        total_ms += (time.perf_counter() - t0) * 1000.0
        verdicts.append(v.passed)
    out = metrics([p.supported for p in pairs], verdicts, [p.kind for p in pairs])
    out["ms_per_answer"] = round(total_ms / max(1, len(pairs)), 2)
    return out, verdicts


GRID = {
    "local_overlap_threshold": (0.7, 0.8, 0.9, 1.0),
    "paraphrase_similarity": (0.75, 0.8, 0.85, 0.9, 1.01),
    "paraphrase_min_overlap": (0.3, 0.5, 0.6),
    "contradiction_similarity": (0.7, 0.75, 0.8),
    "pair_min_similarity": (0.5, 0.6, 0.7, 1.01),
}


def tune(sets: dict[str, list[Pair]], validator) -> list[dict]:
    """Grid search over the thresholds on sentence scores computed once per set.

    Ranked by the worse of the sets' balanced accuracies, then their worst false accepts.
    """
    scored = {
        name: [(validator.score_sentences(validator.answer_sentences(p.answer), p.context,
                                          p.question), p) for p in pairs]
        for name, pairs in sets.items()
    }
    results = []
    for values in itertools.product(*GRID.values()):
        for key, value in zip(GRID, values):
            setattr(validator, key, value)
        row: dict = dict(zip(GRID, values))
        for name, items in scored.items():
            verdicts = [bool(s) and all(validator.decide(x) for x in s) for s, _ in items]
            row[name] = metrics([p.supported for _, p in items], verdicts, [p.kind for _, p in items])
        row["worst_balanced_accuracy"] = min(row[n]["balanced_accuracy"] for n in scored)
        row["worst_false_accept"] = max(row[n]["false_accept_rate"] for n in scored)
        results.append(row)
    results.sort(key=lambda m: (not _meets_targets(m), -m["worst_balanced_accuracy"],
                                m["worst_false_accept"]))
    return results


def _meets_targets(m: dict) -> bool:
    """False accepts <= 10 % on both sets, paraphrase false rejects <= 15 %."""
    return (m["worst_false_accept"] <= 0.10
            and m["textbook"].get("paraphrase_false_reject_rate", 0.0) <= 0.15)


def _print_result(name: str, split: str, result: dict) -> None:
    print("| pairs | split | n | balanced acc. | false accept | false reject "
          "| paraphrase false reject | ms/answer |")
    print("|---|---|---|---|---|---|---|---|")
    pfr = result.get("paraphrase_false_reject_rate")
    print(
        f"| {name} | {split} | {result['n']} | {result['balanced_accuracy']:.3f} | "
        f"{result['false_accept_rate']:.3f} | {result['false_reject_rate']:.3f} | "
        f"{'-' if pfr is None else f'{pfr:.3f}'} | {result['ms_per_answer']:.1f} |"
    )
    print("\n| kind | accepted | n |\n|---|---|---|")
    for kind, (rate, n) in result.get("accept_rate", {}).items():
        print(f"| {kind} | {rate:.3f} | {n} |")


def print_errors(pairs: list[Pair], verdicts: list[bool]) -> None:
    """The pairs judged wrongly, false accepts first, grouped by kind."""
    for title, wrong in (("False accepts", True), ("False rejects", False)):
        by_kind: dict[str, list[Pair]] = defaultdict(list)
        for p, ok in zip(pairs, verdicts):
            if ok != p.supported and ok is wrong:
                by_kind[p.kind].append(p)
        print(f"{title}: {sum(len(v) for v in by_kind.values())}")
        for kind, items in sorted(by_kind.items()):
            print(f"  {kind} ({len(items)}):")
            for p in items:
                print(f"    {p.answer!r}")
    print()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, default=None)
    ap.add_argument("--textbook", action="store_true", help="the textbook set (%s)" % TEXTBOOK_PAIRS.name)
    ap.add_argument("--split", choices=("all", "tune", "test"), default="all")
    ap.add_argument("--limit", type=int, default=0, help="only the first N pairs")
    ap.add_argument("--similarity", type=float, default=None)
    ap.add_argument("--overlap", type=float, default=None)
    ap.add_argument("--tune", action="store_true",
                    help="grid search on the tune halves of HaluEval and the textbook set")
    ap.add_argument("--errors", action="store_true", help="print the pairs judged wrongly")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(BENCH_DIR.parent / "src"))
    if not EVAL_DIR.is_dir():
        print(f"No evaluation material at {EVAL_DIR} (../shared/eval is absent): nothing to measure.",
              file=sys.stderr)
        return 2
    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.grounding import GroundingValidator

    kw = {}
    if args.similarity is not None:
        kw["similarity_threshold"] = args.similarity
    if args.overlap is not None:
        kw["overlap_threshold"] = args.overlap
    # The validator's own int8 copy of MiniLM, as the app uses (see MiniLMEmbedder.quantized_copy).
    validator = GroundingValidator(MiniLMEmbedder().quantized_copy(), **kw)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    if args.tune:
        sets = {"halueval": load_pairs(DEFAULT_PAIRS, "tune"),
                "textbook": load_textbook(TEXTBOOK_PAIRS, "tune")}
        results = tune(sets, validator)
        (RESULTS_DIR / "grounding_tune.json").write_text(json.dumps(results, indent=1))
        if args.json:
            print(json.dumps(results[:20], indent=1))
            return 0
        print("| local overlap | para. similarity | para. overlap | contradiction | pair sim. "
              "| HaluEval BA / FA / FR | textbook BA / FA / FR / para. FR |")
        print("|---|---|---|---|---|---|---|")
        for m in results[:15]:
            h, t = m["halueval"], m["textbook"]
            print(f"| {m['local_overlap_threshold']} | {m['paraphrase_similarity']} | "
                  f"{m['paraphrase_min_overlap']} | {m['contradiction_similarity']} | "
                  f"{m['pair_min_similarity']} | "
                  f"{h['balanced_accuracy']:.3f} / "
                  f"{h['false_accept_rate']:.3f} / {h['false_reject_rate']:.3f} | "
                  f"{t['balanced_accuracy']:.3f} / {t['false_accept_rate']:.3f} / "
                  f"{t['false_reject_rate']:.3f} / {t.get('paraphrase_false_reject_rate', 0):.3f} |")
        return 0
    if args.textbook or (args.pairs is not None and args.pairs.resolve() == TEXTBOOK_PAIRS):
        if not BOOKS_DIR.is_dir():
            print(f"No books at {BOOKS_DIR}: the textbook set cannot be rebuilt.", file=sys.stderr)
            return 2
        pairs_path = TEXTBOOK_PAIRS
        pairs = load_textbook(TEXTBOOK_PAIRS, args.split)
    else:
        pairs_path = args.pairs or DEFAULT_PAIRS
        if not pairs_path.exists():
            print(f"No pairs file at {pairs_path} (is ../shared/eval present?)", file=sys.stderr)
            return 2
        pairs = load_pairs(pairs_path, args.split)
    if args.limit:
        pairs = pairs[: args.limit]
    result, verdicts = run(pairs, validator)
    result.update(
        pairs=str(pairs_path), split=args.split,
        similarity_threshold=validator.similarity_threshold,
        overlap_threshold=validator.overlap_threshold,
    )
    name = f"{pairs_path.stem}_{args.split}"
    (RESULTS_DIR / f"grounding_{name}.json").write_text(json.dumps(result, indent=1))
    if args.errors:
        print_errors(pairs, verdicts)
    if args.json:
        print(json.dumps(result))
    else:
        _print_result(pairs_path.name, args.split, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
