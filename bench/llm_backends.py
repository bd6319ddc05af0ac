"""Speed and memory of each answering backend on a realistic prompt.

For every backend given (default: bundled, extractive and every .gguf in the models
folders) this builds whole-book prompts with ``core.prompts`` from SQuAD paragraphs in
``../shared/eval/qa/squad2_dev_half.json`` (five paragraphs as five excerpts; a different
set each run so llama.cpp cannot reuse the previous prompt), streams an answer and
measures: model load time, prompt tokens, time to the first token, prompt reading speed
(prompt tokens / first-token time), writing speed (tokens after the first / their time),
total time, and the process's peak memory after the run.

    python bench/llm_backends.py [--backend NAME ...] [--runs 3] [--max-tokens 120] [--json]

Prints a markdown table (or JSON with ``--json``) and writes bench/results/llm_backends.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bookreader.config import Settings  # noqa: E402
from bookreader.core.llm import registry  # noqa: E402
from bookreader.core.llm.registry import create_backend, list_gguf_models  # noqa: E402
from bookreader.core.prompts import Excerpt, build_messages  # noqa: E402
from bookreader.core.types import Mode  # noqa: E402

SQUAD = REPO.parent / "shared" / "eval" / "qa" / "squad2_dev_half.json"
RESULTS = REPO / "bench" / "results" / "llm_backends.json"


def prompts(runs: int, seed: int = 13) -> list[list]:
    """``runs`` whole-book prompts of five SQuAD paragraphs and one answerable question."""
    data = json.loads(SQUAD.read_text(encoding="utf-8"))
    paragraphs = [
        (article["title"], p) for article in data["data"] for p in article["paragraphs"]
        if any(not q.get("is_impossible") for q in p["qas"])
    ]
    rng = random.Random(seed)
    out = []
    for _ in range(runs):
        chosen = rng.sample(paragraphs, 5)
        excerpts = [Excerpt(i + 1, title.replace("_", " "), str(10 + i), p["context"][:900])
                    for i, (title, p) in enumerate(chosen)]
        question = next(q["question"] for q in chosen[0][1]["qas"] if not q.get("is_impossible"))
        out.append(build_messages(Mode.BOOK, question, excerpts=excerpts))
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(name: str, settings: Settings, runs: int, max_tokens: int) -> dict:
    backend = create_backend(name, settings)
    t0 = time.perf_counter()
    backend.warm_up()
    load_s = time.perf_counter() - t0
    llm = getattr(backend, "_llm", None)
    rows = []
    for messages in prompts(runs):
        prompt_tokens = None
        if llm is not None:
            text = llm.tokenize("\n".join(m.content for m in messages).encode("utf-8"))
            prompt_tokens = len(text)
        start = time.perf_counter()
        first = None
        count = 0
        for _ in backend.stream(messages, max_tokens=max_tokens, temperature=0.1):
            count += 1
            if first is None:
                first = time.perf_counter() - start
        total = time.perf_counter() - start
        rows.append(dict(prompt_tokens=prompt_tokens, first_s=first or total, total_s=total,
                         tokens=count))
    first = statistics.median(r["first_s"] for r in rows)
    writing = [((r["tokens"] - 1) / (r["total_s"] - r["first_s"]))
               for r in rows if r["tokens"] > 1 and r["total_s"] > r["first_s"]]
    reading = [r["prompt_tokens"] / r["first_s"] for r in rows
               if r["prompt_tokens"] and r["first_s"] > 0]
    return dict(
        backend=name, model=backend.model_name, runs=runs, load_s=round(load_s, 3),
        prompt_tokens=statistics.median(r["prompt_tokens"] for r in rows)
        if rows[0]["prompt_tokens"] else None,
        first_token_ms=round(first * 1000, 1),
        read_tok_s=round(statistics.median(reading), 1) if reading else None,
        write_tok_s=round(statistics.median(writing), 1) if writing else None,
        tokens=statistics.median(r["tokens"] for r in rows),
        total_s=round(statistics.median(r["total_s"] for r in rows), 3),
        peak_rss_mb=round(peak_rss_mb(), 1), threads=registry.threads(settings),
        cores=os.cpu_count(),
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", action="append", help="backend name (repeatable)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=120)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    if not SQUAD.is_file():
        print(f"evaluation data not found: {SQUAD}", file=sys.stderr)
        return 2
    settings = Settings.load()
    names = args.backend or (["bundled", "extractive"]
                             + [f"gguf:{p}" for p in list_gguf_models(settings)])
    results = [measure(n, settings, args.runs, args.max_tokens) for n in names]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2), encoding="utf-8")
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    cols = ["backend", "load_s", "prompt_tokens", "first_token_ms", "read_tok_s",
            "write_tok_s", "tokens", "total_s", "peak_rss_mb"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        name = r["backend"] if len(r["backend"]) < 40 else "gguf:..." + r["backend"][-30:]
        print("| " + " | ".join(str(r[c]) if c != "backend" else name for c in cols) + " |")
    print(f"\n{results[0]['threads']} threads on {results[0]['cores']} cores; "
          f"median of {args.runs} runs; written to {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
