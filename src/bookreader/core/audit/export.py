"""Exporting audit records as CSV (for spreadsheets), JSONL and JSON (for tools and checking).

CSV choices, for "opens cleanly in spreadsheet programs":

* UTF-8 **with** a byte-order mark.  Excel reads a CSV without one in the legacy ANSI code
  page, which garbles every accent, quote and dash; with the BOM, Excel, LibreOffice, Numbers
  and Google Sheets all read UTF-8.  Python reads it with ``encoding="utf-8-sig"``.
* RFC 4180: comma separated, CRLF between records, fields quoted when they hold a comma,
  quote or line break, quotes doubled.  Line breaks inside an answer stay as they are inside
  the quoted field, so multi-line answers survive a round trip.
* Text cells that begin with ``=``, ``+``, ``-``, ``@``, tab or carriage return get a leading
  apostrophe, so a spreadsheet shows them as text and never runs them as a formula (OWASP's
  advice against CSV injection).  Numbers are written as numbers and left alone.
* JSON-valued fields (chunks, citations, prompt...) are compact JSON text in one cell.

JSONL (one record a line) and JSON (``{"export": {...}, "records": [...]}``) keep every field
exactly as hashed, including ``seq``, ``prev_hash`` and ``record_hash``, so an export verifies
on its own with ``bookreader audit verify FILE``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Optional

from bookreader.core.audit.anchors import TRAILER_KEY, TrailerCounter
from bookreader.core.audit.records import normalise, utc_timestamp
from bookreader.core.audit.schema import COLUMN_KINDS, COLUMNS
from bookreader.errors import BookReaderError, InvalidInput

log = logging.getLogger(__name__)

FORMATS = ("csv", "jsonl", "json")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
#: Skipped before looking for a formula sign: spreadsheets ignore them too.
_LEADING_NOISE = " \t\r\n\u00a0\u200b\u200c\u200d\u2060\ufeff\u3000"


def neutralise(text: str) -> str:
    """``text`` made safe for a spreadsheet cell (see the module docstring): a formula sign
    (also full-width ``＝＋－＠``) after any leading spaces, line breaks or zero-width
    characters gets an apostrophe in front of the whole cell."""
    if text.startswith(_FORMULA_START) or text.lstrip(_LEADING_NOISE).startswith(_FORMULA_START):
        return "'" + text
    return text


def csv_cell(name: str, value: Any) -> Any:
    """One CSV cell: JSON fields as compact JSON text, text neutralised, numbers as is."""
    if value is None:
        return ""
    kind = COLUMN_KINDS.get(name, "str")
    if kind == "json":
        return neutralise(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("int", "float"):
        return value
    return neutralise(str(value))


def _dumps(rec: dict[str, Any]) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@contextmanager
def _binary_out(out: Optional[Path]) -> Iterator[BinaryIO]:
    """A binary stream to ``out`` (written to a temporary file, then renamed into place, so
    a failed export never leaves half a file under the real name) or to stdout."""
    if out is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    out = Path(out)
    refuse_special_file(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".part")
        with open(tmp, "wb") as fh:
            yield fh
        os.replace(tmp, out)
    except OSError as exc:
        raise BookReaderError(
            f"Cannot write the export to {out}: {exc.strerror or exc}. "
            "Choose another file or folder with --out."
        ) from exc


def refuse_special_file(out: Path) -> None:
    """Refuse to replace anything but a regular file (a FIFO, a device, a symlink...)."""
    import stat

    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BookReaderError(f"Cannot check {out}: {exc.strerror or exc}. Choose another file.") from exc
    if stat.S_ISLNK(st.st_mode):
        what = "a symbolic link"
    elif stat.S_ISDIR(st.st_mode):
        what = "a folder"
    elif not stat.S_ISREG(st.st_mode):
        what = "a device, pipe or socket"
    else:
        return
    raise BookReaderError(
        f"{out} is {what}, not a regular file: BookReader does not write exports over it. "
        "Give a new file name or an existing regular file with --out."
    )


def write_csv(rows: Iterable[dict[str, Any]], fh: BinaryIO) -> int:
    text = io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")
    try:
        writer = csv.writer(text, dialect="excel", lineterminator="\r\n")
        writer.writerow(COLUMNS)
        n = 0
        for row in rows:
            row = normalise(row)
            writer.writerow([csv_cell(c, row[c]) for c in COLUMNS])
            n += 1
        text.flush()
        return n
    finally:
        text.detach()  # leave ``fh`` open: its owner closes it


def write_jsonl(rows: Iterable[dict[str, Any]], fh: BinaryIO,
                filters: Optional[dict[str, Any]] = None) -> int:
    """One record a line, then the trailer line (count and head hash, see anchors.py)."""
    counter = TrailerCounter()
    for row in rows:
        row = normalise(row)
        fh.write(_dumps(row).encode("utf-8") + b"\n")
        counter.add(row)
    fh.write(_dumps({TRAILER_KEY: counter.trailer(filters)}).encode("utf-8") + b"\n")
    return counter.n


def write_json(rows: Iterable[dict[str, Any]], fh: BinaryIO, meta: dict[str, Any]) -> int:
    """``{"export": meta, "records": [...]}``, streamed (the records are not held in memory);
    ``meta["n_records"]`` comes after the records, once known."""
    fh.write(b'{"export":' + _dumps(meta).encode("utf-8") + b',"records":[\n')
    counter = TrailerCounter()
    for row in rows:
        if counter.n:
            fh.write(b",\n")
        row = normalise(row)
        fh.write(_dumps(row).encode("utf-8"))
        counter.add(row)
    trailer = _dumps(counter.trailer(meta.get("filters")))
    fh.write(b'\n],"n_records":' + str(counter.n).encode() + b',"trailer":'
             + trailer.encode("utf-8") + b"}\n")
    return counter.n


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote: its records, and the questions they are about (a question
    streamed to the window has two records: its write-ahead record and its answer's)."""

    records: int
    questions: int


#: The status of a record that completes an earlier one (not a question of its own).
COMPLETING = frozenset({"complete", "interrupted"})


def export_records(
    rows: Iterable[dict[str, Any]],
    fmt: str,
    out: Optional[Path],
    *,
    filters: dict[str, Any],
    source: str,
) -> ExportSummary:
    """Write ``rows`` to ``out`` (stdout when None) as ``fmt``; says how many records and
    questions were written."""
    questions = [0]

    def counted(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for row in rows:
            if row.get("status") not in COMPLETING:
                questions[0] += 1
            yield row

    rows = counted(rows)
    fmt = (fmt or "").lower()
    if fmt not in FORMATS:
        raise InvalidInput(f"Unknown export format {fmt!r}. Use one of: {', '.join(FORMATS)}.")
    with _binary_out(out) as fh:
        if fmt == "csv":
            n = write_csv(rows, fh)
        elif fmt == "jsonl":
            n = write_jsonl(rows, fh, filters)
        else:
            meta = {
                "format": "bookreader-audit",
                "version": 1,
                "exported_at": utc_timestamp(),
                "source": source,
                "filters": {k: str(v) for k, v in filters.items() if v not in (None, "")},
            }
            n = write_json(rows, fh, meta)
    log.info("Exported %d audit records (%d questions) as %s to %s", n, questions[0], fmt,
             out or "stdout")
    return ExportSummary(records=n, questions=questions[0])
