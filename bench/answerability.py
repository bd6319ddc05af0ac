"""Can the offline signals tell an answerable question from an unanswerable one?

Usage::

    python bench/answerability.py [--cases FILE.jsonl] [--judge] [--json]

The SQuAD 2.0 target of ``bench/answer.py`` (unanswerable -> fallback >= 80 % while
answerable -> correct >= 60 %) needs a signal that separates the two kinds of question.
This bench measures every signal BookReader has offline, on the same 200 cases:

* ``coverage``: the extractive backend's IDF-weighted share of the question's content
  words in the best sentence (its answer/fallback decision);
* ``similarity``: MiniLM cosine between the question and the best sentence;
* ``question_words_missing``: content words of the question absent from the selection;
* ``bundled_judge`` (with ``--judge``): the bundled SmolLM2-135M asked "Does the text
  answer the question? Reply Yes or No." over the selection as the answerer shows it
  (focused to 600 characters), scored by log P(No) - log P(Yes) of its first token;

and prints each one's ROC AUC for "unanswerable" (0.5 = chance), then sweeps the extractive
backend's two thresholds and prints the operating points on the trade-off curve: the
share of unanswerable cases declined against the share of answerable ones answered
correctly (answer text containing a gold answer, as in ``bench/answer.py``; the extractive
quote always passes grounding, so the validator is left out here).

Writes ``bench/results/answerability.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))


def auc(scores_pos: list[float], scores_neg: list[float]) -> float:
    """P(score of a positive > score of a negative), ties counted half (Mann-Whitney)."""
    wins = 0.0
    for p in scores_pos:
        for n in scores_neg:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / max(1, len(scores_pos) * len(scores_neg))


def judge_scores(cases: list[dict], tier: str = "", threads: int = 0) -> list[float]:
    """log P(No) - log P(Yes) of a local model's first answer token, per case (the bundled
    tiny model by default, else an installed ``tier``, shown what that tier is shown)."""
    import llama_cpp

    from bookreader.config import default_data_dir
    from bookreader.core.focus import focus
    from bookreader.core.llm import models, specs
    from bookreader.core.llm.registry import bundled_model_path

    chars = 600
    path = bundled_model_path()
    if tier:
        spec = specs.lookup(tier)
        path = models.installed_path(spec, default_data_dir() / "models")
        if path is None:
            raise SystemExit(f"the {tier} tier is not installed (bookreader models install {tier})")
        chars = spec.selection_chars or 4000
    cores = threads or os.cpu_count() or 1
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=4096, n_threads=cores,
                          n_threads_batch=cores, logits_all=True, verbose=False)
    scores = []
    for c in cases:
        text = focus(c["selection"], c["question"], chars)
        messages = [
            {"role": "system", "content": "You check whether a text answers a question. "
                                          "Reply Yes or No."},
            {"role": "user", "content": f"Text: {text}\n\nQuestion: {c['question']}\n\n"
                                        "Does the text answer the question? Reply Yes or No."},
        ]
        out = llm.create_chat_completion(messages, max_tokens=1, logprobs=True, top_logprobs=20,
                                         temperature=0.0)
        top = out["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        lp = {t["token"].strip().lower(): t["logprob"] for t in top}
        scores.append(lp.get("no", -30.0) - lp.get("yes", -30.0))
    return scores


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, default=None)
    ap.add_argument("--judge", action="store_true",
                    help="also score with the bundled model as a yes/no judge (~1.5 min)")
    ap.add_argument("--judge-tier", default="", help="judge with this installed tier "
                    "(e.g. small) instead of the bundled tiny model")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads for the judge")
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from answer import contains_gold
    from make_squad_cases import DEFAULT_OUT, SQUAD, write_cases

    from bookreader.core import prompts
    from bookreader.core.embedding import MiniLMEmbedder
    from bookreader.core.llm.extractive import ExtractiveBackend, parse_prompt
    from bookreader.core.llm.extractive_compose import render
    from bookreader.core.sentences import content_terms
    from bookreader.core.types import Mode

    path = args.cases or DEFAULT_OUT
    if args.cases is None and not DEFAULT_OUT.exists():
        if not SQUAD.exists():
            print(f"SQuAD not found at {SQUAD} (is ../shared/eval present?)", file=sys.stderr)
            return 2
        write_cases(DEFAULT_OUT)
    cases = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    if args.limit:
        cases = cases[: args.limit]
    # Thresholds that never decline: every case gets its best sentences, then each
    # operating point is applied to the scores.
    backend = ExtractiveBackend(MiniLMEmbedder(), min_coverage=-1.0, min_similarity=2.0)
    rows = []
    for c in cases:
        messages = prompts.build_messages(Mode.SELECTED, c["question"], selection=c["selection"])
        chosen = backend.select(parse_prompt(messages))
        golds = c.get("gold_answers") or ([c["gold_answer"]] if c.get("gold_answer") else [])
        text = "\n".join(render(x) for x in chosen)
        q_terms = set(content_terms(c["question"]))
        sel_terms = set(content_terms(c["selection"]))
        rows.append(dict(
            answerable=bool(c["answerable"]),
            coverage=chosen[0].coverage if chosen else 0.0,
            similarity=(chosen[0].similarity or 0.0) if chosen else 0.0,
            question_words_missing=len(q_terms - sel_terms),
            correct=bool(c["answerable"]) and bool(chosen) and contains_gold(text, golds),
        ))
    if args.judge:
        for r, score in zip(rows, judge_scores(cases, args.judge_tier, args.threads)):
            r["bundled_judge"] = score
    una = [r for r in rows if not r["answerable"]]
    ans = [r for r in rows if r["answerable"]]
    aucs = {
        # Low coverage / similarity should mean "unanswerable": score = minus the signal.
        "coverage": auc([-r["coverage"] for r in una], [-r["coverage"] for r in ans]),
        "similarity": auc([-r["similarity"] for r in una], [-r["similarity"] for r in ans]),
        "question_words_missing": auc([r["question_words_missing"] for r in una],
                                      [r["question_words_missing"] for r in ans]),
    }
    if args.judge:
        aucs["bundled_judge"] = auc([r["bundled_judge"] for r in una],
                                    [r["bundled_judge"] for r in ans])
    points = []
    grid = [x / 20 for x in range(0, 22)]  # 1.05: decline everything
    for cov_t in grid:
        for sim_t in grid:
            answers = lambda r, c=cov_t, s=sim_t: r["coverage"] >= c or r["similarity"] >= s  # noqa: E731
            declined = sum(not answers(r) for r in una) / len(una)
            correct = sum(r["correct"] and answers(r) for r in ans) / len(ans)
            points.append(dict(min_coverage=cov_t, min_similarity=sim_t,
                               unanswerable_fallback=round(declined, 3),
                               answerable_correct=round(correct, 3)))
    # The trade-off curve: for each level of declining, the best correctness reached.
    frontier = []
    for level in (0.5, 0.6, 0.7, 0.8, 0.9):
        ok = [p for p in points if p["unanswerable_fallback"] >= level]
        best = max(ok, key=lambda p: p["answerable_correct"]) if ok else None
        frontier.append(dict(fallback_at_least=level, **(best or {})))
    meets = [p for p in points if p["unanswerable_fallback"] >= 0.8
             and p["answerable_correct"] >= 0.6]
    result = dict(n=len(rows), n_answerable=len(ans), ceiling_correct=round(
        sum(r["correct"] for r in ans) / len(ans), 3), auc=
        {k: round(v, 3) for k, v in aucs.items()}, frontier=frontier,
        target_met=bool(meets))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "answerability.json").write_text(json.dumps(result, indent=1))
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{len(rows)} cases; extractive answers correct when it always answers: "
          f"{result['ceiling_correct']:.0%}")
    print("| signal | ROC AUC for 'unanswerable' (0.5 = chance) |")
    print("|---|---|")
    for k, v in result["auc"].items():
        print(f"| {k} | {v:.3f} |")
    print()
    print("| unanswerable declined >= | best answerable correct | min_coverage | min_similarity |")
    print("|---|---|---|---|")
    for f in frontier:
        print(f"| {f['fallback_at_least']:.0%} | {f.get('answerable_correct', 0):.0%} | "
              f"{f.get('min_coverage', '-')} | {f.get('min_similarity', '-')} |")
    print(f"\nTarget (fallback >= 80 % and correct >= 60 %) reachable: {result['target_met']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
