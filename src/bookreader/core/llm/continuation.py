"""When the extractive answer's best sentence needs the sentences after it.

A textbook often states a problem in one sentence and resolves it in the next ("The ratio
should be 0.98, not 0.  The problem is that the language divides whole numbers without a
remainder."), opens a list with a lead-in
("Plants take in nutrients through several routes: 1. Roots:
..."), or follows a short definition with the sentence that says what it means
("It ...", "For example, ...").  The best-scored sentence alone is then true but thin: it
matches the question's words because it restates the question.

:func:`continuation` says how many of the sentences that follow the best one in its
passage belong with it: the next sentence when it continues the first (it opens with a
word that points back, "It", "This", "The problem is", "For example", ...; or the first is
a lead-in that ends in a colon, or a short definition), and the items of a list a lead-in
opens, up to :data:`CONTINUATION_WORDS` words in all (an answer a student reads at a
glance: one or two sentences).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from bookreader.core.code_text import is_maths

#: Most words of the best sentence and the sentences that continue it, together.
CONTINUATION_WORDS = 60
#: A definition this short ("constructor: A special method ...") is followed by the
#: sentence that explains it, when that one points back to it.
SHORT_SENTENCE = 14
#: A lead-in shorter than this ("There are several reasons:") says nothing without its list.
BARE_LEAD_IN = 8
#: A best sentence with at most this many content words the question lacks restates the
#: question ("You will notice that there was no need for X at the end of the file." for
#: "Do I need X at the end of a file?"): what the student asked is in the sentence after.
RESTATES_NEW_WORDS = 3

#: A sentence that points back to the one before it, or resolves what it set up.
_CONTINUES = re.compile(
    r"^\s*[\u2022\-*]?\s*(?:"
    r"(?:it|this|that|these|those|they|such|so|thus|therefore|hence|consequently|"
    r"instead|otherwise|because|then|but|however)\b(?!\s*[.,;:]?\s*$)|"
    r"(?:that\s+is|in\s+other\s+words|in\s+short|in\s+fact|as\s+a\s+result|"
    r"for\s+(?:example|instance)|there\s+(?:are|is)\s+(?:several|many|two|three|four|a\s+few|"
    r"some|a\s+number)|(?:we|you)\s+(?:can\s+)?do\s+(?:this|that|so)\b|"
    r"the\s+(?:\w+\s+)?(?:problem|reason|result|answer|solution|idea|trick|difference|"
    r"effect|purpose|advantage|catch|steps?)\b)|"
    # "To solve this problem, ...", "In this program, ...": a reference in the first words
    r"(?:[\w,]+\s+){1,3}(?:this|that|these|those)\s+(?:problem|case|example|way|program|"
    r"method|approach|technique|situation|reason|is|means)\b"
    r")", re.IGNORECASE)
#: A bare list number the sentence splitter leaves as a "sentence" ("2.").
_ENUMERATOR = re.compile(r"^\s*(?:\d{1,2}|[a-z])[.)]\s*$", re.IGNORECASE)
#: A list number or bullet left at the end of a lead-in ("... their environment: 1.").
_TRAILING_ENUMERATOR = re.compile(r":\s*(?:\d{1,2}[.)]|[\u2022\-*])\s*$")
#: A list item: a bullet or a number first, or "Term: what it is".
ITEM = re.compile(r"^\s*(?:[\u2022\-*]|\d{1,2}[.)]\s)|"
                  r"^\s*[\w(][\w()/\-]*(?:\s+[\w()/\-]+){0,3}\s*:\s+[A-Z(\u2022\d]")


def _is_item(sentence: str) -> bool:
    """A list item or another glossary entry (not a lead-in that ends its own line)."""
    return bool(ITEM.match(sentence)) and not is_lead_in(sentence)


def is_lead_in(sentence: str) -> bool:
    """A sentence that opens what follows: it ends in a colon (or in a colon and the
    first list number, "... their environment: 1.")."""
    s = sentence.rstrip()
    return s.endswith(":") or bool(_TRAILING_ENUMERATOR.search(s))


#: A lead-in whose first list item shares its line ("A recipe card can include:
#: \u2022 Ingredients and their amounts").
_LEAD_IN_WITH_ITEM = re.compile(r":\s*\u2022\s*[^\u2022:]+$"
                                r"|:\s+[A-Z][\w()/\-]*(?:\s+[\w()/\-]+){0,3}:\s+[A-Z][^:]*$")


#: A sentence that announces what comes after it without a colon ("... a function with
#: the following properties.", "... is defined as follows.").
_ANNOUNCES = re.compile(r"\b(?:the\s+following(?:\s+[\w-]+){0,2}|as\s+follows)\s*\.?$",
                        re.IGNORECASE)


def opens_list(sentence: str) -> bool:
    """A lead-in (:func:`is_lead_in`), one that runs into its list's first item, or one
    that announces what follows (:data:`_ANNOUNCES`): the items after it belong to it."""
    s = sentence.rstrip()
    return is_lead_in(s) or bool(_LEAD_IN_WITH_ITEM.search(s) or _ANNOUNCES.search(s))


def continues(sentence: str) -> bool:
    """True when ``sentence`` opens with a word that points back to the one before it."""
    return bool(_CONTINUES.match(sentence))


def is_enumerator(sentence: str) -> bool:
    """A bare list number ("2.") that the sentence splitter left as a sentence."""
    return bool(_ENUMERATOR.match(sentence))


def continuation(best: str, following: Sequence[str], *,
                 usable: Callable[[str], bool] = lambda s: True,
                 related: Callable[[str], bool] = lambda s: True,
                 restates: bool = False,
                 max_words: int = CONTINUATION_WORDS) -> int:
    """How many of ``following`` (the sentences after ``best`` in its passage, in order)
    go with it in the answer.

    * A lead-in (:func:`is_lead_in`, or one that runs into its first list item:
      :func:`opens_list`) takes the sentences or list items after it while they fit in
      ``max_words`` (bare list numbers skipped, counted as taken).
    * Otherwise the next sentence joins when it continues ``best`` (:func:`continues`),
      or when ``best`` is a short sentence (at most :data:`SHORT_SENTENCE` words) and the
      next one is not a list item or a heading; then one more when that one continues
      too, within ``max_words``.

    ``related`` says whether a sentence after a short ``best`` is about the same thing
    (a short sentence is followed by what it means, or by the next topic: "A list is a
    sequence of values." then "You can also nest lists."); a sentence that points back
    (:func:`continues`) needs no such check.

    ``restates`` says that ``best`` adds (almost) nothing to the question's own words: it
    is then read as a short sentence, and the next one joins when it is related.

    ``usable`` rejects a sentence that may not be shown (code, a heading, a task): the
    continuation stops there.  Returns 0 when nothing follows that belongs.
    """
    used = len(best.split())
    taken = 0
    lead = opens_list(best)
    joined = 0
    for n, sentence in enumerate(following):
        if is_enumerator(sentence):
            continue
        size = len(sentence.split())
        if used + size > max_words or not (usable(sentence) or (lead and is_maths(sentence))):
            break  # (a list's item may be a formula: its brackets are not a listing's)
        if lead:
            prev = following[n - 1] if n else best
            # (an item may have lost its bullet in the page text: it then opens with a
            # small letter, as no sentence of prose does)
            ok = (joined == 0 or bool(ITEM.match(sentence)) or is_lead_in(prev)
                  or is_enumerator(prev) or sentence.lstrip()[:1].islower())
        elif joined == 0:
            ok = continues(sentence) or (
                (restates or len(best.split()) <= SHORT_SENTENCE) and not _is_item(sentence)
                and related(sentence))
        else:
            ok = continues(sentence)
        if not ok:
            break
        used += size
        joined += 1
        taken = n + 1
        if is_lead_in(sentence):
            lead = True  # "There are several reasons:": its list follows
        elif not lead and joined >= 2:
            break
    while taken and is_lead_in(following[taken - 1]) and len(
            following[taken - 1].split()) < BARE_LEAD_IN:
        taken -= 1  # a bare lead-in whose list did not fit says nothing on its own
        while taken and is_enumerator(following[taken - 1]):
            taken -= 1
    return taken
