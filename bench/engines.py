"""Answer quality per engine: a fair question sample, what the grounding check did with
each model answer, and one table comparing engines.

``bench/answer_quality.py --split report --backend NAME --sample N`` asks each report book
the same N in-scope questions (spread evenly over its question file) and some out-of-scope
ones; ``--engines-table FILES`` reads the split result files of several engines
(``bench/results/answer_quality_split_report_<engine>*.json``) and prints
:func:`engines_table`.

What happened to a model's answer (:func:`answer_fate`), from a result row:

* ``kept``: shown as the model wrote it (every sentence passed the grounding check);
* ``trimmed``: shown without the sentences the check found unsupported;
* ``replaced``: the book's sentences (the extractive backend's answer) shown in its place,
  because the check rejected it, it came too late, or it was less likely right;
* ``quoted``: no answer shown; the book's best sentences as quotes instead;
* ``declined``: "not covered" after the model was asked (the model declined, or nothing
  the check accepted and no quotes);
* ``not_asked``: retrieval found nothing above the threshold, the model was not asked;
* ``timeout`` / ``error``: nothing shown.

The extractive backend has no model: its rows get the same names (its sentences are
checked like a model's), which makes it the baseline.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional, Sequence

FATES = ("kept", "trimmed", "replaced", "quoted", "declined", "not_asked", "timeout", "error")
#: Why an answer was replaced, quoted or declined (:func:`answer_fate`), as the table says it.
WHY = {"rejected": "check", "declined": "model declined", "late": "late",
       "less likely right": "book likelier"}
#: Prefix of the model name of an answer made of the book's sentences (core/book_answer.py).
BOOK_SENTENCES = "book sentences"
#: Opening of a quotes answer given because the model ran out of time (core/quotes.py).
NO_ANSWER_IN_TIME = "No answer in time"


def spread(n_items: int, k: int) -> list[int]:
    """``k`` indices spread evenly over ``range(n_items)`` (all of them when k >= n_items):
    the middle of each of k equal stretches, so neither end of the book is favoured."""
    if k <= 0 or n_items <= 0:
        return []
    if k >= n_items:
        return list(range(n_items))
    return [math.floor((i + 0.5) * n_items / k) for i in range(k)]


def sample(items: Sequence[dict], n_in: int, n_out: Optional[int] = None,
           stride: int = 1) -> list[dict]:
    """``n_in`` in-scope and ``n_out`` out-of-scope questions (default ``max(1, n_in // 2)``),
    each spread evenly over its kind's questions in file order; deterministic, so every
    engine is asked the same questions.  ``stride`` keeps every stride-th of them (first
    included): a slow engine asked a subset of what the others were asked, so that the
    engines can be compared on the questions they share."""
    ins = [i for i in items if i["gold_pages"]]
    outs = [i for i in items if not i["gold_pages"]]
    n_out = max(1, n_in // 2) if n_out is None else n_out
    step = max(1, stride)
    return ([ins[j] for j in spread(len(ins), n_in)][::step]
            + [outs[j] for j in spread(len(outs), n_out)][::step])


def answer_fate(row: dict) -> tuple[str, str]:
    """(fate, why) of one result row: what the grounding check and the fallbacks did with
    the model's answer (module doc).  ``why`` says what led to a replacement or quotes:
    ``rejected`` (the grounding check), ``late`` (out of time), ``declined`` (the model
    said not covered), ``less likely right`` (book sentences beat a verified answer)."""
    outcome = row.get("outcome", "")
    raw = (row.get("raw_output") or "").strip()
    model = row.get("model") or ""
    if outcome == "answer":
        if row.get("book_sentences") or model.startswith(BOOK_SENTENCES):
            reason = model.split(": ", 1)[1] if ": " in model else ""
            if "less likely right" in reason:
                return "replaced", "less likely right"
            if "in time" in reason:
                return "replaced", "late"
            # "could not be verified": the check rejected it, or the model declined
            return "replaced", "declined" if _declines(raw) else "rejected"
        if row.get("validation_passed") is False or row.get("unsupported"):
            return "trimmed", "rejected"
        return "kept", ""
    if outcome == "quotes":
        if (row.get("answer") or "").startswith(NO_ANSWER_IN_TIME):
            return "quoted", "late"
        if row.get("replaced_by_validator"):
            return "quoted", "rejected"
        if _declines(raw):
            return "quoted", "declined"
        return "quoted", "rejected" if raw else ""
    if outcome == "not_covered":
        if not raw:
            return "not_asked", ""
        return "declined", "declined" if _declines(raw) else "rejected"
    if outcome == "timeout":
        return "timeout", "late"
    return "error", ""


def _declines(raw: str) -> bool:
    from bookreader.core.answer.draft import declines

    return bool(raw) and declines(raw)


def _percentile(values: Sequence[Optional[float]], q: float) -> Optional[float]:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    return vals[min(len(vals) - 1, max(0, int(round(q * (len(vals) - 1)))))]


def engine_row(engine: str, book: str, rows: Sequence[dict]) -> dict:
    """The counts of one engine on one book (or pooled) from its result rows."""
    ins = [r for r in rows if r["gold_pages"]]
    outs = [r for r in rows if not r["gold_pages"]]
    fates = {f: 0 for f in FATES}
    why = {w: 0 for w in WHY}
    for r in rows:
        fate, reason = answer_fate(r)
        fates[fate] += 1
        if fate in ("replaced", "quoted", "declined") and reason in why:
            why[reason] += 1
    return {
        "engine": engine, "book": book, "in_scope": len(ins), "out_of_scope": len(outs),
        "cited_gold": sum(bool(r.get("cited_gold")) for r in ins),
        "correct": sum(bool(r.get("correct")) for r in ins),
        "correct_model_part": sum(bool(r.get("correct_model_part", r.get("correct")))
                                  for r in ins),
        "false_not_covered": sum(r["outcome"] == "not_covered" for r in ins),
        "declined": sum(r["outcome"] == "not_covered" for r in outs),
        "fates": fates, "why": why,
        "first_token_ms_p50": _percentile([r.get("first_token_ms") for r in rows], 0.5),
        "total_ms_p95": _percentile([r.get("total_ms") for r in rows], 0.95),
    }


def _pct(k: int, n: int) -> str:
    return f"{k / n:.0%} ({k}/{n})" if n else "-"


def _seconds(ms: Optional[float]) -> str:
    return f"{ms / 1000:.1f} s" if ms is not None else "-"


COLUMNS = ("engine", "book", "in/out", "gold page cited", "correct", "correct, model's words",
           "false 'not covered'", "OOS declined", "kept/trimmed/replaced/quoted/declined",
           "not kept because", "first token p50", "total p95")


def format_rows(table: Sequence[dict]) -> str:
    """Engine rows as one Markdown table.  The fates count every question (in and out of
    scope); questions retrieval declined before the model was asked are not among them."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for t in table:
        f = t["fates"]
        fates = "/".join(str(f[k]) for k in ("kept", "trimmed", "replaced", "quoted", "declined"))
        other = [f"{k} {f[k]}" for k in ("timeout", "error") if f[k]]
        if other:
            fates += " (" + ", ".join(other) + ")"
        lines.append("| " + " | ".join((
            t["engine"], t["book"], f"{t['in_scope']}/{t['out_of_scope']}",
            _pct(t["cited_gold"], t["in_scope"]), _pct(t["correct"], t["in_scope"]),
            _pct(t["correct_model_part"], t["in_scope"]),
            _pct(t["false_not_covered"], t["in_scope"]), _pct(t["declined"], t["out_of_scope"]),
            fates, ", ".join(f"{label} {t['why'][k]}" for k, label in WHY.items()
                             if t["why"][k]) or "-",
            _seconds(t["first_token_ms_p50"]), _seconds(t["total_ms_p95"]))) + " |")
    return "\n".join(lines)


def engine_name(result: dict, path: Path) -> str:
    """How a split result file names its engine: the backend (a model server by its model)."""
    backend = result.get("backend") or path.stem
    if backend.startswith("openai"):
        return f"server: {result.get('model') or 'default'}"
    return backend


def tables(results: Sequence[tuple[str, Sequence[dict]]]) -> tuple[list[dict], list[dict]]:
    """(pooled rows, per-book rows) for (engine, rows) pairs; rows carry their ``book``."""
    pooled, per_book = [], []
    for engine, rows in results:
        pooled.append(engine_row(engine, "POOLED", rows))
        for book in dict.fromkeys(r.get("book", "") for r in rows):
            per_book.append(engine_row(engine, book, [r for r in rows if r.get("book", "") == book]))
    per_book.sort(key=lambda t: t["book"])  # stable: engines stay in the order given
    return pooled, per_book


def common_rows(results: Sequence[tuple[str, Sequence[dict]]]
                ) -> list[tuple[str, list[dict]]]:
    """Each engine's rows cut to the (book, question) pairs every engine answered: the
    engines compared on the same questions when some were asked fewer."""
    keys = [{(r.get("book", ""), r["question"]) for r in rows} for _, rows in results]
    shared = set.intersection(*keys) if keys else set()
    return [(engine, [r for r in rows if (r.get("book", ""), r["question"]) in shared])
            for engine, rows in results]


def _book_of(path: Path, stems: Sequence[str]) -> str:
    """The book a per-book file is about: the longest book stem in its name (a split
    run's ``--progress`` files end ``_<book>``, result files hold ``_<book>_``)."""
    found = [s for s in stems if f"_{s}_" in f"{path.stem}_"]
    return max(found, key=len) if found else path.stem


def _rows_of(path: Path, stems: Sequence[str]) -> list[dict]:
    """The rows of a progress (``.jsonl``), per-book or split result file (``.json``),
    each with its book."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = [json.loads(x) for x in text.splitlines() if x.strip()]
    else:
        rows = json.loads(text).get("rows", [])
    book = _book_of(path, stems)
    return [r if r.get("book") else {**r, "book": book} for r in rows]


def read_results(specs: Sequence[str], stems: Sequence[str] = ()) -> list[tuple[str, list[dict]]]:
    """(engine, rows) for each of ``specs``: a split result file, or ``NAME=PATTERN`` with
    PATTERN a glob of files whose rows make up one engine's run: a (possibly unfinished)
    split run's ``--progress`` files (``<stem>_<book>.jsonl``), per-book result files
    (``answer_quality_<book>_...json``) or split result files."""
    results = []
    for spec in specs:
        if "=" in spec:
            name, pattern = spec.split("=", 1)
            files = sorted(Path().glob(pattern)) if not Path(pattern).is_absolute() else \
                sorted(Path(pattern).parent.glob(Path(pattern).name))
            # a split run writes its rows both per book and pooled: each question once
            rows = {(r["book"], r["question"]): r for f in reversed(files)
                    for r in _rows_of(f, stems)}
            results.append((name, sorted(rows.values(), key=lambda r: r["book"])))
            continue
        path = Path(spec)
        data = json.loads(path.read_text(encoding="utf-8"))
        if "rows" not in data:
            raise SystemExit(f"{path} has no per-question rows: run it again with this "
                             "version of bench/answer_quality.py --split")
        results.append((engine_name(data, path), data["rows"]))
    return results


def engines_table(specs: Sequence[str | Path], *, common: bool = False,
                  stems: Sequence[str] = ()) -> str:
    """The Markdown tables (pooled, then per book) of the result files ``specs``
    (:func:`read_results`); with ``common``, on the questions every engine answered."""
    results = read_results([str(s) for s in specs], stems)
    if common:
        results = common_rows(results)
    pooled, per_book = tables(results)
    return (format_rows(pooled) + "\n\nPer book:\n\n" + format_rows(per_book))
