"""Where a whole-book answer's time goes, stage by stage, with tokens and shares.

Usage::

    python bench/latency_breakdown.py [--book thinkjava2] [--n 6] [--tier small] \\
        [--data-dir DIR] [--models-dir DIR] [--no-warm-up] [--json OUT]

Asks ``--n`` in-scope questions spread evenly over a book's question file
(``bench/questions/<book>.jsonl``; the book from ``../shared/eval/books``) in whole-book
mode through :class:`Library`, exactly as a student's, after the window's warm-up
(:meth:`Library.warm_up`: the model loaded and the rules prefix read, as the window does
when a book opens; ``--no-warm-up`` leaves it to the first question).  The first-token
budget is lifted so a busy machine cannot turn a slow answer into a timeout here.

Each stage is timed by wrapping the function that does it (wall ms, and CPU ms of this
whole process, llama.cpp's threads included):

* ``retrieval``: the search (query embedding, dense + BM25, confidence);
* ``focus``: ranking the passages' sentences for the model's excerpts (inside ``context``);
* ``context``: building the model's prompt (focus included);
* ``load``: the one-off work before the model starts (embedders, model, rules prefix);
  ``prefix`` says whether the rules prefix was already held (``hit``), loaded from the
  RAM state cache or read again (``read N``: tokens evaluated);
* ``before_model``: from the question's start until the model is asked to answer
  (everything above, the audit log's write-ahead record and the stage signals);
* ``prefill``: llama.cpp reading the question's prompt after the cached prefix
  (``prompt_tok`` tokens, ``prefill_tps``);
* ``first_token``: from the question's start to the first streamed text (what the
  student waits for);
* ``decode``: the answer's tokens after the first (``decode_tok``, ``decode_tps``);
* ``checks``: parse, cite, check and render the model's answer;
* ``rival``: the extractive backend's answer on the same passages and the choice
  between the two (the choose stage), after the model's answer;
* ``total``: the whole ask, audit log included.

Timings depend on the machine's load: the load average is printed with the figures;
token counts do not depend on it, and the shares depend on it less than the seconds.
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
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))

import books  # noqa: E402  (bench/books.py: where the evaluation books are)

STAGES = ("retrieval", "focus", "context", "load", "before_model", "prefill", "first_token", "decode",
          "checks", "rival", "total")


class Recorder:
    """Wall and CPU milliseconds of wrapped calls, as (name, start, wall, cpu, extra)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.events: list[dict[str, Any]] = []

    def reset(self) -> None:
        self.t0 = time.perf_counter()
        self.events.clear()

    def wrap(self, owner: Any, attr: str, name: str,
             extra: Callable[..., dict[str, Any]] | None = None) -> None:
        real = getattr(owner, attr)

        @functools.wraps(real)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.process_time()
            info = extra(*args, **kwargs) if extra is not None else {}
            try:
                return real(*args, **kwargs)
            finally:
                self.events.append({"name": name, "start": (start - self.t0) * 1000.0,
                                    "wall": (time.perf_counter() - start) * 1000.0,
                                    "cpu": (time.process_time() - cpu) * 1000.0, **info})

        setattr(owner, attr, timed)

    def named(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["name"] == name]

    def first(self, name: str) -> dict[str, Any]:
        found = self.named(name)
        return found[0] if found else {"wall": 0.0, "cpu": 0.0, "start": 0.0}


def within(e: dict[str, Any], window: dict[str, Any]) -> bool:
    return window["start"] <= e["start"] <= window["start"] + window["wall"]


def breakdown(rec: Recorder, answer: Any, total_ms: float, cpu_ms: float) -> dict[str, Any]:
    """One question's stages from the recorded events."""
    rival = rec.first("rival")
    model_stream = next((e for e in rec.named("stream") if not (rival["wall"] and within(e, rival))),
                        {"wall": 0.0, "cpu": 0.0, "start": 0.0})
    evals = [e for e in rec.named("eval") if model_stream["wall"] and within(e, model_stream)]
    prime_evals = [e for e in rec.named("eval") if any(within(e, p) for p in rec.named("prime"))]
    prefill = evals[0] if evals else {"wall": 0.0, "cpu": 0.0, "n": 0, "cached": 0}
    decode = evals[1:]
    checks = next((e for e in rec.named("finish") if not (rival["wall"] and within(e, rival))),
                  {"wall": 0.0, "cpu": 0.0})
    loads = rec.named("load")
    if not rec.named("prime") or not prime_evals and all(
            p.get("held") for p in rec.named("prime")):
        prefix = "hit"
    elif prime_evals:
        prefix = f"read {sum(e['n'] for e in prime_evals)}"
    else:
        prefix = "state loaded"
    decode_ms = sum(e["wall"] for e in decode)
    row = {
        "question": answer.question, "outcome": answer.outcome.value,
        "model": answer.model,
        "retrieval": rec.first("retrieval")["wall"], "focus": rec.first("focus")["wall"],
        "context": rec.first("context")["wall"],
        "load": sum(e["wall"] for e in loads[:1]), "prefix": prefix,
        "before_model": model_stream["start"],
        "prefill": prefill["wall"], "prompt_tok": prefill.get("n", 0),
        "cached_tok": prefill.get("cached", 0),
        "prefill_tps": prefill.get("n", 0) / (prefill["wall"] / 1000.0) if prefill["wall"] else 0.0,
        "first_token": answer.first_token_ms or 0.0,
        "decode": decode_ms, "decode_tok": len(decode),
        "decode_tps": len(decode) / (decode_ms / 1000.0) if decode_ms else 0.0,
        "checks": checks["wall"], "rival": rival["wall"], "total": total_ms,
        "cpu": cpu_ms,
        "cpu_stage": {s: rec.first(s)["cpu"] for s in ("retrieval", "focus", "context", "rival")}
                     | {"checks": checks["cpu"], "prefill": prefill["cpu"]},
    }
    return row


def median(rows: list[dict[str, Any]], key: str) -> float:
    values = [float(r[key]) for r in rows]
    return statistics.median(values) if values else 0.0


def summary(rows: list[dict[str, Any]]) -> str:
    total = median(rows, "total") or 1.0
    first = median(rows, "first_token") or 1.0
    lines = ["stage         p50 ms   share of total  share of first token"]
    for s in STAGES:
        m = median(rows, s)
        before_first = s in ("retrieval", "focus", "context", "load", "before_model",
                             "prefill")
        share_first = f"{m / first:6.0%}" if before_first or s == "first_token" else "      "
        lines.append(f"{s:12s} {m:8.0f}   {m / total:6.0%}          {share_first}")
    lines.append(
        f"prompt tokens read p50 {median(rows, 'prompt_tok'):.0f} (after {median(rows, 'cached_tok'):.0f}"
        f" cached), prefill {median(rows, 'prefill_tps'):.0f} tok/s; answer tokens p50 "
        f"{median(rows, 'decode_tok') + 1:.0f}, decode {median(rows, 'decode_tps'):.1f} tok/s; "
        f"prefix: {', '.join(r['prefix'] for r in rows)}")
    return "\n".join(lines)


def spread(items: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` items spread evenly over ``items``."""
    if n >= len(items):
        return items
    return [items[(k * len(items)) // n] for k in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--book", default="thinkjava2", help="a book stem of bench/books.py")
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--tier", default="small")
    ap.add_argument("--data-dir", type=Path, default=BENCH_DIR / "results" / "cache")
    ap.add_argument("--models-dir", type=Path, default=None)
    ap.add_argument("--books-dir", type=Path, default=books.BOOKS_DIR)
    ap.add_argument("--no-warm-up", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="write every row here")
    ap.add_argument("--top-k", type=int, default=None,
                    help="passages retrieved for a question (default: the settings' top_k)")
    args = ap.parse_args(argv)
    pdf = args.books_dir / f"{args.book}.pdf"
    questions = books.QUESTIONS_DIR / f"{args.book}.jsonl"
    if not pdf.is_file() or not questions.is_file():
        print(f"{pdf} or {questions} is not there; nothing measured.", file=sys.stderr)
        return 2

    from bookreader.core.omp import passive_wait

    passive_wait()  # before llama_cpp loads the process's OpenMP runtime, as the app does
    import llama_cpp
    from answer import tier_settings

    import bookreader.core.answer.context as answer_context
    import bookreader.core.answer.pipeline as pipeline
    from bookreader.core.answer.answerer import Answerer
    from bookreader.core.llm.llama_cpp import LlamaCppBackend
    from bookreader.library import Library

    settings = tier_settings(args, args.data_dir)
    if args.top_k:
        settings.top_k = args.top_k

    rec = Recorder()
    rec.wrap(pipeline, "retrieve", "retrieval")
    rec.wrap(answer_context, "focus_passages", "focus")
    rec.wrap(pipeline, "build_context", "context")
    rec.wrap(Answerer, "load", "load")
    rec.wrap(pipeline, "stream", "stream")
    rec.wrap(pipeline, "finish", "finish")
    rec.wrap(pipeline, "book_sentences_instead", "rival")
    rec.wrap(LlamaCppBackend, "prime", "prime",
             lambda self, messages: {"held": tuple((m.role, m.content) for m in messages)
                                     == self._primed})
    rec.wrap(llama_cpp.Llama, "eval", "eval",
             lambda self, tokens: {"n": len(tokens), "cached": int(self.n_tokens)})

    library = Library(settings)
    info = library.ingest(pdf)
    if not args.no_warm_up:
        t = time.perf_counter()
        library.warm_up(info.book_id, backend=args.tier)
        print(f"warm-up {time.perf_counter() - t:.1f} s", file=sys.stderr)
    items = [json.loads(x) for x in questions.read_text(encoding="utf-8").splitlines()
             if x.strip()]
    items = spread([i for i in items if i.get("gold_pages")], args.n)
    rows = []
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min)", flush=True)
    try:
        for n, item in enumerate(items, 1):
            rec.reset()
            cpu0 = time.process_time()
            answer = library.ask(item["question"], book=info.book_id, backend=args.tier)
            total = (time.perf_counter() - rec.t0) * 1000.0
            row = breakdown(rec, answer, total, (time.process_time() - cpu0) * 1000.0)
            row["load_avg"] = os.getloadavg()[0]
            rows.append(row)
            print(f"[{n}] {row['outcome']:11s} " + " ".join(
                f"{s} {row[s]:.0f}" for s in STAGES) +
                f" | prompt {row['prompt_tok']} tok {row['prefill_tps']:.0f} tok/s, answer "
                f"{row['decode_tok'] + 1} tok {row['decode_tps']:.1f} tok/s, prefix "
                f"{row['prefix']}, cpu {row['cpu']:.0f} ms, load {row['load_avg']:.2f}",
                flush=True)
    finally:
        library.close()
    answered = [r for r in rows if r["prompt_tok"]]
    print(f"\n{len(answered)} of {len(rows)} questions reached the model; medians over them "
          f"(load average {os.getloadavg()[0]:.2f}):")
    print(summary(answered or rows))
    if args.json is not None:
        args.json.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
