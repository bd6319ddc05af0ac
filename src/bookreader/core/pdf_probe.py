"""Read a whole PDF in a child process with a time limit: a hang or crash inside MuPDF
(C code, which Python cannot interrupt) then becomes a clear error instead of taking the
application down.

:func:`probe_pdf` opens the file and reads every page exactly as ingestion does, in a
separate process, and reports what happened.  The robustness benchmark and test use it,
and the library can use it before ingesting a file it has never seen.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from bookreader.errors import BookReaderError, PdfError

log = logging.getLogger(__name__)

#: Longest a single file may take to open and read, in seconds.
DEFAULT_TIMEOUT_S = 30.0


@dataclass
class ProbeResult:
    """What happened when a PDF was opened and read.

    ``outcome`` is ``"ok"``, ``"error"`` (a :class:`BookReaderError`, with its message),
    ``"timeout"``, ``"crash"`` (the child process died) or ``"unexpected"`` (an exception
    that is not a BookReaderError: a bug).
    """

    file: str
    outcome: str
    message: str = ""
    error_type: str = ""
    seconds: float = 0.0
    pages: int = 0
    chars: int = 0
    pages_without_text: list[int] = field(default_factory=list)
    title: str = ""
    toc_entries: int = 0

    @property
    def clear(self) -> bool:
        """True for a success or a BookReaderError (the two acceptable endings)."""
        return self.outcome in ("ok", "error")

    def to_json(self) -> dict:
        return asdict(self)


def read_whole_pdf(path: str | Path, password: Optional[str] = None) -> ProbeResult:
    """Open and read every page in this process; BookReaderErrors become results."""
    from bookreader.core.pdf import PdfBook

    start = time.perf_counter()
    name = Path(path).name
    try:
        with PdfBook.open(path, password) as book:
            chars = 0
            for page in book.iter_pages():
                chars += len(page.text)
                book.words(page.index)
            missing = book.pages_without_text()
            message = book.text_layer_message()
            return ProbeResult(
                file=name,
                outcome="ok",
                message=message,
                seconds=time.perf_counter() - start,
                pages=book.page_count,
                chars=chars,
                pages_without_text=missing,
                title=book.title,
                toc_entries=len(book.toc),
            )
    except BookReaderError as exc:
        return ProbeResult(
            file=name,
            outcome="error",
            message=exc.user_message,
            error_type=type(exc).__name__,
            seconds=time.perf_counter() - start,
        )


def _child(path: str, password: Optional[str], conn) -> None:
    try:
        result = read_whole_pdf(path, password)
    except Exception as exc:  # reported to the parent as a bug, never hidden
        result = ProbeResult(
            file=Path(path).name,
            outcome="unexpected",
            message=f"{type(exc).__name__}: {exc}",
            error_type=type(exc).__name__,
        )
    conn.send(result)
    conn.close()


def probe_pdf(
    path: str | Path,
    password: Optional[str] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    start_method: str = "spawn",
) -> ProbeResult:
    """Open and read the whole PDF in a child process that is killed after ``timeout`` s.

    Args:
        path: The PDF.
        password: Its password, if it has one.
        timeout: Seconds before the child is killed and the result is ``"timeout"``.
        start_method: ``"spawn"`` is safe in a threaded program (the GUI); ``"fork"`` is
            much faster where the parent has no threads (benchmarks, tests).
    """
    ctx = mp.get_context(start_method)
    parent, child = ctx.Pipe(duplex=False)
    # typeshed types get_context(str) as BaseContext, which lacks Process; each real one has it.
    proc = ctx.Process(target=_child, args=(str(path), password, child), daemon=True)  # pyright: ignore[reportAttributeAccessIssue]
    start = time.perf_counter()
    proc.start()
    child.close()
    result: Optional[ProbeResult] = None
    try:
        if parent.poll(timeout):
            try:
                result = parent.recv()
            except EOFError:
                result = None
    finally:
        proc.join(1.0)
        if proc.is_alive():
            proc.kill()
            proc.join()
        parent.close()
    elapsed = time.perf_counter() - start
    name = Path(path).name
    if result is None:
        if elapsed >= timeout:
            log.warning("Reading %s took longer than %.0f s; stopped", path, timeout)
            return ProbeResult(
                file=name,
                outcome="timeout",
                message=f"Reading '{name}' took longer than {timeout:.0f} s.",
                seconds=elapsed,
            )
        log.warning("Reading %s crashed the reader process (exit code %s)", path, proc.exitcode)
        return ProbeResult(
            file=name,
            outcome="crash",
            message=f"The reader process stopped (exit code {proc.exitcode}).",
            seconds=elapsed,
        )
    result.seconds = round(elapsed, 3)
    return result


def check_pdf(path: str | Path, password: Optional[str] = None, *, timeout: float = DEFAULT_TIMEOUT_S) -> ProbeResult:
    """Like :func:`probe_pdf`, but any outcome other than success raises its error.

    Raises:
        PdfError: the file timed out, crashed the reader, or could not be read (the
            original :class:`BookReaderError` subclass is kept where there was one, e.g.
            :class:`~bookreader.errors.PasswordRequired`).
    """
    result = probe_pdf(path, password, timeout=timeout)
    if result.outcome == "ok":
        return result
    name = Path(path).name
    if result.outcome == "error":
        # Re-open in this process to raise the real exception type (cheap: it failed fast).
        from bookreader.core.pdf import PdfBook

        with PdfBook.open(path, password):
            pass
        raise PdfError(result.message)
    if result.outcome == "timeout":
        raise PdfError(
            f"'{name}' could not be read within {timeout:.0f} s: it is probably damaged. "
            "Open it in another PDF viewer and save a new copy, then try again."
        )
    raise PdfError(
        f"'{name}' made the PDF reader fail ({result.message}). It is probably damaged: "
        "open it in another PDF viewer and save a new copy, then try again.",
        details=result.message,
    )
