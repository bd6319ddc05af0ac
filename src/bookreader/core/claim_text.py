"""Lexical helpers of the grounding check: negation, opposites, numbers.

Kept apart from :mod:`bookreader.core.grounding` (which embeds and decides) so that each
rule can be read and tested on its own (swapped terms: :mod:`bookreader.core.claim_swaps`).  Everything here is plain string work that runs
in microseconds.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from bookreader.core.sentences import (
    NEXT_ITEM_NUMBER,
    STOPWORDS,
    content_terms,
    numbers,
    stem,
    words,
)

# --- negation ------------------------------------------------------------------------------
#: Words that turn a statement around.
NEGATION_WORDS = frozenset(
    ["not", "no", "never", "none", "nothing", "nobody", "nowhere", "neither", "cannot",
     "without"]
)
#: "Not required": "the default block is optional" says what "you do not have to include
#: a default case" says, and neither says what "there is no default case" says.
_OPTIONAL = re.compile(
    r"\b(?:optional|unnecessary|needless|needn['\u2019]t"
    r"|(?:not|n['\u2019]t)\s+(?:have\s+to|need(?:\s+to)?|required|necessary|mandatory|obligatory))\b",
    re.IGNORECASE,
)
#: Phrases that deny the alternative ("a framework rather than an operating system").
CONTRAST = re.compile(r"\b(?:rather\s+than|instead\s+of)\b", re.IGNORECASE)
#: A belief or a step the text calls mistaken: "a common *mistake is to assume that*
#: toUpperCase affects the original string", "*it sounds like* they modify strings", "*it
#: is tempting to* interpret a = b as a statement of equality", "*you might expect* the
#: variable y to get the value 0.333333" (each said to be corrected).  What follows is
#: denied, like a negation's scope, to the end of its clause.  "As you might expect" and
#: "than you might think" agree instead.
_MISTAKEN = re.compile(
    r"\b(?:mistake|misconception|myth|error|pitfall)s?\s+(?:\w+\s+){0,3}?(?:is|was)\s+to\s+"
    r"(?:(?:assume|think|believe|expect)\w*\s+(?:that\s+)?)?"
    r"|\b(?:wrongly|mistakenly|incorrectly|falsely)\s+(?:assume|think|believe|expect)\w*"
    r"\s+(?:that\s+)?"
    r"|\btempting\s+(?:\w+\s+)?to\s+(?:(?:assume|think|believe)\s+(?:that\s+)?)?"
    r"|(?<!\bas\s)(?<!\bthan\s)\b(?:you|one|we)\s+(?:might|may|would)\s+(?:expect|think|assume)"
    r"\s+(?:that\s+)?"
    r"|\bit\s+sounds\s+(?:like|as\s+if)\s+", re.IGNORECASE)
#: "n't" contractions ("don't", "can't", "isn't"), straight or curly apostrophe.
_NT = re.compile(r"n['\u2019]t$", re.IGNORECASE)
#: A yes/no word that opens an answer ("No, ...") is the verdict, not a negated claim;
#: the rest of the sentence carries the claim.
_VERDICT = re.compile(r"^\s*(?:yes|no|yeah|nope|correct|incorrect|true|false)\b[\s,.;:!-]*",
                      re.IGNORECASE)
_SEGMENT = re.compile(r"[,;:()\u2014]")
#: Content words after a negation that form its scope ("is *not greater* than 0").
NEGATION_SCOPE = 3
#: Opposites a paraphrase must not swap (besides un-/in-/im-/non- prefixes).
_ANTONYMS = {
    "open": "closed", "true": "false", "synchronous": "asynchronous", "public": "private",
    "increase": "decrease",
    "increases": "decreases", "maximum": "minimum", "success": "failure", "enable": "disable",
    "enabled": "disabled", "static": "dynamic", "before": "after", "inside": "outside",
    "allowed": "forbidden", "always": "never", "all": "none",
}
_ANTONYMS.update({v: k for k, v in list(_ANTONYMS.items())})
#: ("non" words are negations: see :func:`negation_cues`.)
NEG_PREFIXES = ("un", "in", "im", "il", "ir", "dis")


def strip_verdict(sentence: str) -> str:
    """``sentence`` without an opening "Yes,"/"No," (the claim that follows is what counts)."""
    return _VERDICT.sub("", sentence, count=1)


def opens_with_verdict(sentence: str) -> bool:
    return bool(_VERDICT.match(sentence))


def is_negation(word: str) -> bool:
    lw = word.lower()
    return lw in NEGATION_WORDS or bool(_NT.search(lw))


#: After "and"/"or", a verb of this list opens another predicate with the same subject:
#: "contains *no characters* and *has* length 0" says the string has length 0.
FINITE_VERBS = frozenset(
    """is are was were has have had does do did can could will would may might must
    should shall gets get becomes become""".split())


def _ends_scope(ws: list[str], j: int) -> bool:
    """True when ``ws[j]`` starts another predicate: "and"/"or" before a finite verb (see
    :data:`FINITE_VERBS`)."""
    return (ws[j].lower() in ("and", "or") and j + 1 < len(ws)
            and ws[j + 1].lower() in FINITE_VERBS)


def _scope(ws: list[str], i: int, before: int, after: int) -> set[str]:
    scope: set[str] = set()
    for direction, count in ((-1, before), (1, after)):
        j, taken = i + direction, 0
        while 0 <= j < len(ws) and taken < count:
            if _ends_scope(ws, j):
                break
            lw = ws[j].lower().replace("\u2019", "'")
            if not is_negation(lw) and lw not in STOPWORDS and (len(lw) > 1 or lw.isdigit()):
                scope.add(stem(lw))
                taken += 1
            j += direction
    return scope


#: Adverbs between a negation and what it negates ("not *always* clear").
DEGREE_WORDS = frozenset("always very really necessarily quite even exactly entirely".split())


def _head(ws: list[str], i: int) -> str:
    """The stem of the first content word after ``ws[i]`` that is not a degree adverb."""
    for w in ws[i + 1:]:
        lw = w.lower().replace("\u2019", "'")
        if is_negation(lw) or lw in STOPWORDS or lw in DEGREE_WORDS or (len(lw) < 2 and not lw.isdigit()):
            continue
        return stem(lw)
    return ""


class Cue(NamedTuple):
    """One negation: its kind ("not", "optional"; or "avoid": a verb such as "avoid" that
    says "not" of its object without a negation, matches one and needs none) and the stems
    it bears on."""

    kind: str
    scope: set[str]
    #: The negation bears on a sentence only if the sentence has all of the scope.
    whole: bool = False
    #: Every content word after the negation to the end of its clause ("no way to access
    #: its attributes or *invoke* a method"): what a negation of the answer may match.
    reach: frozenset[str] = frozenset()
    #: The first word the negation bears on ("is not *limited*", "not always *clear*"):
    #: what a negation of the other text must be about.
    head: str = ""
    #: The stems of the content words before the negation in its sentence (its subject
    #: and what leads up to it: "*concrete class*: A class that is not declared ...").
    before: frozenset[str] = frozenset()
    #: The negation is inside a condition ("*if no* exceptions occur, ..."): it states
    #: nothing, so it denies nothing (see :func:`denies`).
    conditional: bool = False
    #: The negation is a belief or a step the text calls mistaken ("a common mistake is
    #: to *put* ..."); ``head`` is its first word (see :func:`about_action`).
    mistaken: bool = False

    def bears_on(self, terms: set[str]) -> bool:
        if self.whole:
            # "(or may not)": a negation with no content word in its clause names nothing
            return bool(self.scope) and self.scope <= terms
        if self.kind == "not" and len(self.scope) >= 2:
            # "only if none of the cases apply" does not bear on "include a default case"
            return 2 * len(self.scope & terms) > len(self.scope)
        return bool(self.scope & terms)




def negation_cues(sentence: str) -> list[Cue]:
    """The negations of ``sentence`` as :class:`Cue` (kind "not" or "optional", scope).

    The scope is the stems of the content words a negation bears on, within its clause
    (commas, colons and brackets end a scope): the three after a "not" ("x is not
    *greater* than 0"; another sentence is concerned when it holds most of them), or the
    three before it when nothing follows ("Python 3 does not."; all of them); three
    before and one after an "optional" (the thing that is optional) plus the phrase's own
    words ("not *necessary*").  "neither ... nor" counts once; "rather than" and
    "instead of" count as "not"; so does a "non" word ("nonnegative").
    """
    cues: list[Cue] = []
    prior: list[str] = []  # the words of the segments before this one
    for segment in _SEGMENT.split(sentence):
        text = segment
        for m in _OPTIONAL.finditer(text):
            ws_before = words(text[: m.start()])
            ws = ws_before + ["optional"] + words(text[m.end():])
            own = {stem(w.lower()) for w in words(m.group(0)) if w.lower() not in STOPWORDS
                   and not is_negation(w) and w.lower() not in ("have", "need", "needn't")}
            cues.append(Cue("optional", _scope(ws, len(ws_before), 3, 1) | own | {"option"}))
        text = _OPTIONAL.sub(" ", text)
        for m in CONTRAST.finditer(text):
            ws = words(text[m.end():])
            cues.append(Cue("not", _scope(["not"] + ws, 0, 0, NEGATION_SCOPE)))
        text = CONTRAST.sub(" ", text)
        for m in _MISTAKEN.finditer(text):
            # "A common mistake is to assume that X", "it sounds like X": X is denied
            ws = words(text[m.end():])
            scope = _scope(["not"] + ws, 0, 0, len(ws))
            cues.append(Cue("not", scope, reach=frozenset(scope), mistaken=True,
                            head=stem(ws[0].lower()) if ws else ""))
        text = _MISTAKEN.sub(" ", text)
        ws = words(text)
        for i, w in enumerate(ws):
            lw = w.lower()
            if lw.startswith("non") and len(lw) >= 7 and lw.isalpha():
                cues.append(Cue("not", {stem(lw[3:])}))  # "nonnegative" = "not negative"
            elif is_negation(w):
                scope = _scope(ws, i, 0, NEGATION_SCOPE)
                sameness = "same" in (x.lower() for x in ws[i + 1:i + 3])
                if scope and sameness:
                    # "is not the same as the string": about sameness, then the string
                    cues.append(Cue("not", scope | {"same"}, head="same",
                                    reach=frozenset(_scope(ws, i, 0, len(ws))) | {"same"}))
                elif scope:
                    cues.append(Cue("not", scope, reach=frozenset(_scope(ws, i, 0, len(ws))),
                                    head=_head(ws, i),
                                    before=frozenset(content_terms(" ".join(prior + ws[:i]))),
                                    conditional=any(x.lower() in _CONDITIONS for x in ws[:i])))
                elif sameness:
                    # "they are not the same": about sameness (a claim saying "the same")
                    cues.append(Cue("not", {"same"}, reach=frozenset({"same"}), head="same"))
                else:  # "Python 3 does not.": it bears on its subject, all of it
                    cues.append(Cue("not", _scope(ws, i, NEGATION_SCOPE, 0), whole=True))
            elif lw in _AVOID_WORDS:  # "to avoid conflicts" matches "without conflicts"
                cues.append(Cue("avoid", _scope(ws, i, 0, NEGATION_SCOPE),
                                reach=frozenset(_scope(ws, i, 0, len(ws))), head=_head(ws, i)))
        prior += words(segment)
    return cues


def about_action(claim: str, cues: list[Cue]) -> list[Cue]:
    """``cues`` less the mistaken steps that ``claim`` names as its subject.

    "A common mistake is to *put* import statements between the documentation and the
    class" denies that they go there, not "*Putting* import statements there separates
    the documentation from the class", which says what the step does.
    """
    ws = words(strip_verdict(claim))
    if not ws or not ws[0].lower().endswith("ing"):
        return cues
    gerund = stem(ws[0].lower())
    return [c for c in cues if not (c.mistaken and c.head and c.head == gerund)]


def _scopes_meet(a: set[str], b: set[str]) -> bool:
    """Two negation scopes share a word (or a word family: five first letters)."""
    if a & b:
        return True
    heads = {t[:5] for t in a if len(t) >= 5}
    return any(t[:5] in heads for t in b if len(t) >= 5)


#: Words that say something is needed: "optional" contradicts them ("must include",
#: "cannot be omitted").
_REQUIREMENT = re.compile(
    r"\b(?:must|ha(?:ve|s|d)\s+to|needs?|needed|requir(?:e|es|ed|ement)|necessar(?:y|ily)"
    r"|mandatory|obligatory|compulsory|always|omit\w*|left\s+out|essential)\b", re.IGNORECASE)


def speaks_of_requirement(sentence: str) -> bool:
    """True when ``sentence`` says whether something is needed ("must", "has to",
    "required", "always"): the claims a passage's "optional" bears on."""
    return bool(_REQUIREMENT.search(sentence))


def polarity_agrees(claim_cues: list[Cue], window_cues: list[Cue], claim_terms_: set[str],
                    window_terms: set[str], requirement: bool = True) -> bool:
    """True when a claim and its support window are negated in the same places.

    Every negation of the claim needs one of the same kind in the window, one that bears
    on the same words when the window holds them ("is *not limited*" needs the window's
    "not" to be about "limited", not a "no" elsewhere in the sentence); every negation of
    the window that bears on the claim's words needs one in the claim, likewise.  A
    window's "optional" bears on a claim only when the claim says whether the thing is
    needed (``requirement``: "must include a default case", "cannot be omitted"): "the
    default block is executed when no case matches" does not deny that the block is
    optional (a negated claim, "there is no default case", needs its own negation in the
    window anyway).  An avoiding verb ("avoid") says "not" without a negation: it can
    match one of the other text and needs none.
    """
    def concerns(w: Cue) -> bool:
        return w.bears_on(claim_terms_) and (w.kind != "optional" or requirement)

    return _cues_matched(claim_cues, window_cues + _avoid_cues(window_cues), window_terms,
                         lambda c: True, claim_terms_) and \
        _cues_matched(window_cues, claim_cues + _avoid_cues(claim_cues), claim_terms_, concerns)


#: Verbs that say "not" of their object: "to *avoid* conflicts" = "without conflicts".
_AVOID_WORDS = frozenset("""avoid avoids avoided avoiding prevent prevents prevented preventing
    skip skips skipped skipping ignore ignores ignored ignoring""".split())


def _avoid_cues(cues: list[Cue]) -> list[Cue]:
    """The "not" that an avoiding verb among ``cues`` says of its object without a
    negation (see :func:`negation_cues`): it can match a negation of the other text, and
    needs none itself."""
    return [c._replace(kind="not") for c in cues if c.kind == "avoid"]


def _cues_matched(cues: list[Cue], others: list[Cue], other_terms: set[str], concerns,
                  own_terms: set[str] | None = None) -> bool:
    """Every cue that ``concerns`` us has a cue of its kind in ``others`` about its words.

    A cue is placed by its head word (or its scope): when the other text does not hold it
    ("can't be *changed*" / "cannot be *modified*"), a cue of the same kind anywhere will
    do; when it does, the other cue must bear on it (within its clause).
    """
    for c in cues:
        if c.kind == "avoid" or not concerns(c):
            continue
        key = {c.head} if c.head else c.scope
        if c.head and c.kind == "not" and not c.whole and not _scopes_meet(key, other_terms):
            # The head is reworded ("does not *give* an error" / "you get an error"): the
            # rest of the scope that the other text holds places the negation instead.
            key = {t for t in c.scope if _scopes_meet({t}, other_terms)} or key
        placed = c.kind != "optional" and not c.whole and _scopes_meet(key, other_terms)
        # Unplaced, a "not" is matched by a negation of the other text that is not already
        # about words of ours ("... instead of the *elements*" is not matched by "instead of
        # *curly braces*" when we say "curly braces" too).
        free = c.kind == "not" and not c.whole and not placed and own_terms is not None
        if not any(o.kind == c.kind and (not placed or not o.scope
                                         or _scopes_meet(key, o.scope | o.reach))
                   and not (free and own_terms is not None and o.bears_on(own_terms))
                   for o in others):
            return False
    return True



def denies(claim_cues: list[Cue], window_cues: list[Cue], claim_terms_: set[str],
           window_terms: set[str]) -> bool:
    """True when one text negates the very word the other asserts.

    The head of a "not" in one ("it does *not remove* the cards") is a term of the other
    ("addDeck *removes* the cards"), and no negation of the other bears on that word.
    Unlike :func:`polarity_agrees`, a negation placed elsewhere or reworded does not
    count: this is the contradiction itself, strong enough for a sentence that is not the
    best support to veto the claim.
    """
    def one_way(cues: list[Cue], others: list[Cue], other_terms: set[str]) -> bool:
        for c in cues:
            if c.kind != "not" or c.whole or not c.head or c.conditional:
                continue
            if not _scopes_meet({c.head}, other_terms):
                continue
            if not all(_scopes_meet({t}, other_terms) for t in c.before - _DISCOURSE):
                continue  # said of something else: "*concrete* class: ... not declared"
            if any(_scopes_meet({c.head}, o.scope | o.reach | {o.head}) for o in others):
                continue
            return True
        return False

    return (one_way(window_cues, claim_cues + _avoid_cues(claim_cues), claim_terms_)
            or one_way(claim_cues, window_cues + _avoid_cues(window_cues), window_terms))


#: Words that open a condition: a negation after them in its clause states nothing.
_CONDITIONS = frozenset("if when whenever unless until once whether".split())
#: Words that lead up to a statement without being its subject ("Notice that it ...").
_DISCOURSE = frozenset(stem(w) for w in """notice note remember recall see also however
    thus therefore example instance course fact""".split())


#: "even if there is no error", "whether or not": a claim that holds despite a condition.
_CONCEDES = re.compile(
    r"\beven\s+(?:if|when|though|after|before|with|without|for)\b|\bregardless\b"
    r"|\bwhether\s+or\s+not\b|\bno\s+matter\b", re.IGNORECASE)
#: What a supporting text says to concede a condition.
_CONCESSION = re.compile(
    r"\b(?:even|regardless|whether\s+or\s+not|no\s+matter|although|though|despite"
    r"|in\s+spite\s+of|still|anyway|nevertheless|nonetheless|whatever|however\s+\w+)\b",
    re.IGNORECASE)


def concedes(text: str) -> bool:
    """True when ``text`` says something holds despite a condition ("even if ...")."""
    return bool(_CONCEDES.search(text))


def concession_marked(text: str) -> bool:
    """True when ``text`` concedes a condition in any words ("even", "although", "still").

    A claim that :func:`concedes` ("the except block runs *even if* there is no error")
    needs this in its support: a passage that states the ordinary case ("if an exception
    occurs, ... executes the except block") says the opposite of the concession.
    """
    return bool(_CONCESSION.search(text))


def polarity_terms(text: str, terms: set[str]) -> set[str]:
    """``terms`` plus "same" when ``text`` says "the same" (a stop word that a negation
    can bear on: "they are *not the same*")."""
    return terms | {"same"} if "same" in _lower_words(text) else terms


def claim_kinds(sentence: str) -> frozenset[str]:
    """The kinds of negation ("not", "optional") the claim of ``sentence`` makes."""
    return frozenset(c.kind for c in negation_cues(strip_verdict(sentence))
                     if c.kind in ("not", "optional"))


def negated(sentence: str) -> bool:
    """True when the claim of ``sentence`` (an opening Yes/No removed) holds a negation."""
    return bool(claim_kinds(sentence))


#: A piece with fewer content words is not a claim of its own ("but it is common").
MIN_CLAUSE_TERMS = 3
_CLAUSE = re.compile(
    r"\s*;\s+|,\s+(?=(?:and|but|while|whereas|so|therefore|thus|hence|which\s+means)\b)",
    re.IGNORECASE,
)


def clauses(sentence: str) -> list[str]:
    """``sentence`` cut into the claims it joins ("A, so B", "A; B", "A, while B").

    A piece with fewer than two content words stays with the one before it (", and
    encryption" ends a list, it is not a claim).
    """
    out: list[str] = []
    for piece in _CLAUSE.split(sentence):
        if out and len(content_terms(piece)) < MIN_CLAUSE_TERMS:
            out[-1] = f"{out[-1]}, {piece}"
        elif piece.strip():
            out.append(piece.strip())
    if len(out) > 1 and len(content_terms(out[0])) < MIN_CLAUSE_TERMS:
        out[:2] = [f"{out[0]}, {out[1]}"]
    return out or [sentence]


#: Words of "not required", "not needed" that "optional" does not share; the negation check compares
#: them (see :func:`negation_cues`), so coverage leaves them out.
_MODAL = frozenset(stem(w) for w in ("required", "necessary", "mandatory", "obligatory", "need"))


#: Verbs that "you do not have to *include* X" adds to what "X is optional" says.
_LIGHT_VERBS = frozenset(stem(w) for w in """include use add write put specify provide
    supply give type pass declare""".split())
_NEED_TO = re.compile(r"\b(?:have|has|need|needs|needn['\u2019]t|required|necessary)\s+(?:to\s+)?"
                      r"(\w+)", re.IGNORECASE)


def claim_terms(text: str) -> list[str]:
    """:func:`content_terms` less :data:`_MODAL`, plus the base of a "non" word
    ("nonnegative" -> "negat").

    The next list item's number left at its end (:data:`NEXT_ITEM_NUMBER`: "... (gravity +
    az)\n2.") is not a word of the claim.  Number words count as digits ("zero" -> "0": "the
    elements are 0" restates "initializes all of its elements to zero"), and a light verb
    after "not have to" or "not need to" is left out when the sentence holds an "optional"
    negation ("you do not have to *include* a default case" says what "the default block is
    optional" says).
    """
    text = NEXT_ITEM_NUMBER.sub("", text)  # the next list item's number is not claimed
    drop = set(_MODAL)
    if _OPTIONAL.search(text):
        drop |= {stem(m.group(1).lower()) for m in _NEED_TO.finditer(text)} & _LIGHT_VERBS
    out = [_NUMBER_STEMS.get(t, t) for t in content_terms(text) if t not in drop]
    for w in words(text):
        lw = w.lower()
        if lw.startswith("non") and len(lw) >= 7 and lw.isalpha():
            out.append(stem(lw[3:]))
    return out


def _lower_words(text: str) -> set[str]:
    return {w.lower().replace("\u2019", "'") for w in words(text)}


def opposite_words(sentence: str, window_sentence: str) -> bool:
    """True when ``window_sentence`` says the opposite of a word of ``sentence``.

    "closed-source" against "open-source", "immutable" against "mutable", "false"
    against "true": the window holds the opposite and not the word itself, and the
    sentence does not hold the opposite.
    """
    mine = _lower_words(sentence)
    theirs = _lower_words(window_sentence)
    for w in mine:
        if w in theirs:
            continue
        opposites = set()
        if w in _ANTONYMS:
            opposites.add(_ANTONYMS[w])
        for p in NEG_PREFIXES:
            if w.startswith(p) and len(w) - len(p) >= 5:
                opposites.add(w[len(p):])
            elif len(w) >= 5:
                opposites.add(p + w)
        if any(o in theirs and o not in mine for o in opposites):
            return True
    return False


# --- numbers -------------------------------------------------------------------------------
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if w != "_"
}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60",
                      "seventy": "70", "eighty": "80", "ninety": "90", "hundred": "100",
                      "thousand": "1000", "million": "1000000", "billion": "1000000000"})


#: Number words' stems as digits (claim terms: "zero" and "0" are one term).
_NUMBER_STEMS = {stem(w): n for w, n in NUMBER_WORDS.items()}


def number_terms(text: str) -> set[str]:
    """Numbers written with digits, and number words as digits ("four" -> "4").

    "one" is left out (it is a pronoun as often as a number: "the one before"); so is a
    list item's number that ends a sentence after a colon or a line break ("steps: 1.").
    """
    out = set(numbers(NEXT_ITEM_NUMBER.sub("", text)))
    for w in words(text):
        n = NUMBER_WORDS.get(w.lower())
        if n is not None:
            out.add(n)
    return out
