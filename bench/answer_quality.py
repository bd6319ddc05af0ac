"""Whole-book answer quality against hand-written gold answers, per book and backend.

Usage::

    python bench/answer_quality.py --book ../shared/eval/books/thinkjava2.pdf \\
        --questions bench/questions/thinkjava2.jsonl [--backend NAME] [--limit N] [--json]
    python bench/answer_quality.py --split report [--backend NAME] [--limit N]  # pooled
    python bench/answer_quality.py --split report --backend NAME --sample 4 --sample-oos 2
    python bench/answer_quality.py --engines-table bench/results/answer_quality_split_*.json \
        [NAME=GLOB ...] [--common]     # one table over engines (bench/engines.py)
    python bench/answer_quality.py --fit bench/results/answer_quality_*.json   # calibration
    python bench/answer_quality.py --rescore bench/results/answer_quality_*.json
    python bench/answer_quality.py --book ... --questions ... --backend small \\
        --replay bench/results/answer_quality_<book>_small_ft20__s16.answers.jsonl

Every question of the file is asked in whole-book mode through :class:`Library` (so it is
audited like a student's).  Gold answers live in ``bench/questions/gold/<book>.jsonl``
(``{"question", "gold"}``), one short answer written by hand for this project for every
in-scope question; ``--gold FILE`` names another file.

``--sample N`` asks N in-scope questions spread evenly over each book's file and
``--sample-oos`` out-of-scope ones (``--sample-stride K`` every K-th of them), the same for
every engine (``--limit N`` takes the first N in-scope and N/4 out-of-scope questions).
Every row records what the grounding check did with the answer (``validation_passed``,
``unsupported``, ``replaced_by_validator``); ``--engines-table`` counts per engine how
many answers were kept, trimmed, replaced by the book's sentences, quoted or declined.

``--split report|tune`` runs every book of that book-level split (``bench/books.py``: tune
on the tune books, judge on the report books) whose question file exists, each as
``--book`` would (same per-book files), and prints one row a book and a POOLED row over
all their questions (``--limit N`` applies to each book).  ``--half tune|test`` keeps one
half of a book's in-scope questions (the ``split`` of each row, used by ``--fit``).

Scoring rule (:func:`gold_share`): the share of the gold answer's content words (stop
words out, Snowball-stemmed, as the grounding check counts them) that occur in the shown
answer with its citation markers removed.  An ``answer`` outcome is judged **correct**
when that share is at least :data:`CORRECT_SHARE` (0.5).  Quotes are never counted as
model answers.

Printed (and written to ``bench/results/answer_quality_<book>_<backend>.json``, with every
answer in ``...answers.jsonl`` beside it to read):

* ``cited_gold``: in-scope questions whose answer or quotes carry a verified citation on
  a gold page (the pages of the question's section, with the page where the section's
  text runs on above the next heading: ``bench/questions/check_questions.py``);
* ``cited_evidence_page``: the same on the stricter gold, the gold pages that hold the
  question's evidence phrase;
* ``answer_correct``: in-scope questions with an ``answer`` outcome judged correct (the
  shown text: a small-tier answer includes the book sentences quoted beside it, each a
  verified citation); ``answer_correct_model_part`` counts only the model's own sentences
  (:func:`model_part`);
* ``false_not_covered``: in-scope questions answered "not covered";
* ``out_of_scope_declined``: out-of-scope questions answered "not covered";
* outcomes, accuracy per confidence level, expected calibration error (10 equal-width
  bins over ``answer`` outcomes) on the whole set and the held-out split;
* first-token and total latency p50/p95, after the warm-up the window does when a book
  opens (the index, the embedders and the model loaded, the rules prefix read; ``--cold``
  leaves all of it to each book's first question).

Calibration (``--fit``): the tune split is every other in-scope question (even position
in the file), the held-out split the rest.  ``--fit`` reads result files (or ``--progress``
files), and for each kind of backend found (``extractive``, or ``model`` for a language
model: :func:`bookreader.core.confidence.kind_of`; ``--kind`` keeps one) prints each
signal's ROC AUC for correctness on the tune split, fits the logistic model of
:mod:`bookreader.core.confidence` on the tune rows of ``answer`` outcomes (plain gradient
descent, ``--l2``, on ``--features``) and prints the coefficients and the accuracy per
level and ECE on both splits, with them and with the coefficients in code.  Beside the
held-out ECE, ``test_ece_floor`` is the median ECE a perfectly calibrated estimate would
measure on as many answers (outcomes drawn from the estimates): with ~60 answers it is
about 0.12, so a held-out ECE near it is sampling noise, not miscalibration.

``--rescore FILES`` prints the figures of result or progress files again with the
confidence recomputed from the stored signals by the coefficients in code: the way to
check the calibration on answers written after a prompt change.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
GOLD_DIR = BENCH_DIR / "questions" / "gold"
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))

import books  # noqa: E402  (bench/books.py: the book-level split)
import engines  # noqa: E402  (bench/engines.py: the per-engine table)

#: Least share of the gold answer's content words for an answer to count as correct.
CORRECT_SHARE = 0.5
LEVELS = ("high", "medium", "low")


# --- scoring (pure; tested in tests/core/test_answer_quality_bench.py) -------------------------
def gold_share(answer_text: str, gold: str) -> float:
    """Share of ``gold``'s content words present in ``answer_text`` (citations removed)."""
    from bookreader.core.citations import strip_citations
    from bookreader.core.sentences import content_terms

    want = set(content_terms(gold))
    if not want:
        return 0.0
    have = set(content_terms(strip_citations(answer_text)))
    return round(len(want & have) / len(want), 4)


def model_part(answer_text: str) -> str:
    """The model's own sentences of an answer: the text before the book sentences quoted
    beside it (lines that open with a curly quote, added by the small tier)."""
    lines = answer_text.split("\n")
    own = [ln for ln in lines if not ln.lstrip().startswith("\u201c")]
    return "\n".join(own)


def percentile(values: Sequence[float], q: float) -> Optional[float]:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    k = min(len(vals) - 1, max(0, int(round(q * (len(vals) - 1)))))
    return round(vals[k], 1)


def ece(pairs: Sequence[tuple[float, bool]], bins: int = 10) -> Optional[float]:
    """Expected calibration error of (confidence, correct) pairs, equal-width bins."""
    if not pairs:
        return None
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, ok) for c, ok in pairs if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if not inside:
            continue
        conf = sum(c for c, _ in inside) / len(inside)
        acc = sum(1 for _, ok in inside if ok) / len(inside)
        total += len(inside) / len(pairs) * abs(acc - conf)
    return round(total, 4)


def level_of(confidence: float) -> str:
    from bookreader.core.confidence import level

    return level(confidence)


def by_level(pairs: Sequence[tuple[float, bool]]) -> dict:
    """{level: {"n", "correct"}} over (confidence, correct) pairs."""
    out = {}
    for name in LEVELS:
        inside = [ok for c, ok in pairs if level_of(c) == name]
        out[name] = {"n": len(inside),
                     "correct": round(sum(inside) / len(inside), 3) if inside else None}
    return out


def summarise(rows: Sequence[dict]) -> dict:
    """The figures of one run from its per-question rows."""
    ins = [r for r in rows if r["gold_pages"]]
    outs = [r for r in rows if not r["gold_pages"]]
    n_in = max(1, len(ins))
    outcomes: dict[str, int] = {}
    for r in rows:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    answered = [r for r in ins if r["outcome"] == "answer"]
    pairs = [(r["confidence"], r["correct"]) for r in answered]
    held = [(r["confidence"], r["correct"]) for r in answered if r["split"] == "test"]
    return {
        "questions": len(rows),
        "in_scope": len(ins),
        "out_of_scope": len(outs),
        "cited_gold": round(sum(r["cited_gold"] for r in ins) / n_in, 3),
        "cited_evidence_page": round(
            sum(r.get("cited_evidence", False) for r in ins) / n_in, 3),
        "cited_gold_by_answer": round(
            sum(r["cited_gold"] for r in ins if r["outcome"] == "answer") / n_in, 3),
        "answer_correct": round(sum(r["correct"] for r in answered) / n_in, 3),
        "answer_correct_model_part": round(
            sum(r.get("correct_model_part", r["correct"]) for r in answered) / n_in, 3),
        # answers that are the book's sentences shown in place of the model's (a tier with
        # ``book_sentences``: core/answer/choose.py), and how many of them are correct
        "book_sentence_answers": sum(bool(r.get("book_sentences")) for r in answered),
        "book_sentence_correct": round(
            sum(r["correct"] for r in answered if r.get("book_sentences")) / n_in, 3),
        "answers": len(answered),
        "answers_correct_share": round(sum(r["correct"] for r in answered) / len(answered), 3)
        if answered else None,
        "quotes_with_gold_content": round(sum(
            r["outcome"] == "quotes" and r.get("gold_share", 0.0) >= CORRECT_SHARE
            for r in ins) / n_in, 3),
        "false_not_covered": round(
            sum(r["outcome"] == "not_covered" for r in ins) / n_in, 3),
        "out_of_scope_declined": round(
            sum(r["outcome"] == "not_covered" for r in outs) / len(outs), 3) if outs else None,
        "outcomes": outcomes,
        "by_level": by_level(pairs),
        "ece": ece(pairs),
        "held_out_by_level": by_level(held),
        "held_out_ece": ece(held),
        "first_token_ms_p50": percentile([r["first_token_ms"] for r in rows], 0.5),
        "first_token_ms_p95": percentile([r["first_token_ms"] for r in rows], 0.95),
        "total_ms_p50": percentile([r["total_ms"] for r in rows], 0.5),
        "total_ms_p95": percentile([r["total_ms"] for r in rows], 0.95),
    }


# --- questions and gold answers -----------------------------------------------------------------
def load(questions: Path, gold_file: Optional[Path]) -> list[dict]:
    """Questions with their gold answers and split ("tune"/"test"; None out of scope)."""
    rows = [json.loads(x) for x in questions.read_text(encoding="utf-8").splitlines() if x.strip()]
    gold_file = gold_file or GOLD_DIR / questions.name
    gold = {}
    if gold_file.exists():
        for x in gold_file.read_text(encoding="utf-8").splitlines():
            if x.strip():
                item = json.loads(x)
                gold[item["question"]] = item["gold"]
    out = []
    k = 0
    for item in rows:
        pages = [int(p) for p in item["gold_pages"]]
        split = None
        if pages:
            split = "tune" if k % 2 == 0 else "test"
            k += 1
        out.append({"question": item["question"], "gold_pages": pages,
                    "evidence_pages": [int(p) for p in item.get("evidence_pages", pages)],
                    "gold": gold.get(item["question"], item.get("gold", "")),
                    "answer_sentences": item.get("answer_sentences", []), "split": split})
    return out


class ReplayBackend:
    """Gives each question the raw output a model wrote for it in an earlier run."""

    model_name = "replay"

    def __init__(self, name: str, raw: dict[str, str],
                 generation: Optional[dict[str, float]] = None) -> None:
        self.name, self._raw, self._generation = name, raw, generation or {}

    def warm_up(self) -> None:
        return None

    def stream(self, messages, *, max_tokens=500, temperature=0.1, cancel=None, request=None):
        from bookreader.core.types import Token

        question = request.question if request is not None else ""
        # the token probability the model had then (the confidence's generation signal),
        # so a replayed answer is scored as the live one was
        p = self._generation.get(question) or math.exp(-0.1)
        yield Token(self._raw.get(question, ""), math.log(min(max(p, 1e-6), 1.0)))


def replay_outputs(library, path: Path) -> None:
    """Make ``library`` answer with the raw outputs recorded in ``path`` (a result or
    ``--progress`` file) instead of running the model: the checks, quotes and confidence
    of the current code judge what the model wrote then.  Timings then mean nothing, and a
    question the current retrieval gives other passages is judged against those."""
    rows = load_rows(path)
    raw = {r["question"]: r.get("raw_output") or "" for r in rows}
    generation = {r["question"]: float((r.get("signals") or {}).get("generation") or 0.0)
                  for r in rows}
    answerer = library.answerer
    model_factory = answerer._backend_factory
    # the extractive backend (which the small tier's answers are compared with) is real
    answerer._backend_factory = lambda name: (
        model_factory(name) if name == "extractive" else ReplayBackend(name, raw, generation))
    answerer._budget_fn = lambda name: (None, None)


def ask_all(args, items: list[dict]) -> list[dict]:
    from retrieval import open_library

    from bookreader.config import Settings

    data_dir = Path(args.data_dir)
    settings = Settings(data_dir=data_dir, retrieval_timeout_s=120.0,
                        openai_model=args.model or "",
                        # a model server on a busy machine can take longer than the
                        # default wait for its first piece; the budget below still applies
                        openai_timeout_s=max(30.0, args.first_token_budget or 0.0))
    # an installed tier's file, linked into the bench's own data folder (as bench/answer.py)
    from answer import _link_tier

    from bookreader.config import default_data_dir

    settings.models_dir.mkdir(parents=True, exist_ok=True)
    _link_tier(args, settings, default_data_dir())
    if args.first_token_budget:
        from bookreader.core.llm.registry import spec_of

        # the budgets are keyed by the spec's name ("openai" for any model server)
        name = spec_of(args.backend, settings).name
        settings = settings.updated(budgets={name: {"first_token_s": args.first_token_budget,
                                                    "total_s": 4 * args.first_token_budget}})
    library, info, _ = open_library(Path(args.book), data_dir, settings=settings)
    if args.replay:
        replay_outputs(library, args.replay)
    elif not args.cold:
        # as the window does when a book opens (MainWindow.warm_up): the book's index, the
        # embedders and the model loaded and the rules read before the first question
        t0 = time.perf_counter()
        library.warm_up(info.book_id, backend=args.backend)
        print(f"warm-up {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    rows = []
    try:
        for n, item in enumerate(items, 1):
            t0 = time.perf_counter()
            a = library.ask(item["question"], book=info.book_id, backend=args.backend)
            total = (time.perf_counter() - t0) * 1000.0
            outcome = getattr(a.outcome, "value", str(a.outcome))
            gold_pages = set(item["gold_pages"])
            cited = any(c.verified and c.page in gold_pages for c in a.citations)
            share = gold_share(a.text, item["gold"]) if item["gold"] else 0.0
            book = outcome == "answer" and a.model.startswith("book sentences")
            own = model_part(a.text) if outcome == "answer" and not book else ""
            own_share = gold_share(own, item["gold"]) if item["gold"] and own else 0.0
            rows.append({
                **item,
                "outcome": outcome,
                "answer": a.text,
                "citations": [{"page": c.page, "label": c.page_label, "verified": c.verified,
                               "excerpt": c.excerpt} for c in a.citations],
                "cited_gold": bool(item["gold_pages"]) and outcome in ("answer", "quotes") and cited,
                "cited_evidence": outcome in ("answer", "quotes") and any(
                    c.verified and c.page in item["evidence_pages"] for c in a.citations),
                "gold_share": share,
                "correct": outcome == "answer" and share >= CORRECT_SHARE,
                "model_share": own_share,
                "correct_model_part": outcome == "answer" and own_share >= CORRECT_SHARE,
                "book_sentences": book,
                "model": a.model,
                # what the grounding check did with the model's answer (engines.answer_fate)
                "validation_passed": a.validation.passed if a.validation else None,
                "unsupported": list(a.validation.unsupported_sentences) if a.validation else [],
                "replaced_by_validator": a.replaced_by_validator,
                "error": a.error,
                "confidence": a.confidence,
                "level": a.confidence_level,
                "signals": a.confidence_signals,
                "retrieval_confidence": a.retrieval.confidence if a.retrieval else None,
                "first_token_ms": a.first_token_ms,
                "total_ms": round(total, 1),
                "raw_output": a.raw_output,
                # what the model read (the last user message: passages and question)
                "prompt": a.prompt[-1].content if a.prompt else "",
            })
            print(f"[{n}/{len(items)}] {outcome:16s} share {share:.2f} {item['question'][:60]}",
                  file=sys.stderr, flush=True)
            if args.progress:  # each row as it comes (a long run can be read before its end)
                with open(args.progress, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rows[-1], ensure_ascii=False) + "\n")
    finally:
        close = getattr(library, "close", None)
        if close is not None:
            close()
    return rows


def format_table(s: dict, title: str) -> str:
    lv = lambda d: ", ".join(  # noqa: E731
        f"{k} {v['n']} ({v['correct']:.0%})" if v["correct"] is not None else f"{k} 0"
        for k, v in d.items())
    lines = [
        f"## {title}",
        f"questions {s['questions']} (in scope {s['in_scope']}, out of scope {s['out_of_scope']})",
        f"in-scope with a verified citation on a gold page (answer or quotes): {s['cited_gold']:.1%}",
        "  (stricter: on a page holding the answer's evidence phrase: "
        f"{s['cited_evidence_page']:.1%})",
        f"in-scope answered correctly by the model: {s['answer_correct']:.1%} "
        f"({s['answers']} answers, {s['answers_correct_share'] or 0:.0%} of them correct)",
        "  (counting only the model's own sentences, not the book sentences quoted beside "
        f"them or shown in their place: {s.get('answer_correct_model_part', s['answer_correct']):.1%})",
        f"  (book sentences shown in place of the model's answer: "
        f"{s.get('book_sentence_answers', 0)} answers, correct on "
        f"{s.get('book_sentence_correct', 0.0):.1%} of in-scope questions)",
        f"in-scope given quotes that hold the gold content (share >= {CORRECT_SHARE}): "
        f"{s['quotes_with_gold_content']:.1%}",
        f"false 'not covered' on in-scope: {s['false_not_covered']:.1%}",
        "out-of-scope declined: "
        + (f"{s['out_of_scope_declined']:.1%}" if s["out_of_scope_declined"] is not None else "-"),
        f"outcomes: {s['outcomes']}",
        f"accuracy per level (all): {lv(s['by_level'])}; ECE {s['ece']}",
        f"accuracy per level (held-out): {lv(s['held_out_by_level'])}; ECE {s['held_out_ece']}",
        f"first token p50/p95 ms: {s['first_token_ms_p50']} / {s['first_token_ms_p95']}; "
        f"total p50/p95 ms: {s['total_ms_p50']} / {s['total_ms_p95']}",
    ]
    return "\n".join(lines)


# --- fitting the calibration -------------------------------------------------------------------
def fit_logistic(xs: list[list[float]], ys: list[int], *, l2: float = 0.01,
                 steps: int = 4000, lr: float = 0.5) -> list[float]:
    """Weights (intercept first) of a logistic regression by batch gradient descent."""
    n, d = len(xs), len(xs[0]) if xs else 0
    w = [0.0] * (d + 1)
    for _ in range(steps):
        grad = [0.0] * (d + 1)
        for x, y in zip(xs, ys):
            z = w[0] + sum(wi * xi for wi, xi in zip(w[1:], x))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            grad[0] += p - y
            for j, xj in enumerate(x):
                grad[j + 1] += (p - y) * xj
        for j in range(d + 1):
            reg = l2 * w[j] if j else 0.0
            w[j] -= lr * (grad[j] / n + reg)
    return w


def _with_all_signals(r: dict) -> dict:
    """A row whose signals include those added after it was recorded."""
    from bookreader.core import confidence as calibration

    sig = dict(r.get("signals") or {})
    if sig and "coverage" not in sig:
        sig["coverage"] = calibration.question_coverage(r["question"], r["answer"])
    if sig and "length" not in sig:
        sig["length"] = calibration.answer_length(r["answer"])
    if sig and "answer_type" not in sig:
        sig["answer_type"] = calibration.answer_type(r["question"], r["answer"])
    return {**r, "signals": sig}


def load_rows(path: Path) -> list[dict]:
    """The per-question rows of a result file (``.json``) or a ``--progress`` file (``.jsonl``)."""
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".jsonl"):
        return [json.loads(x) for x in text.splitlines() if x.strip()]
    return json.loads(text)["rows"]


def roc_auc(values: Sequence[float], correct: Sequence[bool]) -> Optional[float]:
    """ROC AUC of one signal for correctness (ties count half; None without both classes)."""
    pos = [v for v, ok in zip(values, correct) if ok]
    neg = [v for v, ok in zip(values, correct) if not ok]
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def ece_floor(confidences: Sequence[float], draws: int = 500, seed: int = 0) -> Optional[float]:
    """Median ECE of outcomes drawn from the estimates themselves: what a perfectly
    calibrated estimate would measure on this many answers (the sampling noise floor)."""
    import random

    if not confidences:
        return None
    rng = random.Random(seed)
    values = sorted(ece([(c, rng.random() < c) for c in confidences]) for _ in range(draws))
    return round(values[len(values) // 2], 4)


def run_fit(paths: Sequence[Path], features: Optional[Sequence[str]] = None,
            l2: float = 0.01, kind: Optional[str] = None) -> dict:
    """Per kind of backend (``extractive``/``model``, :func:`~bookreader.core.confidence.kind_of`)
    in the files, or only ``kind``: each signal's ROC AUC on the tune split, the fitted
    coefficients, and the figures per level and ECE of the fitted and the in-code
    coefficients on both splits."""
    from bookreader.core import confidence as calibration

    rows = []
    for p in paths:
        rows.extend(_with_all_signals(r) for r in load_rows(p)
                    if r["outcome"] == "answer" and r.get("signals"))
    feats = list(features or calibration.FEATURES)
    out: dict = {}
    for name in calibration.KINDS:
        mine = [r for r in rows if calibration.kind_of(r["signals"]) == name]
        if not mine or (kind and name != kind):
            continue
        out[name] = _fit_kind(mine, feats, l2)
    return out


def _fit_kind(rows: Sequence[dict], feats: Sequence[str], l2: float) -> dict:
    from bookreader.core import confidence as calibration

    tune = [r for r in rows if r["split"] == "tune"]
    test = [r for r in rows if r["split"] == "test"]
    ok = [bool(r["correct"]) for r in tune]
    auc = {f: roc_auc([float(r["signals"].get(f, 0.0) or 0.0) for r in tune], ok)
           for f in calibration.FEATURES}
    xs = [[float(r["signals"].get(f, 0.0) or 0.0) for f in feats] for r in tune]
    w = fit_logistic(xs, [int(y) for y in ok], l2=l2) if tune else [0.0] * (len(feats) + 1)
    coef = {"intercept": round(w[0], 3), **{f: round(v, 3) for f, v in zip(feats, w[1:])}}

    def pairs(rs, c):
        return [(calibration.calibrated(r["signals"], c), bool(r["correct"])) for r in rs]

    out = {"rows": len(rows), "tune": len(tune), "test": len(test),
           "tune_correct": round(sum(ok) / len(ok), 3) if ok else None,
           "test_correct": round(sum(bool(r["correct"]) for r in test) / len(test), 3)
           if test else None,
           "tune_auc": auc, "coefficients": coef}
    for name, c in (("fitted", coef), ("in_code", None)):
        out[name] = {"tune_by_level": by_level(pairs(tune, c)), "tune_ece": ece(pairs(tune, c)),
                     "test_by_level": by_level(pairs(test, c)), "test_ece": ece(pairs(test, c)),
                     "test_ece_floor": ece_floor([p for p, _ in pairs(test, c)])}
    return out


def rescore(rows: Sequence[dict]) -> list[dict]:
    """Rows with each answer's confidence recomputed from its stored signals."""
    from bookreader.core import confidence as calibration

    out = []
    for r in rows:
        r = _with_all_signals(r)
        if r["outcome"] == "answer" and r.get("signals"):
            r["confidence"] = calibration.calibrated(r["signals"])
            r["level"] = calibration.level(r["confidence"])
        out.append(r)
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--book", type=Path)
    ap.add_argument("--questions", type=Path)
    ap.add_argument("--gold", type=Path, default=None)
    ap.add_argument("--backend", default="bundled",
                    help="a backend name, e.g. small, or openai:URL for a model server")
    ap.add_argument("--model", default="", help="with --backend openai:URL: the model id")
    ap.add_argument("--limit", type=int, default=0,
                    help="ask only the first N questions of each kind (in and out of scope)")
    ap.add_argument("--sample", type=int, default=0,
                    help="ask N in-scope questions spread evenly over each book's file and "
                         "--sample-oos out-of-scope ones (deterministic; in place of --limit)")
    ap.add_argument("--sample-oos", type=int, default=None,
                    help="out-of-scope questions of --sample (default: N/2, at least 1)")
    ap.add_argument("--sample-stride", type=int, default=1,
                    help="keep every K-th question of --sample (first included): a slow "
                         "engine asked a subset of the others' questions")
    ap.add_argument("--engines-table", nargs="+", default=None,
                    help="print one Markdown table comparing engines from these split result "
                         "files (answer_quality_split_*.json), per book and pooled; "
                         "NAME=GLOB reads an unfinished split run's --progress files")
    ap.add_argument("--common", action="store_true",
                    help="with --engines-table: only the questions every engine answered")
    ap.add_argument("--data-dir", default=str(RESULTS_DIR / "cache"))
    ap.add_argument("--models-dir", type=Path, default=None,
                    help="where an installed tier's model file is (default: the user's data "
                    "folder's models); it is linked into the bench's data folder")
    ap.add_argument("--half", choices=("tune", "test"), default=None,
                    help="ask only the in-scope questions of this half (tune: even positions, "
                         "test: odd) and every out-of-scope one, to tune on one half and "
                         "confirm on the other")
    ap.add_argument("--split", choices=tuple(books.SPLITS), default=None,
                    help="run every book of this book-level split (bench/books.py) whose "
                         "question file exists, in place of --book/--questions, and print a "
                         "table per book with a POOLED row")
    ap.add_argument("--books-dir", type=Path, default=books.BOOKS_DIR,
                    help="where the books of --split are (default: ../shared/eval/books)")
    ap.add_argument("--progress", type=Path, default=None,
                    help="append every row to this JSON-lines file as soon as it is answered")
    ap.add_argument("--tag", default="", help="suffix of the result files' names")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--first-token-budget", type=float, default=0.0,
                    help="override a local model's first-token budget (s), to measure quality "
                         "apart from speed on a busy machine (results get a _ftN suffix)")
    ap.add_argument("--fit", nargs="+", type=Path, default=None,
                    help="fit the confidence calibration on these result files")
    ap.add_argument("--features", default="generation,answer_type,relevance,coverage,length",
                    help="signals the fit uses (comma separated; '' for all)")
    ap.add_argument("--l2", type=float, default=0.01, help="L2 penalty of the fit")
    ap.add_argument("--book-margin", type=float, default=None,
                    help="core/answer/choose.py MARGIN for this run (default: the code's)")
    ap.add_argument("--book-min", type=float, default=None,
                    help="core/answer/choose.py MIN_CONFIDENCE for this run (default: the code's)")
    ap.add_argument("--kind", choices=("extractive", "model", "book"), default=None,
                    help="fit only this kind of backend's answers (default: each kind found)")
    ap.add_argument("--cold", action="store_true",
                    help="no warm-up before a book's first question (the window warms up "
                         "when a book opens, so by default the bench does too): the first "
                         "question then loads the index and model and reads the rules")
    ap.add_argument("--replay", type=Path, default=None,
                    help="answer with the raw model outputs of this earlier result file "
                         "(no model runs; --backend names the tier whose prompts and rules "
                         "apply; results get a _replay suffix)")
    ap.add_argument("--rescore", nargs="+", type=Path, default=None,
                    help="print the figures of these result (.json) or --progress (.jsonl) "
                         "files again, with the confidence recomputed from the stored signals "
                         "by the coefficients in code")
    args = ap.parse_args(argv)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    from bookreader.core.answer import choose as book_answer

    if args.book_margin is not None:
        book_answer.MARGIN = args.book_margin
    if args.book_min is not None:
        book_answer.MIN_CONFIDENCE = args.book_min
    if args.fit:
        result = run_fit(args.fit, args.features.split(",") if args.features else None,
                         args.l2, args.kind)
        print(json.dumps(result, indent=2))
        return 0
    if args.engines_table:
        stems = [stem for split in books.SPLITS.values() for stem in split]
        print(engines.engines_table(args.engines_table, common=args.common, stems=stems))
        return 0
    if args.rescore:
        for path in args.rescore:
            rows = rescore(load_rows(path))
            summary = summarise(rows)
            print(json.dumps(summary, indent=2) if args.json
                  else format_table(summary, f"{path.stem} (rescored)"))
        return 0
    if args.split:
        return books.run_split(args, run_book, summarise)
    if args.book is None or args.questions is None:
        ap.error("--book and --questions are required (or --split, --fit or --rescore)")
    if not args.book.exists():
        print(f"{args.book} not found: the evaluation books live in ../shared/eval/books/",
              file=sys.stderr)
        return 2
    rows, summary = run_book(args)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(summary, f"{args.questions.stem} / {args.backend}"))
    return 0


def run_book(args) -> tuple[list[dict], dict]:
    """Ask the questions of ``args.questions`` (after ``--limit`` and ``--half``) on
    ``args.book``; write the result and answers files; return the rows and figures."""
    items = load(args.questions, args.gold)
    if getattr(args, "sample", 0):
        items = engines.sample(items, args.sample, args.sample_oos,
                               getattr(args, "sample_stride", 1))
    elif args.limit:
        ins = [i for i in items if i["gold_pages"]][: args.limit]
        outs = [i for i in items if not i["gold_pages"]][: max(1, args.limit // 4)]
        items = ins + outs
    if args.half:  # after --limit: the two halves of a limited run make up that run
        items = [i for i in items if not i["gold_pages"] or i["split"] == args.half]
    rows = ask_all(args, items)
    summary = summarise(rows)
    name = f"answer_quality_{args.questions.stem}_{books.backend_tag(args.backend, args.model)}"
    if args.first_token_budget:
        name += f"_ft{args.first_token_budget:g}"
    if getattr(args, "sample", 0):
        name += f"_s{args.sample}"
        name += f"by{args.sample_stride}" if getattr(args, "sample_stride", 1) > 1 else ""
    if args.half:
        name += f"_{args.half}"
    if args.replay:
        name += "_replay"
    if args.tag:
        name += f"_{args.tag}"
    (RESULTS_DIR / f"{name}.json").write_text(
        json.dumps({"summary": summary, "rows": rows}, indent=1, ensure_ascii=False),
        encoding="utf-8")
    with open(RESULTS_DIR / f"{name}.answers.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps({k: r.get(k) for k in (
                "question", "outcome", "answer", "gold", "gold_share", "correct", "confidence",
                "level", "gold_pages", "citations", "split", "model", "book_sentences",
                "validation_passed", "unsupported", "replaced_by_validator", "error",
                "first_token_ms", "total_ms", "signals", "raw_output", "prompt")},
                                ensure_ascii=False) + "\n")
    return rows, summary


if __name__ == "__main__":
    raise SystemExit(main())
