"""llama.cpp context settings against each other on a whole-book prompt: prefill and decode.

Usage::

    python bench/llama_settings.py [--tier small] [--rounds 6] [--threads 2] \\
        [--configs default,flash,flash_q8,ubatch128]

Each configuration is loaded once (same GGUF file, mmapped); then, round after round
(the configurations interleaved, so a change in the machine's load hits all of them
alike), each reads (once) the rules prefix, then the question's part of a real-sized
whole-book prompt (the worked example's rules and turn, about 600 characters of excerpts
and a question: the tier's ``context_chars``) after the prefix, and writes ``--decode``
tokens greedily.  Printed per configuration: median prefill and decode tokens per second
over the rounds, and the first generated tokens (the same tokens for every configuration
that computes alike).  Quote the load average printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

#: Name -> extra keyword arguments of ``llama_cpp.Llama``.
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "flash": {"flash_attn": True},
    "flash_q8": {"flash_attn": True, "type_k": 8, "type_v": 8},  # GGML_TYPE_Q8_0
    "ubatch128": {"n_ubatch": 128},
    "batch256": {"n_batch": 256},
}

_TEXT = (
    "A variable is a named location that stores a value. Values may be numbers, text, "
    "images, sounds, and other types of data. To store a value, you first have to "
    "declare a variable. The declaration gives the variable a name and a type. When you "
    "assign a value to a variable, you update its value. The left side of an assignment "
    "has to be a variable name, and the right side has to be an expression. A common "
    "source of confusion is that some types change the way operators behave."
)


def prompt_messages(chars: int) -> list[Any]:
    from bookreader.core import prompts
    from bookreader.core.types import Excerpt, Mode

    text = (_TEXT * 4)[:chars]
    half = len(text) // 2
    excerpts = [Excerpt(1, "2.1. Declaring Variables", "17", text[:half]),
                Excerpt(2, "2.3. Assignment", "18", text[half:])]
    return prompts.build_messages(Mode.BOOK, "What does an assignment do to a variable?",
                                  excerpts=excerpts)


def tokens_of(llm: Any, messages: list[Any]) -> tuple[list[int], list[int]]:
    """(prefix tokens, whole prompt tokens) through the GGUF's own chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata["tokenizer.chat_template"]
    fmt = Jinja2ChatFormatter(template, eos_token="<|endoftext|>", bos_token="")
    turns = [{"role": m.role, "content": m.content} for m in messages]
    whole = fmt(messages=turns).prompt
    head = fmt(messages=turns[:-1] + [{"role": "user", "content": ""}]).prompt
    a = llm.tokenize(whole.encode(), add_bos=False, special=True)
    b = llm.tokenize(head.encode(), add_bos=False, special=True)
    shared = 0
    for x, y in zip(a, b):
        if x != y:
            break
        shared += 1
    return a[:shared], a


def one_round(llm: Any, prefix: list[int], whole: list[int], decode: int) -> tuple[float, float, list[int]]:
    import numpy as np

    if llm.n_tokens < len(prefix) or list(llm.input_ids[: len(prefix)]) != prefix:
        llm.n_tokens = 0
        llm.eval(prefix)
    llm.n_tokens = len(prefix)  # the prefix stays cached, as the backend's primed rules
    t = time.perf_counter()
    llm.eval(whole[len(prefix):])
    prefill = time.perf_counter() - t
    out: list[int] = []
    t = time.perf_counter()
    for _ in range(decode):
        logits = llm._ctx.get_logits()  # the last position's logits
        n_vocab = llm.n_vocab()
        token = int(np.argmax(np.ctypeslib.as_array(logits, shape=(n_vocab,))))
        out.append(token)
        llm.eval([token])
    return prefill, time.perf_counter() - t, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--tier", default="small")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--chars", type=int, default=600)
    ap.add_argument("--configs", default="default,flash,flash_q8,ubatch128")
    args = ap.parse_args(argv)
    from bookreader.core.omp import passive_wait

    passive_wait()  # the OpenMP wait policy the app's llama.cpp runs with
    import llama_cpp

    from bookreader.config import Settings
    from bookreader.core.llm import models
    from bookreader.core.llm.specs import tier

    path = models.installed_path(tier(args.tier), Settings.load().models_dir)
    if path is None:
        print(f"The {args.tier} tier is not installed; nothing measured.", file=sys.stderr)
        return 2
    names = args.configs.split(",")
    llms = {}
    for name in names:
        kwargs = dict(model_path=str(path), n_ctx=4096, n_threads=args.threads,
                      n_threads_batch=args.threads, n_batch=512, verbose=False)
        kwargs.update(CONFIGS[name])
        llms[name] = llama_cpp.Llama(**kwargs)
    prefix, whole = tokens_of(llms[names[0]], prompt_messages(args.chars))
    print(f"prefix {len(prefix)} tokens, question part {len(whole) - len(prefix)} tokens; "
          f"load average {os.getloadavg()[0]:.2f}")
    results: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    first: dict[str, list[int]] = {}
    for _ in range(args.rounds):
        for name in names:
            p, d, out = one_round(llms[name], prefix, whole, args.decode)
            results[name].append((p, d))
            first.setdefault(name, out)
    n_q = len(whole) - len(prefix)
    print(f"load average after {os.getloadavg()[0]:.2f}")
    print("| config | prefill tok/s (median) | decode tok/s (median) | same tokens as first |")
    print("|---|---|---|---|")
    for name in names:
        p = statistics.median(n_q / x for x, _ in results[name])
        d = statistics.median(args.decode / y for _, y in results[name])
        same = first[name] == first[names[0]]
        print(f"| {name} | {p:.0f} | {d:.1f} | {'yes' if same else 'no'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
