"""What kind of answer a question wants, and which sentences can be one.

The extractive backend's sentence preferences (:func:`answer_type_bonus`: a definition
for "what is", a procedure for "how", a reason for "why"; a heading, a lead-in to code, a
contents line, an exercise down), shared by :mod:`bookreader.core.quotes` and
:mod:`bookreader.core.focus` through :mod:`bookreader.core.llm.extractive`, which
re-exports every public name of this module.
"""

from __future__ import annotations

import re

from bookreader.core.code_text import is_code_line
from bookreader.core.llm.continuation import ITEM, is_lead_in
from bookreader.core.sentences import NEXT_ITEM_NUMBER
from bookreader.core.sentences import content_terms as _content_terms
from bookreader.core.sentences import stem

# Words that questions are made of ("what is X called?", "name the..."): they say what
# kind of answer is wanted, not what it is about, so they must not count as matches.
_QUESTION_WORDS = frozenset(
    stem(w) for w in """name named mean means meaning kind type according describe explain
    give tell text book selection passage following""".split()
)


def content_terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` without question words."""
    return [t for t in _content_terms(text) if t not in _QUESTION_WORDS]



# --- what kind of answer the question wants --------------------------------------------------
_DEFINITION_Q = re.compile(
    r"^\s*(?:what\s+(?:is|are|was|were)\b|what(?:'s|\s+does)\b.*\bmean|define\b|"
    r"what\s+do\s+(?:we|you)\s+call\b|what\s+is\s+meant\b)", re.IGNORECASE)
_PROCEDURE_Q = re.compile(r"^\s*(?:how\s+(?:do|does|can|should|would|to|is|are)\b|"
                          r"what\s+(?:steps|command)\b)", re.IGNORECASE)
_REASON_Q = re.compile(r"^\s*why\b", re.IGNORECASE)
_DEFINES = re.compile(
    r"\b(?:is|are)\s+(?:a|an|the|called|known\s+as|defined\s+as|one|any|what|when)\b|"
    # "... doesn't mean there are 100 errors" denies, it does not define (it would lead
    # the answer to "What is an error?")
    r"\brefers?\s+to\b|(?<!n't\s)(?<!n\u2019t\s)(?<!not\s)\bmeans?\b|\bis\s+a\s+way\b|"
    # "A deadlock occurs when two threads wait for each other."
    r"\b(?:occurs?|happens?)\s+(?:when|if)\b", re.IGNORECASE)
#: A defining verb that puts the name defined after it ("... is called a functor").
_NAMES_AFTER = re.compile(r"(?:is|are)\s+(?:called|known\s+as)\b", re.IGNORECASE)
#: A defining verb that gives a word's meaning.  With :data:`_NAMES_AFTER`, the verbs that
#: name or give a meaning rather than classify ("is a").
_GIVES_MEANING = re.compile(r"refers?\s+to\b|means?\b", re.IGNORECASE)
_GLOSSARY = re.compile(r"^\s*([^:.;]{2,40}?)\s*:\s+[A-Z(]")
_PROCEDURE = re.compile(
    r"\b(?:use|uses|using|you\s+can|you\s+need|you\s+have\s+to|to\s+\w+\s+(?:a|an|the)|by\s+"
    r"\w+ing|type|write|call|declare|create|run|install|"
    # the means: "This can be achieved through visual indicators, status displays, ..."
    r"(?:achieved|accomplished|done|implemented|realized)\s+(?:through|by|with|using))\b",
    re.IGNORECASE)
_REASON = re.compile(r"\b(?:because|since|so\s+that|in\s+order\s+to|the\s+reason|"
                     r"therefore|causes?|which\s+means)\b", re.IGNORECASE)
_INTRODUCES_CODE = re.compile(
    r"(?:\bhere\s+(?:is|are)\b|\bthe\s+following\b|\blooks\s+like\s+this\b|"
    r"\bfor\s+example\s*,?\s*$|\bas\s+follows\b)", re.IGNORECASE)


#: A sentence that runs from its colon into the first line of a code listing
#: ("... as follows: public int compareTo(Card that) {", "...: #!/usr/bin/env python3").
LEAD_IN_TO_CODE = re.compile(
    r":\s[^.!?]*[{};]\s*$")
_VERB = re.compile(r"\b(?:is|are|was|were|has|have|can|will|uses?|allows?|provides?|"
                   r"combines?|requires?|enables?|\w+s)\b", re.IGNORECASE)


def _claims(sentence: str) -> bool:
    """A finite verb before the colon: the lead-in says something of its own."""
    return bool(_VERB.search(sentence.rsplit(":", 1)[0]))
#: A line of a table of contents or an index ("4.10 Fruitful functions........ 52").
TOC_LINE = re.compile(r"\.{5,}|(?:\.\s){4,}")
#: An exercise or review task ("Explain how ...", "Write a method ...", "Discuss ..."):
#: it asks the student for the answer, it does not give it.
TASK = re.compile(
    r"^\s*(?:\d+[.)]\s*)?(?:explain|describe|discuss|analy[sz]e|evaluate|derive|compare|"
    r"contrast|investigate|research|justify|prove)\b|^\s*(?:objective|task|goal)s?\s*:"
    # a project's brief ("Design a privacy-preserving data collection system ...",
    # "Implement a policy gradient method ...", "Expected Outcome: A working ...")
    r"|^\s*(?:\d+[.)]\s*)?(?:design|implement|develop|modify|extend)\s+(?:a|an|the|and|your)\b"
    r"|^\s*expected\s+(?:outcome|output|result)s?\s*:",
    re.IGNORECASE)
#: A sentence about the book rather than its subject ("By the end of this chapter, you will
#: be able to: ...", "This chapter covered ...", "We explored: ...", "Let's start with ..."):
#: it names topics, it explains none.
META = re.compile(
    r"^\s*(?:by\s+the\s+end\s+of\s+this|(?:this|the)\s+(?:chapter|section)\s+(?:has\s+)?"
    r"(?:covered|explored|introduced|introduces|covers|explores|presents|presented|demonstrates)"
    r"|in\s+this\s+(?:chapter|section),?\s+(?:we|you)|we\s+(?:have\s+)?explored\b"
    r"|let['\u2019]s\s+(?:begin|start|now|implement|create|write|look|explore|examine|see)\b)",
    re.IGNORECASE)
#: Sections that set tasks or list goals rather than explain (their sentences rank lower).
_TASK_SECTION = re.compile(r"exercise|problem|assignment|\blab\b|project|review\s+question|"
                           r"learning\s+(?:objective|outcome|goal)|quiz|assessment|"
                           r"further\s+reading|references|bibliography", re.IGNORECASE)
#: Score change of a line of a listing (-0.3: picked only when no prose sentence comes close;
#: in a code-heavy book the listing is sometimes all the gold page holds).
CODE_PENALTY = -0.3
CODE_CHARS = re.compile(r"[{};=<>()\[\]]")
#: Marks of source code a sentence of prose does not hold.
_CODE_MARKS = re.compile(
    r"^\s*(?:#|//|>>>|import\s|from\s+\S+\s+import\b|def\s|class\s+\w+\s*[(:])|"
    r"\bself\.\w|\bdef\s+\w+\s*\(|\w\(\)|\s=\s[\w\[({'\"]|\breturn\s+\w+\s*$")


def looks_like_code(sentence: str) -> bool:
    """True for a line of a listing rather than a sentence of prose."""
    n = len(sentence.split())
    if len(CODE_CHARS.findall(sentence)) > max(4, n // 3):
        return True
    return len(_CODE_MARKS.findall(sentence)) >= (1 if n < 6 else 2)


def question_kind(question: str) -> str:
    """"definition", "procedure", "reason" or "other"."""
    if _DEFINITION_Q.search(question):
        return "definition"
    if _PROCEDURE_Q.search(question):
        return "procedure"
    if _REASON_Q.search(question):
        return "reason"
    return "other"


#: A question that asks for a name ("What is the order of the notes called?", "What do we
#: call ...?", "What is the term for ...?"): the sentence that gives the name answers it.
_ASKS_NAME = re.compile(r"\bcalled\s*\??\s*$|\bwhat\s+(?:do|does|did|would)\s+\w+\s+call\b"
                        r"|\b(?:name|term|word)\s+for\b", re.IGNORECASE)


def asks_for_name(question: str) -> bool:
    """True when ``question`` asks what something is called (:data:`_ASKS_NAME`)."""
    return _ASKS_NAME.search(question) is not None


def answer_type_bonus(kind: str, sentence: str, q_terms: set[str], *,
                      asks_name: bool = False) -> float:
    """A score adjustment: an answer of the wanted type up, a lead-in to code far down.

    Never a sentence that ends in a colon or only introduces code ("For example, here is
    a recursive method without a base case:"); a glossary or vocabulary entry whose term
    is the question's subject ("base case: A condition that ...") is preferred for "what
    is" questions, a sentence that defines (X is a / refers to / means) next.
    """
    s = sentence.strip()
    if _INTRODUCES_CODE.search(s) and len(s.split()) < 14:
        return -1.0  # "For example, here is a recursive method without a base case:"
    if LEAD_IN_TO_CODE.search(s):  # "... as follows: public int compareTo(Card that) {"
        return -1.0
    if s.endswith(":"):
        # A bare lead-in says nothing; one that makes a claim before showing its listing
        # ("Hash tables are essential for looking up values by key in ... average time:")
        # is shown as that claim (see _render) but ranks below a plain statement.
        return -0.1 if is_claiming_lead_in(s) else -1.0
    if looks_like_code(s):
        return CODE_PENALTY  # a listing shows, it does not say
    if TOC_LINE.search(s):
        return -1.0  # a table of contents or an index line lists topics, it answers nothing
    if TASK.match(s):
        return -0.3  # an exercise asks for the answer; the text around it gives it
    if META.match(s):
        return -0.3  # "This chapter covered ...": a list of topics, not an answer
    if s.endswith("?"):
        return -0.5  # a question asks, it does not answer
    bonus = 0.0
    if kind == "definition":
        head = _GLOSSARY.match(s)
        if head and set(content_terms(head.group(1))) and set(content_terms(head.group(1))) <= q_terms:
            bonus += 0.3
        elif (verb := _DEFINES.search(s)) is not None:
            subject = set(content_terms(s[:verb.start()])) & q_terms
            said = set(content_terms(s[verb.end():])) & q_terms
            names = _NAMES_AFTER.match(verb.group(0)) is not None
            if names:
                subject, said = said, subject  # "A map that ... is called a functor"
            # A verb that names or gives a meaning, with the question's words in what it
            # says rather than in its subject, earns nothing: "Some call it a functor,
            # which means the same as a map" gives "functor" the meaning of the asked-for
            # "map" and does not say what a map is.  A verb that classifies ("A chord is
            # a triad if ...") keeps the bonus, and so does a name given when the question
            # asks for it ("..., which is called the scale" for "What is the order of the
            # notes called?").
            gives = names or _GIVES_MEANING.match(verb.group(0)) is not None
            if not (gives and len(said) > len(subject) and not asks_name):
                bonus += 0.15 if subject else 0.05
    elif kind == "procedure" and _PROCEDURE.search(s):
        bonus += 0.08
    elif kind == "reason" and _REASON.search(s):
        bonus += 0.1
    return bonus


def is_claiming_lead_in(sentence: str) -> bool:
    """A lead-in that makes a claim of its own before its listing or list ("Hash tables
    are essential for looking up values by key in ... average time:"): shown as that claim,
    ending in a full stop; not a bare one ("Here is an example:", "For example, here is a
    recursive method without a base case:")."""
    s = sentence.strip()
    if not s.endswith(":") or (_INTRODUCES_CODE.search(s) and len(s.split()) < 14):
        return False
    return len(content_terms(s)) >= 6 and _claims(s)


def is_glossary_entry(sentence: str) -> bool:
    """True for a vocabulary or glossary entry: "term: A definition ..."."""
    head = _GLOSSARY.match(sentence)
    return bool(head) and len(head.group(1).split()) <= 4


_TERMINAL = re.compile(r"[.!?:;\"'\u201d\u2019)\]]\s*$")


def _showable(sentence: str) -> bool:
    """A sentence that may continue an answer: prose or a list item, not a listing, a
    heading, a caption (:func:`is_caption`), a contents line or a lead-in to code."""
    s = sentence.strip()
    if is_lead_in(s):
        return not _INTRODUCES_CODE.search(s) or len(s.split()) >= 14
    if heading_like(s) and not ITEM.match(s):
        return False
    if LEAD_IN_TO_CODE.search(s) or looks_like_code(s) or TOC_LINE.search(s) or is_caption(s):
        return False
    return not TASK.match(s) and not s.endswith("?")


#: Marks of a line of code that a heading does not hold (">>> t[0] = 'A'", "x = f(y);").
_NOT_HEADING = re.compile(r"[=;{}<>\[\]]|>>>|\w\(|\(\)")


def is_heading(sentence: str) -> bool:
    """A heading the sentences after it stand under: :func:`heading_like`, and not a short
    line of a listing (">>> t[0] = 'A'" is no section title)."""
    return heading_like(sentence) and not _NOT_HEADING.search(sentence)


def heading_like(sentence: str) -> bool:
    """A short line without closing punctuation: a heading or a caption, not a claim."""
    return len(sentence.split()) <= 10 and not _TERMINAL.search(sentence)


# --- prose over fragments ---------------------------------------------------------------------
#: Score change of list fragments run together ("Keyboards and mice • Touch screens"):
#: items without the sentence that says what they are items of.  Like
#: :data:`CODE_PENALTY`: chosen only when no prose comes close.  The form penalties change
#: which sentence a student reads more than the bench's counts; a stronger one (-0.5) cited
#: gold pages less often.
FRAGMENT_PENALTY = -0.3
#: Score change of a title-case line without a full stop: a heading, a caption or a table's
#: header row ("Binary Search Trees (BST)", "Name Type Default Value Notes").
TITLE_PENALTY = -0.3
_COMMENT_UNIT = re.compile(r"^\s*(?:#(?!!)|//|/\*|\*\s|\"\"\"|\'\'\')")
_BULLET = "\u2022"
_SMALL_WORDS = frozenset(
    "a an and as at but by for from in into of on or the to vs via with".split())
_WORD_RE = re.compile(r"[A-Za-z][\w'\-]*")


#: Score change of a unit made only of import statements ("import numpy as np import cv2
#: from collections import deque"): it names libraries, it says nothing about the
#: question.
IMPORT_PENALTY = -0.3
_IMPORT = r"(?:import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*" \
          r"|from\s+[\w.]+\s+import\s+(?:\*|\(?[\w]+(?:\s+as\s+\w+)?(?:\s*,\s*\w+" \
          r"(?:\s+as\s+\w+)?)*\)?)|using\s+[\w.]+\s*;|#include\s*[<\"][\w./]+[>\"])"
_IMPORT_LINE = re.compile(rf"^\s*{_IMPORT}(?:\s*;?\s+{_IMPORT})*\s*;?\s*$")


def is_import_line(sentence: str) -> bool:
    """True for a unit made only of import (``using``, ``#include``) statements."""
    return bool(_IMPORT_LINE.match(sentence))


def is_comment(sentence: str) -> bool:
    """A code comment or a docstring line (not a shebang)."""
    return bool(_COMMENT_UNIT.match(sentence))


#: A question that asks for code or its syntax ("How do you declare an array in Java?",
#: "How do I write a for loop?", "What is the syntax of ...?", "Which command installs
#: ...?"): a line of a listing may answer it.  Other questions want the prose that says
#: what the code does, not its docstrings and comments.
_WANTS_CODE = re.compile(
    r"\b(?:syntax|declare|declaring|declaration|snippet|commands?|code\s+(?:for|to|that)|"
    r"(?:an?|the|some)\s+example\s+(?:of\s+)?code)\b|"
    r"^\s*how\s+(?:do|can|would|should|to)\s+(?:(?:i|you|we|one)\s+)?(?:write|declare|"
    r"define|import|print|call|invoke|initiali[sz]e|instantiate|install|compile|type|code)\b",
    re.IGNORECASE)


def wants_code(question: str) -> bool:
    """True for a question that asks for code or syntax (:data:`_WANTS_CODE`)."""
    return bool(_WANTS_CODE.search(question))


#: Score change of a comment or docstring line (not a listing's statement, which
#: :data:`CODE_PENALTY` ranks down already) in the ranking of quotes
#: (:func:`bookreader.core.quotes.rank_sentences`) for a question that does not ask for
#: code (:func:`wants_code`): it names what the code does in a few words, a sentence of
#: prose on the page says it ("\"\"\" Moving-average filter with a configurable window
#: :param n: number of samples ..." for "What does a moving-average filter do?").  It is
#: still quoted when no prose comes close.  Not applied to the extractive backend's own
#: choice, where PROSE_LEAD decides the lead: there it dropped the comment that carried
#: the answer's words, and fewer answers were correct.
COMMENT_PENALTY = -0.1


def code_penalty(sentence: str, question: str) -> float:
    """:data:`COMMENT_PENALTY` for a comment or docstring unit when ``question`` does not
    ask for code; 0 otherwise."""
    return COMMENT_PENALTY if is_comment(sentence) and not wants_code(question) else 0.0


_MARKED = re.compile(r'^\s*(?:"""|\'\'\'|#(?!!)|//|/\*+)\s*(.*?)\s*(?:"""|\'\'\'|\*/)?\s*$', re.S)


def without_list_number(sentence: str) -> str:
    """``sentence`` without the next list item's number left at its end
    (:data:`~bookreader.core.sentences.NEXT_ITEM_NUMBER`: after a lead-in's colon, a full
    stop or on a line of its own; or after an item that itself opens with the number
    before it, "4. Implement a basic control system to coordinate subsystems 5."): a
    student reading "... their environment: 1." sees a stray digit, not a list.  A number
    that ends a statement ("The answer is 2.") stays."""
    m = NEXT_ITEM_NUMBER.search(sentence)
    if m and m.start() > 0:
        return sentence[: m.start()].rstrip()
    return sentence


def unmarked(sentence: str) -> str:
    """A comment or docstring unit as a reader wants it quoted: without its triple quotes
    or comment marks ("\"\"\"Draw the score on screen\"\"\"" -> "Draw the score on
    screen"); any other sentence as it is.  Only marks go, never words, so a citation
    quoting it still matches the page (citations compare letters and digits)."""
    if not is_comment(sentence):
        return sentence
    m = _MARKED.match(sentence)
    inner = m.group(1).strip() if m else sentence
    return inner or sentence


def reads_as_code(sentence: str) -> bool:
    """A comment, a docstring (its ``:param`` fields included, wherever the unit starts)
    or a line of a listing, rather than a sentence of prose."""
    return bool(is_comment(sentence) or looks_like_code(sentence) or is_code_line(sentence))


def shown_sentence(sentence: str) -> str:
    """``sentence`` as an answer or a quote shows it: a comment or docstring without its
    marks (:func:`unmarked`), and a claim that introduced a listing ending as a statement
    ("... effectiveness:" -> "... effectiveness.")."""
    shown = unmarked(sentence)
    if shown.endswith(":"):
        shown = shown[:-1].rstrip() + "."
    return shown


def is_fragment_list(sentence: str) -> bool:
    """Bullet items run together without a lead-in: the text before the first bullet is
    not a sentence or a lead-in ("Keyboards and mice • Touch screens"), or the unit is a
    short item with no verb ("• Touch screens")."""
    s = sentence.strip()
    if _BULLET not in s:
        return False
    head = s.split(_BULLET, 1)[0].strip()
    if head:
        return not re.search(r"[.:;!?)\]\"'\u201d]$", head)
    rest = s.lstrip(_BULLET + " ")
    return _BULLET in rest or (len(rest.split()) <= 5 and not re.search(r"[.:;!?]", rest))


def is_title_line(sentence: str) -> bool:
    """A heading, caption or table header in title case: at most 12 words, no closing
    full stop, and every word but the small ones ("and", "of") capitalised."""
    s = sentence.strip()
    if re.search(r"[.!?:;\"\u201d]$", s):
        return False
    ws = _WORD_RE.findall(s)
    if not 2 <= len(ws) <= 12:
        return False
    big = [w for w in ws if w.lower() not in _SMALL_WORDS]
    return bool(big) and all(w[0].isupper() for w in big)


#: A figure's description for screen readers printed on the page ("alt=Memory diagram
#: showing two variables a and b pointing to separate arrays ...").
_ALT_TEXT = re.compile(r"^\s*alt\s*=", re.IGNORECASE)


def is_alt_text(sentence: str) -> bool:
    """True for a figure's alternative text: it describes a picture, like a caption."""
    return bool(_ALT_TEXT.match(sentence))


#: A figure's or table's caption: its label and number, then a colon ("Figure 3.7: A
#: simple simulation ...", "Table 2.1. Units of ..."); the label with a colon may also
#: stand inside a unit where the PDF ran the caption into the text beside it.
_CAPTION = re.compile(
    r"^\s*(?:figure|fig\.|table|listing|exhibit|chart)\s+[\dA-Z]+(?:[.\-]\d+)*\s*[:.]\s"
    r"|\b(?:figure|fig\.|table)\s+\d+(?:[.\-]\d+)*\s*:\s", re.IGNORECASE)


def is_caption(sentence: str) -> bool:
    """True for a figure's or table's caption, or a unit that holds one: it labels a
    picture the student cannot see in the answer, it states nothing by itself."""
    return bool(_CAPTION.search(sentence))


def form_penalty(sentence: str) -> float:
    """How much the unit's form says it is not an answer a student can read on its own:
    list fragments run together (:data:`FRAGMENT_PENALTY`), a title-case heading or
    caption (:data:`TITLE_PENALTY`, also a numbered caption: :func:`is_caption`), a line of imports (:data:`IMPORT_PENALTY`); 0 for a
    sentence of prose.  Applied by the extractive backend's choice, not by
    :func:`answer_type_bonus` (a calibration signal and the local tiers' focus read that)."""
    if is_fragment_list(sentence):
        return FRAGMENT_PENALTY
    if is_import_line(sentence):
        return IMPORT_PENALTY
    if is_title_line(sentence) or is_alt_text(sentence) or is_caption(sentence):
        return TITLE_PENALTY
    return 0.0


# --- comparison questions ("What is the difference between == and equals?") ------------
_COMPARISON_Q = re.compile(
    r"\b(?:differences?\s+between|differ(?:ent)?\s+(?:from|between)|compare|comparing)\s+"
    r"(?P<a>.+?)\s+(?:and|with|to|from)\s+(?P<b>(?:(?:the|an?)\s+)?\S.*?)"
    r"\s*(?:\?|$|\s(?:for|in|when|as)\s)"
    r"|^\s*(?P<c>\S.*?)\s+vs\.?\s+(?P<d>.+?)\s*\??\s*$",
    re.IGNORECASE)
_SIDE_FILLER = re.compile(
    r"^(?:the|a|an)\s+|\s+(?:method|operator|function|keyword|statement|class|type)s?$",
    re.IGNORECASE)
#: Added to a sentence that names both sides of a comparison question: the book's sentence
#: that sets them side by side ("The == operator checks whether two references are
#: identical ... The equals method checks ...") is the answer, not one about either alone
#: ("If the strings are equal, their difference is zero.").
COMPARISON_BONUS = 0.15


def comparison_sides(question: str) -> tuple[str, str] | None:
    """The two things a comparison question sets side by side, or None."""
    m = _COMPARISON_Q.search(question)
    if m is None:
        return None
    a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
    sides = tuple(_SIDE_FILLER.sub("", _SIDE_FILLER.sub("", s.strip(" ,.?!"))).strip()
                  for s in (a, b))
    return (sides[0], sides[1]) if all(sides) else None


def names_both(sentence: str, sides: tuple[str, str] | None) -> bool:
    """True when ``sentence`` names both sides of a comparison (:func:`comparison_sides`,
    each side as :func:`names_side` reads it)."""
    if sides is None:
        return False
    return all(names_side(sentence, side, sides) for side in sides)


def names_side(sentence: str, side: str, sides: tuple[str, str]) -> bool:
    """True when ``sentence`` names ``side``, one of the comparison's ``sides``: every
    content word of the side; the side itself when it has none (an operator or a symbol:
    "==", "&&"); and the side's words as a phrase when the two sides differ only in
    words that are no content words: "while loop" and "for loop" are both just "loop" to
    the content words ("while" and "for" are stopwords), so every sentence about loops
    would name both sides."""
    terms = content_terms(side)
    if not terms:
        return side in sentence
    other = next((x for x in sides if x != side), side)
    if set(terms) == set(content_terms(other)) and side.lower() != other.lower():
        phrase = r"\s+".join(re.escape(w) for w in side.lower().split())
        return re.search(rf"(?<![\w-]){phrase}(?:e?s)?(?![\w-])", sentence.lower()) is not None
    have = set(content_terms(sentence))
    return all(t in have for t in terms)
