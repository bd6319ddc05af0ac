"""Which hand rules of the answering code pay their way: each rule switched off in turn,
the whole-book questions of a book-level split asked again, the figures compared.

Usage::

    python bench/rule_ablation.py --split tune [--data-dir DIR] [--module NAME ...]
        [--per-rule] [--json OUT]
    python bench/rule_ablation.py --verifier [--module NAME ...] [--per-rule] [--json OUT]

A *rule* is a module-level regular expression (a compiled ``re.Pattern``) or word list (a
set, frozenset, tuple or list of at least five strings) of an answering module
(``bench/rule_counts.py`` says which modules those are).  Switching one off replaces it,
in every loaded module that holds the same object, with a pattern that never matches or
an empty collection of the same type, clears every ``functools`` cache of the package, and
asks every question again with the extractive backend (deterministic, no model), in one
process with the books' indexes and the embedder kept warm.

By default the rules of one module are switched off together (one row a module);
``--per-rule`` switches them off one at a time.  Each row prints the change against the
run with every rule on, in questions: gold page cited, answers correct, false "not
covered" (lower is better) and out-of-scope declined.  A rule whose row is all zeros (or
better) does not pay on that split and is a candidate for deletion.

``--verifier`` judges the rules by the grounding check instead: the right verdicts on the
hand-written pairs of the tune books (``bench/verifier_pairs.jsonl``), the textbook pairs'
tune half (``bench/grounding_textbook.jsonl``) and HaluEval's tune half, each row the
change in right verdicts (a rule whose row is all zeros or better does not pay there).
The injection rules are judged by ``bench/answer.py`` and ``bench/injection_garak.py``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Iterable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import books  # noqa: E402
import rule_counts  # noqa: E402
from answer_quality import CORRECT_SHARE, gold_share, load  # noqa: E402

NEVER = re.compile(r"(?!)")


def module_name(path: Path) -> str:
    rel = path.relative_to(rule_counts.CORE.parent.parent).with_suffix("")
    return ".".join(rel.parts)


def _is_word_list(value) -> bool:
    return (isinstance(value, (set, frozenset, tuple, list)) and len(value) >= 5
            and all(isinstance(v, str) for v in value))


def rules_of(module) -> list[tuple[str, object]]:
    """(name, object) of each module-level rule defined in ``module`` (not imported)."""
    assigned = _assigned_names(module)
    return [(name, value) for name, value in vars(module).items()
            if name in assigned and (isinstance(value, re.Pattern) or _is_word_list(value))]


def _assigned_names(module) -> set[str]:
    """The names a module's own top-level statements assign (its source read once)."""
    import ast

    names: set[str] = set()
    for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _off(value):
    if isinstance(value, re.Pattern):
        return NEVER
    return type(value)()


def _clear_caches() -> None:
    for mod in list(sys.modules.values()):
        if not getattr(mod, "__name__", "").startswith("bookreader"):
            continue
        for v in list(vars(mod).values()):
            clear = getattr(v, "cache_clear", None)
            if callable(clear):
                clear()


def switch_off(objects: Iterable[object]) -> list[tuple[object, str, object]]:
    """Replace every reference held by a loaded ``bookreader`` module to one of
    ``objects``; return what to put back."""
    ids = {id(o): o for o in objects}
    undo = []
    for mod in list(sys.modules.values()):
        if not getattr(mod, "__name__", "").startswith("bookreader"):
            continue
        for name, v in list(vars(mod).items()):
            if id(v) in ids:
                undo.append((mod, name, v))
                setattr(mod, name, _off(v))
    _clear_caches()
    return undo


def restore(undo: list[tuple[object, str, object]]) -> None:
    for mod, name, v in undo:
        setattr(mod, name, v)
    _clear_caches()


def ask_split(library, items_by_book: dict[str, list[dict]], ids: dict[str, str]) -> dict:
    counts: dict = {"gold": 0, "correct": 0, "false_nc": 0, "oos_declined": 0}
    per_q = {}
    for stem, items in items_by_book.items():
        for item in items:
            a = library.ask(item["question"], book=ids[stem], backend="extractive")
            outcome = getattr(a.outcome, "value", str(a.outcome))
            if item["gold_pages"]:
                cited = outcome in ("answer", "quotes") and any(
                    c.verified and c.page in set(item["gold_pages"]) for c in a.citations)
                correct = outcome == "answer" and bool(item["gold"]) and gold_share(
                    a.text, item["gold"]) >= CORRECT_SHARE
                counts["gold"] += cited
                counts["correct"] += correct
                counts["false_nc"] += outcome == "not_covered"
                per_q[f"{stem}|{item['question']}"] = (cited, correct, a.text[:200])
            else:
                counts["oos_declined"] += outcome == "not_covered"
    counts["questions"] = per_q
    return counts


def delta(row: dict, base: dict, keys: Iterable[str]) -> dict:
    d = {k: row[k] - base[k] for k in keys}
    d["changed"] = sum(row["questions"][q] != base["questions"][q] for q in base["questions"])
    return d


def verifier_sets() -> dict[str, list]:
    """The tune pairs the grounding check is judged on, by name."""
    import grounding as gb
    import verifier

    sets = {"pairs": verifier.load_pairs(verifier.PAIRS, "tune"),
            "textbook": gb.load_textbook(gb.TEXTBOOK_PAIRS, "tune")}
    if gb.DEFAULT_PAIRS.exists():
        sets["halueval"] = gb.load_pairs(gb.DEFAULT_PAIRS, "tune")
    return sets


def judge_verifier(embedder, sets: dict[str, list]) -> dict:
    """Right verdicts per set, with a fresh validator (no verdict kept from another run)."""
    from bookreader.core.grounding import GroundingValidator

    validator = GroundingValidator(embedder)
    counts: dict = {"questions": {}}
    for name, pairs in sets.items():
        right = 0
        for k, p in enumerate(pairs):
            ok = validator.validate(p.answer, p.context, question=p.question).passed
            right += ok == p.supported
            counts["questions"][f"{name}|{k}"] = ok
        counts[name] = right
    return counts


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--split", choices=tuple(books.SPLITS), default="tune")
    ap.add_argument("--data-dir", default=str(Path(__file__).parent / "results" / "cache"))
    ap.add_argument("--module", nargs="*", default=None,
                    help="module names (e.g. llm.answer_type) to ablate; default: all")
    ap.add_argument("--per-rule", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--verifier", action="store_true",
                    help="judge by the grounding check's verdicts on the tune pairs")
    args = ap.parse_args(argv)

    from bookreader.config import Settings
    from bookreader.library import Library

    if not books.BOOKS_DIR.is_dir():
        print(f"No books at {books.BOOKS_DIR} (../shared/eval is absent): nothing to "
              "measure.", file=sys.stderr)
        return 0
    library = None
    if args.verifier:
        from bookreader.core.embedding import MiniLMEmbedder

        embedder = MiniLMEmbedder().quantized_copy()
        sets = verifier_sets()
        measure = lambda: judge_verifier(embedder, sets)  # noqa: E731
        keys = tuple(sets)
    else:
        runnable, skipped = books.books_of(args.split)
        for msg in skipped:
            print(msg, file=sys.stderr)
        if not runnable:
            print("no book of this split can be run", file=sys.stderr)
            return 0
        settings = Settings(data_dir=Path(args.data_dir), retrieval_timeout_s=120.0)
        settings.ensure_dirs()
        library = Library(settings)
        ids, items_by_book = {}, {}
        for stem, pdf, questions in runnable:
            ids[stem] = library.ingest(pdf).book_id
            items_by_book[stem] = load(questions, None)
        measure = lambda: ask_split(library, items_by_book, ids)  # noqa: E731
        keys = ("gold", "correct", "false_nc", "oos_declined")

    modules = []
    for path in rule_counts.answering_files():
        name = module_name(path)
        short = name.removeprefix("bookreader.core.")
        if args.module is None or short in args.module:
            modules.append((short, importlib.import_module(name)))
    groups = []
    for short, mod in modules:
        rules = rules_of(mod)
        if not rules:
            continue
        if args.per_rule:
            groups += [(f"{short}.{n}", [v]) for n, v in rules]
        else:
            groups.append((f"{short} ({len(rules)})", [v for _, v in rules]))

    t0 = time.perf_counter()
    base = measure()
    print("all rules on: " + " ".join(f"{k} {base[k]}" for k in keys)
          + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    results = {}
    for label, objs in groups:
        t0 = time.perf_counter()
        undo = switch_off(objs)
        try:
            row = measure()
        finally:
            restore(undo)
        d = delta(row, base, keys)
        results[label] = d
        print(f"{label:50s} " + " ".join(f"{k} {d[k]:+d}" for k in keys)
              + f" changed {d['changed']} ({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"base": {k: base[k] for k in keys},
                                         "rows": results}, indent=1), encoding="utf-8")
    if library is not None:
        library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
