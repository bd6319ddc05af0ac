"""Runs of italic or bold type inside a page's running text.

Textbooks set a term in italics or bold where they define it.  :func:`emphasised_runs`
reads a page's ``get_text("dict")`` spans (flag 2: italic, 16: bold; or a font name that
says so) and returns each maximal run of emphasised spans inside a block that also holds
plain text: a heading (a block wholly in bold or italics) gives none.  A run broken over
two lines is joined ("equi-" + "librium" reads "equilibrium").

:func:`code_runs` reads the same spans for program text set inline in prose: runs of a
monospaced font (flag 8, or a typewriter font's name) inside a block whose letters are
mostly in another font.  A book set wholly in a monospaced font has none, and a monospaced
span is no emphasis where it is code.
"""

from __future__ import annotations

import re
from typing import Any

from bookreader.core.pdf_layout import normalize_text

_ITALIC = 2
_BOLD = 16
_STYLED_FONT = re.compile(r"italic|oblique|bold|black|heavy|semibold", re.IGNORECASE)
_MONOSPACED = 8
#: Typewriter fonts that do not set the monospaced flag ("LMMono10", "CMTT12", "SFTT1200").
_CODE_FONT = re.compile(r"mono|courier|consol|typewriter|menlo|inconsolata|sourcecode|"
                        r"(?:^|\+)[A-Z]{0,3}TT\d", re.IGNORECASE)
#: Fewest plain letters a block must hold for its emphasis to be inside running text.
MIN_PLAIN_LETTERS = 20


def _emphasised(span: dict[str, Any]) -> bool:
    flags = int(span.get("flags", 0))
    return bool(flags & (_ITALIC | _BOLD)) or bool(_STYLED_FONT.search(str(span.get("font", ""))))


def _monospaced(span: dict[str, Any]) -> bool:
    return bool(int(span.get("flags", 0)) & _MONOSPACED) or bool(
        _CODE_FONT.search(str(span.get("font", ""))))


def _mostly_proportional(block: dict[str, Any]) -> bool:
    """True for a block whose letters are mostly in a proportional font: running text in
    which a monospaced span is code."""
    mono = plain = 0
    for line in block.get("lines", ()):
        for span in line.get("spans", ()):
            n = sum(ch.isalpha() for ch in str(span.get("text", "")))
            if _monospaced(span):
                mono += n
            else:
                plain += n
    return plain > mono


def _join(parts: list[str]) -> str:
    out = ""
    for part in parts:
        part = " ".join(normalize_text(part).split())
        if not part:
            continue
        if out.endswith("-") and out[-2:-1].isalpha() and part[:1].islower():
            out = out[:-1] + part  # a word hyphenated at the line's end
        elif out:
            out += " " + part
        else:
            out = part
    return out


def emphasised_runs(info: dict[str, Any]) -> list[str]:
    """The emphasised runs of a page's text dict, in reading order of its blocks."""
    runs: list[str] = []
    for block in info.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        found: list[str] = []
        current: list[str] = []
        plain_letters = 0
        prose = _mostly_proportional(block)
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                text = str(span.get("text", ""))
                if not text.strip():
                    continue  # a space continues a run and ends none
                if prose and _monospaced(span):
                    if current:  # code inside prose: neither emphasis nor plain text
                        found.append(_join(current))
                        current = []
                    continue
                if _emphasised(span):
                    current.append(text)
                    continue
                plain_letters += sum(ch.isalpha() for ch in text)
                if current:
                    found.append(_join(current))
                    current = []
        if current:
            found.append(_join(current))
        if plain_letters >= MIN_PLAIN_LETTERS:
            runs.extend(r for r in found if r)
    return runs


def code_runs(info: dict[str, Any]) -> list[str]:
    """The runs of monospaced type inside running text of a page's text dict (see the
    module), in reading order of its blocks."""
    runs: list[str] = []
    for block in info.get("blocks", ()):
        if block.get("type", 0) != 0 or not _mostly_proportional(block):
            continue
        current: list[str] = []
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                text = str(span.get("text", ""))
                if not text.strip():
                    continue
                if _monospaced(span):
                    current.append(text)
                elif current:
                    runs.append(_join(current))
                    current = []
        if current:
            runs.append(_join(current))
    return [r for r in runs if r]
