"""What a question asks for, and whether a selection's text gives it.

* "What is X called?": a question asking for a name (:data:`NAMING_Q`), not held to the
  definition test;
* "What is X?": a sentence saying what X is (:func:`defines`; study cards use it too);
* "Who ...?": an answer naming someone the question does not (:func:`names_nobody`).
"""

from __future__ import annotations

import re
import unicodedata

from bookreader.core.sentences import split_sentences, words


#: "What is X called?", "What is X known as?" asks for a name, not what X is: it is not
#: held to the definition test a "What is X?" question is.
NAMING_Q = re.compile(r"\b(?:called|named|termed|known\s+as|referred\s+to\s+as)$", re.I)


#: A description this many words long at least ("an Islamic revival movement") is asked
#: about by what it describes, not defined.
DESCRIPTION_WORDS = 3


def defines(sentence: str, term: str) -> bool:
    """True when ``sentence`` says what ``term`` is ("X is ...", "... is called X"); for a
    description of :data:`DESCRIPTION_WORDS` words or more, also when it names what the
    description fits ("Islamism ... is an Islamic revival movement" for "What is an
    Islamic revival movement?", as "The kiwi is a flightless bird of New Zealand" answers
    "What is a flightless bird of New Zealand?")."""
    t = r"\s+".join(re.escape(w) for w in term.split())
    if len(term.split()) >= DESCRIPTION_WORDS and re.search(
            r"\b(?:is|are|was|were)\s+(?:an?|the)\s+%s\b" % t, sentence, re.I):
        return True
    return bool(re.search(
        r"\b%s\s*(?:\([^)]*\)\s*)?,?\s+(?:is|are|was|means|refers\s+to)\b|"
        r"\b(?:called|known\s+as|named)\s+(?:an?\s+|the\s+)?[\"'\u201c]?%s\b|"
        r"^\s*%s\s*:" % (t, t, t), sentence, re.I))


def names_nobody(question: str, answer: str) -> bool:
    """True when ``question`` asks who ("Who first defined the determinant?") and no
    sentence of ``answer`` (citations stripped) names anyone
    the question does not: a word written as a name (:func:`_is_name`) past a sentence's
    first word ("Our definition of the determinant leads to ..." names nobody, nor does
    "Suppose S and T are operators").  Such an answer is about something else, whatever
    backend wrote it."""
    q = " ".join(question.split())
    if q.lower().split()[:1] not in (["who"], ["whom"], ["whose"]):
        return False
    q_words = {w.lower() for w in words(q)}
    # Each stretch after a full stop, a colon or a line break opens with a capital of its
    # own ("... operators on V. Then ...", where the splitter reads "V." as an initial).
    stretches = [x for s in split_sentences(answer) for x in _STRETCH.split(s)]
    return not any(_is_name(w) and w.lower() not in q_words
                   for x in stretches for w in words(x)[1:])


_STRETCH = re.compile(r"[.!?:;]\s+|\n+")


def _is_name(word: str) -> bool:
    """A word written as a name: a Latin capital and small letters ("Lewes", "Ørsted"), or
    three capitals or more ("IBM"); a letter or two ("S", "ST") or a mathematical symbol
    is a variable."""
    return (len(word) >= 2 and word[0].isupper() and word[1:].isalpha()
            and "LATIN" in unicodedata.name(word[0], "")
            and (not word.isupper() or len(word) >= 3))
