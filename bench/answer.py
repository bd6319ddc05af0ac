"""Answer quality and latency, in selected-text mode (default) or whole-book mode.

Usage::

    python bench/answer.py --backend extractive [--cases FILE.jsonl] [--limit N] [--json]
    python bench/answer.py --backend bundled --book ../shared/eval/books/thinkjava2.pdf \\
        --questions bench/questions/thinkjava2.jsonl [--limit N] [--json]

Selected-text mode: ``--cases`` lines are ``{"selection", "question", "answerable": bool,
"gold_answer": str or null}`` (``gold_answers`` list optional; other fields ignored).
Default: the 200 SQuAD 2.0 cases of ``bench/make_squad_cases.py``, generated into
``bench/results/`` when missing.  Metrics:

* ``answerable_correct``: answerable cases whose answer contains a gold answer
  (lower-cased, punctuation and articles removed, citations stripped);
* ``unanswerable_fallback``: unanswerable cases answered with the fixed sentence;
* ``correct_only_in_quote``: correct answers whose gold answer is only in the selection's
  sentence quoted beside the model's answer, not in the model's own words;
* ``answerable_fallback``, ``replaced_by_validator``, ``timeouts``, ``errors``;
* ``leaks``: answers with a citation that is not the selection's (must be 0);
* ``obeyed``: cases with ``planted`` strings (the value an instruction planted in the
  selection asks for, e.g. ``bench/selected_<book>.jsonl``) whose answer shows one (must be 0);
* ``first_token_ms`` and ``total_ms`` p50/p95 (first token counted from the call).

``--replay ANSWERS.jsonl`` runs the answering path again on the model's recorded raw
outputs (checks and fallbacks changed, model not rerun; timings then mean nothing).
``--split tune|test`` keeps the even / odd positions (after ``--limit``): tune on one
half, report the other.  ``--rescore ANSWERS.jsonl [--split S]`` prints these figures
from a saved answers file (``--progress`` output or the dump) without a model.

Whole-book mode (``--book`` with ``--questions``, lines ``{"question", "gold_pages"}``,
empty ``gold_pages`` = out of scope): the book is ingested into ``--data-dir`` (reused),
then each question is asked in book mode.  Metrics: ``cited_gold_page`` (in-scope answers
with a citation on a gold page), ``in_scope_declined``, ``out_of_scope_declined``, and
p50/p95 of each stage: retrieval, prompt, first token, generation, validation, total.

``--tier tiny|small|better`` runs a local model tier (the same as ``--backend NAME``; a
tier installed in the data folder is linked into the bench's own data folder, or give
``--models-dir``); ``--threads N`` sets llama.cpp's threads.  ``--focus-chars N`` sets how many selection characters the backend is shown (0: all; see
:mod:`bookreader.core.focus`).  ``--budget S`` overrides the backend's time budget (first-token budget for a local tier) (to measure quality apart from speed
on a busy machine).  Results: a table, or JSON with ``--json``; also written to
``bench/results/answer_<mode>_<backend>.json``; in selected-text mode every answer (with the
model's raw output) goes to ``answer_selected_<backend>.answers.jsonl`` beside it, to read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "\u2018\u2019\u201c\u201d")


def normalise_answer(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation, no articles, single spaces."""
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCT))
    return " ".join(text.split())


def contains_gold(answer: str, golds: Sequence[str]) -> bool:
    from bookreader.core.citations import strip_citations

    hay = normalise_answer(strip_citations(answer))
    return any(normalise_answer(g) and normalise_answer(g) in hay for g in golds)


def pct(values: Sequence[float], q: float) -> Optional[float]:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    k = min(len(vals) - 1, max(0, int(round(q * (len(vals) - 1)))))
    return round(vals[k], 1)


def leaked(answer, selection: str) -> bool:
    """True when a selected-text answer shows a citation that is not the selection's
    (another section, or an excerpt the selection does not contain)."""
    from bookreader.core.prompts import SELECTION_SECTION

    if answer.fallback:
        return False
    # Punctuation becomes a space on both sides: "principle.[citation needed]" holds the
    # word "principle" (removing it glued "principlecitation" and counted a verbatim
    # excerpt of the selection as a leak).
    hay = set(_words_of(selection))
    for c in answer.citations:
        if c.section != SELECTION_SECTION or not set(_words_of(c.excerpt)) <= hay:
            return True
    return False


def _words_of(text: str) -> list[str]:
    spaced = re.sub(r"[%s]" % re.escape(string.punctuation + "\u2018\u2019\u201c\u201d"), " ",
                    text.lower())
    return _ARTICLES.sub(" ", spaced).split()


class _Recorded:
    """A stand-in for the model that streams a recorded raw output (``--replay``): the
    answering path after the model (checks, the selection's sentence, fallbacks) is run
    again on what the model wrote, without the model."""

    model_name = "recorded"
    raw = ""

    def warm_up(self) -> None:
        pass

    def stream(self, messages, **kw):
        from bookreader.core.types import Token

        for piece in re.findall(r"\S+\s*|\s+", self.raw):
            yield Token(piece, None)


def _answerer(args, settings, embedder, factory=None):
    from bookreader.core.answering import Answerer

    from bookreader.core.llm.specs import spec_for

    def budget_fn(name):  # a first-token budget for local models, a total for others
        return (args.budget, None) if spec_for(name).local else (None, args.budget)

    return Answerer(settings, embedder=embedder, backend_factory=factory,
                    budget_fn=budget_fn if args.budget else None)


def run_selected(args, settings, embedder) -> dict:
    from bookreader.core.types import Mode

    if args.replay is not None:
        args.cases = args.replay
    if args.cases is None:
        from make_squad_cases import DEFAULT_OUT, write_cases

        if not DEFAULT_OUT.exists():
            write_cases(DEFAULT_OUT)
        args.cases = DEFAULT_OUT
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    if args.limit:
        cases = cases[: args.limit]
    cases = split_cases(cases, args.split)
    answerer = _answerer(args, settings, embedder)
    recorded = None
    if args.replay is not None:  # the model's recorded outputs instead of the model
        recorded = _Recorded()
        answerer = _answerer(args, settings, embedder, factory=lambda name: recorded)
    # Warm-up (loads the model; not measured).
    answerer.ask("What is this about?", mode=Mode.SELECTED, selection="A warm-up sentence.",
                 backend=args.backend)
    rows = []
    dump: list[dict] = []
    for n, case in enumerate(cases, 1):
        if recorded is not None:
            if case.get("outcome") == "timeout":  # nothing was written: still a timeout
                kind = case.get("kind") or ("answerable" if case["answerable"] else "unanswerable")
                rows.append(dict(kind=kind, answerable=bool(case["answerable"]),
                                 correct=False, quote_only=False, fallback=False,
                                 replaced=False, leak=False, timeout=True, error=False, first_token_ms=None, total_ms=None))
                dump.append(dict(case, correct=False, fallback=False, replaced=False, leak=False,
                                 quote_only=False))
                continue
            recorded.raw = case.get("raw_output") or ""
        a = answerer.ask(case["question"], mode=Mode.SELECTED, selection=case["selection"],
                         backend=args.backend)
        golds = case.get("gold_answers") or case.get("gold") or (
            [case["gold_answer"]] if case.get("gold_answer") else [])
        rows.append(dict(
            kind=case.get("kind") or ("answerable" if case["answerable"] else "unanswerable"),
            answerable=bool(case["answerable"]),
            correct=bool(case["answerable"]) and not a.fallback and contains_gold(a.text, golds),
            quote_only=bool(case["answerable"]) and not a.fallback and quote_only(a.text, golds),
            fallback=a.fallback and not a.error,
            replaced=a.replaced_by_validator,
            leak=leaked(a, case["selection"]),
            timeout=_timed_out(a),
            error=bool(a.error) and not _timed_out(a),
            first_token_ms=a.first_token_ms,
            total_ms=a.latency_ms,
            confidence=float(a.confidence or 0.0),
            answered=not a.fallback and not a.error,
            obeyed=bool(case.get("planted")) and contains_gold(a.text, case["planted"]),
        ))
        dump.append(dict(kind=rows[-1]["kind"], question=case["question"],
                         selection=case["selection"],
                         answerable=bool(case["answerable"]), gold=golds, answer=a.text,
                         planted=case.get("planted") or [],
                         raw_output=a.raw_output, first_token_ms=a.first_token_ms,
                         total_ms=a.latency_ms,
                         prompt=a.prompt[-1].content if a.prompt else "", outcome=str(getattr(a.outcome, "value", "")),
                         **{k: rows[-1][k] for k in ("correct", "fallback", "replaced", "leak",
                                                     "quote_only", "confidence", "obeyed")}))
        if args.progress:  # each case as it comes
            with open(args.progress, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(dump[-1], ensure_ascii=False) + "\n")
        if args.verbose:
            print(f"[{n}] {case['question']!r} -> {a.text[:120]!r}", file=sys.stderr)
    # every answer, to read (beside the results file)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^\w.-]+", "_", args.backend)[-60:]
    with open(RESULTS_DIR / f"answer_selected_{safe}{_suffix(args)}.answers.jsonl", "w",
              encoding="utf-8") as fh:
        for d in dump:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    share = lambda rs, key: round(sum(r[key] for r in rs) / len(rs), 3) if rs else None  # noqa: E731
    kinds = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        rs = [r for r in rows if r["kind"] == kind]
        key = "correct" if rs[0]["answerable"] else "fallback"
        kinds[kind] = f"{sum(r[key] for r in rs)}/{len(rs)} {key}"
    return dict(
        mode="selected", backend=args.backend, cases=str(args.cases.name), split=args.split,
        n=len(rows),
        focus_chars=_focus_chars(args.backend), n_answerable=len(ans),
        n_unanswerable=len(una),
        answerable_correct=share(ans, "correct"),
        unanswerable_fallback=share(una, "fallback"),
        answerable_fallback=share(ans, "fallback"),
        replaced_by_validator=share(rows, "replaced"),
        leaks=sum(r["leak"] for r in rows),
        obeyed=sum(r.get("obeyed", False) for r in rows),
        timeouts=sum(r["timeout"] for r in rows),
        errors=sum(r["error"] for r in rows),
        first_token_ms_p50=pct([r["first_token_ms"] for r in rows], 0.5),
        first_token_ms_p95=pct([r["first_token_ms"] for r in rows], 0.95),
        total_ms_p50=pct([r["total_ms"] for r in rows], 0.5),
        total_ms_p95=pct([r["total_ms"] for r in rows], 0.95),
        answerable_correct_n=f"{sum(r['correct'] for r in ans)}/{len(ans)}",
        correct_only_in_quote=sum(r["quote_only"] for r in ans),
        unanswerable_fallback_n=f"{sum(r['fallback'] for r in una)}/{len(una)}",
        by_kind=kinds,
        **calibration_figures(rows),
    )


def calibration_figures(rows: Sequence[dict]) -> dict:
    """Accuracy per confidence level and ECE of the answers shown (an answer to an
    unanswerable case is wrong: the selection does not hold it)."""
    from answer_quality import by_level, ece

    pairs = [(r["confidence"], bool(r["correct"])) for r in rows
             if r.get("answered") and "confidence" in r]
    if not pairs:
        return {}
    return dict(answers_by_level={k: f"{v['n']} ({v['correct']:.0%})" if v["correct"] is not None
                                  else "0" for k, v in by_level(pairs).items()},
                answers_ece=round(ece(pairs), 4))


def quote_only(answer: str, golds: Sequence[str]) -> bool:
    """True when a gold answer is only in the selection's sentence quoted beside the
    model's answer (:func:`bookreader.core.selection_answer.beside_answer`), not in the
    model's own words: such answers count as correct, and this says how many there are."""
    from bookreader.core.selection_answer import LEAD

    head, sep, _ = answer.partition("\n" + LEAD)
    return bool(sep) and contains_gold(answer, golds) and not contains_gold(head, golds)


def rescore(path: Path, split: str) -> dict:
    """The selected-text figures of a saved answers file (``--progress`` or the
    ``.answers.jsonl`` dump), for one split, without running a model."""
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = split_cases(rows, split)
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    for r in rows:
        r["kind"] = r.get("kind") or ("answerable" if r["answerable"] else "unanswerable")
    kinds = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        rs = [r for r in rows if r["kind"] == kind]
        key = "correct" if rs[0]["answerable"] else "fallback"
        kinds[kind] = f"{sum(r[key] for r in rs)}/{len(rs)} {key}"
    ft = [r.get("first_token_ms") for r in rows]
    return dict(
        answers=path.name, split=split, n=len(rows),
        answerable_correct_n=f"{sum(r['correct'] for r in ans)}/{len(ans)}",
        correct_only_in_quote=sum(bool(r["correct"]) and quote_only(r["answer"], r["gold"])
                                  for r in ans),
        unanswerable_fallback_n=f"{sum(r['fallback'] for r in una)}/{len(una)}",
        leaks=sum(r["leak"] for r in rows),
        obeyed=sum(bool(r.get("planted")) and contains_gold(r["answer"], r["planted"])
                   for r in rows),
        timeouts=sum(r.get("outcome") == "timeout" for r in rows),
        replaced_by_validator=f"{sum(r['replaced'] for r in rows)}/{len(rows)}",
        first_token_ms_p50=pct(ft, 0.5), first_token_ms_p95=pct(ft, 0.95),
        by_kind=kinds,
    )


def split_cases(cases: list, split: str) -> list:
    """The tune half (even positions), the test half (odd positions) or all cases."""
    if split == "tune":
        return cases[0::2]
    if split == "test":
        return cases[1::2]
    return list(cases)


def _suffix(args) -> str:
    tag = re.sub(r"[^\w.-]+", "_", getattr(args, "tag", "") or "")
    return f"_{tag}" if tag else ""


def _timed_out(a) -> bool:
    """A time budget ran out (the outcome, or the budget's message for older answers)."""
    outcome = getattr(a, "outcome", None)
    if outcome is not None and str(getattr(outcome, "value", outcome)) == "timeout":
        return True
    return a.error.startswith(("Query processing timed out", "No answer"))


def _focus_chars(backend: str):
    from bookreader.core.answer import run as answer_run

    return answer_run.spec_for(backend).selection_chars


def run_book(args, settings, embedder) -> dict:
    from bookreader.core.types import Mode
    from bookreader.library import Library

    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    if args.limit:
        questions = questions[: args.limit]
    lib = Library(settings, embedder=embedder)
    info = lib.ingest(args.book)
    retriever = lib.retriever(info.book_id)
    pdf = lib.open_pdf(info.book_id)
    answerer = _answerer(args, settings, embedder)
    answerer.ask(questions[0]["question"], mode=Mode.BOOK, retriever=retriever, pages=pdf,
                 backend=args.backend)  # warm-up
    stages: dict[str, list[float]] = {k: [] for k in
                                      ("retrieval", "prompt", "first_token", "generation",
                                       "validation", "total")}
    in_scope = out_scope = cited = in_declined = out_declined = 0
    for q in questions:
        t = time.perf_counter()
        a = answerer.ask(q["question"], mode=Mode.BOOK, retriever=retriever, pages=pdf,
                         backend=args.backend)
        stages["total"].append((time.perf_counter() - t) * 1000.0)
        for k in ("retrieval", "prompt", "first_token", "generation", "validation"):
            if k in a.stage_ms:
                stages[k].append(a.stage_ms[k])
        gold = set(q.get("gold_pages") or [])
        if gold:
            in_scope += 1
            in_declined += a.fallback
            cited += any(c.page in gold for c in a.citations)
        else:
            out_scope += 1
            out_declined += a.fallback
        if args.verbose:
            print(f"{q['question']!r} -> {a.text[:120]!r}", file=sys.stderr)
    lib.close()
    out = dict(mode="book", backend=args.backend, book=str(args.book), n=len(questions),
               cited_gold_page=round(cited / in_scope, 3) if in_scope else None,
               in_scope_declined=round(in_declined / in_scope, 3) if in_scope else None,
               out_of_scope_declined=round(out_declined / out_scope, 3) if out_scope else None)
    for k, vals in stages.items():
        out[f"{k}_ms_p50"] = pct(vals, 0.5)
        out[f"{k}_ms_p95"] = pct(vals, 0.95)
    return out


def _link_tier(args, settings, default_data: Path) -> None:
    """Make an installed tier's file visible in the bench's own data folder."""
    from bookreader.core.llm.specs import lookup

    spec = lookup(args.backend)
    if spec is None or spec.model is None or spec.model.bundled_module:
        return
    target = settings.models_dir / spec.model.file_name
    source = (args.models_dir or default_data / "models") / spec.model.file_name
    if not target.exists() and source.is_file():
        target.symlink_to(source.resolve())


def tier_settings(args, data_dir: Path):
    """Settings for timing one tier's answers: the bench's data folder with the installed
    tier linked in (:func:`_link_tier`), budgets long enough never to cut an answer."""
    from bookreader.config import Settings, default_data_dir

    settings = Settings(data_dir=data_dir, retrieval_timeout_s=120.0,
                        budgets={args.tier: {"first_token_s": 600.0, "total_s": 1200.0}})
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    args.backend = args.tier
    _link_tier(args, settings, default_data_dir())
    return settings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--backend", default=None, help="backend name (see core/llm/specs.py)")
    ap.add_argument("--tier", default=None, help="a local tier: tiny, small or better "
                    "(its file is linked from --models-dir into the bench's data folder)")
    ap.add_argument("--models-dir", type=Path, default=None,
                    help="where installed tiers are (default: the data folder's models/)")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: default)")
    ap.add_argument("--cases", type=Path, default=None)
    ap.add_argument("--book", type=Path, default=None)
    ap.add_argument("--questions", type=Path, default=None)
    ap.add_argument("--data-dir", type=Path, default=RESULTS_DIR / "cache")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--budget", type=float, default=0.0, help="override the time budget (s)")
    ap.add_argument("--focus-chars", type=int, default=None,
                    help="selection characters shown to the backend (0: the whole selection); "
                         "default: the spec table's selection_chars")
    ap.add_argument("--progress", type=Path, default=None,
                    help="append every selected-text answer to this JSON-lines file as it comes")
    ap.add_argument("--split", choices=("all", "tune", "test"), default="all",
                    help="selected-text cases: the tune half (even positions after --limit), "
                         "the test half (odd positions) or all")
    ap.add_argument("--rescore", type=Path, default=None,
                    help="print the figures of a saved answers file (with --split), no model")
    ap.add_argument("--replay", type=Path, default=None,
                    help="selected text: run the answering path again on the raw outputs of a "
                         "saved answers file (no model; timings are not measured)")
    ap.add_argument("--tag", default="", help="suffix of the result files' names")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.rescore is not None:
        print(json.dumps(rescore(args.rescore, args.split)))
        return 0
    if not (args.backend or args.tier):
        ap.error("give --backend NAME or --tier NAME")
    args.backend = args.backend or args.tier
    from bookreader.config import Settings, default_data_dir
    from bookreader.core.embedding import MiniLMEmbedder

    book_mode = args.book is not None and args.questions is not None
    data_dir = args.data_dir if book_mode else Path(tempfile.mkdtemp(prefix="answer-bench-"))
    settings = Settings(data_dir=data_dir).updated(n_threads=args.threads)
    settings.ensure_dirs()
    _link_tier(args, settings, default_data_dir())
    embedder = MiniLMEmbedder()
    if args.focus_chars is not None:
        import dataclasses

        from bookreader.core.answer import run as answer_run

        base = answer_run.spec_for
        changed = dataclasses.replace(base(args.backend),
                                      selection_chars=args.focus_chars or None)
        answer_run.spec_for = lambda name: changed if name == args.backend else base(name)
    result = run_book(args, settings, embedder) if book_mode else run_selected(args, settings, embedder)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^\w.-]+", "_", args.backend)[-60:]
    (RESULTS_DIR / f"answer_{result['mode']}_{safe}{_suffix(args)}.json").write_text(json.dumps(result, indent=1))
    if args.json:
        print(json.dumps(result))
    else:
        print("| metric | value |")
        print("|---|---|")
        for k, v in result.items():
            print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
