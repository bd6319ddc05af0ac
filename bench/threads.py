"""llama.cpp speed per tier and thread count: prompt and generated tokens per second.

Usage::

    python bench/threads.py [--tiers tiny,small,better] [--threads 0,1,2] [--repeat 2]

Each tier is loaded with each thread count and measured as ``core/llm/choose.py`` does
(a ~140-token prompt, then 16 generated tokens), ``--repeat`` times; the best and worst
runs are printed with the machine's load average, and the expected whole-book first
token and answer time that follow from them.  ``0`` is the default setting: threads that
follow the load (every core while nothing else runs, ``core/llm/cpu_load.py``).  Tiers
are taken from the data folder's models folder (``BOOKREADER_DATA_DIR``); install them with ``bookreader models install``.
Speeds measured while other work runs are upper bounds of the wait: quote the load.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiers", default="tiny,small,better")
    ap.add_argument("--threads", default="0,1,2")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    from bookreader.config import Settings
    from bookreader.core.llm import models
    from bookreader.core.llm.choose import measure
    from bookreader.core.llm.specs import tier

    settings = Settings.load()
    print("| tier | threads | load (1 min) | prompt tok/s | gen tok/s | "
          "expected first token p50 / p95 | expected answer p95 |")
    print("|---|---|---|---|---|---|---|")
    for name in args.tiers.split(","):
        spec = tier(name)
        if models.installed_path(spec, settings.models_dir) is None:
            print(f"| {name} | - | - | not installed | | | |")
            continue
        for n in (int(x) for x in args.threads.split(",")):
            s = settings.updated(n_threads=n)
            runs = [measure(spec, s) for _ in range(args.repeat)]
            for m in (max(runs, key=lambda r: r.prompt_tps), min(runs, key=lambda r: r.prompt_tps)):
                load = os.getloadavg()[0]
                print(f"| {name} | {n} | {load:.1f} | {m.prompt_tps:.0f} | {m.gen_tps:.1f} | "
                      f"{m.first_p50_s:.1f} / {m.first_p95_s:.1f} s | {m.total_p95_s:.1f} s |",
                      flush=True)
                if args.repeat == 1:
                    break
    return 0


if __name__ == "__main__":
    sys.exit(main())
