"""What a question asks for, and whether a selection's text gives it.

* "What is X called?", "What do you call X?", "What are other names for X?": a sentence
  giving a name other than the question's own words (:func:`gives_name`: "called",
  "known as", a name in brackets, a noun described by a relative clause);
* "What is X?": a sentence saying what X is (:func:`defines`; study cards use it too);
* "Who ...?": an answer naming someone the question does not (:func:`names_nobody`).
"""

from __future__ import annotations

import re
import unicodedata

from bookreader.core.sentences import content_terms, split_sentences, words


#: "What is X called?" asks for a name, not what X is; the sentence must give one.
_NAMING = r"\b(?:called|named|termed|known\s+as|referred\s+to\s+as)"
NAMING_Q = re.compile(_NAMING + "$", re.I)
#: "What do you call X?", "What do biologists call X?" asks for a name the same way.
CALL_Q = re.compile(r"^\s*what\s+(?:do|does|did|would|should|can|could)\s+(?:\w+\s+){1,2}?"
                    r"call\b", re.I)
#: A sentence names with "called Y" or, in the active voice, "we call this quantity Y".
_NAMES = re.compile(_NAMING + r"\b|\bcall\s+(?:this|these|that|those|it|them|such)\b(?:\s+[a-z]+)?",
                    re.I)
#: ... or by a name given in brackets after what it names ("the parasites that cause
#: malaria (*Plasmodium falciparum*)"): how a text names a thing it has just described.
_BRACKETED_NAME = re.compile(r"\w\s+\(\s*[A-Z][a-z]+")
#: "What is the name of X?", "What are other names for X?" asks the same; a sentence
#: giving "the name of X" or "names for X" names too.
NAME_OF_Q = re.compile(r"^(?:[\w-]+\s+){0,3}names?\s+(?:of|for)\s", re.I)
_NAME_WORD = re.compile(r"\bnames?\b", re.I)


#: A relative clause after a noun ("the neuroimmune system *which* protects the brain").
_RELATIVE = re.compile(r",?\s+(?:which|that|who)\s+", re.I)
#: How many words before it are read as the noun it describes.
RELATIVE_WORDS = 3


def gives_name(sentence: str, question: str, name_of: bool) -> bool:
    """True when ``sentence`` gives a name ("... called Y", "X (Y)"; for "What is the name
    of X?" also "names for X include Y") other than the question's own words: "... and it
    became known as the French and Indian War" gives the name the question already holds,
    not the other names it asks for.  A noun of the question with a new word before it,
    described by a relative clause holding another word of the question, is named too
    ("the *neuroimmune* system which protects the brain" for "What is the immune system of
    the brain known as?")."""
    if _BRACKETED_NAME.search(sentence):
        return True
    q_terms = set(content_terms(question))
    for pattern in (_NAMES, _NAME_WORD) if name_of else (_NAMES,):
        for m in pattern.finditer(sentence):
            after = set(content_terms(" ".join(sentence[m.end():].split()[:4])))
            if not after or not after <= q_terms:
                return True
    for m in _RELATIVE.finditer(sentence):
        # "the *neuroimmune* system which protects the brain" names the immune system of
        # the brain: a head noun of the question with a new word before it, described by
        # a clause holding another word of the question.
        named = set(content_terms(" ".join(sentence[:m.start()].split()[-RELATIVE_WORDS:])))
        clause = set(content_terms(" ".join(sentence[m.end():].split()[:RELATIVE_WORDS + 2])))
        if named & q_terms and named - q_terms and (clause & q_terms) - named:
            return True
    return False


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


#: "Who were the Semuren?", "Who is Halvard?": who a named one is (answered by a
#: description, which need name no one).
WHO_NAMED_Q = re.compile(r"^\s*[Ww]ho\s+(?:is|are|was|were)\s+(?:the\s+)?"
                          r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s*\??\s*$")


def names_nobody(question: str, answer: str) -> bool:
    """True when ``question`` asks who ("Who first defined the determinant?", not "Who
    were the Semuren?") and no sentence of ``answer`` (citations stripped) names anyone
    the question does not: a word written as a name (:func:`_is_name`) past a sentence's
    first word ("Our definition of the determinant leads to ..." names nobody, nor does
    "Suppose S and T are operators").  Such an answer is about something else, whatever
    backend wrote it."""
    q = " ".join(question.split())
    if q.lower().split()[:1] not in (["who"], ["whom"], ["whose"]) or WHO_NAMED_Q.match(q):
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
