"""Code cards: a listing on the front, the book's sentence that says what it does on the
back.

Flashcards leave code listings out (:mod:`~bookreader.core.study.source`); a student who
asks for code cards also gets, for each listing (a run of paragraphs that
:func:`~bookreader.core.code_text.is_code_paragraph` accepts) whose explanation stands on
the same page, a card "What does this code do?" with the listing's lines as printed.  The
explanation is either

* the lead-in just before the listing: its paragraph's last sentence, ending in a colon,
  in which a piece of code does something ("The following program converts a time of day
  to minutes:", "Here is a function that computes the area:"), or
* the sentence just after it that opens with the code as its subject and a verb of what
  it does ("This program prints ...", "The loop counts ...").

The back is that sentence, cited and verified on its page by
:class:`~bookreader.core.study.source.Citer`; a listing without such a sentence, or whose
sentence is not found on its page, makes no card.  Listings in sections nobody revises
from (exercises, answers) are left out as their prose is.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterator, Optional

from bookreader.core.code_text import is_code_paragraph
from bookreader.core.sentences import key_only, split_sentences
from bookreader.core.study.model import CARD_CODE, StudyCard, stable_id
from bookreader.core.study.source import (
    SKIPPED_SECTION,
    Citer,
    StudySentence,
    skipped_page,
)
from bookreader.core.types import CancelFn, check_cancel
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

#: The question every code card asks, on the front's first line.
CODE_QUESTION = "What does this code do?"
#: Most lines of a listing shown on a front; a longer one is cut and ends in an ellipsis.
MAX_LINES = 12
ELLIPSIS = "..."
#: Listings longer than this are whole programs a card cannot hold: no card.
MAX_LISTING_LINES = 40

#: What a piece of code is called in prose.
_CODE_NOUN = (r"(?:program|code|fragment|snippet|example|function|method|loop|statement|"
              r"class|script|listing|version|expression|query|command|definition|"
              r"block|constructor|procedure|call|module)s?")
#: A verb of what code does: a present-tense form ("prints", "computes"); forms of "be"
#: and "have", "looks" ("looks like this") and plural nouns ("modifications") say nothing
#: the code does.
_VERB = (r"(?!(?:is|was|has|does|this|its|us|as|his|yes|always|sometimes|perhaps|looks|"
         r"seems|appears|goes|comes|gets|follows)\b)(?![a-z]*(?:ion|ment|ness|ity|ure|ance|"
         r"ence)s\b)[a-z]{2,}s")
#: The lead-in before a listing: "... the following program converts ...:", "... a
#: function that computes ...:", "The following sets y to 0.33:".
_LEAD_IN = re.compile(
    rf"\b(?:(?:the\s+)?following|next|this|these|an?|the|our)\s+(?:[\w\-]+\s+){{0,2}}?"
    rf"{_CODE_NOUN}\s+(?:(?:that|which)\s+)?(?:\w+ly\s+)?{_VERB}\b"
    rf"|\bthe\s+following\s+(?:\w+ly\s+)?{_VERB}\b", re.IGNORECASE)
#: The sentence after a listing that opens with the code as its subject: "This program
#: prints ...", "The first loop counts ...", "These statements swap ...".
_AFTER = re.compile(
    rf"^(?:this|the|that|these|those|our)\s+(?:[\w\-]+\s+){{0,2}}?{_CODE_NOUN}\s+"
    rf"(?:(?:above|here)\s+)?(?:\w+ly\s+)?{_VERB}\b", re.IGNORECASE)
#: A lead-in to what a program prints ("... but the output is as follows:"): the text
#: after it is output, not code.
_OUTPUT = re.compile(r"\boutput\b|\bas\s+follows\b", re.IGNORECASE)
#: Fewest words of an explaining sentence.
_MIN_WORDS = 5


def explains_before(sentence: str) -> bool:
    """True for a lead-in that says what the listing after it does (see above)."""
    s = sentence.strip()
    return (s.endswith(":") and len(s.split()) >= _MIN_WORDS
            and _LEAD_IN.search(s) is not None and _OUTPUT.search(s) is None)


def explains_after(sentence: str) -> bool:
    """True for a sentence after a listing that says what the listing does (see above)."""
    s = sentence.strip()
    # one ending in a colon leads in to the next listing instead
    return (len(s.split()) >= _MIN_WORDS and not s.endswith(":")
            and _AFTER.match(s) is not None)


def shown_listing(lines: list[str]) -> str:
    """The listing's lines for a card's front: at most :data:`MAX_LINES`, the last of a
    longer one an ellipsis."""
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES - 1] + [ELLIPSIS]
    return "\n".join(lines)


def _lines(block: str) -> list[str]:
    return [ln.rstrip() for ln in block.split("\n") if ln.strip()]


def _listings(text: str) -> Iterator[tuple[list[str], str, int, str, int]]:
    """Each listing of a page's text: its lines, the paragraph before it and where that
    starts, the paragraph after it and where that starts (consecutive code paragraphs
    are one listing)."""
    blocks: list[tuple[str, int]] = []
    pos = 0
    for block in re.split(r"\n\s*\n", text):
        at = text.find(block, pos)
        if at < 0:
            continue
        pos = at + len(block)
        if block.strip():
            blocks.append((block, at))
    coded = [is_code_paragraph(_lines(b)) for b, _ in blocks]
    i = 0
    while i < len(blocks):
        if not coded[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(blocks) and coded[j + 1]:
            j += 1
        lines = [ln for b, _ in blocks[i:j + 1] for ln in _lines(b)]
        before, before_at = blocks[i - 1] if i > 0 else ("", -1)
        after, after_at = blocks[j + 1] if j + 1 < len(blocks) else ("", -1)
        yield lines, before, before_at, after, after_at
        i = j + 1


def _sentence(page: Any, index: int, text: str, block: str, block_at: int,
              last: bool) -> Optional[StudySentence]:
    """The block's last (or first) sentence as a :class:`StudySentence` of its page."""
    parts = split_sentences(block)
    if not parts:
        return None
    sent = parts[-1] if last else parts[0]
    at = text.find(sent, block_at)
    if at < 0:
        first = sent.split(" ", 1)[0]
        at = text.find(first, block_at)
    chapter, section = page.section_at(max(at, 0))
    flat = " ".join(sent.split())
    return StudySentence(text=flat, page=index, label=page.label, chapter=chapter,
                         section=section or chapter, offset=max(at, 0), position=0)


def code_cards(pages: Any, first: int, last: int, citer: Citer, book_id: str, *,
               chapter: str = "", selection: str = "",
               cancel: Optional[CancelFn] = None) -> list[StudyCard]:
    """The code cards of pages ``first``..``last`` (0-based, inclusive), in reading order.

    ``chapter``: keep only listings explained inside that chapter; ``selection``: only
    those whose explaining sentence lies inside the selected passage.
    """
    chosen = key_only(selection) if selection else ""
    out: list[StudyCard] = []
    seen: set[str] = set()
    for index in range(first, last + 1):
        check_cancel(cancel)
        try:
            page = pages.page(index)
        except (IndexError, ValueError, KeyError, BookReaderError) as exc:
            log.warning("Code cards: cannot read page %d: %s", index, exc)
            continue
        text = page.text or ""
        if not page.has_text_layer or skipped_page(text):
            continue
        for lines, before, before_at, after, after_at in _listings(text):
            if len(lines) > MAX_LISTING_LINES:
                continue
            explained = None
            if before and not is_code_paragraph(_lines(before)):
                s = _sentence(page, index, text, before, before_at, last=True)
                if s is not None and explains_before(s.text):
                    explained = s
            if explained is None and after:
                s = _sentence(page, index, text, after, after_at, last=False)
                if s is not None and explains_after(s.text):
                    explained = s
            if explained is None or SKIPPED_SECTION.search(explained.section or ""):
                continue
            if chapter and explained.chapter != chapter:
                continue
            if chosen and key_only(explained.text) not in chosen:
                continue
            listing = shown_listing(lines)
            key = key_only(listing)
            said = key_only(explained.text)
            if not key or key in seen or said in seen:
                continue
            back = explained.text[:-1].rstrip() + "." if explained.text.endswith(":") \
                else explained.text
            cit = citer.cite(explained, must_hold=back)
            if cit is None:
                continue
            seen.update((key, said))
            out.append(StudyCard(
                card_id=stable_id(book_id, CARD_CODE, key, back), kind=CARD_CODE,
                front=f"{CODE_QUESTION}\n{listing}", back=back, citation=cit,
                chapter=explained.chapter))
    return out
