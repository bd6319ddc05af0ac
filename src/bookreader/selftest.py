"""``bookreader --self-test``: prove an installation works end to end, offline.

Builds the bundled sample book in a throw-away data folder (the user's own library and
audit log are never touched), indexes it with the bundled embedding model, asks one
question in each of the three modes with the chosen backend (the bundled llama.cpp
model by default), checks that every citation verifies against its page, renders the
first page through Qt when Qt is present, and reports each step.  Exit code 0 means every
step passed; otherwise the failing step and its reason are printed.
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, TextIO

from bookreader.config import Settings
from bookreader.core.types import Answer, Mode

log = logging.getLogger(__name__)

BOOK_QUESTION = "How long are audit records kept?"
SELECTED_QUESTION = "How much does the semantic score count for?"
SELECTION_MARKER = "The semantic score counts for"
HIGHLIGHT_QUESTION = "What does the hybrid search combine?"


@dataclass
class StepResult:
    """One self-test step: its name, whether it passed, why not, and how long it took."""

    name: str
    passed: bool
    detail: str
    seconds: float


@dataclass
class SelfTestReport:
    steps: list[StepResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.steps) and all(s.passed for s in self.steps)


def _check_answer(answer: Answer) -> tuple[bool, str]:
    """An answer passes when it ran without error and every citation it shows verifies."""
    if answer.error:
        return False, f"answer failed: {answer.error}"
    if not answer.text.strip():
        return False, "empty answer"
    unverified = [c for c in answer.citations if not c.verified]
    if unverified:
        return False, f"{len(unverified)} citation(s) did not verify against their page"
    kind = "fallback" if answer.fallback else "answer"
    return True, (
        f"{kind}, {len(answer.citations)} verified citation(s), confidence "
        f"{answer.confidence:.2f} ({answer.confidence_level}), {answer.latency_ms:.0f} ms"
    )


def _render_first_page(pdf) -> tuple[bool, str]:
    """Turn page 1 into a QImage: proves the packaged Qt libraries load and take a render.

    A QImage needs no QApplication, so the self-test leaves the process's Qt state alone
    (the reader, or a test session, creates its own QApplication).
    """
    try:
        from PySide6.QtGui import QImage
    except ImportError as exc:  # the core-only install has no Qt: not a failure
        return True, f"Qt not installed, skipped ({exc})"
    samples, width, height, stride = pdf.render(0, 1.0)
    image = QImage(samples, width, height, stride, QImage.Format.Format_RGB888)
    if image.isNull() or image.width() != width or image.height() != height:
        return False, "Qt could not build an image of the first page"
    return True, f"first page rendered at {width}x{height} px"


def run_self_test(
    backend: str = "bundled",
    *,
    data_dir: Optional[Path] = None,
    out: Optional[TextIO] = None,
) -> SelfTestReport:
    """Run every step and return the report; prints one line per step to ``out``."""
    from bookreader.core.samplebook import sample_book_path
    from bookreader.library import Library

    report = SelfTestReport()
    tmp = None
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="bookreader-selftest-")
        data_dir = Path(tmp.name)
    settings = Settings(data_dir=Path(data_dir))
    settings.ensure_dirs()

    def step(name: str, fn: Callable[[], tuple[bool, str]]) -> bool:
        start = time.perf_counter()
        try:
            passed, detail = fn()
        except Exception as exc:  # every failure becomes a reported step, never a crash
            passed, detail = False, f"{type(exc).__name__}: {getattr(exc, 'user_message', exc)}"
            log.exception("self-test step %s failed", name)
        result = StepResult(name, passed, detail, time.perf_counter() - start)
        report.steps.append(result)
        if out is not None:
            mark = "ok  " if passed else "FAIL"
            out.write(f"[{mark}] {name:<28} {result.seconds:6.1f} s  {detail}\n")
            out.flush()
        return passed

    library = Library(settings)
    state: dict = {}
    try:
        def build() -> tuple[bool, str]:
            state["path"] = sample_book_path(settings.data_dir)
            return True, str(state["path"])

        def ingest() -> tuple[bool, str]:
            info = library.ingest(state["path"])
            state["info"] = info
            return info.chunk_count > 0, f"{info.page_count} pages, {info.chunk_count} chunks"

        def render() -> tuple[bool, str]:
            return _render_first_page(library.open_pdf(state["info"].book_id))

        def find_selection() -> tuple[str, tuple[int, int]]:
            pdf = library.open_pdf(state["info"].book_id)
            for index in range(pdf.page_count):
                text = pdf.page(index).text
                at = text.find(SELECTION_MARKER)
                if at >= 0:
                    start = text.rfind("\n\n", 0, at)
                    end = text.find("\n\n", at)
                    return text[start + 1 if start >= 0 else 0: end if end > 0 else None], (
                        index,
                        index,
                    )
            raise AssertionError("the sample book lost its section on hybrid search")

        def ask_book() -> tuple[bool, str]:
            return _check_answer(
                library.ask(BOOK_QUESTION, mode=Mode.BOOK, book=state["info"].book_id,
                            backend=backend)
            )

        def ask_selected() -> tuple[bool, str]:
            selection, _pages = find_selection()
            return _check_answer(
                library.ask(SELECTED_QUESTION, mode=Mode.SELECTED, selection=selection,
                            book=state["info"].book_id, backend=backend)
            )

        def ask_highlight() -> tuple[bool, str]:
            selection, pages = find_selection()
            return _check_answer(
                library.ask(HIGHLIGHT_QUESTION, mode=Mode.HIGHLIGHT, selection=selection,
                            pages=pages, book=state["info"].book_id, backend=backend)
            )

        def audit() -> tuple[bool, str]:
            result = library.audit.verify()
            return bool(result.ok and result.n_records >= 3), result.message

        if step("build sample book", build) and step("index sample book", ingest):
            step("render first page (Qt)", render)
            step("whole-book question", ask_book)
            step("selected-text question", ask_selected)
            step("highlight question", ask_highlight)
            step("audit log verifies", audit)
    finally:
        library.close()
        if tmp is not None:
            tmp.cleanup()
    return report
