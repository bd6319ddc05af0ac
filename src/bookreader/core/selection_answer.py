"""Selected text: the selection's own sentence, quoted, when it clearly answers.

A local model that means to answer from a selection often writes an answer the checks
cannot show: it restates the question ("How should you compare two strings?"), or
paraphrases a correct fact in words the grounding check does not accept.  The selection
usually holds the answer in one sentence of its own.  When one sentence of the selection
clearly answers the question, that sentence, quoted verbatim with its citation, is shown
instead of the rejected answer (:func:`selection_answer`) or under a verified answer that
does not already say it (:func:`beside_answer`).  It is copied text of the selection, so it
is grounded by construction, and nothing outside the selection is read (no store, no
retrieval).

"Clearly answers" (:func:`answering_sentence`) is a strict gate, since the same quote must
not answer a question whose answer is elsewhere in the book.  One of the two sentences the
relevance ranking (:func:`bookreader.core.quotes.rank_sentences`) puts first must:

* hold :data:`MIN_COVERAGE` of the question's content words and one word more (it adds
  something to the question);
* hold every number, capitalised name and code identifier of the question
  (:func:`exact_terms`): "What does compareTo return?" is not answered by a sentence
  about casting;
* for "Who ...?", name someone the question does not
  (:func:`bookreader.core.selection_types.names_nobody`, the same test as for the model's
  own answer);
* for "What is X?" (not "What is X called?"), say what X is
  (:func:`bookreader.core.selection_types.defines`).

A sentence running from a colon into a listing is read as its claim alone
(:func:`claims_before_listings`).  The fixed fallback stays the answer when no sentence
passes.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any, Optional

from bookreader.core import quotes
from bookreader.core.citations import CitationSource, strip_citations, verify_answer
from bookreader.core.selection_types import NAMING_Q, defines, names_nobody
from bookreader.core.sentences import content_terms, numbers, split_sentences, stem, words

log = logging.getLogger(__name__)

#: Share of the question's content words the quoted sentence must hold: below it, a
#: sentence sharing a topic word or two with the question is quoted for a question it does
#: not answer.
MIN_COVERAGE = 0.65
#: How many of the best-ranked sentences are tried.
CANDIDATES = 2
#: The line that opens such an answer.
LEAD = "The selected text says:"

#: A code identifier ("compareTo", "max_value"): a question naming one asks about it.
_IDENTIFIER = re.compile(r"^(?:[a-z]+[A-Z]\w*|\w*_\w*)$")
#: "What is X?" / "What are the X?": the term X asked to be defined.
_DEFINE_Q = re.compile(r"^\s*what\s+(?:is|are)\s+(?:an?\s+|the\s+)?(.+?)\s*\??\s*$", re.I)


def exact_terms(question: str) -> set[str]:
    """Numbers, capitalised names (past the first word) and code identifiers of
    ``question``, lower-cased: words no other word stands for."""
    terms = {n.replace(",", "").lower() for n in numbers(question)}
    for i, w in enumerate(words(question)):
        if (i > 0 and w[:1].isupper()) or _IDENTIFIER.match(w):
            terms.add(re.sub(r"['\u2019]s$", "", w.lower()))  # "Group's" is "Group"
    return terms


#: A sentence that runs from a colon into a listing ("... consist of four values for each
#: joint: link length (a), link twist ...", "... is called an infinite loop: int n = 3;
#: ..."): the claim before the colon, with this many words at least, ...
_INTO_LISTING = re.compile(r"^(?P<claim>.+?)(?:,?\s+(?:like\s+this|as\s+follows))?:\s+(?P<rest>.*)$",
                           re.S)
CLAIM_WORDS = 6
#: ... before a listing holding this many brackets, semicolons or equals signs at least.
_LISTING_MARK = re.compile(r"[{};=()\[\]]")
LISTING_MARKS = 2


def claims_before_listings(selection: CitationSource) -> CitationSource:
    """``selection`` with each sentence that runs from a colon into a listing cut in two,
    the claim before the colon and the listing, so the claim can be quoted on its own
    (the quote would otherwise drag the whole listing in and fail the coverage share);
    the text kept is the selection's own, word for word."""
    parts = []
    for sentence in split_sentences(selection.text):
        flat = " ".join(sentence.split())
        m = _INTO_LISTING.match(flat)
        if (m and len(words(m.group("claim"))) >= CLAIM_WORDS
                and len(_LISTING_MARK.findall(m.group("rest"))) >= LISTING_MARKS):
            parts.extend((m.group("claim").rstrip(",") + ".", m.group("rest")))
            continue
        parts.append(flat)
    return replace(selection, text="\n\n".join(parts))


def holds_exact(exact: set[str], sentence: str) -> bool:
    """Every one of ``exact`` (see :func:`exact_terms`) is in ``sentence``; a name may be
    inflected ("Strings" / "String")."""
    ws = [w.lower() for w in words(sentence)]
    hay = set(ws) | {n.replace(",", "") for n in numbers(sentence)}
    stems = {stem(w) for w in ws if w.isalpha()}
    return all(t in hay or (t.isalpha() and stem(t) in stems) for t in exact)


def answering_sentence(question: str, selection: CitationSource,
                       embedder: Any = None) -> Optional[quotes.Quote]:
    """The sentence of the selection that clearly answers ``question`` (the gate of the
    module doc), or None."""
    ranked = quotes.rank_sentences(question, [claims_before_listings(selection)], embedder)
    q_terms = set(content_terms(question))
    if not ranked or not q_terms:
        return None
    exact = exact_terms(question)
    define = _DEFINE_Q.match(" ".join(question.split()))
    if define and NAMING_Q.search(define.group(1)):
        define = None  # "What are the values in an array called?" asks for a name
    for cand in ranked[:CANDIDATES]:
        s_terms = set(content_terms(cand.sentence))
        coverage = len(q_terms & s_terms) / len(q_terms)
        log.debug("selection sentence %.2f coverage %.2f: %s", cand.score, coverage,
                  cand.sentence[:80])
        if coverage < MIN_COVERAGE or not s_terms - q_terms:
            continue  # too few of the question's words, or nothing added to them
        if not holds_exact(exact, cand.sentence):
            continue  # a number, a name or an identifier of the question is missing
        if names_nobody(question, cand.sentence):
            continue  # "Who ...?" is not answered by a sentence naming no one
        if define and not defines(cand.sentence, define.group(1)):
            continue  # "What is a compiler?" is not answered by a sentence using the word
        return cand
    return None


def selection_answer(question: str, selection: CitationSource, validator: Any,
                     pages: Any = None) -> Optional[tuple[str, tuple, Any, str]]:
    """The answer made of the selection's answering sentence: ``(text, citations,
    validation, sentence)``, or None when no sentence clearly answers, its citation does
    not verify, or the configured grounding check does not pass it."""
    best = answering_sentence(question, selection, validator.embedder)
    if best is None:
        return None
    text, citations = verify_answer(f"{LEAD}\n{quotes.render_quotes([best])}", [selection],
                                    pages, add_missing=False)
    if not citations:
        return None
    validation = validator.validate(best.sentence, selection.text)
    if not validation.passed:  # the configured check decides, even for copied text
        return None
    log.info("The model's answer not shown; the selection's sentence instead")
    return text, tuple(citations), validation, best.sentence


#: Least share of the answering sentence's content words a verified answer must lack for
#: the sentence to be quoted beside it.
BESIDE_NEW_SHARE = 0.5


def beside_answer(question: str, text: str, citations: tuple, selection: CitationSource,
                  validator: Any, pages: Any = None) -> Optional[tuple[str, tuple]]:
    """A verified model answer with the selection's answering sentence quoted after it:
    ``(text, citations)``, or None when no sentence clearly answers (the same strict
    gate as :func:`selection_answer`), the answer already says most of what it says, or
    the configured check does not pass the sentence.

    A small model's verified answer is often true but beside the point: it answers from
    the wrong sentence ("The Court of Justice's view is that ... EU law has primacy" for
    "Which entities have had to develop principles ...?") or states a wrong year the
    selection also holds ("In 2007." for the year a programme was reintroduced, 2016).
    The student then also reads the selection's own sentence that answers, with its
    citation (copied text of the selection: nothing outside it is read)."""
    best = answering_sentence(question, selection, validator.embedder)
    if best is None:
        return None
    want = set(content_terms(best.sentence))
    have = set(content_terms(strip_citations(text)))
    if not want or len(want - have) / len(want) < BESIDE_NEW_SHARE:
        return None
    if not validator.validate(best.sentence, selection.text).passed:
        return None  # the configured check decides, even for copied text
    # The quote is verified on its own: the answer's citations stay as they were.
    quoted, quote_citations = verify_answer(f"{LEAD}\n{quotes.render_quotes([best])}",
                                            [selection], pages, add_missing=False)
    if not quote_citations:
        return None
    log.info("Selected text: the selection's answering sentence quoted beside the answer")
    return f"{text}\n{quoted}", tuple(citations) + tuple(quote_citations)


def first_unsupported(sentences: list[str], validation: Any) -> bool:
    """True when the answer's first sentence is unsupported.  In a selected-text answer the
    first sentence answers; what follows only explains it.  Without it the rest answers
    nothing ("To round to the closest integer, use (int). In this example, x gets the value
    3." would show the example alone), so the answer is not shown as that rest."""
    if sentences and sentences[0] in validation.unsupported_sentences:
        log.info("Selected text: the answering sentence is unsupported")
        return True
    return False
