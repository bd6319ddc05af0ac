"""Code listings in page text: which lines and paragraphs are source code, and a
listing's units (its lines; a docstring on lines of its own is one unit).

Used by the chunker (a listing keeps its line breaks in a chunk's text, see
:mod:`bookreader.core.chunking`, rule 6) and by the extractive backend (a listing's
lines are candidates of their own).  Plain text rules: page text carries no fonts.
"""

from __future__ import annotations

import re
from typing import Sequence

_LINE = re.compile(r"[^\n]*\S[^\n]*")

#: A line of source code rather than of prose.  A comment, prompt or docstring mark at the
#: start is enough; other marks (a keyword of a listing at the start, a statement's or
#: block's end, an assignment or comparison, a call, an attribute of ``self``, an index)
#: count only on a line with few small words of prose (:data:`_PROSE_WORDS`): prose about
#: code has them too ("write t = t.sort()", "class variable: A variable declared ...").
_COMMENT_LINE = re.compile(r"^(?:#|//|/\*|\*/|>>>|\"\"\"|\'\'\')")
_CODE_LINE = re.compile(
    r"^(?:\.\.\.\s|@\w|import\s|from\s+\S+\s+import\b|def\s|class\s+\w|return\b|"
    r"if\s.*:$|elif\b|else\b|for\s.*:$|while\s.*:$|try:|except\b|with\s.*:$|raise\s|"
    r"pass$|break\b|continue\b|case\s|['\"][\w ]+['\"]\s*:\s|public\s|private\s|"
    r"protected\s|static\s|void\s|using\s|package\s|[{}\])]|"
    r"(?:pip3?|python3?|sudo|apt(?:-get)?|cd|mkdir|source|export|ros2|colcon|git|conda|"
    r"javac?|npm)\s)"
    r"|[{};]$|\):$|\s#\s|^[\w.]+\(.*\)$"
    r"|[\w\])]\s*(?:[-+*/%]?=|==|!=|->|=>)\s*\S|\w\(\S*\)|\bself\.\w|\w\[\w")
#: Small words of English prose; a line of code seldom holds several of them.
_PROSE_WORDS = frozenset(
    "the a an of to is are and or in that it we you this for with as be on by was can "
    "which not but if then there their they its when".split())
#: The end of a sentence or of a lead-in ("... the others are:") on a paragraph's last line.
_PROSE_END = re.compile(r"[.!?:][\"'\u201d\u2019)\]]*$")


#: A comment that says what the code does ("# Create virtual environment", "// swap
#: them"), not a script's "#!" line or a docstring mark.
_SAYING_COMMENT = r"(?:#(?!!)|//)\s*\w"
_COMMENT_AT_START = re.compile(rf"^\s*{_SAYING_COMMENT}")
#: ... also after a lead-in: "... a proper development environment: # Create virtual
#: environment" (the listing's first comment run into the prose before it).
_COMMENT_AT_END = re.compile(rf"(?:^|:\s+|\n)\s*{_SAYING_COMMENT}[^\n#]*$")


#: A character that only mathematics is set in: the Unicode mathematical letters (a maths
#: font's variables, "𝑇", "𝐅") and the mathematical operators ("∈", "∀", "≤").  No
#: programming language writes code with them.
_MATHS = re.compile(r"[\U0001D400-\U0001D7FF\u2200-\u22FF]")


def is_maths(line: str) -> bool:
    """True for a formula or a sentence with one ("𝑓(𝑥 + 𝑦) = 𝑓(𝑥) + 𝑓(𝑦) for all
    𝑥, 𝑦 ∈ 𝑆."): its brackets and "=" make it look like a statement of code."""
    return _MATHS.search(line) is not None


_PROSE_WORD = re.compile(r"[^\W\d_]{3,}")


def prose_words(text: str) -> int:
    """How many words of three letters or more ``text`` holds: a figure, a formula's
    symbols and a table's numbers have none."""
    return len(_PROSE_WORD.findall(text))


def is_comment(line: str) -> bool:
    """True for a comment line of a listing that says something (see above)."""
    return _COMMENT_AT_START.match(line) is not None


def ends_in_comment(text: str) -> bool:
    """True when ``text`` ends in such a comment: the comment alone, or a lead-in and the
    listing's first comment."""
    return _COMMENT_AT_END.search(text.strip()) is not None


def is_code_line(line: str) -> bool:
    """True when a line of page text reads as a line of a code listing (see above)."""
    s = line.strip()
    if not s:
        return False
    if _COMMENT_LINE.search(s):
        return True
    if not _CODE_LINE.search(s):
        return False
    words = s.lower().split()
    small = sum(1 for w in words[1:] if w in _PROSE_WORDS)  # not a keyword ("for", "if")
    return small < 2 or (small < 3 and small * 5 < len(words))


def is_code_paragraph(lines: Sequence[str]) -> bool:
    """True for a paragraph of page text (one PDF text block) that is a code listing: at
    least half of its lines code-like (:func:`is_code_line`; a single line: that line),
    unless its last line ends a sentence or a lead-in as prose does without being code
    itself ("So factorial(3) is 3 * factorial(2); ... which is 6.", "The == operator is
    one of the comparison operators; the others are:")."""
    lines = [ln.strip() for ln in lines if ln.strip()]
    if not lines:
        return False
    coded = [is_code_line(ln) for ln in lines]
    last = lines[-1]
    if _PROSE_END.search(last) and (not coded[-1] or len(lines) == 1) and len(last.split()) >= 4:
        return False
    return sum(coded) * 2 >= len(lines)


_DOCSTRING_QUOTES = ('"""', "'''")


def code_units(part: str) -> list[tuple[int, int]]:
    """The units of a code paragraph: its lines, except that a docstring whose quotes
    stand on lines of their own is one unit ("\"\"\" Compute the monthly payment for
    a loan rate: Yearly interest rate ... \"\"\""): its words say together
    what the code does, where its lines alone read like headings."""
    lines = [(m.start(), m.end()) for m in _LINE.finditer(part)]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        s, e = lines[i]
        opening = part[s:e].strip()
        j = i
        if opening.startswith(_DOCSTRING_QUOTES):
            quote = opening[:3]
            closed = len(opening) > 3 and opening.endswith(quote)
            while not closed and j + 1 < len(lines):
                j += 1
                closed = quote in part[lines[j][0]:lines[j][1]]
            if not closed:
                j = i  # no closing quotes in this paragraph: lines as they are
        out.append((s, lines[j][1]))
        i = j + 1
    return out


#: A line that explains code rather than being it: a comment or a docstring.
_EXPLAINS = re.compile(r"^(?:#(?!!)|//|/\*|\*|\"\"\"|\'\'\')")


#: A field of a docstring or a listing on a line of its own ("\ncom_pos: Center of mass
#: position [x, y, z]", "\n:param lidar_ranges: LiDAR range measurements"): what follows the
#: label describes the label, not what the line before it talks about (the grounding
#: check's support sentences end before one).
FIELD_LINE = re.compile(r"\n[ \t]*(?=(?::param[ \t]+)?[a-z_][\w.]*_[\w.]*[ \t]*:[ \t]+\S)")
#: The quotable units end before such a field too, when it describes in words
#: ("com_pos: Center of mass position [x, y, z]") after a line that is not code left open
#: (a signature's next argument, "start_pos: Tuple[...]", stays with its line), so a quote
#: is a sentence the check reads whole: "Compute the monthly payment for a loan
#: rate: Yearly interest rate [0, 1]" quoted as one failed the check (its names in
#: no one support sentence).  A ":param" field stays with its docstring's summary, as
#: quotes show it ("Initialize the loan :param principal: ...").
DESCRIBED_FIELD_LINE = re.compile(
    r"(?<![,(\[{\\])[ \t]*\n[ \t]*(?=[a-z_][\w.]*_[\w.]*[ \t]*:[ \t]+[A-Z][a-z])")


def listing_units(lines: Sequence[str]) -> list[str]:
    """A listing's lines as a reader of answers wants them: each comment or docstring line
    a unit of its own (it says in words what the code does), and each run of the other
    lines one unit (a statement and its output, ``>>> int('32')`` ``32``, stay together)."""
    out: list[str] = []
    run: list[str] = []
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if _EXPLAINS.search(s):
            if run:
                out.append(" ".join(run))
                run = []
            out.append(s)
        else:
            run.append(s)
    if run:
        out.append(" ".join(run))
    return out
