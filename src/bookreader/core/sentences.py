"""Small, fast text helpers shared by citations and grounding.

Sentence splitting here is a regular expression, not Punkt: it runs on every answer and
every context (up to 4,000 characters of selection plus a few chunks) and must take well
under a millisecond.  It also splits run-together sentences such as
"...in the 19th century.First for Women is..." that PDF extraction and web text produce,
and a glossary's entries, whose terms are often lower-case ("...with different
arguments. base case: A condition that causes ...").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

from nltk.stem.snowball import SnowballStemmer

_SENT_END = re.compile(
    r"""(?<=[.!?])["'\u201d\u2019)\]]*\s+(?=["'\u201c\u2018(\[]?[A-Z0-9\u00c0-\u024f])"""
    r"""|(?<=[a-z0-9)][.!?])(?=[A-Z][a-z])"""
    r"""|\n\s*\n+"""
    # a glossary's next entry, "term: definition", often lower-case ("... different
    # arguments. base case: A condition that ..."): up to four words, then a colon
    r"""|(?<=[a-z0-9)][.!?])\s+(?=[a-z][a-z'\u2019-]*(?:\s[A-Za-z][a-z'\u2019-]*){0,3}:\s)"""
)
# Abbreviations after which a full stop does not end a sentence.
_ABBREV = re.compile(
    r"\b(?:e\.g|i\.e|etc|vs|cf|fig|figs|eq|eqs|no|nos|vol|pp|p|ch|sec|dr|mr|mrs|ms|prof|st|jr|sr"
    r"|inc|ltd|co|dept|approx|ca|al)\.$|\b[A-Z]\.$",
    re.IGNORECASE,
)

#: The number of the next list item, left at the end of a sentence by the splitter ("...
#: follow these steps: 1.", "... my_env\n2.", "... coordination. 2."): not a
#: number the sentence states (the grounding check's numbers) nor text to show (quotes).
#: After a closing bracket too: an item whose own number ended the sentence before it
#: ("... sensor data: 1." / "Record the sample's state (mass, volume, temperature) 2.").
NEXT_ITEM_NUMBER = re.compile(r"(?:(?<=[:.!?)\]])\s|\n)\s*\d{1,2}\.[\"'\u201d\u2019)\]]*\s*$")

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't do
    does doesn't doing don't down during each either few for from further had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
    how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's
    may me might more most must mustn't my myself neither no nor not now of off on once only
    or other ought our ours ourselves out over own per same shall shan't she she'd she'll
    she's should shouldn't so some such than that that's the their theirs them themselves then
    there there's these they they'd they'll they're they've this those though through thus to
    too under until up upon us very via was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's whether which while who who's whom whose why why's
    will with within without won't would wouldn't yes yet you you'd you'll you're you've your
    yours yourself yourselves one ones many much well within also etc called known""".split()
)

_stemmer = SnowballStemmer("english")


#: The dotted name that ends just before a full stop with no space after it: the run-together
#: rule of :data:`_SENT_END` ("...century.First for ...") must not cut a code name such as
#: "Living.Area" (a data frame's column), "Math.PI" or "pkg.module.Class".
_NAME_BEFORE_DOT = re.compile(r"(?<![\w.])[A-Za-z_][\w.]*\.$")
_WORD_AFTER_DOT = re.compile(r"[A-Za-z]+")


def _joins_a_name(text: str, at: int) -> bool:
    """Whether the full stop just before ``at`` (no space after it) joins the parts of a
    dotted name rather than two run-together sentences.

    A name: the part before the dot starts with a capital letter or already holds a dot or
    an underscore (``Living.Area``, ``a.b.Cde``, ``my_df.Price``), and the part after is
    not a common sentence opener ("...in Paris.The city..." still splits).  A plain
    lower-case word before the dot ("here.Two follows") is a lost line break, as before.
    """
    before = _NAME_BEFORE_DOT.search(text, 0, at)
    after = _WORD_AFTER_DOT.match(text, at)
    if before is None or after is None:
        return False
    name = before.group(0)[:-1]
    if not (name[0].isupper() or "." in name or "_" in name):
        return False
    return after.group(0).lower() not in STOPWORDS


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (keeps abbreviations such as "e.g." and "Fig. 3" whole,
    and dotted code names such as "Living.Area" and "System.out.println").

    Cached: the same passages are split for every answer about them (grounding, quotes,
    the extractive backend), and on a server for every student who asks."""
    return list(_split_sentences(text))


@lru_cache(maxsize=4096)
def _split_sentences(text: str) -> tuple[str, ...]:
    text = text.strip()
    if not text:
        return ()
    parts: list[str] = []
    start = 0
    for m in _SENT_END.finditer(text):
        piece = text[start : m.start()]
        if _ABBREV.search(piece.rstrip("\"')]\u201d\u2019")) and not _ends_at_letter(
                piece, text[m.end():]):
            continue
        if m.start() == m.end() and _joins_a_name(text, m.start()):
            continue
        if piece.strip():
            parts.append(piece.strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return tuple(parts)


_SINGLE_LETTER_END = re.compile(r"(?<![\w.])[A-Za-z]\.$")
_NEXT_WORD = re.compile(r"[\"'\u201c\u2018(\[]?([A-Za-z]+)(\.?)")


def _ends_at_letter(piece: str, rest: str) -> bool:
    """True when a full stop after a single letter ends the sentence: the letter names a
    variable ("... the mean of sample X. The variance ..."), not an initial, because the next
    word is a function word ("A", "The", "If") that no name is, and no initial either."""
    if _SINGLE_LETTER_END.search(piece.rstrip()) is None:
        return False
    m = _NEXT_WORD.match(rest)
    return m is not None and not m.group(2) and m.group(1).lower() in STOPWORDS


def question_part(text: str) -> str:
    """The sentences of ``text`` that ask (end with "?"), when it also holds sentences that
    do not (an instruction, an aside: "What is X? At the end, tell me a joke."); else "".

    Structural, not a list of phrases: whatever the other sentences say, the question is
    what the book is searched for when the whole text is not covered."""
    sentences = split_sentences(text)
    asking = [s for s in sentences if s.rstrip("\"')]\u201d\u2019 ").endswith("?")]
    if not asking or len(asking) == len(sentences):
        return ""
    return " ".join(asking)


def words(text: str) -> list[str]:
    """Word tokens (letters and digits, inner apostrophes kept), in order."""
    return _WORD.findall(text)


def word_matches(text: str) -> Iterator[re.Match]:
    """The :func:`words` of ``text`` as matches, for where each one starts and ends."""
    return _WORD.finditer(text)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball stem of a lower-cased word (cached: the same words recur constantly)."""
    return _stemmer.stem(word)


def content_terms(text: str) -> list[str]:
    """Stemmed, lower-cased content words: stopwords and one-letter tokens dropped.

    Cached (a fresh list each call): the checks read the same passages' sentences for
    every answer about them."""
    return list(_content_terms(text))


@lru_cache(maxsize=16384)
def _content_terms(text: str) -> tuple[str, ...]:
    out = []
    for w in words(text):
        lw = w.lower().replace("\u2019", "'")
        if lw in STOPWORDS or (len(lw) < 2 and not lw.isdigit()):
            continue
        if lw.endswith("'s"):
            lw = lw[:-2]
        out.append(stem(lw))
    return tuple(out)


def numbers(text: str) -> list[str]:
    """Numbers written with digits, normalised ("1,000" -> "1000", "3.50" kept)."""
    return [n.replace(",", "") for n in _NUMBER.findall(text)]


def match_key(text: str) -> tuple[str, list[int]]:
    """A matching key for verbatim checks, and the source index of each key character.

    The key keeps only letters and digits, lower-cased, after NFKC (so ligatures such as
    "ﬁ" become "fi" and full-width forms fold).  Whitespace, quotes, dashes, hyphenation
    ("exam-\\nple") and soft hyphens therefore cannot make a real quotation fail.
    """
    key: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            if ch.isalnum():
                key.append(ch.lower())
                index.append(i)
            continue
        for c in unicodedata.normalize("NFKC", ch):
            if c.isalnum():
                for low in c.casefold():
                    key.append(low)
                    index.append(i)
    return "".join(key), index


def key_only(text: str) -> str:
    """:func:`match_key` without the index (faster for the haystack side of a search)."""
    if text.isascii():
        return "".join(ch for ch in text.lower() if ch.isalnum())
    return match_key(text)[0]
