"""Terms and what the book says they are, read from its sentences.

Three forms make a term card, tried in this order on every sentence:

* a **glossary entry**: "base case: A condition that causes a recursive method not to
  make a recursive call." (in any section), or, inside a section titled glossary,
  vocabulary or key terms, "bug An error in a program." (a lower-case term of up to four
  words, then a capitalised definition);
* a **defining sentence**: "A variable is a named storage location ...", "Recursion is
  the process of ...", "An algorithm refers to ...", "... is called *polymorphism*." —
  the term read by one pattern, then confirmed by the answering pipeline's own
  :func:`~bookreader.core.selection_types.defines` (the same test that decides whether a
  sentence answers "What is X?");
* a **key statement** about a named subject, made a question: "X is used to ..." ->
  "What is X used for?", "X consists of ..." -> "What does X consist of?", "There are
  three kinds of X: ..." -> "What kinds of X are there?" (:func:`question_for`).

A term must read as a name: one to five words, letters, not a pronoun or a word that
points back ("This", "It", "The result"), not a bare generic noun.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

from bookreader.core.selection_types import defines
from bookreader.core.sentences import STOPWORDS, stem, words

#: Longest term, in words.
MAX_TERM_WORDS = 5
#: Fewest words the definition after the term must have.
MIN_DEFINITION_WORDS = 3

#: Words that cannot start (or be) a term: pronouns, words that point back, generic heads
#: that name nothing on their own ("The result is a list" defines nothing).
_DEICTIC = frozenset("""this that these those it its they them there here which what who
whose whom he she we you i one ones each every some any all both another other such first
second third last next following previous former latter same main key many most few
several various certain since although though while because when if as after before once
unless whereas however thus hence therefore also then now so consider note recall remember
see suppose let notice imagine compare two three four five six seven eight nine ten
initially finally usually typically generally basically essentially actually currently
recently similarly specifically formally informally intuitively roughly clearly obviously
better worse simpler easier more less""".split())
_NUMBER_WORDS = frozenset("two three four five six seven eight nine ten".split())
#: First words of a lead before "is called X" that refer to something said elsewhere
#: ("This approach is known as X", "Thus our subject is called X", "Equation 3 is called").
_POINTING_OPENERS = frozenset("""this that these those it its they them there here which what
such thus hence therefore so then equation figure table""".split())
#: Modifiers that pick one thing of the passage at hand, not a kind: a subject opening with
#: one ("the new velocity", "the final sentence of the sequence") is no term.
_CONTEXT_MODIFIERS = frozenset("""fourth fifth sixth seventh eighth ninth tenth new old
entire whole final given current resulting original remaining""".split())
#: Nouns that introduce a term rather than name one ("the term homoskedasticity").
_TERM_NOUNS = frozenset("term terms word phrase expression notion concept name".split())
#: A predicate that praises or ranks instead of defining ("X is the most important ...",
#: "X is a major issue", "X is a simple example").
_EVALUATIVE = re.compile(
    r"^\s*(?:(?:an?|the|one)\s+)?(?:\w+\s+){0,2}?(?:most|important|major|big|bigger|biggest|"
    r"great|good|useful|nice|crucial|serious|huge|key|main|best|worst|only|example|"
    r"examples|instance|counterpart|reason|issue|problem|topic|focus|subject|"
    # a degree adverb grades what it says ("a very creative activity", "a relatively
    # sophisticated skill", "a very reasonable one"): an evaluation, not a class
    r"very|relatively|quite|rather|extremely|fairly|remarkably|surprisingly|incredibly|"
    r"truly)\b", re.IGNORECASE)
#: A predicate naming a work ("... is the title of the first book where ..."): the
#: subject is a book, paper or film, not a term of the field.
_NAMES_A_WORK = re.compile(r"^\s*(?:(?:an?|the)\s+)?(?:\w+\s+)?(?:title|book|novel|paper|"
                           r"article|film|journal)s?\b", re.IGNORECASE)
#: A personal pronoun: a definition that says "he" or "his" of its subject is about a
#: person ("X is a mathematician, so his enthusiasm ..."), not a term; "named for" or
#: "named after" tells whom a name honours, not what it names.
_PERSONAL = re.compile(r"\b(?:he|him|his|she|her|hers)\b|\bnamed\s+(?:for|after)\b",
                       re.IGNORECASE)
#: The author speaking of the book's own material ("the results I generated", "I will
#: not address them"): a remark about the book, not the field ("Type I error" is no "I").
_AUTHOR_SPEAKS = re.compile(r"\bI\s+(?:\w+ed|will|would|have|had|am|was|think|use|show)\b"
                            r"|\b(?:me|my)\b")
#: A work and its author ("Flatland: A Romance ..., by Edwin A. Abbott"): a reading
#: list's line, not a term.
_BY_AUTHOR = re.compile(r",\s+by\s+[A-Z][a-z]+(?:\s+[A-Z]\.)*\s+[A-Z][a-z]")
#: A list item's text that is a sentence of its own about a quantified subject or opens
#: with "Instead" ("Speed: Each player starts with ...", "Scoring: Instead of counting
#: ..."): it says what happens, not what the label is.
_OWN_CLAUSE = re.compile(r"^\s*(?:each|every|any|instead)\b", re.IGNORECASE)
#: Words that point back to an earlier sentence: a definition holding one is not whole
#: ("... is the value from this auxiliary step"); "those with ...", "these that ..."
#: point forward and do not count.
_POINTS_BACK = re.compile(r"\b(?:this|these|those|above|aforementioned)\b"
                          r"(?!\s+(?:with|who|that|which|of|in)\b)", re.IGNORECASE)
#: A predicate left out and taken from the sentence before ("... the share of runs that
#: do."): the definition is not whole.
_ELLIPSIS = re.compile(r"\b(?:that|which|who)\s+(?:do|does|did)\s*[.!?]?\s*$", re.IGNORECASE)
#: "the same thing", "the same way" with no "as" after: the same as what was said before.
_SAME_UNNAMED = re.compile(r"\bthe\s+same\s+(?:thing|way)\b(?!\s+as\b)", re.IGNORECASE)
#: A list item that says what a chapter teaches, not what the term is ("Osmosis:
#: Understanding how water crosses a membrane ...", "Lab work: Configuring ...").
_OUTCOME = re.compile(r"^\s*(?:understanding|learning|mastering|exploring|introducing|"
                      r"introduction\s+to|overview\s+of|configuring|implementing|how\s+to)\b",
                      re.IGNORECASE)
#: A predicate that holds only on a condition ("The figure is a triangle if it has three
#: sides"): a claim about a case, not what the subject is.
_CONDITIONAL = re.compile(r"\b(?:if|when|unless|provided)\b", re.IGNORECASE)
#: Share of digits above which a "definition" is a table row or program output.
MAX_DIGIT_SHARE = 0.12


def _digit_heavy(text: str) -> bool:
    chars = [ch for ch in text if not ch.isspace()]
    return bool(chars) and sum(ch.isdigit() for ch in chars) > MAX_DIGIT_SHARE * len(chars)
#: Code, numbers and addresses: a "term: definition" line of program output or a reference.
#: A semicolon counts only where code has one (at a line's end or before a non-space): a
#: glossary entry's "A sequence of characters; the primary data type for text." is prose.
_NOT_PROSE = re.compile(r"[\[\]{}=<>]|;\s*$|;\S|https?:|www\.|\d+\.\d+\s+\S+\s+-?\d")
_GENERIC = frozenset("""result results answer answers problem problems example examples reason
reasons idea ideas goal goals point way ways thing things case cases question questions
difference differences output input part parts step steps kind kinds type types use purpose
rest end start chapter section figure table book page text note notes lot number
approach method methods model models process system value values symbol symbols notation
formula formulas equation equations""".split())
#: Small words a term may hold inside it ("degrees of freedom", "supply and demand").
_TERM_JOINERS = frozenset("of and in on a an the".split())
#: Adverbs left at the end of a subject ("X merely refers to ...").
_ADVERBS = frozenset("""merely simply just also usually often generally typically basically
essentially actually really thus therefore then now still always sometimes""".split())
#: Words that cannot end a term (a clause, not a name, ran into it).
_BAD_LAST = frozenset("""of to for with and or in on at by as from than that which a an the
today tomorrow yesterday""".split())  # "the temperature tomorrow": one day's instance

_DET = r"(?:(?:a|an|the)\s+)?"
_TERM = r"(?P<term>[A-Za-z\u00c0-\u024f][\w'\u2019\-]*(?:\s+[\w'\u2019\-]+){0,4}?)"
#: "term: definition" (a glossary or summary entry).
_ENTRY = re.compile(
    r"^\s*(?:[\u2022*\-]\s*)?(?P<term>[A-Za-z\u00c0-\u024f][\w'\u2019\-]*"
    r"(?:[ \-][\w'\u2019\-]+){0,4})\s*(?:\([^)]{1,40}\))?\s*:\s+(?P<definition>\S.+)$")
#: "term Definition" inside a glossary section: a lower-case term, then a capital.
_BARE_ENTRY = re.compile(
    r"^\s*(?P<term>[a-z\u00e0-\u024f][\w'\u2019\-]*(?:\s[a-z][\w'\u2019\-]*){0,3})\s+"
    r"(?P<definition>[A-Z\u201c\"](?:[a-z]|\s).+)$")
#: "A TERM is a ...", "TERM is the ...", "TERM refers to ...", "TERM means ...".
_COPULA = re.compile(
    rf"^\s*{_DET}{_TERM}\s*(?:\([^)]{{1,60}}\)\s*)?,?\s+"
    r"(?P<verb>(?:is|are)\s+defined\s+as\s|(?:is|are)\s+(?:an?|the|one|any)\s"
    r"|refers?\s+to\s|means\s)"
    r"(?P<definition>.+)$", re.IGNORECASE)
#: "... is called a TERM." / "... is known as TERM," / "... are called TERMS." / "... is
#: called a TERM of the list."
_CALLED = re.compile(
    r"\b(?:is|are)\s+(?:(?:also|often|sometimes|usually|typically|commonly|generally"
    r"|simply)\s+){0,2}(?:called|known\s+as|termed|referred\s+to\s+as)\s+"
    r"(?:an?\s+|the\s+)?"
    r"[\"'\u201c\u2018]?(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[A-Za-z][\w'\u2019\-]*){0,3}?)"
    r"[\"'\u201d\u2019]?"
    # "... called vectors or points": the first name; "a subspace of V": the symbol it is
    # taken over is a placeholder; "is called X if ...": a definition by its condition
    r"(?:\s+or\s+[A-Za-z][\w'\u2019\-]*)?"
    "(?:\\s+(?:of|in|on|over)\\s+(?:[\U0001D400-\U0001D7FF\u2100-\u214F][^\\s,.;:]*"
    "|(?P<of>(?:the|an?)\\s+[A-Za-z]+)))?"
    r"\s*(?:[.,;:]|\s+if\b|\s+and\s+(?:is|are)\s+denoted\b|$)")
#: "We define the absolute fitness of a genotype as the expected number of ...", "We'll
#: define the recombination fraction (r) to be the probability ...".
_WE_DEFINE = re.compile(
    r"\bwe(?:['\u2019]ll)?\s+(?:will\s+|shall\s+|can\s+)?define[d]?\s+(?:the\s+|an?\s+)?"
    r"(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[\w'\u2019\-]+){0,4}?)(?:\s*\([^)]{1,20}\))?"
    r"\s+(?:as|to\s+be)\s+(?P<definition>.+)$",
    re.IGNORECASE)
#: "We'll call the proportion of the variance that is genetic the heritability, ...".
_WE_CALL = re.compile(
    r"\bwe(?:['\u2019]ll|\s+will|\s+shall)?\s+call\s+(?P<described>.{10,}?)\s+(?:the|an?)\s+"
    r"(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[\w'\u2019\-]+){0,3}?)\s*(?:[,.;]|$)",
    re.IGNORECASE)
#: Verbs a key statement about a subject may use; the question asks with the bare form.
_ACTION_VERBS = frozenset("""returns produces computes measures describes determines
represents stores creates converts contains requires includes provides controls
specifies estimates predicts generates evaluates allows enables causes
consists""".split())
_SUBJECT_VERB = re.compile(
    rf"^\s*(?P<det>(?:a|an|the)\s+)?{_TERM}\s+(?P<verb>is\s+used\s+(?:to|for)|are\s+used\s+(?:to|for)"
    r"|consists?\s+of|is\s+made\s+up\s+of|are\s+made\s+up\s+of|"
    + "|".join(sorted(_ACTION_VERBS)) + r")\s+(?P<rest>.+)$",
    re.IGNORECASE)
_THERE_ARE = re.compile(
    r"^\s*there\s+are\s+(?P<count>two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?P<what>kinds|types|ways|steps|parts|forms|categories|classes|stages|phases"
    r"|components|properties|rules|methods)\s+(?P<prep>of|to)\s+(?P<of>[^:.;,]{2,50}?)\s*[:.,;]",
    re.IGNORECASE)


@dataclass(frozen=True)
class Definition:
    """A term and the text that defines it (the back of its card)."""

    term: str
    back: str  # the book's words that define the term
    form: str  # "entry", "defining" or "called"


@dataclass(frozen=True)
class Statement:
    """A question a key statement answers, with that statement as the answer."""

    question: str
    subject: str
    back: str


#: A mathematical letter or symbol letter (italic, bold, double-struck ... U+1D400-1D7FF,
#: letterlike symbols U+2100-214F): a word holding one names an instance ("the
#: composition ST", "the standard basis of R2"), not a term.
_MATH_LETTER = re.compile("[\U0001D400-\U0001D7FF\u2100-\u214F]")
#: Words that point to another sentence, formula or result for what the subject is
#: ("The formula below", "The matrix in the next result", "The corresponding result").
_POINTER = re.compile(r"\b(?:below|above|next|following|preceding|previous|corresponding|"
                      r"foregoing|aforementioned|this|these|those|latter|former)\b",
                      re.IGNORECASE)
#: A numbered or lettered item elsewhere: "(d)", "(iii)", "(3)", "5.41", "(2.7)".
_ITEM_REFERENCE = re.compile(r"\(\s*(?:[a-z]|[ivx]{1,4}|\d+(?:\.\d+)*)\s*\)|\b\d+\.\d+\b")


#: A claim justified by a result elsewhere ("... (by 5.31)", "as shown by 5.41", "see
#: 2.38"): a consequence proved there, not what the subject is.
_JUSTIFIED = re.compile(r"\b(?:by|see|from)\s+\(?\d+\.\d+", re.IGNORECASE)


def points_elsewhere(text: str) -> bool:
    """True when ``text`` (the words that name a sentence's subject) identifies it by
    pointing at a neighbouring formula, result or item rather than saying what it is.

    A pointer inside brackets ("the sentence on the left (R in this example)") is an
    aside, and one after an earlier sentence of the same text ("... T is true if S is.
    This is called ...") has its antecedent along: neither counts."""
    if re.search(r"[.!?;]\s+[A-Z]", text):
        return False
    return bool(_POINTER.search(re.sub(r"\([^)]*\)", " ", text))
                or _ITEM_REFERENCE.search(text))


#: Words that open a clause, not a description: a "label: ..." line whose text opens
#: with one ("Warning: There may ...", "Hint: You can ...") says something about the
#: matter at hand; it does not say what the label is.
_CLAUSE_OPENERS = frozenset("""there it this these those they we you i he she suppose let
note consider recall""".split())
#: Subordinators: a label's text that opens with one and goes on to a main clause after a
#: comma ("Caution: If T has ..., then ...") is a remark; one that is only the subordinate
#: clause ("Impact phase: When the swing foot contacts the ground") describes its label.
_SUBORDINATORS = frozenset("if when unless whereas while because since although though".split())


def _labels_a_remark(definition: str, term: str = "") -> bool:
    """True when an entry's text is a remark or a heading, not a definition: it opens a
    clause (:data:`_CLAUSE_OPENERS`, or :data:`_SUBORDINATORS` with a main clause after a
    comma), or it is a short title with every long word capitalised and no full stop
    ("Notes on Typesetting").  A text that opens with "This"/"These" and the label's own
    head noun ("Media Equation Theory: This theory posits ...", "Wheeled Robots: These
    robots use ...") describes its label: it is no remark."""
    ws = definition.split()
    if not ws:
        return True
    first = ws[0].lower().strip(",")
    head = term.split()[-1].lower() if term.split() else ""
    if (first in ("this", "these") and len(ws) > 1 and head
            and stem(ws[1].lower().strip(",")) == stem(head)):
        return False
    if first in _CLAUSE_OPENERS or (first in _SUBORDINATORS and "," in definition):
        return True
    long = [w for w in ws if len(w) > 3]
    return (len(ws) <= 6 and not definition.rstrip().endswith((".", "!", "?")) and bool(long)
            and all(w[:1].isupper() for w in long))


def clean_term(term: str) -> Optional[str]:
    """The term as a card's front, or None when it does not read as a name."""
    term = " ".join(term.strip(" \t*\u2022-\"'\u201c\u201d\u2018\u2019").split())
    # "linear functional on V": the one letter it is taken over is a placeholder; "the
    # standard basis of R2" names one instance (the symbol check below drops it)
    term = re.sub(r"\s+(?:of|on|in|over)\s+" + _MATH_LETTER.pattern + r"$", "", term)
    term = re.sub(r"^(?:a|an|the)\s+", "", term, flags=re.IGNORECASE)
    ws = term.split()
    while len(ws) > 1 and ws[-1].lower() in _ADVERBS:  # "Linkage disequilibrium merely"
        ws.pop()
    if len(ws) > 1 and ws[0].lower() in _TERM_NOUNS:  # "The term homoskedasticity"
        ws.pop(0)
    term = " ".join(ws)
    if not 1 <= len(ws) <= MAX_TERM_WORDS:
        return None
    low = [w.lower() for w in ws]
    if low[0] in _DEICTIC or low[0] in STOPWORDS or low[-1] in _BAD_LAST:
        return None
    if len(ws) > 1 and low[0] in _CONTEXT_MODIFIERS:
        return None  # one thing of the passage: "the seventh line", "the entire sentence"
    if len(ws) == 1 and (low[0] in _GENERIC or len(low[0]) < 3):
        return None
    if any(w in ("is", "are", "was", "were", "be", "been", "can", "will", "would", "should",
                 "we", "you", "i", "if", "when", "because", "not") for w in low):
        return None
    if any(w in STOPWORDS and w not in _TERM_JOINERS for w in low[1:]):
        return None  # a clause ran into it: "process continues until the subtasks"
    if not all(re.fullmatch(r"[\w'\u2019\-]+", w) and re.search(r"\w", w) for w in ws):
        # (a dash standing alone joins two names, a title line: "French - A Guide to ...")
        return None
    if not any(w not in STOPWORDS and w not in _GENERIC for w in low):
        return None
    if any(w.isdigit() or (len(w) == 1 and w.isalpha() and w.lower() not in STOPWORDS)
           for w in ws) or (
            len(ws) == 1 and any(ch.isdigit() for ch in term)):
        return None  # a numbered or lettered instance: "Sentence 14", "the extension of E"
    if any(w in _NUMBER_WORDS for w in low[1:]):
        return None  # a heading ran into a sentence: "Negation Two commonly used symbols"
    if _MATH_LETTER.search(term):
        return None  # an instance named by its symbols: "the composition ST"
    return term


def _enough(definition: str) -> bool:
    return len(words(definition)) >= MIN_DEFINITION_WORDS


def _whole(sentence: str) -> bool:
    """A sentence that stands alone: it opens with a capital (not a fragment cut at a page
    or a line: "with more than one place are called polyadic."), ends as a sentence ends
    (not "... that periodically produces a" at a page's foot) and not on a colon (its
    list, or its formula, is elsewhere)."""
    s = sentence.strip().rstrip("\"'\u201d\u2019)")
    # a bullet inside it: list items (a slide's) run together, not one sentence
    return (bool(s) and not s[0].islower() and s.endswith((".", "!", "?"))
            and "\u2022" not in s[1:])


def _heading_run_in(sentence: str) -> str:
    """``sentence`` without a heading that ran into it: a heading ending on the word the
    sentence opens with ("Run Jupyter on Binder Binder is a service ..." -> "Binder is a
    service ...").  Unchanged when no word is repeated there."""
    ws = sentence.split()
    for i in range(1, min(len(ws), 9)):
        if ws[i] == ws[i - 1] and ws[i][:1].isupper():
            return " ".join(ws[i:])
    return sentence


#: A list item's marker: a bullet, not part of the sentence ("• A list is ...").
_BULLET = re.compile(r"^\s*[\u2022\u25aa\u25cf\u25e6\u2023*]\s+(?=[A-Z])")


def _unbulleted(sentence: str) -> str:
    """``sentence`` without the bullet that opens a list item."""
    return _BULLET.sub("", sentence, count=1)


def definition_in(sentence: str, glossary: bool = False) -> Optional[Definition]:
    """The term ``sentence`` defines and its definition, or None: the first reading of
    :func:`readings` that no rule objects to."""
    for d, flags in readings(sentence, glossary):
        if not flags:
            return d
    return None


#: The rules a reading may break, as names (:func:`readings`): a reading that breaks
#: one is no definition by the rules; the card model weighs them with other evidence.
FLAGS = ("not_prose", "digit_heavy", "outcome", "remark_label", "points_elsewhere",
         "generic_subject", "justified", "evaluative", "conditional", "points_back",
         "pointing_lead", "deictic_described", "imperative", "names_a_work", "personal",
         "code_instance", "code_call", "parallel_item")


def readings(sentence: str, glossary: bool = False) -> Iterator[tuple[Definition, tuple[str, ...]]]:
    """Every way ``sentence`` reads as a definition, in the order the forms are tried,
    each with the rules (:data:`FLAGS`) it breaks.  A form whose shape does not match,
    whose term does not read as a name or whose definition is too short gives none
    (a generator: a caller that takes the first acceptable reading reads no further)."""
    m = _ENTRY.match(sentence)
    if m and _enough(m.group("definition")) and not m.group("definition").rstrip().endswith(":"):
        text = m.group("definition")
        term = clean_term(m.group("term"))
        # A lead-in ("The steps are as follows: ...") is not an entry: the "term" part of
        # an entry is a name, short and without a verb.
        if term and (glossary or text[:1].isupper()):
            flags = [f for f, hit in (("not_prose", _NOT_PROSE.search(text)),
                                      ("digit_heavy", _digit_heavy(text)),
                                      ("outcome", _OUTCOME.match(text)),
                                      ("names_a_work", _BY_AUTHOR.search(text)),
                                      ("remark_label", _labels_a_remark(text, term) or (
                                          not glossary and _OWN_CLAUSE.match(text)))) if hit]
            yield (Definition(term, text.strip(), "entry"), tuple(flags))
    if glossary:
        m = _BARE_ENTRY.match(sentence)
        if m and _enough(m.group("definition")):
            term = clean_term(m.group("term"))
            if term:
                flags = (("remark_label",) if _labels_a_remark(m.group("definition"), term)
                         else ())
                yield (Definition(term, m.group("definition").strip(), "entry"), flags)
    if not _whole(sentence):
        return
    sentence = _heading_run_in(_unbulleted(sentence))
    m = _COPULA.match(sentence)
    if m and _enough(m.group("definition")):
        term = clean_term(m.group("term"))
        verb = " ".join(m.group("verb").lower().split())
        if term and verb.startswith("are") and not term.lower().endswith("s"):
            term = None  # "Java are ..." is not a defining sentence's grammar
        if verb.startswith("means") and m.group("definition").lower().startswith("that") and (
                re.match(r"^\s*(?:a|an|the)\s", sentence, re.IGNORECASE)):
            term = None  # "The positive sign on X means that ...": what it implies
        # "A linear functional on V is ...": said of the term taken over a symbol
        said = term and (defines(sentence, term) or (
            bool(_MATH_LETTER.search(m.group("term")))
            and defines(sentence, " ".join(m.group("term").split()))))
        if term and said:
            definition = m.group("definition")
            flags = [f for f, hit in (
                ("points_elsewhere", points_elsewhere(sentence[:m.start("verb")])),
                ("generic_subject", _generic_subject(sentence, term)),
                ("justified", _JUSTIFIED.search(definition)),
                ("evaluative", _EVALUATIVE.match(definition)),
                ("names_a_work", _NAMES_A_WORK.match(definition)),
                ("personal", _PERSONAL.search(definition) or _AUTHOR_SPEAKS.search(definition)),
                ("conditional", _CONDITIONAL.search(re.split(r"[;,:]", definition)[0])),
                ("points_back", _POINTS_BACK.search(" ".join(definition.split()[:8]))
                 or _ELLIPSIS.search(definition))) if hit]
            yield (Definition(term, sentence, "defining"), tuple(flags))
    m = _WE_DEFINE.search(sentence)
    if m and _enough(m.group("definition")):
        term = clean_term(m.group("term"))
        if term:
            flags = ("points_back",) if _POINTS_BACK.search(sentence) else ()
            yield (Definition(term, sentence, "defining"), flags)
    m = _CALLED.search(sentence)
    if m:
        # "called the scope of the quantifier": the whole name while it is a short one;
        # "called a linear combination of the list": the name without what it is taken of
        whole = sentence[m.start("term"):m.end("of")] if m.group("of") else ""
        term = ((clean_term(whole) if len(whole.split()) <= MAX_TERM_WORDS - 1 else None)
                or clean_term(m.group("term")))
        before = sentence[:m.start()]
        lead = words(before)
        if term and len(lead) >= MIN_DEFINITION_WORDS and defines(sentence, term):
            # "what is called X", "which is called X", "This approach is known as X"
            # (a lead that opens with a number word, "recall", "because", "when" or "most"
            # is a description: "Two shapes are called congruent if ...")
            pointing = (lead[-1].lower() in ("what", "which", "it", "this", "these", "that")
                        or lead[0].lower() in _POINTING_OPENERS
                        or points_elsewhere(before))
            flags = [f for f, hit in (("pointing_lead", pointing),
                                      ("personal", _PERSONAL.search(sentence))) if hit]
            yield (Definition(term, sentence, "called"), tuple(flags))
    m = _WE_CALL.search(sentence)
    if m:
        term = clean_term(m.group("term"))
        described = words(m.group("described"))
        # "We call the tree a heap because ... in the set.": a clause ran into what is
        # described, and the name read at its end is none
        if term and len(described) >= MIN_DEFINITION_WORDS and not (
                {w.lower() for w in described} & {"because", "whereas", "although", "though"}):
            flags = [f for f, hit in (
                ("points_back", _POINTS_BACK.search(sentence)),
                ("deictic_described", described[0].lower() in (_DEICTIC | {"it", "them"})))
                if hit]
            yield (Definition(term, sentence, "called"), tuple(flags))


def _generic_subject(sentence: str, term: str) -> bool:
    """True for "The TERM is the ..." where TERM is one plain word: a reference to
    something named before ("The function is the one that ..."), not a definition."""
    return bool(re.match(r"^\s*the\s+\S+\s+(?:is|are)\s+the\b", sentence, re.IGNORECASE)
                and len(term.split()) == 1 and term.islower())


def _bare(verb: str) -> str:
    """The bare form of a third-person verb ("returns" -> "return")."""
    v = verb.lower()
    if v.endswith("ies"):
        return v[:-3] + "y"
    if v.endswith(("sses", "shes", "ches", "xes", "zes")):
        return v[:-2]
    return v[:-1] if v.endswith("s") else v


def _page_thing(subject: str) -> bool:
    """True for a subject that, after "the", names a thing of the page rather than a term:
    one or two plain lower-case words with no name, symbol or "of" to tell which ("the
    expression", "the right-hand side", "the linear model"); "the JVM", "the type of a
    variable" and "the generalized eigenspace decomposition" say what they are."""
    ws = subject.split()
    return len(ws) <= 2 and "of" not in ws and all(
        re.fullmatch(r"[a-z][a-z\-]*", w) for w in ws)


def question_for(sentence: str) -> Optional[Statement]:
    """A question ``sentence`` answers as a key statement about a named subject, or None."""
    if not _whole(sentence):
        return None
    sentence = _heading_run_in(_unbulleted(sentence))
    m = _THERE_ARE.match(sentence)
    if m:
        of = clean_term(m.group("of"))
        if of:
            what, prep = m.group("what").lower(), m.group("prep").lower()
            return Statement(f"What {what} {prep} {of} are there?", of, sentence)
    m = _SUBJECT_VERB.match(sentence)
    if not m or len(words(m.group("rest"))) < MIN_DEFINITION_WORDS:
        return None
    subject = clean_term(m.group("term"))
    if not subject:
        return None
    det = (m.group("det") or "").lower()
    if det.strip() == "the" and _page_thing(subject):
        return None
    named = det + subject  # "What does a wrong password produce?"
    verb = " ".join(m.group("verb").lower().split())
    rest = m.group("rest")
    if verb in _ACTION_VERBS and (rest.lower().startswith(("to ", "us ", "you ", "them "))
                                  or subject.split()[-1].lower().endswith("ing")):
        return None  # "Increasing returns to scale ...", "X allows us to ...": no object
    if (_POINTS_BACK.search(sentence) or _SAME_UNNAMED.search(sentence)
            or _AUTHOR_SPEAKS.search(sentence)):
        return None
    plural = verb.startswith("are") or verb == "consist"
    aux = "do" if plural else "does"
    be = "are" if plural else "is"
    if verb.endswith("used to") or verb.endswith("used for"):
        q = f"What {be} {named} used for?"
    elif verb.startswith("consist") or "made up of" in verb:
        q = f"What {aux} {named} consist of?"
    elif verb in _ACTION_VERBS:
        bare = _bare(verb)
        q = f"What {aux} {named} {bare}?"
    else:
        return None
    return Statement(q, subject, sentence)
