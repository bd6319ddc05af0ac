"""Does a verified selected-text answer address the question?  And does the question name
what the selection never states?

The grounding check accepts any sentence copied from the selection, so a small model that
answers from the wrong sentence is shown: "When did General Sejm make Vilnius its
permanent seat?" (a SQuAD question with no answer in the selection) was answered "In 1573
the city gave its name to the Warsaw Confederation ...", verified and cited.  Such an
answer talks about something else: neither its sentences nor the selection's sentences
they come from hold the question's words, while another sentence of the selection does.
:func:`off_target` says so; the answer is then replaced by the selection's sentence that
clearly answers (:func:`bookreader.core.selection_answer.selection_answer`, a strict
gate) or by the fixed fallback.  So is an answer from a sentence that
comes before the selection first names the question's name (:func:`names_only_after`:
"How much did *Forbes* lose?" answered "30%" from "It suffered about 30% loss", Forbes
named only later).

:func:`answer_span` reads a model's answer as an extractive span (the words it adds to
the question); :func:`answered_from` finds the selection sentence it was taken from.

:func:`names_absent_number` is a check made before any model runs: a question that names
a number (a year, a count) the selection never writes asks about something the selection
does not state ("Who passed the Scotland Act of 1988?" over a text about the 1998 act;
"Who did the Normans besiege in the 11th century?" over a siege of 1107).  On the 200
SQuAD 2.0 cases of ``bench/make_squad_cases.py`` it holds for 8 unanswerable questions and
no answerable one.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from bookreader.core.citations import strip_citations
from bookreader.core.sentences import content_terms, numbers, split_sentences

log = logging.getLogger(__name__)

#: An answer whose sentences (with the selection's sentences they come from) hold at most
#: this share of the question's content words ...
MAX_RELEVANCE = 0.25
#: ... while one sentence of the selection holds at least this much more, is off target.
MIN_GAP = 0.5
#: Fewer of the question's content words in the selection than this: nothing to judge by.
MIN_TERMS = 2

_WHY = re.compile(r"^\s*why\b", re.I)
#: A sentence opening with one of these goes on about the sentence before it ("For
#: example, consider the algorithm quicksort. *This* solves the problem of sorting a
#: list ...").
_ANAPHOR = re.compile(r"^\W*(?:this|these|that|those|it|its|he|she|they|his|her|their|such)\b",
                      re.I)


#: An operator in the question ("the difference between == and equals"): what it asks
#: about is not a word, so the share of its words says too little.
_OPERATOR = re.compile(r"[=<>!&|+*/%^~]")


def _terms(text: str) -> set[str]:
    return set(content_terms(text))


def relevance(question: str, answer: str, selection: str) -> tuple[float, float]:
    """``(answer's, best sentence's)`` share of the question's content words that the
    selection holds.  The answer's share counts each of its sentences together with the
    selection sentence it comes from (the one sharing most content words with it), the
    sentence before when that one opens with "This", "It", ... or the question asks why
    (it states what is explained), and the sentence after when it opens so; the best
    sentence's share is the highest of any single sentence of the selection."""
    sel_sents = [" ".join(s.split()) for s in split_sentences(selection)]
    sel_terms = [_terms(s) for s in sel_sents]
    wanted = _terms(question) & set().union(*sel_terms) if sel_terms else set()
    if not wanted:
        return 1.0, 0.0
    best = max(len(wanted & t) / len(wanted) for t in sel_terms)
    why = bool(_WHY.match(question))
    mine = 0.0
    for sentence in split_sentences(strip_citations(answer)):
        own = _terms(sentence)
        words = " ".join(sentence.split()).strip(" .!").lower()
        # The selection's sentences holding the answer word for word ("Yes."), else the
        # one sharing most content words with it.
        pattern = re.compile(r"(?<!\w)%s(?!\w)" % re.escape(words)) if words else None
        sources = [k for k, x in enumerate(sel_sents) if pattern and pattern.search(x.lower())]
        if not sources and own:
            overlaps = [len(own & t) for t in sel_terms]
            k = max(range(len(sel_terms)), key=overlaps.__getitem__)
            sources = [k] if overlaps[k] else []
        for k in sources or [None]:
            held = set(own)
            if k is not None:
                held |= sel_terms[k]
                if k > 0 and (why or _ANAPHOR.match(sel_sents[k])):
                    held |= sel_terms[k - 1]
                if k + 1 < len(sel_sents) and _ANAPHOR.match(sel_sents[k + 1]):
                    held |= sel_terms[k + 1]
            mine = max(mine, len(wanted & held) / len(wanted))
    return mine, best


#: A capitalised word of a question past its first word: a name ("Forbes", "Harvard's").
_NAME = re.compile(r"(?<=\s)[A-Z][\w-]*")


def _answer_source_index(answer: str, sentences: list[str]) -> int | None:
    """The index of the selection sentence ``answer``'s first sentence comes from: the
    first one holding it word for word ("30%"), else the one sharing most content words
    with it (None when none shares any)."""
    parts = split_sentences(strip_citations(answer))
    if not parts:
        return None
    flat = " ".join(parts[0].split()).strip(" .!").lower()
    if flat:
        pattern = re.compile(r"(?<!\w)%s(?!\w)" % re.escape(flat))
        for k, x in enumerate(sentences):
            if pattern.search(x.lower()):
                return k
    own = _terms(parts[0])
    overlaps = [len(own & _terms(x)) for x in sentences]
    if not overlaps or not max(overlaps):
        return None
    return overlaps.index(max(overlaps))


def names_only_after(question: str, answer: str, selection: str) -> str:
    """A name of ``question`` that the selection first writes after the sentence
    ``answer`` comes from, or "".

    A text names what it speaks of before it refers to it ("Harvard has ... It suffered
    about 30% loss"): a sentence cannot be about a name that comes only later.  "How much
    of a loss did *Forbes* suffer in 2008?" is not answered by "30%" from "It suffered
    about 30% loss in 2008-09" when Forbes is named only in a later sentence ("Forbes in
    March 2009 estimated the loss ..."): the answer speaks of something else."""
    sentences = [" ".join(x.split()) for x in split_sentences(selection)]
    k = _answer_source_index(answer, sentences)
    if k is None:
        return ""
    upto = " ".join(sentences[:k + 1]).lower()
    after = " ".join(sentences[k + 1:]).lower()
    for m in _NAME.finditer(" ".join(question.split())):
        name = re.sub(r"['\u2019]s$", "", m.group(0)).lower()
        word = re.compile(r"\b%s" % re.escape(name))
        if word.search(after) and not word.search(upto):
            return m.group(0)
    return ""


def off_target(question: str, answer: str, selection: str, embedder: Any = None) -> bool:
    """True when ``answer`` (a verified selected-text answer) does not address
    ``question``: its sentences and their sources in the selection hold at most
    :data:`MAX_RELEVANCE` of the question's content words that the selection holds, and
    one sentence of the selection holds at least :data:`MIN_GAP` more (a question with
    fewer than :data:`MIN_TERMS` such words, or naming an operator, is not judged so); or
    it comes from a
    sentence before the selection first names the question's name
    (:func:`names_only_after`)."""
    if names_only_after(question, answer, selection):
        log.info("Selected text: the answer comes before the selection names the question's "
                 "name")
        return True
    wanted = _terms(question) & _terms(selection)
    if len(wanted) < MIN_TERMS or _OPERATOR.search(question):
        return False
    mine, best = relevance(question, answer, selection)
    if mine <= MAX_RELEVANCE and best - mine >= MIN_GAP:
        log.info("Selected text: the answer does not address the question (%.2f of its "
                 "words, %.2f in the selection's best sentence)", mine, best)
        return True
    return False


_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.I)
_SPELLED = ("zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
            "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
            "nineteenth twentieth twenty-first").split()


def _holds_ordinal(selection: str, digits: str) -> bool:
    low = selection.lower()
    n = int(digits)
    return bool(re.search(r"\b%s(?:st|nd|rd|th)\b" % n, low)) or (
        n < len(_SPELLED) and re.search(r"\b%s\b" % _SPELLED[n], low) is not None)


def names_absent_number(question: str, selection: str) -> bool:
    """True when ``question`` names a number written with digits ("1988", "231") or an
    ordinal ("the 11th century") that the selection does not hold (a number inside one of
    its words counts: "1980s"; an ordinal may be spelled out: "eleventh")."""
    ordinals = _ORDINAL.findall(question)
    wanted = {n.replace(",", "") for n in numbers(_ORDINAL.sub(" ", question))}
    if not wanted and not ordinals:
        return False
    held = {n.replace(",", "") for n in numbers(selection)}
    flat = selection.replace(",", "")
    missing = [n for n in wanted if n not in held and n not in flat]
    missing += [n for n in ordinals if not _holds_ordinal(selection, n)]
    if missing:
        log.info("Selected text: the question names a number the selection does not hold")
        return True
    return False


#: What a model's answer adds to the question must be at least this many content words ...
MIN_SPAN_TERMS = 1


def answer_span(question: str, answer: str) -> tuple[str, set[str]]:
    """``(first sentence, span)`` of a model's selected-text ``answer``: its first sentence
    and that sentence's content words the question does not hold.

    A small model often answers by restating the question with the answer put in ("Full
    size working engines on *ships* sometimes use ..." for "... on what vehicles ...?"),
    or by copying the words of one selection sentence.  The words it adds to the question
    are then its answer, read as an extractive span."""
    from bookreader.core.model_output import parse_answer

    text = strip_citations(parse_answer(answer).text) if answer else ""
    sentences = split_sentences(text)
    if not sentences:
        return "", set()
    first = " ".join(sentences[0].split())
    return first, set(content_terms(first)) - _terms(question)


#: A span of at least this many words still points at a sentence that lacks one of them.
LONG_SPAN_TERMS = 6


def answered_from(span: set[str], sentence: str) -> bool:
    """True when every word of a model answer's ``span`` (see :func:`answer_span`) is in
    ``sentence``: the model found its answer there.  A long span (:data:`LONG_SPAN_TERMS`
    words) may lack one: a copy with one word re-inflected ("... *becoming* a major
    factor" for "... became a major factor") or one word of the model's own is still a
    copy of that sentence."""
    if len(span) < MIN_SPAN_TERMS:
        return False
    lacking = len(span - _terms(sentence))
    return lacking == 0 or (lacking == 1 and len(span) >= LONG_SPAN_TERMS)
