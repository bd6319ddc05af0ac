"""House rule 1: the core never imports Qt.  Import every core module with PySide6 blocked."""

import subprocess
import sys
from pathlib import Path

import bookreader

CORE = Path(bookreader.__file__).parent / "core"

SCRIPT = r"""
import importlib, pkgutil, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'PyQt5', 'PyQt6', 'pytestqt'):
            raise ImportError('Qt is blocked in core: ' + name)
        return None
sys.meta_path.insert(0, Block())
import bookreader.core as core
names = [m.name for m in pkgutil.walk_packages(core.__path__, 'bookreader.core.')]
for name in names:
    importlib.import_module(name)
import bookreader.library, bookreader.cli, bookreader.config, bookreader.errors
print(len(names))
"""


def test_every_core_module_imports_without_qt():
    modules = [p for p in CORE.rglob("*.py")]
    assert len(modules) >= 5
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.strip().splitlines()[-1]) >= len(modules) - 2
