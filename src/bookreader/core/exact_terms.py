"""Exact terms of an answer sentence: code identifiers, names, numbers, comparatives.

A paraphrase may rename ordinary words; it may not rename these.  Used by
:mod:`bookreader.core.grounding`; plain string work, no model.
"""

from __future__ import annotations

import re

from bookreader.core.sentences import STOPWORDS, words

#: Stems that share this many first letters count as one word family.
PREFIX_MATCH = 5
#: Code and command names: a span in backticks, or a token such as ``System.out.println``,
#: ``report.html``, ``--format``, ``snake_case`` or ``main()``.  A textbook answer that
#: names one must find it in the context (small models invent plausible commands).
_BACKTICKS = re.compile(r"`([^`\n]{2,80})`")
_CODE_TOKEN = re.compile(
    r"(?<![\w-])(?:--?[A-Za-z][\w-]*|[A-Za-z_]\w*(?:(?:\.|::|_)\w+)+(?:\(\))?|[A-Za-z_]\w*\(\))"
)


#: Comparative and superlative adjectives.  "X is closer", "Y ranks higher", "the largest
#: mall": a comparison the context does not state in those words is an inference from
#: figures the validator cannot check (or an invention), so the word must occur in the
#: context.  The most common ones (more, most, less, first, last, best, better) are left
#: out: textbooks use them everywhere ("more than one", "the first line").
_COMPARABLE = """close high low large small big old young early late long short fast slow
great near far wide narrow deep shallow heavy light strong weak rich poor tall hot cold warm
cool new hard easy cheap busy wealthy""".split()


def _degrees(adjective: str) -> tuple[str, str]:
    base = adjective
    if adjective.endswith("e"):
        base = adjective[:-1]
    elif adjective.endswith("y"):
        base = adjective[:-1] + "i"
    elif len(adjective) <= 4 and re.match(r".*[^aeiou][aeiou][bdgmnpt]$", adjective):
        base = adjective + adjective[-1]  # big -> bigger, hot -> hottest
    return base + "er", base + "est"


COMPARATIVES = frozenset(
    [form for adj in _COMPARABLE for form in _degrees(adj)]
    + "fewer fewest worse worst elder eldest".split()
)
#: A comparative's adjective ("harder" -> "hard"); superlatives are left out (a rank).
COMPARATIVE_BASE = {_degrees(adj)[0]: adj for adj in _COMPARABLE}


def comparative_restated(ws: list[str], i: int, context_keys: str) -> bool:
    """True when the comparative ``ws[i]`` restates the context's own adjective.

    "makes the code *harder to* read" where the context says "makes the code *hard to*
    read": no second thing is compared (no "than" follows) and the context uses the
    adjective with the same next word.  "X is closer than Y", or a comparative the
    context never phrases that way, stays an inference the check cannot verify.
    """
    base = COMPARATIVE_BASE.get(ws[i].lower())
    if base is None or i + 1 >= len(ws):
        return False
    after = [w.lower() for w in ws[i + 1:]]
    if "than" in after:
        return False
    return f" {base} {after[0]} " in context_keys
#: A context sentence that opens with one of these continues the sentence before it
#: ("... Marta Olsen. She kept the lighthouse ..."): for the relation check it also holds
#: the names of that sentence.
ANAPHORA = frozenset(
    "he she it they his her its their this these that those such there".split()
)


#: Operators written with two symbols ("==", "&&", "//", "++"): "use == to compare strings"
#: and "use equals" differ in nothing else, nor "the ++ operator concatenates" and the
#: book's "the + operator concatenates".  "--" counts beside a name ("i--") or before
#: "operator", not as a dash between words.
_OPERATOR = re.compile(
    r"(?<![=!<>&|+*/-])(?:==|!=|<=|>=|&&|\|\||//|\*\*|\+=|-=|\+\+)(?![=&|/*+])"
    r"|(?<=\w)--(?!-)|(?<![\w-])--(?=\s+operator)")


#: camelCase identifiers ("toUpperCase", "compareTo", "iPhone" too: a name either way).
_CAMEL = re.compile(r"(?<![\w.])[a-z]+[A-Z][A-Za-z0-9]*(?![\w(])")


def code_terms(sentence: str) -> list[str]:
    """The code-like terms of an answer sentence that must occur in the context."""
    terms = [m.group(1).strip() for m in _BACKTICKS.finditer(sentence)]
    rest = _BACKTICKS.sub(" ", sentence)
    terms += [m.group(0) for m in _OPERATOR.finditer(rest)]
    terms += [m.group(0) for m in _CAMEL.finditer(rest)]
    for m in _CODE_TOKEN.finditer(rest):
        tok = m.group(0).rstrip(".")
        parts = re.split(r"\.|::|_|\(\)|-", tok.strip("-"))
        if sum(1 for x in parts if len(x) > 1) < 2 and not tok.startswith("-") and "(" not in tok:
            continue  # "e.g", "U.S": abbreviations, not code
        if tok.startswith("-") and len(tok) < 3:
            continue
        terms.append(tok)
    return [t for t in dict.fromkeys(terms) if t]


def squash(text: str) -> str:
    return "".join(text.lower().split())


def code_key(term: str) -> str:
    """A code term as it is looked for in the squashed context: ``Math.sqrt()`` names the
    method the book calls as ``Math.sqrt(17.0)``, so empty brackets match any call."""
    key = squash(term)
    return key[:-1] if key.endswith("()") else key


CAPITALISED = re.compile(r"^[A-Z\u00c0-\u00de][\w'\u2019-]*$")


def name_key(word: str) -> str:
    """A word as names are compared: lower case, straight apostrophe, no possessive 's."""
    w = word.lower().replace("\u2019", "'")
    return w[:-2] if w.endswith("'s") else w


def relation_names(sentence: str) -> set[str]:
    """The names and numbers an answer sentence relates to each other.

    Capitalised words that are not stop words, and numbers.  The sentence's first word
    counts only when the next word is capitalised too ("Stanford University ..."), since
    a capital there is usually just the start of the sentence ("Arrays are ...").
    """
    ws = words(sentence)
    out: set[str] = set()
    for i, w in enumerate(ws):
        if w[0].isdigit():
            out.add(w.lower())
            continue
        if not CAPITALISED.match(w):
            continue
        if i == 0 and not (len(ws) > 1 and CAPITALISED.match(ws[1])):
            continue
        key = name_key(w)
        if key in STOPWORDS or len(key) < 2:
            continue
        out.add(key)
    return out


def covered(term: str, terms: set[str]) -> bool:
    """``term`` is in ``terms``, or shares its first five letters with one of them.

    Stems of one word family differ after that point ("generalis"/"general",
    "initialis"/"initi"); the exact checks for names, numbers and code are elsewhere.
    """
    if term in terms:
        return True
    if len(term) < PREFIX_MATCH:
        return False
    head = term[:PREFIX_MATCH]
    return any(t.startswith(head) for t in terms if len(t) >= PREFIX_MATCH)


#: Quantifiers that change what a sentence claims ("*only* Tim McIlrath is ...", "performed
#: *all* the songs"): the support window must quantify the same way.  Equivalent words
#: map to one key.
_QUANTIFIERS = {"only": "only", "solely": "only", "exclusively": "only", "all": "all",
                "every": "all", "each": "all", "both": "both"}


def quantifiers(text: str) -> set[str]:
    """The quantifier keys of ``text`` (see :data:`_QUANTIFIERS`)."""
    return {_QUANTIFIERS[w.lower()] for w in words(text) if w.lower() in _QUANTIFIERS}


#: Capitalised words written next to each other (spaces only, an abbreviation's dot
#: allowed): "Lake Erie State Park", "Dr. Hannibal Lecter".
_NAME_RUN = re.compile(r"(?:[A-Z\u00c0-\u00de][\w'\u2019-]*\.? +)+[A-Z\u00c0-\u00de][\w'\u2019-]*")


def name_runs(sentence: str) -> list[tuple[str, ...]]:
    """The multi-word names of a sentence, as tuples of name keys.

    A run of two or more capitalised words, stop words trimmed from its ends ("The
    Southern Railway" -> southern railway).  A name is one term: "Lake Erie State Park"
    built from "Lake Erie" and "state park" names a place the context does not, although
    each of its words is there.
    """
    out = []
    for m in _NAME_RUN.finditer(sentence):
        keys = [name_key(w) for w in words(m.group(0))]
        while keys and keys[0] in STOPWORDS:
            keys.pop(0)
        while keys and keys[-1] in STOPWORDS:
            keys.pop()
        if len(keys) >= 2:
            out.append(tuple(keys))
    return out


def key_text(text: str) -> str:
    """``text`` as space-separated name keys, padded, to find a name run in (see above)."""
    return " " + " ".join(name_key(w) for w in words(text)) + " "


_ORDINALS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5",
             "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10"}
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_SUPERLATIVES = frozenset(w for w in COMPARATIVES if w.endswith("est"))


def _ordinal(word: str) -> str | None:
    m = _ORDINAL_DIGITS.match(word)
    return m.group(1) if m else _ORDINALS.get(word)


def ranks(text: str) -> dict[str, set[str]]:
    """Each superlative of ``text`` with the ranks it is given: "the 2nd largest mall" ->
    {"largest": {"2"}}, "the largest" -> {"largest": {"1"}}, "second-most popular" ->
    {"most popular": {"2"}}; "one of the largest" -> {"largest": {"some"}}."""
    ws = [w.lower() for w in words(text)]
    out: dict[str, set[str]] = {}
    for i, w in enumerate(ws):
        if w in _SUPERLATIVES:
            key = w
        elif w in ("most", "least") and i + 1 < len(ws) and ws[i + 1] not in STOPWORDS:
            key = f"{w} {ws[i + 1]}"
        else:
            continue
        rank = _ordinal(ws[i - 1]) if i else None
        before = ws[max(0, i - 3): i]
        if before[-2:] == ["of", "the"] or before[-2:] == ["among", "the"]:
            rank = "some"  # "one of the largest", "among the largest"
        out.setdefault(key, set()).add(rank or "1")
    return out


def ranks_differ(mine: dict[str, set[str]], theirs: dict[str, set[str]]) -> bool:
    """True when two texts' :func:`ranks` give one superlative different ranks ("the
    largest" where the window says "the 2nd largest")."""
    return any(key in theirs and not (r & theirs[key]) for key, r in mine.items())


#: A list item's marker: a bullet, or a number or letter with a dot or parenthesis.
_MARKER = re.compile(r"(?:[\u2022\u25aa\u25cf\u2013*-]|\(?(?:\d{1,2}|[a-z])[.)])(?:\s+|$)")
#: Items of one list at most.
LIST_REACH = 8


def list_groups(sentences: list[str]) -> list[tuple[int, ...]]:
    """Per sentence, the list it opens or belongs to (indices), or () outside any list.

    A list is a sentence ending in ":" followed by at least two bulleted or numbered
    items ("1." alone on a line marks the sentence after it); prose or code after the
    colon is not a list.
    """
    lists: list[tuple[int, ...]] = [()] * len(sentences)
    for h, sent in enumerate(sentences):
        if not sent.rstrip().endswith(":"):
            continue
        end, items = h + 1, 0
        while end < len(sentences) and items < LIST_REACH:
            item = sentences[end].lstrip()
            if _MARKER.fullmatch(item):
                end += 1  # "1." on its own line: the next sentence is the item
                continue
            if not (_MARKER.match(item) or _MARKER.fullmatch(sentences[end - 1].strip())):
                break
            items += 1
            end += 1
        if items >= 2:
            group = tuple(range(h, end))
            for i in group:
                lists[i] = group
    return lists
