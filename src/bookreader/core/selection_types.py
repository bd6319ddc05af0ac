"""What a question asks for, and whether a selection's sentence gives it.

The selected-text rescue (:mod:`bookreader.core.selection_answer`) quotes a sentence of
the selection as the answer only when it is of the kind the question asks for:

* "What is X called?", "What do you call X?", "What are other names for X?": a name
  other than the question's own words (:func:`gives_name`: "called", "known as", a name in brackets, a noun
  described by a relative clause);
* "What is X?": a sentence saying what X is (:func:`defines`);
* "Who were X?": who they are (:func:`says_who`);
* who / when / how many / why / how: a name, a date, a number, a reason or a way
  (:func:`has_wanted_type`).
"""

from __future__ import annotations

import re
import unicodedata

from bookreader.core.sentences import content_terms, numbers, split_sentences, words


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


#: "Who were the Semuren?", "Who is Halvard?": who a named one is.
WHO_NAMED_Q = re.compile(r"^\s*[Ww]ho\s+(?:is|are|was|were)\s+(?:the\s+)?"
                          r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)\s*\??\s*$")


def says_who(sentence: str, name: str) -> bool:
    """True when ``sentence`` says who ``name`` is: "X is / were a ...", an apposition ("X,
    a merchant of ..."), or a gloss in brackets ("the Semuren (*various allied groups* from
    Central Asia)"); "The Mongols and Semuren were given certain advantages" only tells
    what befell them."""
    t = r"\s+".join(re.escape(w) for w in name.split())
    return bool(re.search(
        r"\b%s\s*\(\s*[a-z]|\b%s,\s+(?:an?|the)\s|"
        r"\b%s\s+(?:is|are|was|were)\s+(?:an?|the|one|some|people|members)\b" % (t, t, t),
        sentence))


_MONTHS = ("january february march april may june july august september october november "
           "december century centuries decade monday tuesday wednesday thursday friday "
           "saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays "
           "sundays").split()
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve twenty thirty "
                 "forty fifty hundred thousand million billion dozen several few many half "
                 "single double zero once twice thrice").split()


#: What gives a reason ("Why does minute / 60 give 0?" is not answered by "59 divided by
#: 60 should be 0.98333, not 0", but by "The problem is that Java performs integer
#: division ...").
_REASON = re.compile(r"\b(?:because|since|so\s+that|in\s+order\s+to|reasons?|therefore|"
                     r"causes?|caused|due\s+to|which\s+means|problem\s+is|thus|hence|"
                     r"results?\s+(?:in|from)|so|owing\s+to|as\s+a\s+(?:result|protest)|"
                     r"in\s+(?:response|retaliation|reaction)\s+to)\b", re.I)


#: A question asking for a time by its noun, after a preposition or not ("What year
#: ...?", "*In what year* ...?", "During which century ...?", "On what day ...?").
TIME_Q = re.compile(r"^\s*(?:(?:in|during|by|on|from|since|until|of)\s+)?(?:what|which)\s+"
                     r"(?:years?|century|centuries|decades?|months?|dates?|days?)\b", re.I)


#: A time given by a named event ("*During the Second World War*, the bridge was ...",
#: "after the Armistice"): it answers "When ...?".
_EVENT_TIME = re.compile(r"\b(?:[Dd]uring|[Aa]fter|[Bb]efore|[Ss]ince|[Uu]ntil|[Ff]ollowing)\s+"
                         r"(?:the\s+)?[A-Z][a-z]+")


#: "When is / does X ...?" in the present asks for a time or a condition ("When is a
#: matrix invertible?"); "When was / did ...?" asks for a time.
_GENERIC_VERBS = frozenset("is are does do can must should will would".split())
#: What states a condition.
_CONDITION = re.compile(r"\b(?:if|iff|whenever|when|unless|provided|as\s+long\s+as)\b", re.I)


#: A decade ("the late *1340s*", "the *80s*").
_DECADE = re.compile(r"\b\d{2,4}s\b")


#: "How did / does / is ... X ...?" asks for a way (not "How many ...", "How important
#: ..."), unless it asks how something turned out.
_HOW_WAY_Q = re.compile(r"^\s*how\s+(?:do|does|did|is|are|was|were|can|could|should|would|"
                        r"will|may|might|must|has|have|had)\b", re.I)
_OUTCOME_Q = re.compile(r"\b(?:turn(?:ed|s)?\s+out|end(?:ed|s)?(?:\s+up)?|result\w*|fare[sd]?|"
                        r"go(?:es)?|went|work(?:s|ed)?\s+out|feel|felt|look|looked)\b", re.I)
#: What tells a way: a means ("*by* electronic consoles", "*with* the equals method",
#: "*using*", "*through*"), a manner ("*as* a protectorate", "quickly"), a way named, an
#: instruction ("*To declare* a variable, write ...", "*you can* ...").
_WAY = re.compile(r"\b(?:by|with|without|through|using|uses?|used|via|ways?|means|methods?|"
                  r"manner|as|thanks\s+to|\w{3,}ly|you\s+(?:can|could|must|need|should|have"
                  r"\s+to))\b|^\W*to\s+\w+[^,]*,", re.I)


def has_wanted_type(question: str, sentence: str) -> bool:
    """The sentence can hold what a who / when / how-many / why / how question asks for: a
    name the question does not hold, a date (a year, a month, a decade; for "When ...?"
    also a named event: "during the Second World War"), a number, a reason ("He argued
    that ..." names nobody), a way ("How did the dynasty rule?" is not answered by "The
    dynasty which ruled Annam defeated the Mongols at ...", which says whom it ruled, but
    by a means or a manner: "by", "with", "through", "as", an adverb; a question about
    how something turned out asks for no way)."""
    q = question.lower().split()
    q_words = {w.lower() for w in words(question)}
    sent = words(sentence)
    if q[:1] in (["who"], ["whom"], ["whose"]):
        if WHO_NAMED_Q.match(" ".join(question.split())):
            return True  # who a named one is: a description ("herders from the hills")
        return any(w[:1].isupper() and w.lower() not in q_words for w in sent[1:])
    if q[:1] == ["when"] and q[1:2] and q[1] in _GENERIC_VERBS and _CONDITION.search(sentence):
        return True  # "When is a conditional false?": "... if and only if A is true ..."
    if q[:1] == ["when"] or TIME_Q.match(question):
        return (bool(numbers(sentence)) or any(w.lower() in _MONTHS for w in sent)
                or bool(_DECADE.search(sentence))
                or (q[:1] == ["when"] and bool(_EVENT_TIME.search(sentence))))
    if q[:1] == ["why"]:
        return bool(_REASON.search(sentence))
    if q[:2] in (["how", "many"], ["how", "much"]):
        return bool(numbers(sentence)) or any(w.lower() in _NUMBER_WORDS for w in sent)
    if _HOW_WAY_Q.match(question) and not _OUTCOME_Q.search(question):
        return bool(_WAY.search(sentence))
    return True


def lacks_asked_kind(question: str, answer: str) -> bool:
    """True when ``answer`` (citations stripped) cannot be what ``question`` asks for: a
    who-question answered by sentences naming nobody (:func:`names_nobody`), or a
    how-many / how-much question by sentences without any digit or number word ("To
    determine how many neighbours a cell needs, we need to consider the conditions").  A
    symbol with a digit ("2N") counts; a question asking when is not judged (a textbook
    answers it with a condition as often as with a time)."""
    q = question.lower().split()
    if q[:2] in (["how", "many"], ["how", "much"]):
        q_words = {w.lower() for w in words(question)}  # "how many" said again is no count
        return not (re.search(r"\d", answer) or any(
            w.lower() in _NUMBER_WORDS and w.lower() not in q_words for w in words(answer)))
    return names_nobody(question, answer)


def names_nobody(question: str, answer: str) -> bool:
    """True when ``question`` asks who ("Who first defined the determinant?", not "Who
    were the Semuren?") and no sentence of ``answer`` (citations stripped) names anyone
    the question does not: a word written as a name (:func:`_is_name`) past a sentence's
    first word ("Our definition of the determinant leads to ..." names nobody, nor does
    "Suppose S and T are operators").  Such an answer is about
    something else, whatever backend wrote it; a question asking when or how many is not
    judged so here (see :func:`lacks_asked_kind`)."""
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
