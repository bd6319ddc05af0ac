"""Load a bench script (``bench/*.py``) as a module, for the tests of its pure functions.

The bench scripts are not a package, so a test loads one from its file.  The module is
registered in ``sys.modules`` before it runs: dataclasses and ``typing`` look a class's
module up there.  Import it from any test (``tests/`` is on ``sys.path``)::

    from bench_modules import load_bench

    rule_counts = load_bench("rule_counts.py")
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH_DIR = Path(__file__).resolve().parent.parent / "bench"


def load_bench(relative_path: str, name: str = "") -> ModuleType:
    """``bench/<relative_path>`` executed as a fresh module named ``name`` (by default
    ``bench_<file stem>``); each call loads it anew."""
    path = BENCH_DIR / relative_path
    spec = importlib.util.spec_from_file_location(name or f"bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
