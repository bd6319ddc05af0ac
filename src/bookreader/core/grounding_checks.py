"""Sentence checks of the grounding validator that need no support window.

Planted instructions (a context sentence that addresses the model is data, never
support, and an answer saying what it asks for fails), garbled sentences (a small
model's naming sentence without its name) and tautologies (an answer that only restates
the question).  Plain string work, like :mod:`bookreader.core.claim_text`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from typing import NamedTuple, Optional

from bookreader.core.claim_text import (
    DEGREE_WORDS,
    claim_terms,
    number_terms,
    opens_with_verdict,
    strip_verdict,
)
from bookreader.core.exact_terms import code_key, code_terms, squash
from bookreader.core.lexicon import LANGUAGE_NOUNS
from bookreader.core.sentences import STOPWORDS, content_terms, stem, word_matches


# --- instructions planted in a context -----------------------------------------------------
# Which context sentences are instructions is decided by :mod:`bookreader.core.injection`
# (a learned model of the sentence's form); this check reads what they asked for.


def carries_out(sentence: str, instructions: Iterable[str], support_terms: Set[str]) -> bool:
    """True when ``sentence`` says what one of the planted ``instructions`` asked for.

    Its content words are (nearly) all words of the instruction, and at least one of
    them is said only there, not by the book around it (``support_terms``): "PINEAPPLE."
    or "Model 7 repeats after 4096 steps" after a sentence telling the assistant to say
    so, while an answer that shares a word or two with the instruction is judged on
    its own support.
    """
    terms = set(content_terms(sentence))
    if not terms:
        return False
    for text in instructions:
        inside = terms & set(content_terms(text))
        if inside and len(inside) / len(terms) >= OBEYED_SHARE and inside - support_terms:
            return True
    return False


#: Share of an answer sentence's content words that come from a planted instruction
#: when the sentence carries it out.
OBEYED_SHARE = 0.75


# --- a number said of another count -------------------------------------------------------
#: A number standing alone (not part of a word such as "ROS1"), and the words after it
#: up to the next punctuation.
_COUNT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(?!\w)(?![.,]\d)(?=([^.,;:!?()\[\]\n]*))")
_COUNT_WORD = re.compile(r"\d+(?:[.,]\d+)*|[A-Za-z][A-Za-z'\-]*")
#: Words after a number searched for what it counts ("100 *time* steps", "250 *agents*").
COUNT_REACH = 2


def counts(text: str) -> dict[str, set[str]]:
    """What the numbers of ``text`` count: the stem of the first content word within
    :data:`COUNT_REACH` words after a number and before any punctuation ("In version 3,
    dividing ..." counts nothing; another number ends the search: in "2 or 3 neighbours"
    only the 3 counts neighbours) -> the numbers said of it."""
    out: dict[str, set[str]] = {}
    for m in _COUNT.finditer(text):
        for nxt in _COUNT_WORD.findall(m.group(2))[:COUNT_REACH]:
            if nxt[0].isdigit():
                break
            low = nxt.lower()
            if low in STOPWORDS:
                continue
            out.setdefault(stem(low), set()).add(m.group(1).replace(",", ""))
            break
    return out


def miscounted(sentence: str, context_sentences: Iterable[str]) -> list[str]:
    """The numbers of ``sentence`` that count something the context counts with other
    numbers only: "after 250 time steps, with about 100 agents" where the book says
    "after 100 time steps, with about 250 agents" (both numbers are in the context, so
    the exact-term check passes; each is said of the other thing)."""
    claim = counts(sentence)
    if not claim:
        return []
    book: dict[str, set[str]] = {}
    for text in context_sentences:
        for unit, nums in counts(text).items():
            book.setdefault(unit, set()).update(nums)
    return [f"{n} {unit}" for unit, nums in claim.items() if unit in book
            for n in sorted(nums - book[unit])]


# --- garbled sentences ----------------------------------------------------------------------
#: A naming verb whose name is missing: "the values in an array *called are* Strings".
_DANGLING_NAME = re.compile(
    r"\b(?:called|named|termed|known\s+as)\s+(?:is|are|was|were|be|been)\b", re.IGNORECASE)


def dangling_name(sentence: str) -> bool:
    """True when ``sentence`` names something without the name ("The values in an array
    called are Strings."): a small model's garbled sentence, whose remaining words can
    all be in the context while it says nothing the context says."""
    return bool(_DANGLING_NAME.search(sentence))


# --- tautologies -------------------------------------------------------------------------
#: Words that add nothing to a restatement ("for several reasons", "in some way").
_VAGUE = frozenset(
    stem(w) for w in """reason reasons several various way ways thing things certain
    different kind kinds something someone called call refer refers term happen happens
    mean means define defined definition describe describes actual actually basically
    simply""".split()
)
_COPULA = re.compile(
    r"\b(?:is|are|was|were|means|mean|refers to|is called|are called|is like|are like"
    r"|stands for|is known as|is defined as)\b",
    re.IGNORECASE,
)
#: A selection at most this many content words long is a term or phrase the question is
#: about ("What does this term mean?"); restating it explains nothing.
SHORT_SELECTION_TERMS = 8


def is_tautology(sentence: str, question: str = "", selection: str = "") -> bool:
    """True when ``sentence`` restates the question (or a short selection) and adds nothing.

    "The frame called the base case is called the base case." for "Which frame is called
    the base case?", "The keyword null means null.", "A dictionary is like a dictionary."
    A yes/no verdict ("No, the default block is optional.") answers its question and is
    never a tautology, and neither is an answer that picks one of the question's
    alternatives ("Arthur's Magazine" for "... Arthur's Magazine or First for Women?").
    """
    if opens_with_verdict(sentence):
        return False
    if adds_code_or_number(sentence, question):
        return False  # "The Python operator used for exponentiation is **."
    terms = [t for t in content_terms(sentence) if t not in _VAGUE]
    if not terms:
        return False
    given = {t for t in content_terms(question) if t not in _VAGUE}
    # "X is X": the part after the verb adds nothing to the part before it, and what the
    # part before adds comes from the question ("The compiler performs integer division when the
    # operands are integers" repeats one word across a subordinate "are": an answer).
    m = _COPULA.search(sentence)
    if m:
        subject = {t for t in content_terms(sentence[: m.start()]) if t not in _VAGUE}
        predicate = {t for t in content_terms(sentence[m.end():]) if t not in _VAGUE}
        if subject and predicate and predicate <= subject and (
                not question or (subject - predicate) <= given):
            return True
    sel_terms = content_terms(selection)
    if sel_terms and len(sel_terms) <= SHORT_SELECTION_TERMS:
        given |= set(sel_terms)
    if not given or not set(terms) <= given:
        return False
    # Everything is the question's own words.  An answer that covers only part of them
    # picks something the question offers (one of two alternatives): that is an answer.
    q_terms = {t for t in content_terms(question) if t not in _VAGUE}
    return not q_terms or len(set(terms) & q_terms) / len(q_terms) >= 0.6


#: A sentence that sends the reader somewhere in the book instead of answering: an
#: imperative "open / click / go to / see / refer to / read / look at / consult / check
#: / navigate to" (after a list number, if any) whose object is a part of the book.
_NAVIGATION = re.compile(
    r"^\s*(?:\d{1,2}[.)]\s*)?(?:(?:you\s+(?:can|should|may)|please)\s+)?"
    r"(?:open|click(?:\s+on)?|go\s+to|navigate\s+to|turn\s+to|see|refer\s+to|read|"
    r"look\s+at|consult)\s+"
    r"(?:(?!.*(?:\band|\bthen|,)\s+(?:save|run|type|write|press|use|call|create|add|edit|"
    r"change|enter|install|launch|start|close|copy|paste|choose|drag|select|scroll|"
    r"execute|build|compile|set|make)\b)"
    r"[^.!?]{0,120}?\b)?(?:section|chapter|page|appendix|heading|subsection|part|excerpt|"
    r"passage)s?\b[\s\d.,:;\"'\u201d)]*(?:for\s+(?:more\s+)?(?:details|information|"
    r"an\s+example|examples)[.!]?\s*)?$", re.IGNORECASE)


def is_navigation(sentence: str) -> bool:
    """True for a sentence that only directs the reader to a part of the book: "Open the
    soil sampling and field measurement section.", "Click on the "Pivot Tables"
    section."  Such a sentence can pass the check on a chapter summary's words, yet it
    says nothing about the subject (the citation is what points at the page), and a small
    model invents the steps (there is nothing to click in a book)."""
    return bool(_NAVIGATION.match(sentence.strip()))


def adds_code_or_number(sentence: str, question: str) -> bool:
    """True when ``sentence`` names an operator, a code term or a number that ``question``
    does not: it answers with something, even if all its words come from the question
    ("Which operator is used for exponentiation?" - "The operator used for exponentiation
    is **.")."""
    asked = squash(question)
    return (any(code_key(c) not in asked for c in code_terms(sentence))
            or bool(number_terms(sentence) - number_terms(question)))


# --- what a claim is about -----------------------------------------------------------------
#: "A regular expression *is* a ...": a short subject, then the verb that defines it.
_DEFINING = re.compile(
    r"^\s*(?P<subject>[^,;:()]{1,60}?)\s+(?P<verb>is|are|means|refers\s+to|is\s+defined\s+as"
    r"|stands\s+for|is\s+called|are\s+called)\s", re.IGNORECASE)
#: At most this many content words make a subject (a longer opening is a clause).
SUBJECT_TERMS = 4


def defined_subject(claim: str) -> set[str]:
    """The terms of the subject of a sentence that defines or describes ("*A regular
    expression* is a sequence ..."), or an empty set."""
    m = _DEFINING.match(strip_verdict(claim))
    if m:
        subject = claim_terms(m.group("subject"))
        if 0 < len(subject) <= SUBJECT_TERMS:
            return set(subject)
    return set()


def echoed_terms(claim: str) -> tuple[list[str], set[str]]:
    """The subject's terms (in order) and the terms of what a defining claim says of its
    subject that repeat them, its first one (the head: "is the *point* where") left out.

    "Absolute Zero is the point where the thermometer reading is *zero*": a window whose
    only "zero" is the name itself does not say that anything is zero.
    """
    m = _DEFINING.match(strip_verdict(claim))
    if not m:
        return [], set()
    subject = claim_terms(m.group("subject"))
    if not 0 < len(subject) <= SUBJECT_TERMS:
        return [], set()
    said = claim_terms(strip_verdict(claim)[m.end():])
    return subject, set(said[1:]) & set(subject)


def outside_subject(window_terms: list[str], subject: list[str]) -> set[str]:
    """The terms of a window sentence (``claim_terms``, in order) less every mention of
    the subject (its terms written together)."""
    n = len(subject)
    out: list[str] = []
    i = 0
    while i < len(window_terms):
        if n and window_terms[i:i + n] == subject:
            i += n
            continue
        out.append(window_terms[i])
        i += 1
    return set(out)


def given_terms(claim: str, question: str = "") -> set[str]:
    """The terms of ``claim`` that name what it is about rather than what it says of it.

    The subject of a sentence that defines or describes ("*A regular expression* is a
    sequence of characters ..."), and with the question at hand its words ("What is a
    regular expression?").  A window that holds only these and a word or two of the rest
    does not support what the claim says of its subject.
    """
    given = defined_subject(claim)
    if question:
        given |= set(claim_terms(question))
    return given & set(claim_terms(claim))


#: Words a claim must share with the context sentence it was swapped from, besides the
#: compared sides (fewer is no evidence of a swap).
SWAP_MIN_SHARED = 2


def swaps_compared_side(sentence: str, context_sentences: Iterable[str],
                        sides: tuple[str, str] | None) -> bool:
    """True when a comparison answer says of one side what the context says only of the
    other: "The important difference is that alligators are larger." over the book's "The
    important difference is that crocodiles are larger." passes the other checks (every
    other word is the book's, and "alligator" is in the context).

    ``sides`` are the question's two sides (:func:`~bookreader.core.llm.answer_type.
    comparison_sides`).  The sentence must name exactly one side; some context sentence
    must hold all its other words (at least :data:`SWAP_MIN_SHARED`) and name only the
    other side; and no context sentence holding those words names the sentence's side.
    """
    if sides is None:
        return False
    side_terms = [set(content_terms(s)) for s in sides]
    if not all(side_terms):
        return False  # an operator ("==") has no words to compare
    have = set(content_terms(sentence))
    names = [t <= have for t in side_terms]
    if names[0] and names[1]:
        # "... active transport moves ions against the gradient, while passive transport
        # moves ions against the gradient": each side's part of the sentence is judged on
        # its own (:func:`_side_parts`).
        context_sentences = list(context_sentences)
        parts = _side_parts(sentence, sides)
        return len(parts) > 1 and any(
            swaps_compared_side(part, context_sentences, sides) for part in parts)
    if names[0] == names[1]:
        return False  # neither side
    mine, other = (side_terms[0], side_terms[1]) if names[0] else (side_terms[1], side_terms[0])
    rest = have - mine - other
    if len(rest) < SWAP_MIN_SHARED:
        return False
    said_of_other = False
    for context in context_sentences:
        terms = set(content_terms(context))
        if not rest <= terms:
            continue
        if mine <= terms:
            return False  # the book says it of this side too (or of both)
        said_of_other = said_of_other or other <= terms
    return said_of_other


def _side_parts(sentence: str, sides: tuple[str, str]) -> list[str]:
    """``sentence`` cut where a side is named: each part runs from the first word of one
    side's name ("active", "passive") to the next such word, so that a sentence naming
    both sides ("active transport moves X, while passive transport moves X") is judged
    side by side: it can say of both what the book says of one only.  The text before the
    first name ("The difference between") is left out."""
    anchors = []
    for side in sides:
        first = next(iter(content_terms(side)), None)
        if first is None:
            return []
        anchors.append(first)
    if anchors[0] == anchors[1]:
        return []  # "linked list" and "list": no word tells the sides apart
    starts = [m.start() for m in word_matches(sentence) if stem(m.group(0).lower()) in anchors]
    return [sentence[a:b] for a, b in zip(starts, starts[1:] + [len(sentence)])]


# --- a definition said of another entry's term -----------------------------------------------
#: A labelled entry of a list or a glossary: "Transfer Learning: The ability to ...",
#: "\u2022 Photosynthesis: Plants turn light into ...", "2. GDP: ...".
_ENTRY = re.compile(r"^\s*(?:[\u2022\-*]\s*|\d{1,2}[.)]\s*)?(?P<label>[A-Za-z][\w\-/ ()]{1,50}?)"
                    r"\s*:\s+(?P<said>\S.*)$", re.DOTALL)
#: Where a noun phrase's head ends: a preposition or a relative clause after it
#: ("Supervised learning *with* classification and regression": the head is "learning").
_POST_MODIFIER = re.compile(r"\s(?:with|of|for|in|on|from|by|at|to|and|or|that|which|who|"
                            r"using|via)\s", re.IGNORECASE)
#: Least share of a claim's predicate terms an entry's definition must hold to be the
#: one the claim repeats.
DEFINITION_SHARE = 0.7


def labelled_entries(context_sentences: Iterable[str]) -> list[tuple[set[str], set[str]]]:
    """(label terms, definition terms) of each labelled entry ("Label: what it is")."""
    out = []
    for sentence in context_sentences:
        m = _ENTRY.match(sentence)
        if m is None:
            continue
        label, said = set(claim_terms(m.group("label"))), set(claim_terms(m.group("said")))
        if label and said and len(label) <= SUBJECT_TERMS:
            out.append((label, said))
    return out


def _defining_claim(sentence: str) -> Optional[tuple[str, set[str], set[str]]]:
    """(subject text, subject terms, terms said of it) of a sentence that defines its subject ("X is
    Y"), or None: no defining form, a subject too long to be one (a clause, as
    :func:`defined_subject` reads one), or too little said of it to compare
    (fewer than :data:`SWAP_MIN_SHARED` + 1 terms)."""
    claim = strip_verdict(sentence)
    m = _DEFINING.match(claim)
    if m is None:
        return None
    named = claim_terms(m.group("subject"))
    if not 0 < len(named) <= SUBJECT_TERMS:
        return None
    subject = set(named)
    said = set(claim_terms(claim[m.end():])) - subject
    if len(said) < SWAP_MIN_SHARED + 1:
        return None
    return m.group("subject"), subject, said


def swaps_defined_subject(sentence: str,
                          entries: Sequence[tuple[set[str], set[str]]]) -> bool:
    """True when a defining sentence gives its subject the definition the context gives
    another entry, while the context defines the subject otherwise: "Fixed costs are
    costs that change with output" over a summary's "Variable Costs: Costs that change
    with output." and "Fixed Costs: Costs that stay the same whatever the output."  The
    other checks pass it on the two entries together (every word is in them, and "costs"
    is in both labels).  ``entries`` are the context's (:func:`labelled_entries`).

    Only between parallel definitions (entries "Label: what it is" of one list or
    glossary): an entry whose label names something else must hold at least
    :data:`DEFINITION_SHARE` of what the sentence says of its subject, and an entry naming
    the subject must exist and hold less of it (an abbreviation, a synonym or an undefined
    subject is no evidence of a swap); or the entry's label is part of the subject without
    its head noun ("boolean" for "boolean expression") and no entry naming the subject
    says it.
    """
    parsed = _defining_claim(sentence)
    if parsed is None:
        return False
    subject_text, subject, said = parsed

    def share(terms: set[str]) -> float:
        return len(said & terms) / len(said)

    own = [share(d) for label, d in entries if subject <= label]
    if any(x >= DEFINITION_SHARE for x in own):
        return False
    other = [share(d) for label, d in entries if label - subject and not subject <= label]
    if own and other and max(other) >= DEFINITION_SHARE:
        return True
    # "A boolean expression is a data type with only two possible values, true and false."
    # over "boolean: A data type with only two possible values, true and false.": the
    # entry's term is a modifier of the subject, whose head noun (its last word:
    # "expression") it does not name.  ("A Unicode String is a sequence
    # of characters" over "string: A sequence of characters" keeps its head: no swap.)
    head = claim_terms(_POST_MODIFIER.split(subject_text, maxsplit=1)[0])[-1:]
    return bool(head) and any(
        label < subject and head[0] not in label and share(d) >= DEFINITION_SHARE
        for label, d in entries)


# --- a definition said of a shorter name -----------------------------------------------------
#: A word that makes an opening a clause rather than a name (a verb of being, a relative
#: or complement word): such an opening is not what the sentence defines.
_CLAUSE_WORD = re.compile(r"\b(?:is|are|was|were|be|that|which|who|whom|whose)\b", re.IGNORECASE)
#: The stems of :data:`~bookreader.core.lexicon.LANGUAGE_NOUNS`, as :func:`claim_terms` gives them.
_LANGUAGE_TERMS = frozenset(t for w in LANGUAGE_NOUNS for t in claim_terms(w))


class DefinedName(NamedTuple):
    """A name a context sentence defines: its terms, its head term, the terms of what is
    said of it, and the terms of the modifiers before the head that name a kind of it
    ("simple" and "random" in "simple random sample"; a capitalised word inside a
    sentence names a context, "Unicode" in "Unicode String", and is not one)."""

    terms: frozenset[str]
    head: str
    defined: frozenset[str]
    kinds: frozenset[str]


#: "X is called Y if ...": the name ends at the condition or the end of the clause.
_CALLED_NAME = re.compile(r"\s+(?:if|when|whenever|provided|in\s+case)\b|[,;.]\s|[,;.]?$",
                          re.IGNORECASE)


def _proper_words(sentences: Sequence[str]) -> set[str]:
    """Words written with a capital inside a sentence (not as its first word): names."""
    out: set[str] = set()
    for sentence in sentences:
        words = sentence.split()
        out.update(w.strip("\"'()[]") for w in words[1:] if w[:1].isupper())
    return out


def defined_names(context_sentences: Iterable[str]) -> list[DefinedName]:
    """Each name a context sentence defines ("A sample space is the set of all possible
    outcomes", "A chord is called a seventh chord if ...") or a labelled entry gives
    ("Sample space: ..."), as :class:`DefinedName`.  The head is the last term of the name
    before a post-modifier ("a basis *of* V": "basis"; "sample space": "space"), except in
    a mention: "The word piano is Italian in origin" describes a word, so its head is
    "word" (:data:`~bookreader.core.lexicon.LANGUAGE_NOUNS`); with a verb that gives the
    meaning ("The term bug refers to ...") the mentioned name stays the head."""
    sentences = list(context_sentences)
    proper = {w.lower() for w in _proper_words(sentences)}
    out = []
    for sentence in sentences:
        m = _ENTRY.match(sentence)
        verb = ""
        if m is not None:
            name, said = m.group("label"), m.group("said")
        else:
            m = _DEFINING.match(sentence)
            if m is None:
                continue
            rest = sentence[m.end():]
            name, said, verb = m.group("subject"), rest, m.group("verb")
            if rest[:7].lower() == "called ":  # the verb matched "is" of "is called"
                rest, verb = rest[7:], verb + " called"
            if verb.lower().endswith("called"):
                # "X is called Y if Z" defines Y by X and Z
                end = _CALLED_NAME.search(rest)
                cut = end.start() if end is not None else len(rest)
                name, said = rest[:cut], m.group("subject") + " " + rest[cut:]
                name = _POST_MODIFIER.split(name, maxsplit=1)[0]
        if _CLAUSE_WORD.search(name):
            continue  # "These results suggest that small samples are ...": a clause
        before = _POST_MODIFIER.split(name, maxsplit=1)[0]
        core = claim_terms(before)
        terms, defined = frozenset(claim_terms(name)), frozenset(claim_terms(said))
        if core and terms and defined and len(terms) <= SUBJECT_TERMS:
            mention = (verb.lower() in ("is", "are") and len(core) > 1
                       and core[0] in _LANGUAGE_TERMS)
            head = core[0] if mention else core[-1]
            kinds = frozenset() if mention else frozenset(
                t for w in before.split() if w.strip("\"'()[]").lower() not in proper
                for t in claim_terms(w) if t != head and t not in _LANGUAGE_TERMS)
            out.append(DefinedName(terms, head, defined, kinds))
    return out


def narrows_defined_subject(sentence: str,
                            names: Sequence[DefinedName]) -> bool:
    """True when a defining sentence gives its subject the definition the context gives a
    longer name with another head noun: "A sample is the set of all possible outcomes"
    over "A sample space is the set of all possible outcomes".  Every word of the claim
    is in the context, so coverage and similarity pass it, but it defines another
    thing.  ``names`` are the context's
    (:func:`defined_names`).

    The head and the modifiers that name a kind decide, not the number of words: "A
    string is a sequence of characters" over "A Unicode String is a sequence of
    characters" keeps its head ("string") and drops only a name, a fair restatement; "A
    scale is a list ..." over "A scale of a key is a list ..." names the same head; "A
    chord is ..." over "A triad is called a seventh chord if ..." drops a kind.  A context
    that also defines the subject itself with the same words
    (:data:`DEFINITION_SHARE` of what the claim says) supports the claim.  What a mention
    says of a word ("The word X is ...", head "word") is said of another thing by any
    claim about X, with or without modifiers.
    """
    parsed = _defining_claim(sentence)
    if parsed is None:
        return False
    _text, subject, said = parsed
    narrowed = False
    for terms, head, defined, kinds in names:
        if len(said & defined) / len(said) < DEFINITION_SHARE:
            continue
        if subject <= terms and head in subject and kinds <= subject:
            return False  # the context defines the subject (or a name with its head) so
        if head in subject and subject < terms and not kinds <= subject:
            # "A random sample is ..." over "A simple random sample is ...": the claim
            # drops a modifier that names a kind, so it defines the wider thing
            narrowed = True
        if subject < terms and head not in subject:
            narrowed = True
        elif head in _LANGUAGE_TERMS and head not in subject and subject & terms:
            # a mention ("The word X is ...") is said of a word: a claim that says it of
            # X, whatever X's modifiers ("X of an operator"), says it of another thing
            narrowed = True
    return narrowed


#: What a definition's subject is linked to its definition by: a copula or a verb of
#: naming or meaning.
_IDENTITY_LINK = re.compile(r"\b(?:is|are|was|were|be|being|been|means?|called|known|"
                            r"defined|refers?|stands?)\b", re.IGNORECASE)


def relation_as_identity(sentence: str, context_sentences: Sequence[str]) -> bool:
    """True when a claim "X is Y" takes what a context sentence relates X to by another
    verb and makes it what X is: "A cadence is a rest and the opening of a new phrase"
    over "A cadence must always be followed by a rest and the opening of a new phrase".
    Every word of the claim is in the context, so coverage passes it, but the context
    says X is *followed by* Y.

    Structural: the context sentence opens with the claim's subject, holds
    :data:`DEFINITION_SHARE` of what the claim says of it, and the words between the
    subject and the first of them carry a content word besides a copula or a verb of
    naming (:data:`_IDENTITY_LINK`).  A context sentence that links the same subject to
    the same words by a copula, or gives them as a glossary entry ("X: Y"), supports the
    claim."""
    claim = strip_verdict(sentence)
    m = _DEFINING.match(claim)
    if m is None or m.group("verb").lower() not in ("is", "are"):
        return False
    parsed = _defining_claim(sentence)
    if parsed is None:
        return False
    subject_text, _, said = parsed
    opening = claim_terms(subject_text)
    related = False
    for context in context_sentences:
        words = context.split()
        # the context's opening words give the claim's subject terms, in order
        k, got = 0, []
        while k < len(words) and len(got) < len(opening):
            got.extend(claim_terms(words[k]))
            k += 1
        if got != opening:
            continue
        rest = words[k:]
        terms = set(claim_terms(" ".join(rest)))
        if len(said & terms) / len(said) < DEFINITION_SHARE:
            continue
        first = next((j for j, w in enumerate(rest) if set(claim_terms(w)) & said), None)
        if first is None:
            continue
        if words[k - 1].endswith(":"):
            return False  # a glossary entry, "X: Y", says what X is
        if _relates(rest[:first]):
            related = True  # "holds", "is followed by": another relation
        else:
            return False  # the context says it of the subject with a copula
    return related


#: A copula before a participle: a passive ("is followed by", "are stored in").
_PASSIVE_LINK = re.compile(r"\b(?:is|are|was|were|be|being|been)\s+(?:\w+ly\s+)?\w+(?:ed|en)\b",
                           re.IGNORECASE)


def _relates(link: Sequence[str]) -> bool:
    """Whether the words between a subject and what is said of it relate the two by a
    verb other than a copula or a verb of naming: a passive ("must always be followed
    by"), or a content word with no copula ("holds"); not "is when we write" or "is
    always"."""
    text = " ".join(link)
    passive = _PASSIVE_LINK.search(text)
    if passive is not None:
        participle = passive.group(0).split()[-1]
        if participle.lower() not in STOPWORDS:  # "is when": a copula
            return not _IDENTITY_LINK.search(participle)
    if _IDENTITY_LINK.search(text):
        return False
    return bool(claim_terms(" ".join(
        w for w in link if w.lower() not in DEGREE_WORDS and not w.lower().endswith("ly"))))
