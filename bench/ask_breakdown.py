"""Where a whole-book question's first-token time goes: milliseconds per step of one ask.

Usage::

    python bench/ask_breakdown.py --book ../shared/eval/books/thinkjava2.pdf \\
        --questions bench/questions/thinkjava2.jsonl [--tier small] [--limit 8] \\
        [--data-dir DIR] [--models-dir DIR]

Every question is asked through :class:`Library` exactly as a student's; the steps are
timed by wrapping the functions that do them (wall and CPU milliseconds of this process):
retrieval (query embedding and search), focus (ranking the passages' sentences: the
int8 MiniLM embeds them with the question), prompt building,
priming the rules prefix, llama.cpp's prompt evaluation (the first ``eval`` of the
question), the first visible token, and the grounding check.  The first question of a
run also primes the rules and is left out of the medians.  The first-token budget is
lifted (a busy machine must not turn a slow answer into a timeout here).  Timings depend
on the machine's load: quote ``uptime`` with them; CPU milliseconds depend on it less.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

STEPS = ("retrieval", "focus", "prompt", "prime", "prompt_eval", "first_token", "grounding")


class Timer:
    """Records (step, start, wall ms, cpu ms) of the wrapped calls of one question."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.events: list[tuple[str, float, float, float]] = []

    def wrap(self, owner, name: str, step: str) -> None:
        real = getattr(owner, name)

        @functools.wraps(real)
        def timed(*args, **kwargs):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                self.events.append((step, (start - self.t0) * 1000.0,
                                    (time.perf_counter() - start) * 1000.0,
                                    (time.process_time() - cpu) * 1000.0))

        setattr(owner, name, timed)

    def first(self, step: str):
        return next((e for e in self.events if e[0] == step), None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--book", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--tier", default="small")
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--data-dir", type=Path, default=BENCH_DIR / "results" / "cache")
    ap.add_argument("--models-dir", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None,
                    help="write each question's answer and step times here (JSON lines)")
    args = ap.parse_args(argv)
    if not args.book.is_file():
        print(f"{args.book} is not there (the evaluation folder ../shared/eval is needed); "
              "nothing measured.", file=sys.stderr)
        return 2

    from bookreader.core.omp import passive_wait

    passive_wait()  # before llama_cpp loads the process's OpenMP runtime, as the app does
    import llama_cpp
    from answer import tier_settings

    import bookreader.core.answer.context as answer_context
    import bookreader.core.answer.pipeline as answer_pipeline
    from bookreader.core.retrieval import HybridRetriever
    from bookreader.library import Library

    settings = tier_settings(args, args.data_dir)
    timer = Timer()
    timer.wrap(HybridRetriever, "explain", "retrieval")
    timer.wrap(answer_context, "focus_passages", "focus")
    timer.wrap(answer_context.prompts, "messages_for", "prompt")
    shown: list[str] = []  # the question's turn as the model reads it
    real_messages_for = answer_context.prompts.messages_for

    def recording_messages_for(*a, **k):
        messages = real_messages_for(*a, **k)
        shown.append(messages[-1].content)
        return messages

    answer_context.prompts.messages_for = recording_messages_for
    from bookreader.core.llm.llama_cpp import LlamaCppBackend

    timer.wrap(LlamaCppBackend, "prime", "prime")
    timer.wrap(llama_cpp.Llama, "eval", "eval")
    timer.wrap(answer_pipeline, "finish", "grounding")

    library = Library(settings)
    t = time.perf_counter()
    info = library.ingest(args.book)
    print(f"ingest (reused when indexed): {time.perf_counter() - t:.1f} s", file=sys.stderr)
    items = [json.loads(x) for x in args.questions.read_text(encoding="utf-8").splitlines()
             if x.strip()]
    rows = []
    try:
        for n, item in enumerate(items[: args.limit or None]):
            timer.events.clear()
            shown.clear()
            timer.t0 = time.perf_counter()
            cpu0 = time.process_time()
            answer = library.ask(item["question"], book=info.book_id, backend=args.tier)
            row = {"question": item["question"], "outcome": answer.outcome.value,
                   "answer": answer.text, "prompt_text": shown[-1] if shown else "",
                   "first_token": answer.first_token_ms,
                   "total": (time.perf_counter() - timer.t0) * 1000.0,
                   "cpu": (time.process_time() - cpu0) * 1000.0}
            for step in ("retrieval", "focus", "prompt", "prime", "grounding"):
                e = timer.first(step)
                row[step] = (e[2], e[3]) if e else (0.0, 0.0)
            # The question's prompt evaluation: the first eval after priming.
            primed = timer.first("prime")
            after = [e for e in timer.events if e[0] == "eval"
                     and (primed is None or e[1] >= primed[1] + primed[2])]
            row["prompt_eval"] = (after[0][2], after[0][3]) if after else (0.0, 0.0)
            rows.append(row)
            steps = "  ".join(f"{s} {row[s][0]:.0f}/{row[s][1]:.0f}" for s in
                              ("retrieval", "focus", "prompt", "prime", "prompt_eval",
                               "grounding"))
            print(f"[{n}] first token {row['first_token'] or 0:.0f} ms, total "
                  f"{row['total']:.0f} ms, cpu {row['cpu']:.0f} ms | wall/cpu ms: {steps}",
                  flush=True)
    finally:
        library.close()
    later = rows[1:] or rows
    med = {s: (statistics.median(r[s][0] for r in later), statistics.median(r[s][1] for r in later))
           for s in ("retrieval", "focus", "prompt", "prime", "prompt_eval", "grounding")}
    firsts = [r["first_token"] for r in later if r["first_token"]]
    print(f"median over questions 2..{len(rows)} (wall/cpu ms): "
          + "  ".join(f"{s} {w:.0f}/{c:.0f}" for s, (w, c) in med.items())
          + f"  first_token {statistics.median(firsts) if firsts else 0:.0f}")
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.json:
        print(json.dumps({"rows": rows, "median": med}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
