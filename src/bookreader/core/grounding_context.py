"""What the grounding check reads of a context, computed once per context and per sentence.

:func:`build_context` splits the context into support sentences (an instruction planted
in a sentence is left out, and what it asks for kept as a payload), and gathers each
sentence's terms, names, numbers, negation cues and superlatives.  A sentence's facts are
cached (:func:`_sentence_facts`): a served book's passages recur in context after
context, and the checks read the same sentences for every answer about them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from bookreader.core.claim_swaps import noun_terms
from bookreader.core.code_text import FIELD_LINE
from bookreader.core.claim_text import Cue, claim_terms, negation_cues, number_terms
from bookreader.core.grounding_checks import DefinedName, defined_names, labelled_entries
from bookreader.core.injection import instruction_start, unfinished_end
from bookreader.core.exact_terms import ANAPHORA, key_text, list_groups, name_key, ranks, squash
from bookreader.core.sentences import STOPWORDS, split_sentences, words


@dataclass
class Context:
    terms: set[str]
    lower_words: set[str]
    numbers: set[str]
    squashed: str  # lower-cased, whitespace-free text for code-term checks
    keys: str  # the words as name keys, space-separated (multi-word names)
    windows: list[str]  # the support sentences (instructions left out)
    sentence_terms: list[set[str]]
    #: Each sentence's name keys, plus the previous sentence's when it opens with
    #: "It", "She", "This"... (the relation check, and names in a window).
    sentence_words: list[set[str]]
    sentence_numbers: list[set[str]]
    sentence_squashed: list[str]
    negation_cues: list[list[Cue]]
    continues: list[bool]  # the sentence opens with "It", "This"... (goes on from the last)
    payloads: list[str]  # the planted instructions (what they ask the model to say)
    nouns: set[str]  # stems the context uses as nouns or names (the swapped-term check)
    #: Per sentence, the list it opens or belongs to: a line ending in ":" and the items
    #: after it (indices), or () when it is in no list.
    lists: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    ranks: list[dict[str, set[str]]] = dataclasses.field(default_factory=list)  # superlatives
    #: Each support sentence's :func:`verbatim_key` -> its index (copied sentences).
    verbatim: dict[str, int] = dataclasses.field(default_factory=dict)
    #: Words the context uses as the name of a method, function, operator, keyword or
    #: command ("the equals method"): lower case (see :func:`code_names`).
    code_names: frozenset[str] = frozenset()
    #: The labelled entries ("Transfer Learning: The ability to ...") as (label terms,
    #: definition terms): :func:`~bookreader.core.grounding_checks.labelled_entries`.
    entries: list[tuple[set[str], set[str]]] = dataclasses.field(default_factory=list)
    #: The names the context defines, with their head term and definition terms:
    #: :func:`~bookreader.core.grounding_checks.defined_names`.
    definitions: list[DefinedName] = dataclasses.field(
        default_factory=list)


class _Facts(NamedTuple):
    """What the checks read of one context sentence (see :class:`Context`)."""

    terms: frozenset[str]
    names: frozenset[str]  # its words' name keys
    numbers: frozenset[str]
    squashed: str
    cues: tuple[Cue, ...]
    continues: bool  # opens with "It", "This"... (goes on from the sentence before)
    ranks: dict[str, set[str]]  # read only: shared by every context holding the sentence


@lru_cache(maxsize=16384)
def _sentence_facts(sentence: str) -> _Facts:
    """Cached: a served book's passages recur in context after context."""
    ws = words(sentence)
    return _Facts(frozenset(claim_terms(sentence)), frozenset(name_key(w) for w in ws),
                  frozenset(number_terms(sentence)), squash(sentence),
                  tuple(negation_cues(sentence)), opens_with_anaphora(sentence),
                  ranks(sentence))


#: An opening phrase this many words long at most ("In Excel, this is ...").
OPENING_PHRASE = 4


def opens_with_anaphora(sentence: str) -> bool:
    """True when the sentence's subject points back to the sentence before it.

    "It has no effect ...", or after a short opening phrase and a comma: "In Excel, *this*
    is a central feature" (the pivot table of the sentence before).
    """
    ws = words(sentence)
    if ws and ws[0].lower() in ANAPHORA:
        return True
    head, comma, rest = sentence.partition(",")
    if not comma or len(words(head)) > OPENING_PHRASE:
        return False
    after = words(rest)
    return len(after) > 1 and after[0].lower() in ANAPHORA


def verbatim_key(sentence: str) -> str:
    """A sentence with its whitespace and final full stop normalised (case and every other
    character kept: "a == b" and "a != b" stay apart)."""
    return " ".join(sentence.split()).rstrip(" .")


#: "the equals method", "the print function", "the break keyword": a word the book names
#: as code.  Stemming would match "equals" to "equal" and "print" to "printing".
_NAMED_AS_CODE = re.compile(
    r"\bthe\s+([A-Za-z_]\w{2,})\s+(?:method|function|operator|keyword|command|statement)s?\b",
    re.IGNORECASE)


def code_names(text: str) -> frozenset[str]:
    """The words ``text`` names as code: "the equals method" -> {"equals"}.

    A claim that uses one of these words needs it written the same way in its supporting
    sentence: "equals tests whether two integers are equal" is not supported by "To test
    whether two integers are equal, use the == operator", whose "equal" is an adjective.
    """
    return frozenset(m.group(1).lower() for m in _NAMED_AS_CODE.finditer(text)
                     if m.group(1).lower() not in STOPWORDS)


#: A docstring's or a comment line's words inside a support sentence: the sentence
#: splitter keeps a listing's lines together ("class InventorySystem:\n\"\"\"
#: Warehouse inventory tracking system\"\"\"\ndef __init__ ..." is one sentence).
_MARKED_TEXT = re.compile(r'"""\s*(.+?)\s*"""|\'\'\'\s*(.+?)\s*\'\'\'|^[ \t]*(?:#|//)[ \t]*(\S.*?)[ \t]*$',
                          re.S | re.M)


def marked_texts(sentence: str) -> list[str]:
    """The words of each docstring and comment line in ``sentence``, without their marks:
    what an answer quoting them copies (the extractive backend and the quotes show a
    docstring without its triple quotes: :func:`~bookreader.core.llm.answer_type.
    unmarked`)."""
    out = []
    for m in _MARKED_TEXT.finditer(sentence):
        text = next(g for g in m.groups() if g is not None)
        if len(words(text)) >= 2:
            out.append(text)
    return out


def support_sentences(context_text: str) -> list[str]:
    """The context's sentences, a listing's fields apart: what follows a field's label on
    a line of its own ("com_pos: Center of mass position") describes the label, not what
    the line before it talks about (:data:`~bookreader.core.code_text.FIELD_LINE`)."""
    out: list[str] = []
    for sent in split_sentences(context_text):
        out.extend(p.strip() for p in FIELD_LINE.split(sent) if p.strip())
    return out


def build_context(context_text: str, header_reach: int, max_windows: int) -> Context:
    """What the checks read of ``context_text``: its support sentences (planted
    instructions left out: :func:`~bookreader.core.injection.instruction_start`, their
    text kept as payloads) and each sentence's facts."""
    support: list[str] = []
    payloads: list[str] = []
    for sent in support_sentences(context_text):
        # text that no full stop closes, run into the sentence, is not support
        # (:func:`~bookreader.core.injection.unfinished_end`)
        sent = sent[unfinished_end(sent):]
        start = instruction_start(sent)
        if start is None:
            support.append(sent)
            continue
        payloads.append(sent[start:])
        if len(words(sent[:start])) >= 3:
            support.append(sent[:start].strip())  # the text before the instruction
    support = support[:max_windows]
    text = " ".join(support)
    facts = [_sentence_facts(x) for x in support]
    lower = set().union(*(f.names for f in facts))
    sentence_words: list[set[str]] = []
    header: set[str] = set()
    since_header = header_reach
    for sent, f in zip(support, facts):
        here = set(f.names)
        if f.continues and sentence_words:
            here |= sentence_words[-1]
        since_header += 1
        if since_header <= header_reach:
            here |= header  # an item of a list introduced by "... include:"
        if sent.rstrip().endswith(":"):
            header, since_header = set(f.names), 0
        sentence_words.append(here)
    ctx = Context(
        terms=set().union(*(f.terms for f in facts)),
        lower_words=lower,
        numbers=number_terms(text),
        squashed=squash(text),
        keys=key_text(text),
        windows=support,
        sentence_terms=[set(f.terms) for f in facts],
        sentence_words=sentence_words,
        sentence_numbers=[set(f.numbers) for f in facts],
        sentence_squashed=[f.squashed for f in facts],
        negation_cues=[list(f.cues) for f in facts],
        continues=[f.continues for f in facts],
        payloads=[p for p in payloads if p],
        nouns=noun_terms(text),
        lists=list_groups(support),
        ranks=[f.ranks for f in facts],
        verbatim=_verbatim(support),
        entries=labelled_entries(support),
        definitions=defined_names(support),
        code_names=code_names(text),
    )
    return ctx


def _verbatim(support: list[str]) -> dict[str, int]:
    """Each support sentence's index by its :func:`verbatim_key`, the first one first; and
    by the words of each docstring and comment line it holds (:func:`marked_texts`): an
    answer that quotes "Warehouse inventory tracking system" copies that listing's
    sentence word for word (scored against the whole listing, it falls short of support
    and the answer is shown as quotes)."""
    out: dict[str, int] = {}
    for i, x in enumerate(support):
        out.setdefault(verbatim_key(x), i)
    for i, x in enumerate(support):
        for text in marked_texts(x):
            out.setdefault(verbatim_key(text), i)
    return out
