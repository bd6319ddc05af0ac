"""Which hand rules of the answering code pay their way: each rule switched off in turn,
the whole-book questions of a book-level split asked again, the figures compared.

Usage::

    python bench/rule_ablation.py --split tune [--data-dir DIR] [--module NAME ...]
        [--per-rule] [--json OUT]
    python bench/rule_ablation.py --verifier [--module NAME ...] [--per-rule] [--json OUT]
    python bench/rule_ablation.py --split tune report --fresh --guided [--json OUT]

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

``--fresh`` adds the labelled questions of ``bench/questions/train/`` (written after the
rules were tuned, so a rule that pays on the bench questions but not on these is fitted to
them).  ``--guided`` (implies ``--per-rule``) first asks every question once with each
rule wrapped in a recorder that notes the questions on which it matched (a pattern that
found something, a word list that held a looked-up word or was read whole), clearing the
caches before each question; then each rule is switched off and only its own questions
are asked again.  A rule that matched on no question cannot change any answer, and its
row says so without a run.  Rules the index applies while a book is read in (sentence
splitting of stored chunks, for example) are not judged here: the books stay indexed.
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
from answer_quality import CORRECT_SHARE, ReplayBackend, gold_share, load, load_rows  # noqa: E402

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
            if name in assigned and name != "__all__" and (isinstance(value, re.Pattern) or _is_word_list(value))]


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


def _replace(objects: Iterable[object], make) -> list[tuple[object, str, object]]:
    """Put ``make(value)`` in place of every reference a loaded ``bookreader`` module holds
    to one of ``objects``; return what to put back (for :func:`restore`)."""
    ids = {id(o): o for o in objects}
    undo = []
    for mod in list(sys.modules.values()):
        if not getattr(mod, "__name__", "").startswith("bookreader"):
            continue
        for name, v in list(vars(mod).items()):
            if id(v) in ids:
                undo.append((mod, name, v))
                setattr(mod, name, make(v))
    _clear_caches()
    return undo


def switch_off(objects: Iterable[object]) -> list[tuple[object, str, object]]:
    """Replace every reference held by a loaded ``bookreader`` module to one of
    ``objects`` with a rule that never applies; return what to put back."""
    return _replace(objects, _off)


def restore(undo: list[tuple[object, str, object]]) -> None:
    for mod, name, v in undo:
        setattr(mod, name, v)
    _clear_caches()


class _Recorder:
    """The question being asked, and per rule the questions on which it matched."""

    def __init__(self) -> None:
        self.current: Optional[str] = None
        self.hits: dict[int, set[str]] = {}

    def hit(self, rule_id: int) -> None:
        if self.current is not None:
            self.hits.setdefault(rule_id, set()).add(self.current)


class RecordingPattern:
    """A compiled pattern that tells the recorder when it matched; otherwise the same."""

    def __init__(self, pattern: re.Pattern, recorder: _Recorder) -> None:
        self._p, self._rec, self._id = pattern, recorder, id(pattern)

    def __getattr__(self, name):
        return getattr(self._p, name)

    def _note(self, found):
        if found:
            self._rec.hit(self._id)
        return found

    def search(self, *a, **k):
        return self._note(self._p.search(*a, **k))

    def match(self, *a, **k):
        return self._note(self._p.match(*a, **k))

    def fullmatch(self, *a, **k):
        return self._note(self._p.fullmatch(*a, **k))

    def findall(self, *a, **k):
        return self._note(self._p.findall(*a, **k))

    def finditer(self, *a, **k):
        return iter(self._note(list(self._p.finditer(*a, **k))))

    def subn(self, *a, **k):
        out = self._p.subn(*a, **k)
        self._note(out[1])
        return out

    def sub(self, *a, **k):
        return self.subn(*a, **k)[0]

    def split(self, *a, **k):
        out = self._p.split(*a, **k)
        self._note(len(out) > 1)
        return out


class RecordingWords:
    """A word list that tells the recorder when a looked-up word was in it or when it was
    read whole (iterated, measured, combined), which is when emptying it could matter."""

    def __init__(self, words, recorder: _Recorder) -> None:
        self._w, self._rec, self._id = words, recorder, id(words)

    def _used(self):
        self._rec.hit(self._id)
        return self._w

    def __contains__(self, item) -> bool:
        found = item in self._w
        if found:
            self._rec.hit(self._id)
        return found

    def __iter__(self):
        return iter(self._used())

    def __len__(self) -> int:
        return len(self._used())

    def __bool__(self) -> bool:
        return bool(self._used())

    def __getitem__(self, key):
        return self._used()[key]

    def __getattr__(self, name):
        return getattr(self._used(), name)

    def __and__(self, other):
        return self._used() & other

    __rand__ = __and__

    def __or__(self, other):
        return self._used() | other

    __ror__ = __or__

    def __sub__(self, other):
        return self._used() - other

    def __rsub__(self, other):
        return other - self._used()

    def __add__(self, other):
        return self._used() + other

    def __radd__(self, other):
        return other + self._used()


def wrap_rules(objects: Iterable[object], recorder: _Recorder
               ) -> list[tuple[object, str, object]]:
    """Put a recorder around every reference a loaded ``bookreader`` module holds to one
    of ``objects``; return what to put back (for :func:`restore`)."""
    return _replace(objects, lambda v: (RecordingPattern if isinstance(v, re.Pattern)
                                        else RecordingWords)(v, recorder))


FIGURES = ("gold", "correct", "false_nc", "oos_declined")


def ask_split(library, items_by_set: dict[tuple[str, str], list[dict]], ids: dict[str, str],
              only: Optional[set[str]] = None, recorder: Optional[_Recorder] = None) -> dict:
    """Ask the questions of each (set, book) (only those keyed in ``only`` when given) and
    count each set's figures (``"<set>.<figure>"``) and each answer (``questions``).
    With a ``recorder``, the caches are cleared before each question and the recorder
    knows which question is being asked."""
    per_q = {}
    for (set_name, stem), items in items_by_set.items():
        for item in items:
            key = f"{set_name}|{stem}|{item['question']}"
            if only is not None and key not in only:
                continue
            if recorder is not None:
                _clear_caches()
                recorder.current = key
            backend = "small" if set_name.startswith("replay") else "extractive"
            a = library.ask(item["question"], book=ids[stem], backend=backend)
            outcome = getattr(a.outcome, "value", str(a.outcome))
            row = dict.fromkeys(FIGURES, 0)
            if item["gold_pages"]:
                row["gold"] = int(outcome in ("answer", "quotes") and any(
                    c.verified and c.page in set(item["gold_pages"]) for c in a.citations))
                row["correct"] = int(outcome == "answer" and bool(item["gold"]) and gold_share(
                    a.text, item["gold"]) >= CORRECT_SHARE)
                row["false_nc"] = int(outcome == "not_covered")
            else:
                row["oos_declined"] = int(outcome == "not_covered")
            row["text"] = a.text[:200]
            per_q[key] = row
    if recorder is not None:
        recorder.current = None
    counts: dict = {}
    for key, row in per_q.items():
        set_name = key.split("|", 1)[0]
        for k in FIGURES:
            counts[f"{set_name}.{k}"] = counts.get(f"{set_name}.{k}", 0) + row[k]
    counts["questions"] = per_q
    return counts


def delta(row: dict, base: dict, keys: Iterable[str]) -> dict:
    """The change of each figure over the questions ``row`` asked (all of ``base``'s, or
    the subset a guided run asked again), and how many of their answers changed."""
    asked = row["questions"]
    if set(asked) == set(base["questions"]):
        d = {k: row.get(k, 0) - base[k] for k in keys}
    else:
        d = {k: 0 for k in keys}
        for q, answer in asked.items():
            set_name = q.split("|", 1)[0]
            for k in FIGURES:
                if f"{set_name}.{k}" in d:
                    d[f"{set_name}.{k}"] += answer[k] - base["questions"][q][k]
    d["changed"] = sum(asked[q] != base["questions"][q] for q in asked)
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


def _replayed(paths: list[Path]) -> dict[str, Path]:
    """The book stem of each recorded answers file (``answer_quality_<stem>_<tag>...``)."""
    found = {}
    for path in paths:
        stem = next((s for splits in books.SPLITS.values() for s in splits
                     if path.name.startswith(f"answer_quality_{s}_")), None)
        if stem is None:
            raise SystemExit(f"{path}: not an answers file of an evaluation book")
        found[stem] = path
    return found


def replay_in(library, paths: dict[str, Path]) -> None:
    """Answer the non-extractive backend with the raw outputs recorded in ``paths``: the
    current checks judge what the model wrote then (as ``answer_quality.py --replay``)."""
    raw, generation = {}, {}
    for path in paths.values():
        for r in load_rows(path):
            raw[r["question"]] = r.get("raw_output") or ""
            generation[r["question"]] = float((r.get("signals") or {}).get("generation") or 0)
    answerer = library.answerer
    factory = answerer._backend_factory
    answerer._backend_factory = lambda name: (
        factory(name) if name == "extractive" else ReplayBackend(name, raw, generation))
    answerer._budget_fn = lambda name: (None, None)


def _question_sets(splits: list[str], fresh: bool, replayed: dict[str, Path]
                   ) -> tuple[list[tuple[str, Path]], dict[tuple[str, str], list[dict]]]:
    """The books to index and the questions of each (set, book): each split's bench
    questions, with ``fresh`` the labelled questions of ``bench/questions/train``, and the
    bench questions of each book with recorded answers to replay (set ``replay-<split>``)."""
    pdfs, sets = {}, {}
    for split in splits:
        runnable, skipped = books.books_of(split)
        for msg in skipped:
            print(msg, file=sys.stderr)
        for stem, pdf, questions in runnable:
            pdfs[stem] = pdf
            sets[(split, stem)] = load(questions, None)
            train = books.QUESTIONS_DIR / "train" / f"{stem}.jsonl"
            if fresh and train.is_file():
                sets[("fresh", stem)] = load(train, None)
            if stem in replayed:
                sets[(f"replay-{split}", stem)] = load(questions, None)
    return list(pdfs.items()), sets


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--split", nargs="+", choices=tuple(books.SPLITS), default=["tune"])
    ap.add_argument("--fresh", action="store_true",
                    help="also ask the labelled questions of bench/questions/train")
    ap.add_argument("--replay", type=Path, nargs="*", default=[],
                    help="recorded small-tier answers files (answer_quality_<book>_<tag>"
                         ".answers.jsonl) whose raw outputs are judged again")
    ap.add_argument("--guided", action="store_true",
                    help="record where each rule matches; ask only those questions again")
    ap.add_argument("--skip-wide", type=int, default=0,
                    help="with --guided: a rule that matched on more questions than this is "
                         "listed, not asked again (0: every rule is asked again)")
    ap.add_argument("--data-dir", default=str(Path(__file__).parent / "results" / "cache"))
    ap.add_argument("--module", nargs="*", default=None,
                    help="module names (e.g. llm.answer_type) to ablate; default: all")
    ap.add_argument("--per-rule", action="store_true")
    ap.add_argument("--rules", nargs="*", default=None,
                    help="only these rules (module.NAME, e.g. llm.continuation.ITEM)")
    ap.add_argument("--together", action="store_true",
                    help="switch the chosen rules off all at once (one row)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--verifier", action="store_true",
                    help="judge by the grounding check's verdicts on the tune pairs")
    args = ap.parse_args(argv)
    if args.guided and args.verifier:
        ap.error("--guided asks whole-book questions; the verifier sets are quick already")

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
        measure = lambda only=None, recorder=None: judge_verifier(embedder, sets)  # noqa: E731
        keys = tuple(sets)
    else:
        replayed = _replayed(args.replay)
        pdfs, items_by_set = _question_sets(args.split, args.fresh, replayed)
        if not pdfs:
            print("no book of this split can be run", file=sys.stderr)
            return 0
        settings = Settings(data_dir=Path(args.data_dir), retrieval_timeout_s=120.0)
        settings.ensure_dirs()
        library = Library(settings)
        ids = {stem: library.ingest(pdf).book_id for stem, pdf in pdfs}
        if replayed:
            replay_in(library, replayed)
        measure = lambda only=None, recorder=None: ask_split(  # noqa: E731
            library, items_by_set, ids, only=only, recorder=recorder)
        keys = tuple(f"{s}.{k}" for s in dict.fromkeys(n for n, _ in items_by_set)
                     for k in FIGURES)

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
        if args.rules is not None:
            rules = [(n, v) for n, v in rules if f"{short}.{n}" in args.rules]
            if not rules:
                continue
        if args.per_rule or args.guided or args.rules is not None:
            groups += [(f"{short}.{n}", [v]) for n, v in rules]
        else:
            groups.append((f"{short} ({len(rules)})", [v for _, v in rules]))
    if args.together and groups:
        groups = [(f"{len(groups)} rules together", [o for _, objs in groups for o in objs])]

    t0 = time.perf_counter()
    recorder = _Recorder() if args.guided else None
    undo = wrap_rules([o for _, objs in groups for o in objs], recorder) if recorder else []
    try:
        base = measure(recorder=recorder)
    finally:
        restore(undo)
    print("all rules on: " + " ".join(f"{k} {base[k]}" for k in keys)
          + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    results = {}
    for label, objs in groups:
        t0 = time.perf_counter()
        only = None
        if recorder is not None:
            only = set().union(*(recorder.hits.get(id(o), set()) for o in objs))
            if not only:
                results[label] = {"matched": 0, **dict.fromkeys(keys, 0), "changed": 0}
                print(f"{label:50s} matched on no question", flush=True)
                continue
            if args.skip_wide and len(only) > args.skip_wide:
                results[label] = {"matched": len(only), "skipped": True}
                print(f"{label:50s} matched on {len(only)} questions: not asked again",
                      flush=True)
                continue
        undo = switch_off(objs)
        try:
            row = measure(only=only)
        finally:
            restore(undo)
        d = delta(row, base, keys)
        if only is not None:
            d["matched"] = len(only)
        results[label] = d
        print(f"{label:50s} " + " ".join(f"{k} {d[k]:+d}" for k in keys if d[k])
              + f" changed {d['changed']}"
              + (f" of {len(only)}" if only is not None else "")
              + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"base": {k: base[k] for k in keys},
                                         "rows": results}, indent=1), encoding="utf-8")
    if library is not None:
        library.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
