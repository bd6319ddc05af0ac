"""How many hand rules the answering code holds: regular expressions, word lists, named
thresholds and lines, per module and in all.

Usage::

    python bench/rule_counts.py [--per-module] [--json] [--src DIR]

The answering code is every module under ``src/bookreader/core`` that takes part in making,
checking or choosing an answer (:data:`ANSWERING`: the modules not about reading PDFs,
storing, auditing, embedding or study tools), plus the answering package ``core/answer``
when it exists and the answering modules of ``core/llm``.  Counted with :mod:`ast`, so
comments and docstrings do not count:

* **regular expressions**: calls of ``re.compile``, ``re.search``, ``re.match``,
  ``re.fullmatch``, ``re.findall``, ``re.finditer``, ``re.sub``, ``re.subn`` and
  ``re.split`` (each call site once);
* **word lists**: a module- or class-level name bound to a set, frozenset, tuple or list
  literal (or a ``frozenset(...)``/``set(...)`` of one, or ``"...".split()``) holding at
  least five string constants; ``words`` sums their strings;
* **named thresholds**: a module- or class-level UPPER_CASE name bound to a number;
* **lines**: physical lines of the files.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "src" / "bookreader" / "core"

#: Modules of ``core`` that are not about answering (reading PDFs, storing, auditing,
#: embedding, study tools, plumbing); everything else there is counted.
NOT_ANSWERING = {
    "__init__.py", "chunking.py", "embedding.py", "hyphenation.py", "inputs.py",
    "pdf.py", "pdf_decrypt.py", "pdf_document.py", "pdf_forms.py", "pdf_layout.py",
    "pdf_outline.py", "pdf_probe.py", "samplebook.py", "sandbox.py", "storage.py",
    "types.py", "conversation.py",
}
#: The answering modules of ``core/llm`` (the rest are backends and model files).
LLM_ANSWERING = {"answer_type.py", "choose.py", "continuation.py", "extractive.py",
                 "extractive_candidates.py", "extractive_compose.py", "extractive_context.py"}
REGEX_FUNCS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub",
               "subn", "split"}


def answering_files(core: Path = CORE) -> list[Path]:
    files = [p for p in sorted(core.glob("*.py")) if p.name not in NOT_ANSWERING]
    files += sorted((core / "answer").rglob("*.py")) if (core / "answer").is_dir() else []
    files += [p for p in sorted((core / "llm").glob("*.py")) if p.name in LLM_ANSWERING]
    return files


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {
            "frozenset", "set", "tuple", "list"} and node.args:
        return _strings(node.args[0])
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split" and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)):
        return node.func.value.value.split()
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return [e.value for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _top_assignments(tree: ast.Module):
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for node in body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        yield target.id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.value is not None:
                yield node.target.id, node.value


def count_file(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    regexes = sum(
        1 for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name) and n.func.value.id == "re"
        and n.func.attr in REGEX_FUNCS)
    lists = words = thresholds = 0
    for name, value in _top_assignments(tree):
        strings = _strings(value)
        if len(strings) >= 5:
            lists += 1
            words += len(strings)
        elif name.isupper() and isinstance(value, ast.Constant) and isinstance(
                value.value, (int, float)) and not isinstance(value.value, bool):
            thresholds += 1
    return {"lines": len(text.splitlines()), "regexes": regexes, "word_lists": lists,
            "words": words, "thresholds": thresholds}


def counts(core: Path = CORE) -> dict:
    per = {str(p.relative_to(core)): count_file(p) for p in answering_files(core)}
    total = {k: sum(v[k] for v in per.values()) for k in
             ("lines", "regexes", "word_lists", "words", "thresholds")}
    total["modules"] = len(per)
    return {"total": total, "modules": per}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-module", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--src", type=Path, default=CORE, help="the core folder to count")
    args = ap.parse_args(argv)
    result = counts(args.src)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    cols = ("lines", "regexes", "word_lists", "words", "thresholds")
    print("| module | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    if args.per_module:
        for name, c in sorted(result["modules"].items(), key=lambda kv: -kv[1]["regexes"]):
            print(f"| {name} | " + " | ".join(str(c[k]) for k in cols) + " |")
    t = result["total"]
    print(f"| ALL ({t['modules']} modules) | " + " | ".join(str(t[k]) for k in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
