"""Help, opened in the app: the keyboard shortcut sheet and "How asking works"."""

from __future__ import annotations

from html import escape
from typing import Optional, Union

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

SHORTCUTS_PAGE = "shortcuts"
ASKING_PAGE = "asking"

Key = Union[str, QKeySequence.StandardKey]

#: (group, [(keys, what they do)]): a standard key is shown as this platform writes it.
SHORTCUTS: tuple[tuple[str, tuple[tuple[tuple[Key, ...], str], ...]], ...] = (
    ("Books", (
        ((QKeySequence.StandardKey.Open,), "Open a PDF book"),
        (("Ctrl+G",), "Go to a page: type its printed number (37, xii) and press Enter"),
        ((QKeySequence.StandardKey.Find,), "Find words in the book"),
        (("Enter", "Shift+Enter"), "In Find: the next match, the previous match"),
        (("Esc",), "Close Find; on a page: clear the selection and the highlighted quote"),
    )),
    ("Reading", (
        (("Page Down", "Space"), "Next screen"),
        (("Page Up",), "Previous screen"),
        (("Home", "End"), "First page, last page"),
        ((QKeySequence.StandardKey.ZoomIn, QKeySequence.StandardKey.ZoomOut),
         "Zoom in, zoom out"),
        (("Ctrl+2", "Ctrl+1"), "Fit the page width, fit the whole page"),
        ((QKeySequence.StandardKey.Copy,), "Copy the selected text"),
    )),
    ("Asking", (
        (("Enter",), "Send the question"),
        (("Shift+Enter",), "A new line in the question"),
        (("Right-click a selection",), "Ask about this, or Ask with nearby pages"),
    )),
    ("Help", (
        (("F1",), "This sheet"),
    )),
)


def key_text(key: Key) -> str:
    if isinstance(key, QKeySequence.StandardKey):
        bindings = QKeySequence.keyBindings(key)
        return bindings[0].toString(QKeySequence.SequenceFormat.NativeText) if bindings else ""
    return key


def shortcuts_html() -> str:
    parts = ["<h2>Keyboard shortcuts</h2>"]
    for group, rows in SHORTCUTS:
        parts.append(f"<h3>{escape(group)}</h3><table cellspacing='0' cellpadding='4'>")
        for keys, what in rows:
            shown = " or ".join(f"<b>{escape(t)}</b>" for t in map(key_text, keys) if t)
            if shown:
                parts.append(f"<tr><td width='190'>{shown}</td><td>{escape(what)}</td></tr>")
        parts.append("</table>")
    return "".join(parts)


ASKING_HTML = """
<h2>How asking works</h2>
<p>BookReader answers from <b>the book only</b>. Every answer shows where it comes from:
click a numbered source under it to see the quoted words highlighted on the page.</p>

<h3>Three ways to ask</h3>
<table cellspacing='0' cellpadding='6' border='1' style='border-collapse: collapse'>
<tr><th align='left'>How you ask</th><th align='left'>What is read</th>
<th align='left'>What is promised</th></tr>
<tr><td><b>Whole book</b><br>type a question in the Ask panel</td>
<td>The passages of the book that best match your question.</td>
<td>Each sentence of the answer is checked against the passages it cites. If no answer
can be checked, you get the book's own sentences instead. If the book does not cover the
question, it says <i>Not found in the book</i> rather than making something up.</td></tr>
<tr><td><b>Selected text</b><br>select text, right-click, <i>Ask about this</i></td>
<td>Only the text you selected; nothing else.</td>
<td>The answer uses only your selection. If the selection does not answer the question,
it says <i>Not found in the selection</i> and offers to search the whole book.</td></tr>
<tr><td><b>Selection and nearby pages</b><br>right-click, <i>Ask with nearby pages</i></td>
<td>Your selection, plus passages from its pages and one page either side, in the same
chapter.</td>
<td>Checked like a whole-book answer: each sentence against the passages it cites,
the book's own sentences when no answer can be checked.</td></tr>
</table>

<h3>Reading an answer</h3>
<ul>
<li><b>High, medium or low confidence</b>: how likely the answer is to be right, judged
from how well the book supports it.</li>
<li><b>In the book's own words</b>: the answer is made of the book's sentences, chosen
because they answer the question best; no model rewrote them.</li>
<li><b>Answered by the Small model</b> (or another): a language model on this computer
wrote the answer from the passages; the sources show what it was checked against.</li>
<li>While you wait, the panel says what is happening: searching the book, reading the
passages, writing the answer, checking it against the book. <b>Stop</b> ends it.</li>
</ul>

<h3>Where your questions go</h3>
<p>Everything runs on this computer unless you choose Claude in Settings. Each question
and its answer are kept in the audit log of the data folder, which your instructor may
read.</p>
"""


class HelpDialog(QDialog):
    """One help page in a window of its own (not modal: read it while you use the app)."""

    def __init__(self, page: str, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("helpDialog")
        self.page = page
        title = "Keyboard shortcuts" if page == SHORTCUTS_PAGE else "How asking works"
        self.setWindowTitle(f"{title} — BookReader")
        lay = QVBoxLayout(self)
        self.browser = QTextBrowser(objectName="helpText")
        self.browser.setOpenExternalLinks(False)
        self.browser.setHtml(shortcuts_html() if page == SHORTCUTS_PAGE else ASKING_HTML)
        lay.addWidget(self.browser, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.resize(640, 720)

    def text(self) -> str:
        return self.browser.toPlainText()
