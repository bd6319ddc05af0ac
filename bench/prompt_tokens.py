"""What a local tier's whole-book prompt really costs: tokens read after the cached prefix.

Usage::

    python bench/prompt_tokens.py --book ../shared/eval/books/thinkjava2.pdf \\
        --questions bench/questions/thinkjava2.jsonl [--tier small] [--limit N] \\
        [--answers bench/results/answer_quality_thinkjava2_small.answers.jsonl] [--json]

Every question is asked through :class:`Library` exactly as a student's (retrieval, focus,
prompt building), but the tier's model is never run: its ``stream`` renders the messages
with the GGUF file's own chat template and counts the tokens with its own tokenizer (the
file is opened ``vocab_only``, a fraction of a second).  Counts are deterministic and do
not depend on the machine's load, unlike timings.

Printed, over the in-scope questions that reach the model:

* ``prefix``: tokens of the rules and worked example that :meth:`LlamaCppBackend.prime`
  evaluates once per session (shared, token for token, by every question's prompt:
  ``prefix_shared`` says whether that held for every question and consecutive pair);
* ``uncached`` p50/p95/max: tokens read per question after that prefix (passages,
  question, chat framing): this is the first-token cost;
* the expected first token at ``--prompt-tps`` / ``--gen-tps`` (default: the tier's
  ``reference_speed``), as :func:`bookreader.core.llm.choose.expected` computes it;
* with ``--answers`` (a results file of ``bench/answer_quality.py`` for the same tier),
  the generated tokens of each raw answer p50/p95.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))


from answer import pct  # noqa: E402  (the percentile the other answer benches print)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or '').splitlines()[0])
    ap.add_argument("--book", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--tier", default="small")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--data-dir", type=Path, default=RESULTS_DIR / "cache")
    ap.add_argument("--models-dir", type=Path, default=None,
                    help="where the tier is installed (default: the user's data folder)")
    ap.add_argument("--answers", type=Path, default=None)
    ap.add_argument("--prompt-tps", type=float, default=0.0)
    ap.add_argument("--gen-tps", type=float, default=0.0)
    ap.add_argument("--show", type=int, default=0, help="print the first N user messages")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from retrieval import open_library

    from bookreader.config import Settings, default_data_dir
    from bookreader.core.llm import choose, models
    from bookreader.core.llm.llama_cpp import LlamaCppBackend
    from bookreader.core.llm.prompt_cost import PromptCounter
    from bookreader.core.llm.specs import tier

    spec = tier(args.tier)
    settings = Settings(data_dir=args.data_dir, retrieval_timeout_s=120.0)
    settings.ensure_dirs()
    assert spec.model is not None
    source = models.installed_path(spec, (args.models_dir or default_data_dir() / "models"))
    target = settings.models_dir / spec.model.file_name
    if source is not None and not target.exists() and not spec.model.bundled_module:
        target.symlink_to(Path(source).resolve())
    path = models.installed_path(spec, settings.models_dir)
    if path is None:
        print(f"The {spec.name} tier is not installed; install it with "
              f"`bookreader models install {spec.name}`.", file=sys.stderr)
        return 2
    counter = PromptCounter(path)
    rows: list[dict[str, Any]] = []
    state: dict[str, Any] = {}

    def fake_prime(self, messages):  # noqa: ANN001
        state["prefix"] = list(messages)

    def fake_stream(self, messages, **_kw):  # noqa: ANN001
        state["messages"] = list(messages)
        return iter(())

    LlamaCppBackend.prime = fake_prime  # type: ignore[method-assign]
    LlamaCppBackend.stream = fake_stream  # type: ignore[method-assign]
    LlamaCppBackend.warm_up = lambda self: None  # type: ignore[method-assign]

    items = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    items = [i for i in items if i.get("gold_pages")]
    if args.limit:
        items = items[: args.limit]
    library, info, _ = open_library(args.book, args.data_dir, settings=settings)
    previous: Optional[list[int]] = None
    shared = True
    try:
        for item in items:
            state.clear()
            library.ask(item["question"], book=info.book_id, backend=spec.name)
            if "messages" not in state:
                rows.append({"question": item["question"], "reached_model": False})
                continue
            if len(rows) < args.show:
                print(f"--- {item['question']}\n{state['messages'][-1].content}\n")
            cost = counter.cost(state["messages"])
            full = counter.tokens(state["messages"])
            shared &= cost.prefix_shared
            if previous is not None:
                shared &= counter.common(previous, full) >= cost.prefix
            previous = full
            rows.append({"question": item["question"], "reached_model": True,
                         "prefix": cost.prefix, "total": cost.total,
                         "uncached": cost.uncached,
                         "prompt_chars": sum(len(m.content) for m in state["messages"][-1:])})
    finally:
        library.close()

    reached = [r for r in rows if r["reached_model"]]
    unc = [r["uncached"] for r in reached]
    ptps = args.prompt_tps or spec.reference_speed[0]
    gtps = args.gen_tps or spec.reference_speed[1]
    out: dict[str, Any] = {
        "tier": spec.name, "questions": len(rows), "reached_model": len(reached),
        "prefix": reached[0]["prefix"] if reached else None, "prefix_shared": shared,
        "uncached_p50": pct(unc, 0.5), "uncached_p95": pct(unc, 0.95),
        "uncached_max": max(unc) if unc else None,
        "user_chars_p50": pct([r["prompt_chars"] for r in reached], 0.5),
        "prompt_tps": ptps, "gen_tps": gtps,
    }
    if unc:
        f50 = choose.first_token_s(pct(unc, 0.5) or 0, ptps, gtps)
        f95 = choose.first_token_s(pct(unc, 0.95) or 0, ptps, gtps)
        out.update(first_token_p50_s=round(f50, 2), first_token_p95_s=round(f95, 2))
    if args.answers is not None and args.answers.is_file():
        gen = []
        for line in args.answers.read_text().splitlines():
            row = json.loads(line)
            if row.get("raw_output"):
                gen.append(len(counter.tokenize(row["raw_output"])))
        out.update(answer_tokens_p50=pct(gen, 0.5), answer_tokens_p95=pct(gen, 0.95),
                   answers_counted=len(gen))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"prompt_tokens_{spec.name}.json").write_text(
        json.dumps({"summary": out, "rows": rows}, indent=1))
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
