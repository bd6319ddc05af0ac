"""Whether a card's subject is a general term or the name of one individual.

A flashcard teaches a term of the field ("predicate", "recursion", "a simulator"), not a
fact about an individual that an example sentence mentions ("Smith is a surgeon",
"Oslo is a city").  Both read alike at the start of a sentence, where every word is
capitalised, so the test asks how the book itself writes the word elsewhere:

* a **name word** is one the book writes capitalised inside its prose (right after a
  lower-case word or a comma, or after such a capitalised word, as "Smith" in "met Jane
  Smith"; so neither a sentence's start nor a Title Case heading or list label counts) more often
  than in lower case: "Smith" always, "logic" almost never;
* a word of two or more capitals ("URDF", "JavaScript") is a coined technical name or
  an abbreviation of a term, and a subject holding one is not an individual's name;
* a subject is the **name of an individual** when its head (its last content word) is
  a name word and none of its words is written mostly in lower case ("Smith Jones" is
  a name; "Hartley smoothing", whose head is "smoothing", is a term), unless the book's
  outline names it: a name that heads a chapter or a
  section ("Introducing the Xyz simulator") is a topic the book teaches, not an example.

Words the book never uses inside a sentence give no evidence and leave the subject a
term.  The evidence is taken from the pages being studied (the sentences the study set
is made from and the headings of the book's outline).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from bookreader.core.sentences import STOPWORDS

#: A word of prose before the word judged: lower-case letters, no end mark after it.
_PROSE_BEFORE = re.compile(r"^[a-z\u00df-\u024f][a-z\u00df-\u024f'\u2019\-]*,?$")
#: What may open a word and make its capital a quotation's or a list's, not a name's.
_OPENERS = "\"'\u2018\u201c([{\u2022*"
_WORD = re.compile(r"^[A-Za-z\u00c0-\u024f][a-z\u00df-\u024f'\u2019\-]*$")


def _core(token: str) -> str:
    return token.strip(".,;:!?)]}\"'\u2019\u201d")


def _coined(word: str) -> bool:
    """Two or more capitals: an acronym or a coined technical name."""
    return sum(ch.isupper() for ch in word) >= 2


class NameEvidence:
    """How a book writes its words inside sentences, and what its outline names."""

    def __init__(self, sentences: Iterable[str], headings: Iterable[str] = ()) -> None:
        self.capital: Counter[str] = Counter()
        self.lower: Counter[str] = Counter()
        for text in sentences:
            tokens = text.split()
            run = False  # inside a name run that prose opened ("met Jane Smith today")
            for before, token in zip(tokens, tokens[1:]):
                prose = (bool(_PROSE_BEFORE.match(before)) or before.endswith(",")
                         or (run and before == _core(before)))
                run = False
                if not prose or token[:1] in _OPENERS:
                    continue
                word = _core(token)
                if not _WORD.match(word):
                    continue
                key = word.casefold()
                if word[0].isupper():
                    self.capital[key] += 1
                    run = True
                else:
                    self.lower[key] += 1
        self.headings = " ".join(" ".join(h.split()) for h in headings).casefold()

    def lower_word(self, word: str) -> bool:
        """True when the book writes ``word`` in lower case inside its prose at least as
        often as capitalised (a common word)."""
        key = _core(word).casefold()
        return self.lower[key] > 0 and self.lower[key] >= self.capital[key]

    def name_word(self, word: str) -> bool:
        """True when the book writes ``word`` capitalised inside its sentences more often
        than in lower case (a coined word of several capitals never is one)."""
        word = _core(word)
        if not word or _coined(word):
            return False
        key = word.casefold()
        return self.capital[key] > self.lower[key]

    def in_outline(self, subject: str) -> bool:
        """True when a heading of the book's outline holds ``subject`` as whole words."""
        pattern = r"\b" + r"\s+".join(re.escape(w.casefold()) for w in subject.split()) + r"\b"
        return bool(self.headings) and re.search(pattern, self.headings) is not None

    def individual(self, subject: str) -> bool:
        """True when ``subject`` names an individual rather than a term: its head is a
        name word, none of its words is a common or a coined word, and the outline does
        not name it."""
        content = [_core(w) for w in subject.split() if w.casefold() not in STOPWORDS]
        if (not content or not self.name_word(content[-1])
                or any(self.lower_word(w) or _coined(w) for w in content)):
            return False
        return not self.in_outline(subject)
