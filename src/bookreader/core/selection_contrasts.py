"""Does a sentence answer a near miss of the question?  SQuAD's unanswerable questions are
often made by swapping one word of a sentence for its opposite ("The SNP *gave* eight seats
to ..." over "The SNP *took* eight seats from ..."), another count, or the word with an
opposing prefix ("atomic" / "subatomic").  :func:`contrasts` says so; the selected-text
checks (:mod:`bookreader.core.selection_answer`, :mod:`bookreader.core.selection_relevance`)
use it.  Plain string work, no model.
"""

from __future__ import annotations

import re

from bookreader.core.sentences import content_terms, stem, words

#: Counts and ranks written as words: a question's count the sentence replaces by
#: another ("multiplying *three* numbers" over "multiplying two numbers") is a near miss;
#: one the sentence merely leaves out ("How should you compare *two* strings?" over "The
#: correct way to compare strings is ...") is not.
_COUNT_WORDS = frozenset(
    """two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty
    hundred thousand million billion first second third fourth fifth sixth seventh eighth
    ninth tenth once twice thrice""".split())


#: Words a near-miss question swaps for their opposite ("The SNP *gave* eight seats to
#: ..." over "The SNP *took* eight seats from ...", "the *closing* speakers" over "the
#: opening speakers").  Each group's words are the opposites of the other group's.
_OPPOSITES = tuple((frozenset(a.split()), frozenset(b.split())) for a, b in (
    ("more greater", "less fewer"), ("most greatest", "least fewest"),
    ("increase increased increases rise rose rises raise raised", 
     "decrease decreased decreases fall fell falls drop dropped drops lower lowered"),
    ("high higher highest upper", "low lower lowest"),
    ("large larger largest big bigger biggest", "small smaller smallest little"),
    ("maximum max", "minimum min"),
    ("before earlier earliest early", "after later latest late"),
    ("during", "before after"),
    ("first", "last"), ("begin began begun start started", "end ended stop stopped"),
    ("open opened opening opens", "close closed closing closes"),
    ("success successful successfully succeed succeeded",
     "failure unsuccessful fail failed failing"),
    ("win won wins winning", "lose lost loses losing defeated"),
    ("accept accepted accepts", "reject rejected rejects"),
    ("agree agreed agrees", "refuse refused refuses declined"),
    ("allow allowed allows permit permitted", "prevent prevented prevents forbid forbade "
     "forbidden prohibit prohibited"),
    ("include included includes", "exclude excluded excludes"),
    ("inside internal inner", "outside external outer"),
    ("import imported imports", "export exported exports"),
    ("north northern", "south southern"), ("east eastern", "west western"),
    ("give gave given gives", "take took taken takes"),
    ("buy bought buys", "sell sold sells"), ("send sent sends", "receive received receives"),
    ("accelerate accelerates accelerated", "decelerate decelerates decelerated"),
    ("positive", "negative"), ("true", "false"), ("always", "never"), ("all every", "some"),
    ("same", "different"), ("public", "private"), ("major", "minor"),
    ("strong stronger strongest", "weak weaker weakest"),
    ("fast faster fastest", "slow slower slowest"), ("hot heat heating", "cold cool cooling"),
    ("add added adds", "remove removed removes"), ("attack attacked", "defend defended"),
    ("old older oldest ancient", "new newer newest modern young younger"),
    ("male men", "female women"), ("legal", "illegal"), ("direct", "indirect"),
    ("input", "output"), ("born birth", "died death"), ("rich", "poor"),
    ("support supported supports", "oppose opposed opposes"),
))


def opposed(a: str, b: str) -> bool:
    """True when the words ``a`` and ``b`` are opposites (see :data:`_OPPOSITES`; any
    inflection: "agreed" / "refuses")."""
    sa, sb = stem(a.lower()), stem(b.lower())
    for x, y in _OPPOSITES:
        xs, ys = {stem(w) for w in x}, {stem(w) for w in y}
        if (sa in xs and sb in ys) or (sa in ys and sb in xs):
            return True
    return False


#: A concessive condition ("objects keep moving *even when* acted on"): what holds
#: despite it.  "unless" ("... *unless* acted on") says the opposite: it stops holding.
_CONCESSIVE = re.compile(r"\beven\s+(?:if|when|though)\b", re.I)
#: A prefix that turns a word into its opposite ("atomic" / "*sub*atomic").
OPPOSING_PREFIX = re.compile(r"^(?:un|non|sub|anti|counter|dis|in|im|ir|il)(?=[a-z]{5})")


#: A negation word; "not equal" says what "unequal" says.
_NEGATION = frozenset("not no never cannot without".split())


def _negated(text: str, word: str) -> bool:
    """True when ``word`` follows a negation of ``text`` within four words ("is *not*
    equal", "was*n't* able to be justified")."""
    ws = [w.lower() for w in words(text.replace("n\u2019t", " not").replace("n't", " not"))]
    return any(w == word and _NEGATION & set(ws[max(0, i - 4):i]) for i, w in enumerate(ws))


def contrasts(question: str, sentence: str) -> bool:
    """True when ``question`` holds a word that ``sentence`` does not, while ``sentence``
    holds its opposite (see :data:`_OPPOSITES`), another count (:data:`_COUNT_WORDS`) or
    the word with an opposing prefix: the sentence answers a near-miss of the question,
    not the question.

    A word counts as held in any inflection ("ending" holds "ended": "began" elsewhere in
    the sentence is then no contrast); a prefixed opposite is no contrast to the word
    negated ("unequal" / "not equal", "unjustified" / "wasn't able to be justified")."""
    q = {w.lower() for w in words(question)}
    s = {w.lower() for w in words(sentence)}
    q_stems = {stem(w) for w in q}
    s_stems = {stem(w) for w in s}
    for a, b in _OPPOSITES:
        for mine, other in ((a, b), (b, a)):
            if (q & mine and not s_stems & {stem(w) for w in mine} and s & other
                    and not q_stems & {stem(w) for w in other}):
                return True
    if q & _COUNT_WORDS - s and s & _COUNT_WORDS - q:
        return True
    if (_CONCESSIVE.search(question) and not _CONCESSIVE.search(sentence) and "unless" in s
            and "unless" not in q):
        return True  # "even when acted on" over "unless acted on": the opposite condition
    for w in q - s:
        if len(w) >= 5 and any(OPPOSING_PREFIX.sub("", x) == w and not _negated(question, w)
                               for x in s):
            return True
    return any(OPPOSING_PREFIX.sub("", w) in s and not _negated(sentence, OPPOSING_PREFIX.sub("", w))
               for w in q - s if len(w) >= 7)


#: A sentence saying that what it tells of did not come about ("... travelled to the
#: coast to found a town, *but failed*").
_FAILED = re.compile(r"\b(?:but|and|yet)\s+failed\b|\bfailed\s+to\b|\bunsuccessful(?:ly)?\b"
                     r"|\bin\s+vain\b|\bwithout\s+success\b", re.I)
#: A question about an attempt or its outcome ("What did she fail to do?", "How did the
#: campaign turn out?").
_ATTEMPT_Q = re.compile(r"\b(?:fail\w*|try|tried|tries|trying|attempt\w*|sought|seek\w*"
                        r"|succe\w*|unsuccessful\w*|turn(?:ed|s)?\s+out|outcome|result\w*)\b",
                        re.I)


def tells_failure(question: str, sentence: str) -> bool:
    """True when ``sentence`` says that what it tells of failed and ``question`` does not
    ask about an attempt: "Who founded a town on the coast?" is not answered by "Olaf
    sailed to the coast to found a town, but failed" (nobody founded one)."""
    return bool(_FAILED.search(sentence)) and not _ATTEMPT_Q.search(question)


#: A passive question about a named one: "What *was Nixon named* as?", "Why *were the
#: Walloons expelled*?" (the name, the participle).
_PASSIVE_Q = re.compile(r"\b(?:was|were|is|are|has\s+been|have\s+been|had\s+been)\s+"
                        r"((?:[A-Z][\w'-]*\s+){1,3}?)(\w+(?:ed|en))\b")


def voice_swapped(question: str, sentence: str) -> bool:
    """True when ``question`` asks what was done *to* someone ("What was Halvard named
    as?") and ``sentence`` only says what that one did ("Halvard named his son as the
    heir"): the sentence states the other role."""
    m = _PASSIVE_Q.search(question)
    if m is None:
        return False
    name = r"\s+".join(re.escape(w) for w in m.group(1).split())
    verb = re.escape(m.group(2))
    active = re.search(r"\b%s\s+(?:\w+ly\s+)?%s\b" % (name, verb), sentence)
    passive = re.search(r"\b%s\s+(?:was|were|is|are|has\s+been|have\s+been|had\s+been)\s+"
                        r"(?:\w+ly\s+)?%s\b" % (name, verb), sentence)
    return bool(active) and not passive


#: A passive question naming its doer: "What award *was inspired by Corliss*?" (the
#: participle, the name).
_BY_AGENT_Q = re.compile(r"\b(?:was|were|is|are|been|being)\s+(?:\w+ly\s+)?(\w+(?:ed|en))\s+"
                         r"by\s+((?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})")


def agent_made_patient(question: str, sentence: str) -> bool:
    """True when ``question`` names who did something ("What award was inspired *by
    Corliss*?") and ``sentence`` only says what was done to that one, by another verb
    ("When *Corliss was given* the Rumford medal ..."): the sentence states the other
    role.  A sentence using the question's verb, or naming the doer after "by", is not
    judged so."""
    m = _BY_AGENT_Q.search(question)
    if m is None:
        return False
    verb, name = m.group(1), m.group(2)
    if re.sub(r"^the\s+", "", name).lower() not in sentence.lower():
        return False
    if stem(verb.lower()) in {stem(w.lower()) for w in words(sentence)}:
        return False
    name_re = r"\s+".join(re.escape(w) for w in name.split())
    if re.search(r"\bby\s+%s\b" % name_re, sentence):
        return False
    return bool(re.search(r"\b%s\s+(?:was|were|is|are|has\s+been|have\s+been|had\s+been)\s+"
                          r"(?:\w+ly\s+)?\w+(?:ed|en|iven|ade|ought|old|ept|ent)\b" % name_re,
                          sentence))


#: A comparison of one thing to another ("treats normal tissues *as if* they were foreign
#: organisms", "spread *like* a fire"): what stands before it is likened to what follows.
_LIKENING = re.compile(r"\b(?:like|as\s+if|as\s+though)\s+(?:(?:they|it|he|she)\s+"
                       r"(?:were|was|are|is)\s+)?", re.I)
#: How many words on each side of the likening word are read as its two terms.
LIKENED_WORDS = 3


def _likened(text: str) -> tuple[set[str], set[str]] | None:
    """The content words (stemmed) of the :data:`LIKENED_WORDS` words before and after
    the first likening of ``text``, or None."""
    m = _LIKENING.search(text)
    if m is None:
        return None
    before = re.findall(r"[\w'-]+", text[:m.start()])[-LIKENED_WORDS:]
    after = re.findall(r"[\w'-]+", text[m.end():])[:LIKENED_WORDS]
    return set(content_terms(" ".join(before))), set(content_terms(" ".join(after)))


def likening_swapped(question: str, sentence: str) -> bool:
    """True when ``question`` likens A to B and ``sentence`` likens B to A: "What causes
    the immune system to treat *foreign organisms like normal tissues*?" is not answered
    by "... attacking *normal tissues as if they were foreign organisms*" (the other
    mistake).  A word on one side of the question is on the other side of the sentence,
    and a word of the other side the other way round (words on both sides, "the guards
    treat", count for neither)."""
    q, s = _likened(question), _likened(sentence)
    if q is None or s is None:
        return False
    (q_a, q_b), (s_a, s_b) = q, s
    return bool((q_a & s_b) - s_a and (q_b & s_a) - s_b)


def states_near_miss(question: str, sentence: str) -> bool:
    """True when ``sentence`` states a near miss of ``question``, the way SQuAD's
    unanswerable questions are made: an opposite of a question word (:func:`contrasts`),
    an act that failed (:func:`tells_failure`), the other role of a passive question
    (:func:`voice_swapped`), a likening the other way round (:func:`likening_swapped`),
    or only what befell the question's doer (:func:`agent_made_patient`)."""
    return (contrasts(question, sentence) or tells_failure(question, sentence)
            or voice_swapped(question, sentence) or likening_swapped(question, sentence)
            or agent_made_patient(question, sentence))
