"""More cards from running prose: what a textbook's paragraphs say without a glossary's
"term: definition" shape.

Each source is tried only on a sentence that made no term card by the rules of
:mod:`~bookreader.core.study.terms` (:func:`prose_cards`):

* a **name given to what the previous sentence described** ("Water left in the sun turns
  slowly to vapour. This process is called evaporation."): the term is read from
  "This/These/They ... is called X" (or "This assumption (commonly called X) ..."), and
  the card's back is both sentences, as the page prints them one after the other in one
  paragraph, so the antecedent travels with the name (:func:`named_antecedent`);
* a **name the sentence gives to what it describes itself** ("... into a file, which is
  called a log", "When ..., it is called X", "..., called X", "X, the <what it is>")
  (:func:`named_in_sentence`);
* a **definition read another way** (:func:`adverb_definition`): without the adverb in
  its verb ("The boiling point is therefore the temperature at which ..."), a framing
  phrase ("In words, ..."), a numbered heading run into it, a closing colon, or "can be
  thought of as"; the back is still the book's own words;
* a **key statement of cause, condition, dependence, reason, purpose or law** about a
  named subject, made a question whose answer is the sentence ("Erosion occurs because
  ..." -> "Why does erosion occur?", "X depends on ..." -> "What does X depend on?", "X is
  useful because ..." -> "Why is X useful?", "The purpose of X is ..." -> "What is the
  purpose of X?", "The first law states that ..." -> "What does the first law state?")
  (:func:`cause_question`).  The subject is the sentence's own words, read as a term by
  :func:`~bookreader.core.study.terms.clean_term`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional, Sequence

from bookreader.core.sentences import STOPWORDS, stem, words
from bookreader.core.study.source import StudySentence
from bookreader.core.study.terms import (
    MIN_DEFINITION_WORDS,
    Definition,
    Statement,
    clean_term,
    points_elsewhere,
    readings,
)

#: "This rule is called X", "These are known as X", "It is sometimes termed X",
#: "This assumption (commonly called X) ...": a name for what the sentence before said.
_NAMED_HERE = re.compile(
    r"^\s*(?:this|these|they|such)\b(?P<noun>(?:\s+[a-z][\w\-]*){0,3}?)\s*"
    r"(?:(?:is|are)\s+(?:(?:also|often|sometimes|usually|typically|commonly|generally|now|"
    r"formally|traditionally|simply)\s+){0,2}|\(\s*(?:(?:also|often|sometimes|usually|"
    r"commonly|now|so)\s+|so-)?)"
    r"(?:called|known\s+as|termed|referred\s+to\s+as)\s+(?:an?\s+|the\s+)?"
    r"[\"'\u201c\u2018]?(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[A-Za-z][\w'\u2019\-]*){0,4}?)"
    r"[\"'\u201d\u2019]?\s*(?P<end>[.,;)]|\s+(?:because|since|in|by|for|as)\b|$)",
    re.IGNORECASE)
#: Words of the previous sentence that leave it without its own subject ("It", "This"
#: again) or open a list or a formula the page shows elsewhere.
_DANGLING_START = re.compile(r"^\s*(?:this|these|it|they|such|here|see|for\s+example|"
                             r"e\.g\.|i\.e\.)\b", re.IGNORECASE)
#: A previous sentence that points back itself ("In these examples, ...", "To outline
#: this algorithm, ...", "Like sentence 47, ..."), or works an example's numbers ("...
#: further than 1.1 from H0"): what it describes is further back, or one case of it.
_ANTECEDENT_POINTS = re.compile(r"\b(?:these|those|above|aforementioned|former|latter)\b|"
                                r"\b(?:sentence|equation|example|figure|table|section)\s+\d|"
                                r"\d\.\d|"
                                r"\bthis\s+(?!is\b|was\b)[a-z]", re.IGNORECASE)
#: Longest antecedent sentence worth carrying, in words.
MAX_ANTECEDENT_WORDS = 45


def named_antecedent(sentence: StudySentence, before: Optional[StudySentence]
                     ) -> Optional[tuple[str, StudySentence]]:
    """(term, the two sentences as one) when ``sentence`` names what ``before`` says,
    or None.  ``before`` must be the sentence just before it in the same paragraph of the
    same page (so the two are one excerpt of the page), a whole sentence with a subject of
    its own, not a lead-in to a list or formula."""
    m = _NAMED_HERE.match(sentence.text)
    if m is None or before is None:
        return None
    if (before.page != sentence.page or before.paragraph != sentence.paragraph
            or before.position != sentence.position - 1 or before.glossary):
        return None
    prev = before.text.strip()
    if (not prev[:1].isupper() or not prev.endswith((".", "!"))
            or _DANGLING_START.match(prev) or _ANTECEDENT_POINTS.search(prev)
            or sentence.text.rstrip().endswith(":")
            or not MIN_DEFINITION_WORDS <= len(words(prev)) <= MAX_ANTECEDENT_WORDS):
        return None
    term = clean_term(m.group("term"))
    if term is None or term.lower() in ("to", "so"):
        return None
    joined = replace(sentence, text=f"{prev} {sentence.text}", offset=before.offset)
    return term, joined


#: A symbol: one letter alone, or a mathematical letter.
_MATH = re.compile("^[A-Za-z]$|[\U0001D400-\U0001D7FF\u0370-\u03ff\u2100-\u214F]")
#: Words that leave a noun phrase pointing at something outside the sentence.
_POINTER_WORD = re.compile(r"\b(?:this|that|these|those|it|they|above|below|following|"
                           r"such|here)\b", re.IGNORECASE)
#: "When <clause>, it is called X" (a reason, "Because ...", says why, not what).
_CLAUSE_NAMES = re.compile(r"^\s*(?:when|whenever|if)\b[^,]{10,},\s+(?:it|this|they|"
                           r"these)\s+(?:is|are)\s+(?:\w+\s+)?(?:called|known\s+as|termed)\s",
                           re.IGNORECASE)
#: "Shapes like this, with four equal sides ..., are called X": what follows
#: "like this" says what the things are.
_LIKE_THIS = re.compile(r"\blike\s+(?:this|that|these|those)(?:\s+one)?\s*,?\s+"
                        r"(?P<more>(?:with|that|which|who|where)\b[^.;]{8,}?)\s*,?\s+"
                        r"(?:is|are)\s+(?:\w+\s+)?(?:called|known\s+as|termed)\s",
                        re.IGNORECASE)
#: After the name: what it is, in apposition ("... is referred to as the yield, the
#: share of the input that ...").
_APPOSITION_AFTER = re.compile(r"^[\"'\u201d\u2019]?\s*(?:\([^)]{1,20}\)\s*)?,\s+(?:the|an?)\s+"
                               r"[\w\-]+(?:\s+[\w\-]+){3,}")
#: "... is referred to as X, the <what X is>": the name, then its definition.
_NAME_THEN_APPOSITION = re.compile(
    r"\b(?:called|known\s+as|termed|referred\s+to\s+as)\s+(?:the\s+|an?\s+)?[\"'\u201c\u2018]?"
    r"(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[A-Za-z][\w'\u2019\-]*){0,4}?)[\"'\u201d\u2019]?"
    r"(?:\s*\([^)]{1,20}\))?\s*,\s+(?:the|an?)\s+[\w\-]+(?:\s+[\w\-]+){3,}")
#: "... dimensionless quantities, called force coefficients.", "... at the walls (also
#: known as Neumann boundary conditions)": a name given to the noun phrase just before.
_COMMA_CALLED = re.compile(
    r"(?:,|\(\s*also)\s+(?:(?:also|often|sometimes|usually|commonly|now)\s+)?(?:called|known\s+as|"
    r"termed)\s+(?:an?\s+|the\s+)?[\"'\u201c\u2018]?(?P<term>[A-Za-z][\w'\u2019\-]*(?:\s+[A-Za-z]"
    r"[\w'\u2019\-]*){0,4}?)[\"'\u201d\u2019]?\s*(?:[.,;:)]|\s+(?:in|which|that|because|since|"
    r"for|where)\b|$)", re.IGNORECASE)
#: After the name: a reason for it ("..., because it signals ...").
_BECAUSE_AFTER = re.compile(r"^[\"'\u201d\u2019]?\s*,?\s*(?:because|since)\s+\S+(?:\s+\S+){3,}",
                            re.IGNORECASE)


def named_in_sentence(text: str) -> Optional[Definition]:
    """A name the sentence gives to what it describes itself, where the rules of
    :func:`~bookreader.core.study.terms.readings` saw only a pointing lead ("...,
    which is called X"): the description before ", which" is a noun phrase of the same
    sentence without a pointer ("keep the notes in a book, which is called a
    log"); a "When <clause>, it is called X" sentence; "Xs like this, with <what they
    have>, are called Y"; a name followed by what it is in apposition ("... is referred to
    as X, the proportion of ..."); or a name followed by the reason for it ("A variable used this
    way is called a flag, because it signals ...")."""
    m = _NAME_THEN_APPOSITION.search(text)
    if m is not None:
        term = clean_term(m.group("term"))
        if term is not None:
            return Definition(term, text, "called")
    m = _COMMA_CALLED.search(text)
    if m is not None and not _POINTER_WORD.match(text):
        phrase = re.split(r"[,;:(]", text[:m.start()])[-1].split()[-6:]
        term = clean_term(m.group("term"))
        if (term is not None and len(phrase) >= 2 and not _POINTER_WORD.search(" ".join(phrase))
                and not any(_MATH.search(w) for w in phrase)
                # "Another type of operation, called X, will be central": no more
                # than that X is one more of its kind
                and not {w.lower() for w in phrase} & {"another", "next", "previous", "one",
                                                       "other", "second", "first"}):
            return Definition(term, text, "called")
    for d, flags in readings(text):
        if d.form != "called" or flags != ("pointing_lead",):
            continue
        at = text.find(d.term)
        after = text[at + len(d.term):] if at >= 0 else ""
        lead = text[:at] if at >= 0 else text
        m = re.search(r",\s+which\s+(?:is|are)\s+(?:\w+\s+)?(?:called|known\s+as|termed)\s",
                      lead, re.IGNORECASE)
        if m is not None:
            # the noun phrase "which" follows: the last words before it
            segment = " ".join(re.split(r"[,;:]", lead[:m.start()])[-1].split()[-6:])
            if (len(words(segment)) >= 3 and not _POINTER_WORD.search(segment)
                    and not _POINTER_WORD.match(text)):  # "This means it must be ..."
                return Definition(d.term, text, d.form)
            continue
        clause = _CLAUSE_NAMES.match(text)
        if ((clause and not _POINTER_WORD.search(text[:text.find(",")]))
                or _LIKE_THIS.search(lead) or _APPOSITION_AFTER.match(after)
                or (_BECAUSE_AFTER.match(after) and not re.match(
                    r"^\s*(?:this|these|it|they)\s+(?:is|are)\b", text, re.IGNORECASE))):
            return Definition(d.term, text, d.form)
    return None


#: Adverbs and connectives that may stand between "is" and what the subject is.
_COPULA_ADVERB = re.compile(
    r"\b(?P<verb>is|are)\s+(?:simply|just|therefore|thus|hence|essentially|basically|"
    r"actually|commonly|usually|generally|typically|formally|precisely|in\s+fact|"
    r"in\s+essence|by\s+definition)\s*,?\s+(?=(?:an?|the|one|any|defined)\b)",
    re.IGNORECASE)


#: "X can be understood as a ...": what X is, said as a way to see it.
_SEEN_AS = re.compile(r"\b(?:can|may)\s+be\s+(?:understood|thought\s+of|interpreted|viewed|"
                      r"regarded)\s+as\s+(?=(?:an?|the)\s)", re.IGNORECASE)
#: A short phrase before the subject that frames a definition ("In words, a ratio is
#: ...", "More accurately, the median is ...", "In chemistry, a mole is ...").
_FRAMING = re.compile(
    r"^(?P<lead>(?:in\s+(?:other\s+)?words|more\s+(?:accurately|precisely|formally|generally)|"
    r"formally(?:\s+stated)?|informally|in\s+general|(?:put|stated)\s+simply|simply\s+put|"
    r"roughly\s+speaking|intuitively|in\s+short|in\s+essence|in\s+(?:[A-Z][\w\-]*|[a-z][\w\-]*)"
    r"(?:\s+[a-z][\w\-]*){0,2}))\s*,\s+(?P<rest>[A-Za-z].+)$", re.IGNORECASE)
#: Words a framing "In ...," phrase may not hold: it then sets a case, a place of the
#: text or a time ("In this example,", "In practice,", "In the next section,").
_FRAME_NOT = frozenset("""this that these those the our my your his her their its each
particular practice fact turn addition contrast summary order example examples case cases
figure table equation chapter section sentence argument which what some any general
other short essence words sense way""".split())
#: A section number and heading run into the sentence that follows them ("2.1.2
#: Probability A probability is a number ...").
_SECTION_NUMBER = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s+")


def _variants(text: str) -> list[tuple[str, str]]:
    """Ways to read ``text`` as a plain definition: (text to read, the book's words the
    back is): without the adverb in its verb, without a framing phrase before its
    subject, without a heading run into it, with a closing colon read as a full stop."""
    out = []
    plain = _COPULA_ADVERB.sub(lambda m: m.group("verb") + " ", text, count=1)
    if plain != text:
        out.append((plain, text))
    # "Thus, a map can be understood as a model of ..." read as "... is a ..."
    lead = re.match(r"^(?:thus|hence|therefore|so|in\s+general)\s*,\s+", text, re.IGNORECASE)
    rest = text[lead.end():] if lead else text
    seen_as = _SEEN_AS.sub("is ", rest, count=1)
    if seen_as != rest:
        out.append((seen_as[0].upper() + seen_as[1:], text))
    m = _FRAMING.match(text)
    if m and (not m.group("lead").lower().startswith("in ") or m.group("lead").lower() in (
            "in words", "in other words", "in general", "in short", "in essence") or not (
            set(m.group("lead").lower().split()[1:]) & _FRAME_NOT)):
        rest = m.group("rest")
        out.append((rest[0].upper() + rest[1:], text))
    ws = _SECTION_NUMBER.sub("", text, count=1).split()
    numbered = len(ws) < len(text.split())
    for i in range(1, min(len(ws) - 3, 9)):
        if ws[i][:1].isupper() and (numbered or ws[i - 1][:1].islower()):
            tail = " ".join(ws[i:])
            out.append((tail, tail))
            if not numbered:
                break
    if text.rstrip().endswith(":") and len(words(text)) >= 8:
        out.append((text.rstrip()[:-1] + ".", text))
    return out


def _heading_words(text: str, back: str) -> set[str]:
    head = text[:len(text) - len(back)] if back != text and text.endswith(back) else ""
    return {stem(w.lower()) for w in words(head)}


def adverb_definition(text: str) -> Optional[Definition]:
    """The term ``text`` defines once read another way (:func:`_variants`: "X is simply a
    ..." read as "X is a ...", "In words, X is ..." as "X is ..."), with the book's own
    words as the back; None when no way reads as a definition.  A heading run into the
    sentence counts only when the term it defines shares a word with the heading."""
    for plain, back in _variants(text):
        heading = _heading_words(text, back)
        for d, flags in readings(plain):
            first = d.term.split()[0].lower()
            if first.endswith("ing") or (len(d.term.split()) == 1 and re.match(
                    r"^\s*the\s+[a-z]+\s", plain, re.IGNORECASE)):
                continue  # "Including the term is ...", "The solution is simply ...": no term
            if back != text and not heading & {stem(w.lower()) for w in d.term.split()}:
                continue
            if any(w[:1].isupper() and w.lower() in STOPWORDS for w in d.term.split()[1:]):
                continue  # a heading's word ran into the term: "ABC The annual survey"
            if not flags and d.form == "defining":
                # the book's own case: "In words, a ratio is ..." defines "ratio"
                low = d.term[:1].lower() + d.term[1:]
                term = low if d.term not in back and low in back else d.term
                return Definition(term, back, d.form)
    return None


#: Adverbs a key statement's verb may carry ("X usually occurs when ...").
_VERB_ADVERBS = (r"(?:(?:also|usually|often|generally|typically|only|mainly|largely|mostly|"
                 r"always|very|strongly|directly|inversely|linearly|therefore)\s+){0,2}")
#: The heads a law-like subject has: "X states that ..." is asked of these only (a person
#: or a book "states" too).
_LAW_HEADS = frozenset("""law laws principle principles theorem theorems equation equations
rule rules hypothesis lemma postulate postulates axiom axioms model models assumption
assumptions theory conjecture condition conditions paradox identity definition""".split())
_CAUSE = re.compile(
    r"^\s*(?P<det>(?:a|an|the)\s+)?"
    r"(?P<term>[A-Za-z\u00c0-\u024f][\w'\u2019\-]*(?:\s+[\w'\u2019\-]+){0,4}?)"
    r"(?:\s*\([^)]{1,30}\))?\s+" + _VERB_ADVERBS +
    r"(?P<verb>(?:can\s+|may\s+)?(?:occurs?|arises?|happens?|results?)\s+(?:because|when|whenever)|"
    r"(?:is|are)\s+" + _VERB_ADVERBS + r"(?:caused\s+by|proportional\s+to|determined\s+by|"
    r"affected\s+by|governed\s+by|responsible\s+for)|"
    r"depends?\s+(?:up)?on|leads?\s+to|results?\s+in|states?\s+that|tells?\s+us(?:\s+about)?|"
    r"impl(?:ies|y)|captures?|reflects?|quantif(?:ies|y)|explains?)\s+(?P<rest>.+)$",
    re.IGNORECASE)
#: "X is useful because ...", "Such samples are not truly random because ...".
_WHY = re.compile(
    r"^\s*(?P<det>(?:a|an|the)\s+)?"
    r"(?P<term>[A-Za-z\u00c0-\u024f][\w'\u2019\-]*(?:\s+[\w'\u2019\-]+){0,4}?)"
    r"\s+(?P<be>is|are)\s+(?P<pred>(?:not\s+)?(?:[a-z][\w\-]*\s+){0,2}[a-z][\w\-]*)\s*,?\s+"
    r"because\s+(?P<rest>\S+(?:\s+\S+){3,})$", re.IGNORECASE)
#: Small words the answer may not open with: "X depends on it", "X leads to this".
_EMPTY_REST = re.compile(r"^\s*(?:it|this|that|these|those|them|which|what|whether|how|"
                         r"something|anything|"
                         r"the\s+(?:same|other|former|latter))\b", re.IGNORECASE)
_POINTS_BACK = re.compile(r"\b(?:this|these|those|above|below|aforementioned|former|latter)\b|"
                          r"\bthe\s+(?:following|next|previous|preceding)\s+(?!generation)",
                          re.IGNORECASE)


def _plain_thing(det: str, subject: str) -> bool:
    """A subject that names a thing of the page, not a term: one plain lower-case word
    after "the" ("the force", "the error"), or one plural word alone ("Exceptions arise
    when ...")."""
    ws = subject.split()
    return len(ws) == 1 and ((det == "the" and re.fullmatch(r"[a-z][a-z\-]*", ws[0]) is not None)
                             or (not det and ws[0].lower().endswith("s")))


#: A conclusion's or a reminder's opening before a statement ("As we have seen, X occurs
#: when ...", "Therefore, X can result when ...").
_STATEMENT_LEAD = re.compile(r"^(?:as\s+we\s+have\s+seen|as\s+noted|therefore|thus|hence|"
                             r"in\s+general|in\s+short|in\s+practice)\s*,\s+(?=[a-z])",
                             re.IGNORECASE)


def cause_question(text: str) -> Optional[Statement]:
    """The question ``text`` answers as a statement of cause, condition, dependence or
    law about a named subject, or None.  An opening such as "As we have seen," is read
    past; the answer is still the whole sentence."""
    lead = _STATEMENT_LEAD.match(text.strip())
    if lead is None:
        return _cause_question(text)
    rest = text.strip()[lead.end():]
    found = _cause_question(rest, opens=False)
    return None if found is None else replace(found, back=text)


#: The question a statement's verb phrase asks, by how the phrase ends.
_BY_ENDING = {
    "caused by": "What causes {named}?",
    "proportional to": "What {be} {named} proportional to?",
    "determined by": "What determines {named}?",
    "affected by": "What affects {named}?",
    "governed by": "What governs {named}?",
    "responsible for": "What {be} {named} responsible for?",
}


def _cause_question(text: str, opens: bool = True) -> Optional[Statement]:
    """``opens``: ``text`` is a sentence's opening (a capital first)."""
    s = text.strip()
    if (opens and not s[:1].isupper()) or not s.rstrip("\"'\u201d)").endswith((".", "!")):
        return None
    m = _CAUSE.match(s)
    if m is None:
        return _why_question(s) or _aspect_question(s)
    if len(words(m.group("rest"))) < MIN_DEFINITION_WORDS:
        return None
    if (_POINTS_BACK.search(s) or _EMPTY_REST.match(m.group("rest"))
            or points_elsewhere(m.group("term"))):
        return None
    # "Glaciers1 are ...": a footnote mark is not part of the subject
    subject = clean_term(re.sub(r"(?<=[a-z])\d{1,2}\b", "", m.group("term")))
    if subject is None:
        return None
    det = (m.group("det") or "").strip().lower()
    if _plain_thing(det, subject):
        return None
    verb = " ".join(m.group("verb").lower().split())
    modal = verb.split()[0] if verb.split()[0] in ("can", "may") else ""
    verb = verb.split(" ", 1)[1] if modal else verb
    plural = verb.split()[0] in ("are", "occur", "arise", "happen", "depend", "lead",
                                 "result", "state", "tell", "imply", "capture", "reflect",
                                 "quantify", "explain")
    if verb.startswith(("is ", "are ")) and verb.split()[0] == "are":
        plural = True
    named = f"{det} {subject}" if det else subject
    aux, be = ("do", "are") if plural else ("does", "is")
    head = "" if verb.startswith(("is ", "are ")) else re.sub(
        r"ies$", "y", verb.split()[0]).rstrip("s")
    if head in ("occur", "arise", "happen") and verb.split()[-1] != "in":
        when = verb.split()[-1]
        q = f"{'Why' if when == 'because' else 'When'} {modal or aux} {named} {head}?"
    elif (asked := next((t for end, t in _BY_ENDING.items() if verb.endswith(end)),
                        None)) is not None:
        q = asked.format(be=be, named=named)
    elif head == "depend":
        q = f"What {aux} {named} depend on?"
    elif head == "lead":
        q = f"What {aux} {named} lead to?"
    elif head == "result" and verb.split()[-1] in ("because", "when", "whenever"):
        q = (f"{'Why' if verb.split()[-1] == 'because' else 'When'} {modal or aux} {named} "
             "result?")
    elif head == "result":
        q = f"What {aux} {named} result in?"
    elif head == "tell":
        q = f"What {aux} {named} tell us{' about' if verb.endswith('about') else ''}?"
    elif head in ("imply", "capture", "reflect", "quantify", "explain"):
        q = f"What {aux} {named} {head}?"
    elif head == "state" and subject.split()[-1].lower() in _LAW_HEADS:
        q = f"What {aux} {named} state?"
    else:
        return None
    return Statement(q[0].upper() + q[1:], subject, text)


#: "The solution to X is ...", "The purpose of X is ...", "The idea behind X is ...".
_ASPECT = re.compile(
    r"^\s*the\s+(?P<adj>(?:main|key|basic|central|chief)\s+)?(?P<noun>solution|purpose|goal|aim|"
    r"advantage|disadvantage|idea|reason|role|benefit|drawback|downside|function|intuition)"
    r"\s+(?P<prep>of|to|for|behind)\s+(?P<what>[^,;:]{3,60}?)\s*(?:,\s*(?:then|however|thus|"
    r"therefore),\s*)?\s+(?P<be>is|are|was)\s+(?P<rest>(?!not\b)\S+(?:\s+\S+){3,})$",
    re.IGNORECASE)


def _aspect_question(s: str) -> Optional[Statement]:
    """"What is the solution to X?" from "The solution to X is ...", where X is a named
    subject (not a thing of the page, "the problem", nor one pointed at, "this formula")
    and the answer does not work an example's numbers."""
    m = _ASPECT.match(s)
    if m is None or _POINTS_BACK.search(s) or re.search(r"\d", m.group("rest")):
        return None
    what = " ".join(m.group("what").split())
    ws = what.split()
    det = ws[0].lower() if ws[0].lower() in ("the", "a", "an") else ""
    core = " ".join(ws[1:]) if det else what
    if (len(ws) > 6 or not core or _POINTER_WORD.search(what) or (det == "the" and len(
            core.split()) <= 2 and core.islower()) or clean_term(core.split()[-1]) is None
            and len(core.split()) == 1):
        return None
    adj = (m.group("adj") or "").lower()
    return Statement(f"What is the {adj}{m.group('noun').lower()} {m.group('prep').lower()} "
                     f"{what}?", core, s)


#: Words that open a guess, not a subject ("Maybe Paris is ...").
_HEDGES = frozenset("maybe perhaps probably possibly certainly surely".split())


def _why_question(s: str) -> Optional[Statement]:
    """"Why is X <so>?" from "X is <so> because ...", about a named subject (not a thing
    of the page, "the sentence is true because ...", nor a word pointing back)."""
    m = _WHY.match(s)
    if m is None or _POINTS_BACK.search(s) or points_elsewhere(m.group("term")):
        return None
    pred = m.group("pred")
    if set(pred.lower().split()) & {"called", "named", "termed", "known", "used", "so",
                                    "this", "that", "it", "different", "same", "also"}:
        return None  # a name ("are called X because"), a use, or a comparison with the text
    if s.rstrip().endswith("!"):
        return None  # an exclamation about the example at hand
    subject = clean_term(m.group("term"))
    det = (m.group("det") or "").strip().lower()
    ws = (subject or "").split()
    if det == "the" and len(ws) == 2 and ws[0].islower() and len(ws[1]) <= 3:
        return None  # one instance named by its symbol: "the sentence Fb"
    if subject is None or subject.split()[0].lower() in _HEDGES or (
            not det and subject.split()[0].endswith("ing")) or _plain_thing(det, subject) or (
            det == "the" and len(subject.split()) <= 2 and subject.islower()):
        return None
    named = f"{det} {subject}" if det else subject
    be = m.group("be").lower()
    q = f"Why {be} {named} {pred}?"
    return Statement(q, subject, s)


def prose_cards(sentences: Sequence[StudySentence], taken: set[int]
                ) -> list[tuple[StudySentence, str, str, str, str, str]]:
    """Cards from the sentences whose positions are not in ``taken`` (they made no term
    card): (sentence to cite, kind "term" or "question", front, back, term, form), in
    reading order.  A term card's sentence may be two sentences as one (:func:`named_antecedent`)."""
    out = []
    previous: Optional[StudySentence] = None
    for s in sentences:
        before, previous = previous, s
        if s.position in taken or s.glossary:
            continue
        named = named_antecedent(s, before)
        if named is not None:
            term, joined = named
            out.append((joined, "term", term, joined.text, term, "antecedent"))
            continue
        d = named_in_sentence(s.text) or adverb_definition(s.text)
        if d is not None:
            out.append((s, "term", d.term, d.back, d.term, d.form))
            continue
        q = cause_question(s.text)
        if q is not None:
            out.append((s, "question", q.question, q.back, q.subject, "question"))
    return out
