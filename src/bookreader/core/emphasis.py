"""Runs of italic or bold type inside a page's running text.

Textbooks set a term in italics or bold where they define it.  :func:`emphasised_runs`
reads a page's ``get_text("dict")`` spans (flag 2: italic, 16: bold; or a font name that
says so) and returns each maximal run of emphasised spans inside a block that also holds
plain text: a heading (a block wholly in bold or italics) gives none.  A run broken over
two lines is joined ("equi-" + "librium" reads "equilibrium").
"""

from __future__ import annotations

import re
from typing import Any

from bookreader.core.pdf_layout import normalize_text

_ITALIC = 2
_BOLD = 16
_STYLED_FONT = re.compile(r"italic|oblique|bold|black|heavy|semibold", re.IGNORECASE)
#: Fewest plain letters a block must hold for its emphasis to be inside running text.
MIN_PLAIN_LETTERS = 20


def _emphasised(span: dict[str, Any]) -> bool:
    flags = int(span.get("flags", 0))
    return bool(flags & (_ITALIC | _BOLD)) or bool(_STYLED_FONT.search(str(span.get("font", ""))))


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
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                text = str(span.get("text", ""))
                if not text.strip():
                    continue  # a space continues a run and ends none
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
