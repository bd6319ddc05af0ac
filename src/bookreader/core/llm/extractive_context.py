"""What the extractive backend reads from a prompt: its context blocks, its question, and
the blocks' sentences as the units it scores.

It reads the same prompt the language models read (see :mod:`bookreader.core.prompts`):
the last user message holds delimited blocks::

    <excerpt id="N" section="SECTION" page="LABEL">
    TEXT
    </excerpt>
    <selection page="LABEL">      (page optional)
    TEXT
    </selection>
    <question>
    TEXT
    </question>

or the same parts from the structured request answering passes
(:func:`prompt_from_request`).  A block's units are the shared splitter's sentences
(:mod:`bookreader.core.sentences`), broken further where one "sentence" holds a lead-in
and its listing, or the entries of a vocabulary list (:func:`split_sentences`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from bookreader.core.code_text import DESCRIBED_FIELD_LINE, is_code_paragraph, listing_units
from bookreader.core.sentences import split_sentences as _split
from bookreader.core.types import AnswerRequest, Message

SELECTION_SECTION = "Selected text"

_BLOCK_RE = re.compile(r"<(excerpt|selection)\b([^>\n]*)>\s*(.*?)\s*</\1\s*>", re.S | re.I)
_ATTR_RE = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
_QUESTION_RE = re.compile(r"<question\b[^>\n]*>\s*(.*?)\s*</question\s*>", re.S | re.I)
_FALLBACK_RE = re.compile(r"write only:\s*(.+?)\s*$", re.M | re.I)


@dataclass(frozen=True)
class ContextBlock:
    """One ``<excerpt>`` or ``<selection>`` block of the prompt."""

    kind: str  # "excerpt" or "selection"
    text: str
    section: str = ""
    page_label: str = ""
    number: Optional[int] = None


@dataclass(frozen=True)
class ParsedPrompt:
    """What the extractive backend needs from a prompt."""

    blocks: tuple[ContextBlock, ...]
    question: str
    fallback: Optional[str]  # the fixed sentence the system prompt asks for, if found


def parse_prompt(messages: Sequence[Message]) -> ParsedPrompt:
    """Read the context blocks and the question from the last user message.

    Earlier user messages (the worked example turn) are ignored.  A user message without
    a ``<question>`` block is taken to be the question itself once the blocks are removed.
    """
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    blocks: list[ContextBlock] = []
    for match in _BLOCK_RE.finditer(user):
        kind = match.group(1).lower()
        attrs = {k.lower(): v.strip() for k, v in _ATTR_RE.findall(match.group(2))}
        number: Optional[int] = None
        if attrs.get("id", "").isdigit():
            number = int(attrs["id"])
        section = attrs.get("section", "")
        if kind == "selection" and not section:
            section = SELECTION_SECTION
        blocks.append(ContextBlock(kind, match.group(3), section, attrs.get("page", ""), number))
    q = _QUESTION_RE.search(user)
    if q is not None:
        question = q.group(1)
    else:
        question = _BLOCK_RE.sub(" ", user)
    fallback = None
    for m in messages:
        if m.role == "system":
            found = _FALLBACK_RE.search(m.content)
            if found:
                fallback = found.group(1).strip()
    return ParsedPrompt(tuple(blocks), " ".join(question.split()), fallback)


def prompt_from_request(request: AnswerRequest) -> ParsedPrompt:
    """The same as :func:`parse_prompt`, from the structured request answering passes."""
    blocks: list[ContextBlock] = []
    if request.selection is not None:
        blocks.append(ContextBlock("selection", request.selection.strip(), SELECTION_SECTION,
                                   request.selection_page_label))
    blocks.extend(ContextBlock("excerpt", e.text.strip(), e.section or "Book", e.page_label,
                               e.number) for e in request.excerpts)
    return ParsedPrompt(tuple(blocks), " ".join(request.question.split()),
                        request.fallback or None)


#: Where a "sentence" of the shared splitter holds more than one unit: after a colon that
#: ends a line (a lead-in to code or a list), before a line that opens a glossary entry
#: ("base case: A condition that ..."), and where a vocabulary list runs its entries
#: together after a full stop ("... into a single value. accumulator: A variable ...";
#: the shared splitter only breaks before a capital letter).
_UNIT_BREAK = re.compile(
    r"(?<=:)[ \t]*\n|\n(?=[ \t]*[A-Za-z][\w \-]{1,40}:[ \t]+[A-Z(])"
    r"|(?<=[a-z0-9)]{2}[.!?])\s+(?=[a-z][\w\-']*(?:[ \t][\w\-']+){0,3}:[ \t]+[A-Z(])"
    # a glossary without colons run together ("... refer to the same object. delimiter A
    # character or string ..."): a term in lower case, then its
    # definition with a capital letter, after a full stop
    r"|(?<=[a-z0-9)]{2}\.)\s+(?=[a-z][a-z\-']*(?:[ \t][a-z][a-z\-']*){0,2}[ \t]+[A-Z][a-z]*\s)"
    # "... reads the file: #!/usr/bin/env python3 import sys": prose, then a listing.
    r"|(?<=:)\s+(?=#!|import\s|from\s+\S+\s+import\b|def\s|class\s+\w+\s*[(:]|>>>|"
    r"public\s|private\s|static\s)")
#: "... see if you can figure out what happened: NullPointerException: You tried to access
#: ...": a lead-in, then the entry of a list of named terms (as a book's appendix of error
#: messages prints them).  Only the backend's own candidates split there
#: (:func:`_candidate_units`): in the sentences the local tiers' focus reads, the entry
#: then outranks the section that explains the term, and the gold page is lost.
_ENTRY_AFTER_LEAD_IN = re.compile(r"(?<=[a-z]:)[ \t]+(?=[A-Z][a-z]+[A-Z]\w*:[ \t]+[A-Z])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (the splitter citations and grounding use), one line each;
    a line ending in a colon, a glossary entry and a docstring's field line
    (:data:`~bookreader.core.code_text.DESCRIBED_FIELD_LINE`) are units of their own."""
    out = []
    for sentence in (part for whole in _split(text) for part in DESCRIBED_FIELD_LINE.split(whole)):
        lines = sentence.split("\n")
        # A code listing's comment and docstring lines are units of their own (a chunk
        # keeps a listing's lines apart: core/chunking.py), so one can be quoted alone.
        pieces = (listing_units(lines) if len(lines) > 1 and is_code_paragraph(lines)
                  else [sentence])
        for unit in (u for piece in pieces for u in _UNIT_BREAK.split(piece)):
            unit = " ".join(unit.split())
            if unit:
                out.append(unit)
    return out




def candidate_units(text: str) -> list[str]:
    """:func:`split_sentences`, with a named term's entry after a lead-in a unit of its
    own (:data:`_ENTRY_AFTER_LEAD_IN`)."""
    return [u for s in split_sentences(text) for u in _ENTRY_AFTER_LEAD_IN.split(s) if u]
