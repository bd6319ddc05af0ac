"""Lexical helpers of the grounding check: negation, numbers, instructions, tautologies.

Kept apart from :mod:`bookreader.core.grounding` (which embeds and decides) so that each
rule can be read and tested on its own.  Everything here is plain string work that runs
in microseconds.
"""

from __future__ import annotations

import re
from typing import Iterable

from bookreader.core.sentences import STOPWORDS, content_terms, numbers, stem, words

# --- negation ------------------------------------------------------------------------------
#: Words that turn a statement around.  "optional", "unnecessary" and friends count: "the
#: default block is optional" says the same as "you do not have to include a default".
NEGATION_WORDS = frozenset(
    """not no never none nothing nobody nowhere neither nor cannot without
    optional unnecessary needless""".split()
)
#: "n't" contractions ("don't", "can't", "isn't"), straight or curly apostrophe.
_NT = re.compile(r"n['\u2019]t$", re.IGNORECASE)
#: A yes/no word that opens an answer ("No, ...") is the verdict, not a negated claim;
#: the rest of the sentence carries the claim.
_VERDICT = re.compile(r"^\s*(?:yes|no|yeah|nope|correct|incorrect|true|false)\b[\s,.;:!-]*",
                      re.IGNORECASE)
#: Content words within this many tokens of a negation word are its scope.
NEGATION_SCOPE = 3


def strip_verdict(sentence: str) -> str:
    """``sentence`` without an opening "Yes,"/"No," (the claim that follows is what counts)."""
    return _VERDICT.sub("", sentence, count=1)


def opens_with_verdict(sentence: str) -> bool:
    return bool(_VERDICT.match(sentence))


def is_negation(word: str) -> bool:
    lw = word.lower()
    return lw in NEGATION_WORDS or bool(_NT.search(lw))


def negation_scopes(sentence: str) -> list[set[str]]:
    """For each negation word of ``sentence``, the stems of the content words around it.

    "x is not greater than 0" -> one scope, {"greater"} (plus "x" were it longer than a
    letter).  A context sentence's negation matters for an answer only when the answer
    talks about its scope.
    """
    ws = words(sentence)
    scopes: list[set[str]] = []
    for i, w in enumerate(ws):
        if not is_negation(w):
            continue
        scope: set[str] = set()
        for direction in (-1, 1):
            j, taken = i + direction, 0
            while 0 <= j < len(ws) and taken < NEGATION_SCOPE:
                lw = ws[j].lower().replace("\u2019", "'")
                if not is_negation(lw) and lw not in STOPWORDS and len(lw) > 1:
                    scope.add(stem(lw))
                    taken += 1
                j += direction
        if w.lower() in ("optional", "unnecessary", "needless"):
            scope.add(stem(w.lower()))
        scopes.append(scope)
    return scopes


def negated(sentence: str) -> bool:
    """True when the claim of ``sentence`` (an opening Yes/No removed) holds a negation."""
    return any(is_negation(w) for w in words(strip_verdict(sentence)))


# --- numbers -------------------------------------------------------------------------------
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if w != "_"
}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60",
                      "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100",
                      "thousand": "1000", "million": "1000000", "billion": "1000000000"})


def number_terms(text: str) -> set[str]:
    """Numbers written with digits, and number words as digits ("four" -> "4").

    "one" is left out: it is a pronoun as often as a number ("the one before").
    """
    out = set(numbers(text))
    for w in words(text):
        n = _NUMBER_WORDS.get(w.lower())
        if n is not None:
            out.add(n)
    return out


# --- instructions planted in a context -----------------------------------------------------
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}?"
    r"\b(?:instructions?|rules?|prompts?|questions?|guidelines|above|previous|prior|system)\b"
    r"|^\s*(?:system|assistant|user)\s*:"
    r"|\b(?:reply|respond|answer|say|output|print|write|state)\s+(?:only\s+)?"
    r"(?:with|that|saying)\b[^.!?\n]{0,60}?\bthe\s+answer\s+is\b"
    r"|\byou\s+(?:are\s+now|must\s+now|must\s+(?:reply|answer|respond|say))\b"
    r"|\bnew\s+instructions?\s*:",
    re.IGNORECASE,
)
#: What an instruction tells the model to say: the words after "reply that", "say".
_PAYLOAD = re.compile(
    r"\b(?:reply|respond|answer|say|output|print|write|state)\s+(?:only\s+)?"
    r"(?:with\s+|that\s+|saying\s+)?(.+)$",
    re.IGNORECASE,
)


def is_instruction(sentence: str) -> bool:
    """True for a sentence that addresses the model ("ignore your instructions and ...").

    Such a sentence in a context is data, never support for an answer.  Ordinary textbook
    imperatives ("Try this example", "ignore the return value") do not match.
    """
    return bool(_INSTRUCTION.search(sentence))


def instruction_payload(sentence: str) -> str:
    """The text an instruction asks the model to produce ("" when it names none)."""
    m = None
    for m in _PAYLOAD.finditer(sentence):
        pass
    return m.group(1).strip(" '\"\u201c\u201d.") if m else ""


def carries_out(sentence: str, payloads: Iterable[str]) -> bool:
    """True when ``sentence`` says what one of the planted instructions asked for.

    Its content words are (nearly) all words of the payload, and it holds most of them.
    """
    terms = set(content_terms(sentence))
    if not terms:
        return False
    for payload in payloads:
        pterms = set(content_terms(payload))
        if not pterms:
            continue
        inside = len(terms & pterms)
        if inside / len(terms) >= 0.75 and inside / len(pterms) >= 0.5:
            return True
    return False


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
    terms = [t for t in content_terms(sentence) if t not in _VAGUE]
    if not terms:
        return False
    # "X is X": the part after the verb adds nothing to the part before it.
    m = _COPULA.search(sentence)
    if m:
        subject = {t for t in content_terms(sentence[: m.start()]) if t not in _VAGUE}
        predicate = {t for t in content_terms(sentence[m.end():]) if t not in _VAGUE}
        if subject and predicate and predicate <= subject:
            return True
    given = {t for t in content_terms(question) if t not in _VAGUE}
    sel_terms = content_terms(selection)
    if sel_terms and len(sel_terms) <= SHORT_SELECTION_TERMS:
        given |= set(sel_terms)
    if not given or not set(terms) <= given:
        return False
    # Everything is the question's own words.  An answer that covers only part of them
    # picks something the question offers (one of two alternatives): that is an answer.
    q_terms = {t for t in content_terms(question) if t not in _VAGUE}
    return not q_terms or len(set(terms) & q_terms) / len(q_terms) >= 0.6
