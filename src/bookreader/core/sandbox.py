"""Parse PDFs the library has not seen in a child process with hard limits.

MuPDF is C code: a hostile file can exhaust its stack (an outline nested 60,000 levels
deep ends in a segmentation fault inside ``fitz.open``), inflate one page to gigabytes
(a decompression bomb) or keep the processor busy for minutes.  Python cannot interrupt
any of that, so every first contact with a file happens in a child process that has

* a memory cap (``RLIMIT_AS``, :attr:`SandboxLimits.memory_bytes`, 2 GB by default),
* a processor-time cap (``RLIMIT_CPU``, per page during extraction),
* a wall-clock limit enforced by the parent, which kills the child.

:func:`scan_pdf` checks the file type, opens the file, reads its outline and measures
every page's content (inflating its streams with a running count, never holding them)
and reports the pages too dangerous to parse ("flagged").  :func:`extract_pages` reads
the text of every page in a child under the same caps, one page at a time; a page that
kills the child is skipped with a note and the next child carries on after it.

A crash, a cap or a time-out ends in a :class:`~bookreader.errors.PdfError` that says
what happened; nothing here can take the calling process down.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import signal
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from bookreader.core.types import CancelFn, Page, ProgressFn, never_cancel, no_progress
from bookreader.errors import BookReaderError, Cancelled, PasswordRequired, PdfError

log = logging.getLogger(__name__)

GB = 1 << 30
MB = 1 << 20
#: A file is looked at only if its first bytes say it is a PDF.
PDF_MAGIC = b"%PDF-"
#: Outline nesting beyond this is reported as the reason when opening crashes.
DEEP_OUTLINE_LEVELS = 10_000
#: Pages skipped after crashing their reader before the whole file is given up.
MAX_CRASHED_PAGES = 20
#: Version of the checks; a book scanned by an older version is scanned again.
SANDBOX_VERSION = 1


@dataclass(frozen=True)
class SandboxLimits:
    """The caps of a sandboxed child process."""

    memory_bytes: int = 2 * GB
    cpu_seconds: float = 60.0
    wall_seconds: float = 60.0
    page_content_bytes: int = 64 * MB
    max_page_chars: int = 200_000

    @classmethod
    def from_settings(cls, settings: Any) -> "SandboxLimits":
        return cls(
            memory_bytes=int(settings.sandbox_memory_mb) * MB,
            cpu_seconds=float(settings.sandbox_cpu_s),
            wall_seconds=float(settings.sandbox_wall_s),
            page_content_bytes=int(settings.sandbox_page_content_mb) * MB,
            max_page_chars=int(settings.max_page_chars),
        )

    def memory_text(self) -> str:
        size = self.memory_bytes
        return f"{size / GB:g} GB" if size >= GB else f"{size // MB} MB"


@dataclass
class ScanResult:
    """What the sandbox found out about a file."""

    file: str
    page_count: int = 0
    title: str = ""
    toc_entries: int = 0
    flagged: dict[int, str] = field(default_factory=dict)  # page -> why it is not parsed
    seconds: float = 0.0
    peak_rss_mb: float = 0.0


@dataclass
class Extraction:
    """Pages read in the sandbox; filled while :func:`extract_pages` runs."""

    flagged: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    image_pages: set[int] = field(default_factory=set)
    peak_rss_mb: float = 0.0
    children: int = 0


# --- the file type --------------------------------------------------------------------------
def check_file_type(path: str | Path) -> None:
    """Raise PdfError unless the file starts like a PDF (``%PDF-`` in its first 1 KB)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise PdfError(
            f"Cannot read {path}: {exc.strerror or exc}. Check that the file exists and that "
            "you may read it."
        ) from exc
    if PDF_MAGIC in head:
        return
    kind = _file_kind(head)
    raise PdfError(
        f"'{path.name}' is not a PDF file ({kind}). Choose another file: the book's PDF, or "
        "this one exported as PDF from the program that made it.",
        details=repr(head[:16]),
    )


def _file_kind(head: bytes) -> str:
    kinds = {
        b"\x89PNG": "it is a PNG image", b"\xff\xd8\xff": "it is a JPEG image",
        b"GIF8": "it is a GIF image", b"PK\x03\x04": "it is a ZIP archive or an office file",
        b"%!PS": "it is a PostScript file", b"AT&TFORM": "it is a DjVu file",
        b"\xd0\xcf\x11\xe0": "it is an old Microsoft Office file", b"{\\rtf": "it is an RTF file",
    }
    for magic, kind in kinds.items():
        if head.startswith(magic):
            return kind
    if not head:
        return "it is empty"
    return "it does not start with %PDF-"


# --- the child side -------------------------------------------------------------------------
def _apply_limits(limits: SandboxLimits) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    _cpu_allowance(limits.cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _cpu_allowance(seconds: float) -> None:
    """Let this process use ``seconds`` more processor time (soft limit only)."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime + seconds) + 1
    _cur, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _rss_mb(pid: str = "self") -> float:
    """Peak resident memory of a process in MB (``VmHWM``; 0.0 where unknown).

    Not ``ru_maxrss``: on Linux that keeps the peak of the process that forked the child
    (a parent with the embedding model loaded), so it would overstate the child's use.
    """
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


class _Channel:
    """The child's end: one JSON message per line on a private copy of stdout.

    JSON, not pickle: a child that a hostile file took over must not be able to make
    the parent run code by what it sends back.
    """

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # anything C code prints goes nowhere

    def send(self, msg: list) -> None:
        self._out.write(json.dumps(msg) + "\n")
        self._out.flush()


def _child_entry() -> None:
    """``python -c`` entry of a sandbox child: the job comes as JSON on stdin."""
    job = json.loads(sys.stdin.readline())
    limits = SandboxLimits(**job["limits"])
    conn = _Channel()
    try:
        _apply_limits(limits)
        target = {"scan": _scan_target, "extract": _extract_target}[job["target"]]
        target(conn, limits, *job["args"])
    except PasswordRequired as exc:
        conn.send(["error", "PasswordRequired", exc.user_message,
                   {"path": exc.path, "wrong_password": exc.wrong_password}])
    except BookReaderError as exc:
        conn.send(["error", type(exc).__name__, exc.user_message, {"details": exc.details}])
    except MemoryError:
        conn.send(["memory", 0.0])
    except Exception as exc:  # a bug or a MuPDF failure: reported, never hidden
        conn.send(["unexpected", f"{type(exc).__name__}: {exc}"[:500]])


def _inflated_size(doc, xref: int, limit: int) -> int:
    """Bytes the stream ``xref`` decodes to, counted without keeping them (stops past limit)."""
    filt = doc.xref_get_key(xref, "Filter")
    name = filt[1].strip("[] ") if filt[0] in ("name", "array") else ""
    if filt[0] == "null" or not name:
        return len(doc.xref_stream_raw(xref) or b"")
    if name in ("/FlateDecode", "/Fl"):
        data = doc.xref_stream_raw(xref) or b""
        inflater = zlib.decompressobj()
        total = 0
        try:
            while data and total <= limit:
                total += len(inflater.decompress(data, 4 * MB))
                data = inflater.unconsumed_tail
        except zlib.error:
            return total  # MuPDF reads what inflates and drops the rest
        return total
    return len(doc.xref_stream(xref) or b"")  # other filters: decoded under the memory cap


def _page_risk(doc, index: int, limits: SandboxLimits, sizes: dict[int, int]) -> str:
    """Why page ``index`` must not be parsed in an unprotected process, or ""."""
    page = doc.load_page(index)
    xrefs = list(page.get_contents())
    xrefs += [x[0] for x in page.get_xobjects() if x[0] > 0]
    total = 0
    for xref in xrefs:
        if xref not in sizes:
            sizes[xref] = _inflated_size(doc, xref, limits.page_content_bytes)
        total += sizes[xref]
        if total > limits.page_content_bytes:
            return (f"its drawing instructions expand beyond {limits.page_content_bytes // MB} MB "
                    "(a decompression bomb)")
    for img in page.get_images(full=True):
        width, height = int(img[2] or 0), int(img[3] or 0)
        if width * height * 4 > limits.memory_bytes // 2:
            return (f"an image on it expands to {width:,} x {height:,} pixels, beyond the "
                    f"{limits.memory_text()} memory limit")
    return ""


def _scan_target(conn: _Channel, limits: SandboxLimits, path: str, password: Optional[str]) -> None:
    from bookreader.core.pdf import PdfBook
    from bookreader.core.pdf_document import printed_title

    conn.send(["stage", "open", _rss_mb()])
    with PdfBook.open(path, password) as book:
        conn.send(["stage", "outline", _rss_mb()])
        toc = book._read_outline()
        flagged: dict[str, str] = {}
        sizes: dict[int, int] = {}
        for i in range(book.page_count):
            conn.send(["stage", f"page {i}", _rss_mb()])
            try:
                reason = _page_risk(book._doc, i, limits, sizes)
            except MemoryError:
                reason = f"it expands beyond the {limits.memory_text()} memory limit"
            except Exception as exc:  # a damaged page: extraction reports it as such
                log.info("Cannot measure page %d of %s: %r", i + 1, path, exc)
                reason = ""
            if reason:
                flagged[str(i)] = reason
        conn.send(["stage", "title", _rss_mb()])
        title = book.title if book.title_from_metadata else (
            printed_title(book._doc, {int(k) for k in flagged}) or book.title)
        conn.send(["done", {"file": Path(path).name, "page_count": book.page_count,
                            "title": title, "toc_entries": len(toc), "flagged": flagged,
                            "peak_rss_mb": _rss_mb()}])


def _extract_target(conn: _Channel, limits: SandboxLimits, path: str, password: Optional[str],
                    blocked: dict[str, str], start: int) -> None:
    from bookreader.core.pdf import PdfBook

    blocked_pages = {int(k): v for k, v in blocked.items()}
    with PdfBook.open(path, password, blocked=blocked_pages,
                      max_page_chars=limits.max_page_chars) as book:
        for i in range(start, book.page_count):
            _cpu_allowance(limits.cpu_seconds)
            conn.send(["stage", f"page {i}", _rss_mb()])
            page = book.page(i)
            image_only = i in book._image_pages
            conn.send(["page", i, dataclasses.asdict(page), image_only,
                       book.page_notes().get(i, ""), _rss_mb()])
        conn.send(["done", {str(k): v for k, v in book.damaged_pages().items()}])


def _page_from_json(data: dict) -> Page:
    data = dict(data)
    data["section_starts"] = tuple(tuple(s) for s in data.get("section_starts", ()))
    return Page(**data)


# --- the parent side ------------------------------------------------------------------------
@dataclass
class _Run:
    """How one child ended."""

    ended: str = ""  # "done", "error", "memory", "unexpected", "crash", "timeout"
    stage: str = ""
    exitcode: Optional[int] = None
    payload: Any = None
    peak_rss_mb: float = 0.0


def _child_env() -> dict[str, str]:
    import bookreader

    env = dict(os.environ)
    src = str(Path(bookreader.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _run_child(target: str, args: list, limits: SandboxLimits,
               on_message: Callable[[list], None], cancel: CancelFn) -> _Run:
    """Run ``target`` in a capped child; the wall clock restarts at every message."""
    import select
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", "from bookreader.core.sandbox import _child_entry; _child_entry()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=_child_env(), close_fds=True,
    )
    run = _Run()
    job = {"target": target, "args": args, "limits": dataclasses.asdict(limits)}
    buffer = b""
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None  # both are pipes
    try:
        try:
            stdin.write((json.dumps(job) + "\n").encode("utf-8"))
            stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + limits.wall_seconds
        fd = stdout.fileno()
        while not run.ended:
            if cancel():
                raise Cancelled()
            now = time.monotonic()
            if now >= deadline:
                run.ended = "timeout"
                break
            ready, _, _ = select.select([fd], [], [], min(0.25, deadline - now))
            run.peak_rss_mb = max(run.peak_rss_mb, _rss_mb(str(proc.pid)))
            if not ready:
                continue
            block = os.read(fd, 1 << 20)
            if not block:
                run.ended = "crash"
                break
            buffer += block
            while b"\n" in buffer and not run.ended:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    run.ended = "crash"
                    break
                kind = msg[0]
                if kind in ("stage", "page"):
                    run.peak_rss_mb = max(run.peak_rss_mb, float(msg[-1]))
                    deadline = time.monotonic() + limits.wall_seconds
                    if kind == "stage":
                        run.stage = msg[1]
                    else:
                        on_message(msg)
                else:
                    run.ended, run.payload = kind, msg[1:]
    finally:
        if run.ended not in ("done", "error"):
            proc.kill()
        run.peak_rss_mb = round(max(run.peak_rss_mb, _rss_mb(str(proc.pid))), 1)
        run.exitcode = proc.wait()
        stdout.close()
    return run


def _why_crashed(run: _Run, path: Path, limits: SandboxLimits) -> str:
    """A plain reason for a child that died, timed out or ran out of memory."""
    code = run.exitcode
    if run.ended == "timeout":
        return f"reading it takes longer than {limits.wall_seconds:.0f} s"
    if code is not None and code == -getattr(signal, "SIGXCPU", 24):
        return f"reading it takes more than {limits.cpu_seconds:.0f} s of processor time"
    if run.ended == "memory" or code in (-signal.SIGABRT,):
        return f"it expands beyond the {limits.memory_text()} memory limit"
    if run.stage in ("open", "outline"):
        depth = _outline_depth_hint(path)
        if depth >= DEEP_OUTLINE_LEVELS:
            return f"its outline is nested too deeply (about {depth:,} levels)"
        return "its structure makes the PDF reader crash"
    if run.ended == "unexpected":
        return f"the PDF reader failed ({run.payload[0] if run.payload else 'unknown error'})"
    return f"the PDF reader crashed on it (exit code {code}); it may expand beyond the " \
           f"{limits.memory_text()} memory limit"


def _outline_depth_hint(path: Path) -> int:
    """How many outline items have a child (``/First``): the nesting depth of a chain."""
    count = 0
    try:
        with open(path, "rb") as fh:
            tail = b""
            for block in iter(lambda: fh.read(4 * MB), b""):
                data = tail + block
                count += len(re.findall(rb"/First\s", data[:-8] if len(data) > 8 else data))
                tail = data[-8:] if len(data) > 8 else b""
    except OSError:
        return 0
    return count


def _raise_error(payload: tuple) -> None:
    kind, message, extra = payload
    if kind == "PasswordRequired":
        raise PasswordRequired(message, path=extra.get("path", ""),
                               wrong_password=bool(extra.get("wrong_password")))
    raise PdfError(message, details=extra.get("details"))


def unsafe_message(name: str, reason: str) -> str:
    return (f"'{name}' could not be read safely: {reason}. It was not opened. Open it in "
            "another PDF viewer and save a new copy, or choose another file.")


def scan_pdf(path: str | Path, password: Optional[str] = None, *,
             limits: SandboxLimits = SandboxLimits(), cancel: CancelFn = never_cancel) -> ScanResult:
    """Check the file type, then open and measure the PDF in a capped child process.

    Raises:
        PasswordRequired: encrypted, and no or a wrong password.
        PdfError: not a PDF, damaged, or it crashed / exhausted / outlasted the child.
    """
    path = Path(path)
    check_file_type(path)
    start = time.perf_counter()
    run = _run_child("scan", [str(path), password], limits, lambda m: None, cancel)
    if run.ended == "done":
        data = dict(run.payload[0])
        data["flagged"] = {int(k): v for k, v in data["flagged"].items()}
        result = ScanResult(**data)
        result.seconds = round(time.perf_counter() - start, 3)
        result.peak_rss_mb = round(max(result.peak_rss_mb, run.peak_rss_mb), 1)
        if result.flagged:
            log.warning("%s: %d pages not parsed in this process, e.g. page %d: %s", path.name,
                        len(result.flagged), *next(iter(result.flagged.items())))
        return result
    if run.ended == "error":
        _raise_error(run.payload)
    reason = _why_crashed(run, path, limits)
    log.warning("Sandbox check of %s failed at %s (%s, exit %s): %s", path, run.stage,
                run.ended, run.exitcode, reason)
    raise PdfError(unsafe_message(path.name, reason),
                   details=f"stage={run.stage} ended={run.ended} exit={run.exitcode}")


def extract_pages(
    path: str | Path,
    password: Optional[str],
    flagged: dict[int, str],
    page_count: int,
    *,
    limits: SandboxLimits = SandboxLimits(),
    into: Optional[Extraction] = None,
    progress: ProgressFn = no_progress,
    cancel: CancelFn = never_cancel,
) -> Iterator[Page]:
    """Every page's text, read in capped children; a page that kills one is skipped.

    ``flagged`` pages (from :func:`scan_pdf`) are not parsed: they come back as pages
    without text.  ``into`` collects the pages flagged on the way, notes and peak memory.
    """
    path = Path(path)
    out = into if into is not None else Extraction()
    out.flagged.update(flagged)
    start = 0
    while start < page_count:
        got: list[list] = []
        blocked = {str(k): v for k, v in out.flagged.items()}
        run = _run_child("extract", [str(path), password, blocked, start], limits, got.append, cancel)
        out.children += 1
        out.peak_rss_mb = round(max(out.peak_rss_mb, run.peak_rss_mb), 1)
        for _kind, i, page_data, image_only, note, _rss in got:
            page = _page_from_json(page_data)
            if image_only:
                out.image_pages.add(i)
            if note:
                out.notes.append(note)
            progress(i + 1, page_count, f"Read page {page.label} of {path.name}")
            yield page
        start = (got[-1][1] + 1) if got else start
        if run.ended == "done":
            for i, why in run.payload[0].items():
                if "alloc" in why or "memory" in why.lower():
                    why = f"it expands beyond the {limits.memory_text()} memory limit"
                else:
                    why = f"it is damaged ({why})"
                out.flagged.setdefault(int(i), why)
            return
        if run.ended == "error":
            _raise_error(run.payload)
        if start >= page_count:
            return
        reason = _why_crashed(run, path, limits)
        log.warning("%s: page %d stopped its reader (%s); skipped", path.name, start + 1, reason)
        out.flagged[start] = reason
        out.notes.append(f"Page {start + 1} was skipped: {reason}.")
        crashed = sum(1 for r in out.flagged.values() if r == reason)
        if len(out.flagged) - len(flagged) > MAX_CRASHED_PAGES or crashed > MAX_CRASHED_PAGES:
            raise PdfError(unsafe_message(path.name, f"{crashed} of its pages make the PDF reader fail"))
        # the crashed page is re-read by the next child as a flagged (blank) page


def describe_flagged(flagged: dict[int, str]) -> list[str]:
    """One sentence per reason, naming the pages (as ranges), for the book's message."""
    by_reason: dict[str, list[int]] = {}
    for i, why in sorted(flagged.items()):
        by_reason.setdefault(why, []).append(i + 1)
    out = []
    for why, pages in by_reason.items():
        spans: list[str] = []
        first = prev = pages[0]
        for p in pages[1:] + [0]:
            if p != prev + 1:
                spans.append(str(first) if first == prev else f"{first}-{prev}")
                first = p
            prev = p
        what = (f"Page {spans[0]} is shown as a placeholder" if len(pages) == 1
                else f"Pages {', '.join(spans)} are shown as placeholders")
        out.append(f"{what} and not searched: {why}.")
    return out
