"""A cap on the drawing work of one page whose form XObjects draw each other many times.

A form XObject (a reusable piece of drawing) may draw other forms; ten forms that each draw
the next one ten times make one page ask for 10^9 drawing operations from a few hundred
bytes.  The size of the content streams does not show it (the sandbox's byte cap passes
it), and MuPDF's text extraction then runs for minutes and gigabytes before the sandbox
kills it, losing the page's real text with the drawing.

So before a page is read or drawn, its operations are counted the way MuPDF would run
them: each form's own operators, plus, for each ``Do`` of a form, everything that form
expands to (counted once per form and reused, so the count of a 10^9 page takes
milliseconds).  A page over :data:`MAX_PAGE_OPERATIONS` is trimmed in memory (the file is
never changed): in every form, and in the page's own content, a ``Do`` whose expansion would
pass the cap is removed, in drawing order, so the page runs at most the cap.  Every other
operator stays, so the text of the page and of each form is still read; only the repeated
drawing beyond the cap is lost, and the page notes say so.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Optional

log = logging.getLogger(__name__)

#: Drawing operations one page may run once its forms are expanded.  A dense textbook page
#: runs a few thousand (the most in the shared test books: 17,085), text drawn at the cap
#: takes MuPDF a few seconds.
MAX_PAGE_OPERATIONS = 500_000
#: An operator token: letters (with an optional ``*``), or ``'`` / ``"``, not a name.
_OPERATOR = re.compile(rb"(?<![/\w.#])(?:[A-Za-z]{1,3}\*?|'|\")(?![\w*])")
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s+Do(?![\w*])")


def _count_ops(data: bytes) -> int:
    return sum(1 for _ in _OPERATOR.finditer(data))


class _Forms:
    """The expanded operation count of a page's forms, trimming them when asked."""

    def __init__(self, doc: Any, page: Any, cap: int, trim: bool) -> None:
        self.doc = doc
        self.cap = cap
        #: What one form may run once trimmed: half the page's cap, so the page's own
        #: content and its first form both fit.
        self.form_cap = max(1, cap // 2)
        self.trim = trim
        self.removed = 0
        # (the form or page that draws it: 0 for the page, its name) -> form xref
        self.names = {(invoker, name): xref for xref, name, invoker, _bbox in page.get_xobjects()}
        self.memo: dict[int, int] = {}
        self.running: set[int] = set()

    def expanded(self, xref: int) -> int:
        if xref in self.memo:
            return self.memo[xref]
        if xref in self.running:  # a form that draws itself: MuPDF stops the loop
            return 0
        self.running.add(xref)
        try:
            total = self._stream(xref, xref, 0, self.form_cap)
        finally:
            self.running.discard(xref)
        self.memo[xref] = total
        return total

    def _stream(self, xref: int, invoker: int, total: int, limit: int) -> int:
        """``total`` plus what stream ``xref`` (drawn by ``invoker``) runs; when trimming,
        removes (in memory) each ``Do`` that would take the total past ``limit``."""
        data = self.doc.xref_stream(xref) or b""
        total += _count_ops(data)
        cut: list[tuple[int, int]] = []
        for m in _DO.finditer(data):
            child = self.names.get((invoker, m.group(1).decode("latin-1")))
            cost = self.expanded(child) if child is not None else 1
            if self.trim and total + cost > limit:
                cut.append(m.span())
                continue
            total += cost
        if cut:
            self.removed += len(cut)
            parts, last = [], 0
            for start, end in cut:
                parts.append(data[last:start])
                parts.append(b" ")
                last = end
            parts.append(data[last:])
            self.doc.update_stream(xref, b"".join(parts))
        return total


def page_operations(doc: Any, index: int) -> int:
    """How many operations page ``index`` runs with its forms expanded (no change made)."""
    page = doc.load_page(index)
    if not page.get_xobjects():
        return 0  # no forms: the content's byte size bounds the work (the sandbox checks it)
    forms = _Forms(doc, page, MAX_PAGE_OPERATIONS, trim=False)
    return sum(forms._stream(x, 0, 0, 0) for x in page.get_contents())


def cap_page_work(doc: Any, index: int, cap: int = MAX_PAGE_OPERATIONS) -> Optional[str]:
    """Trim page ``index`` of the open ``doc`` (in memory) to at most ``cap`` operations;
    returns a note for the page when it was trimmed, else None."""
    page = doc.load_page(index)
    if not page.get_xobjects():
        return None
    count = _Forms(doc, page, cap, trim=False)
    total = sum(count._stream(x, 0, 0, 0) for x in page.get_contents())
    if total <= cap:
        return None
    trim = _Forms(doc, page, cap, trim=True)
    running = 0
    for xref in page.get_contents():
        running = trim._stream(xref, 0, running, cap)
    log.warning("Page %d asks for %d drawing operations; %d form drawings past %d were "
                "left out", index + 1, total, trim.removed, cap)
    return (f"Page {index + 1}: its drawing repeats itself about {total:,} times over (nested "
            f"forms); it was drawn and read up to {cap:,} operations, its text kept.")
