"""A selected-text answer made of the selection's own sentence, when the model's fails.

A local model that means to answer from a selection often writes an answer the checks
cannot show: it restates the question ("How should you compare two strings?"), writes a
clumsy echo of it ("The elements of a new int array given are zero."), or paraphrases a
correct fact in words the grounding check does not accept ("RAM does temporarily store
information.").  The selection usually holds the answer in one sentence of its own.  When
the model did not decline and one sentence of the selection clearly addresses the
question, that sentence, quoted verbatim with its citation, is the answer: copied text of
the selection, so it is grounded by construction, and nothing outside the selection is
read (no store, no retrieval: zero leakage holds).

"Clearly addresses" is a strict gate, because the same rescue must not answer a question
whose answer is not in the selection (a question that swaps a name or a number, a
textbook question whose answer is in another chapter):

* the sentence holds at least :data:`MIN_COVERAGE` of the question's content words
  (the extractive backend's IDF-free share), and its relevance score (keyword coverage
  and MiniLM similarity, :func:`bookreader.core.quotes.rank_sentences`) is at least
  :data:`MIN_SCORE`;
* every number and every capitalised name or code identifier of the question is in it
  (a question about "Berlin" is not answered by a sentence about "the city"), or it
  refers to the name: a sentence opening with a pronoun ("They also won the cup twice")
  is read with the sentence before it when that one names it (both are quoted), and a
  name of two words or more named earlier in the selection is held by its head noun
  after "the" ("the board" for the Kelvane Harbour Board);
* the sentence holds a content word the question does not (it adds something), every
  turning word of the question ("not", "least", "never", "without"), and, for "What is
  X?", it says what X is ("X is ...", "... called X", "X: "; for a description of three
  words or more also "Y is an X"); "What is X called?" and "What are other names for
  X?" need a sentence that names ("... called Y", "X (Y)", "names for X include Y", "the
  neuroimmune system which protects the brain"), by a name other than the question's own
  words; "Who were the Semuren?" one that says who they were ("X were a ...", "X
  (gloss)"); a who / when / how-many / why question needs a name the question does not
  hold / a date / a number / a reason, a "How did X ...?" question a way ("by", "with",
  "through", "as", an adverb) (the words naming the time or count asked for, "What *day
  of the week*", are then not counted in the coverage);
* the sentence does not hold the opposite of a question word the question has and it
  lacks (:func:`contrasts`: "gave" / "took", "closing" / "opening", "three" / "two",
  "atomic" / "subatomic"), nor liken the question's two terms the other way round
  (:func:`likening_swapped`: "treat foreign organisms like normal tissues" over "attacking
  normal tissues as if they were foreign organisms"), nor say only what befell the one
  the question names as the doer (:func:`agent_made_patient`: "What award was inspired
  by Corliss?" over "When Corliss was given the Rumford medal ..."): SQuAD's unanswerable
  questions are made that way.

The model's rejected answer is read as an extractive span: the words it adds to the
question ("Full size programs in *servers* sometimes use while loops") point at the
sentence it was taken from, which then needs fewer of the question's words
(:data:`MIN_COVERAGE_AGREED`), since the model's reading and the sentence agree; and a
sentence whose roles that restatement exchanges ("Queen Mathilda paid tribute to Harald"
over "Harald ... agreed to pay tribute to Queen Mathilda"), or that puts a question word
where the sentence has its opposite ("The UK *agreed* to sign" over "The UK refused to
sign ... unless it agreed to be bound"), answers another question.

The same sentence is also quoted after a verified model answer that does not already
say it (:func:`beside_answer`): the model's true but beside-the-point answer stays, and
the student reads the selection's own answering sentence under it.  Some questions are
given the fixed fallback before any model runs (:func:`turns_on_absent_word`): they turn
on a negation the selection never uses, negate what every sentence about it affirms, or
reverse a direction the selection states.  A verified model answer that does not address
the question, and a question naming a number the selection never writes, are handled in
:mod:`bookreader.core.selection_relevance`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any, Optional

from bookreader.core import quotes
from bookreader.core.citations import CitationSource, strip_citations, verify_answer
from bookreader.core.selection_relevance import answer_span, answered_from
from bookreader.core.selection_types import (
    CALL_Q,
    defines,
    gives_name,
    has_wanted_type,
    NAME_OF_Q,
    NAMING_Q,
    says_who,
    TIME_Q,
    WHO_NAMED_Q,
)
from bookreader.core.sentences import content_terms, numbers, split_sentences, stem, words

log = logging.getLogger(__name__)

#: Share of the question's content words the chosen sentence must hold.
MIN_COVERAGE = 0.65
#: Least relevance score (see :func:`bookreader.core.quotes.rank_sentences`).
MIN_SCORE = 0.55
#: The share of the question's content words enough for a sentence the model's own answer
#: was taken from (:func:`bookreader.core.selection_relevance.answered_from`): the
#: model's reading and the sentence's words agree on where the answer is.
MIN_COVERAGE_AGREED = 0.5
#: ... and this relevance score, at any rank.
MIN_SCORE_AGREED = 0.5
#: The line that opens such an answer.
LEAD = "The selected text says:"

_IDENTIFIER = re.compile(r"^(?:[a-z]+[A-Z]\w*|\w*_\w*)$")


def _exact_terms(question: str) -> set[str]:
    """Numbers, capitalised names (past the first word) and code identifiers of
    ``question``, lower-cased."""
    terms = {n.replace(",", "").lower() for n in numbers(question)}
    for i, w in enumerate(words(question)):
        if (i > 0 and w[:1].isupper()) or _IDENTIFIER.match(w):
            terms.add(re.sub(r"['\u2019]s$", "", w.lower()))  # "Group's" is "Group"
    return terms


#: Words that turn a question around ("Who did the attacks resonate *least* with?", "How
#: many interactions are *not* known?"): a sentence without them answers another question.
_TURNING = frozenset("not no never least none neither nor without cannot fewest".split())
_WHY_Q = re.compile(r"^\s*why\b", re.I)
_DEFINE_Q = re.compile(r"^\s*what\s+(?:is|are)\s+(?:an?\s+|the\s+)?(.+?)\s*\??\s*$", re.I)


#: Phrases whose turning word turns nothing ("runs at least once", "not only ... but").
_NOT_TURNING = re.compile(r"\bat\s+least\b|\bnot\s+only\b|\bno\s+longer\b", re.I)


def _turning_words(text: str) -> set[str]:
    text = _NOT_TURNING.sub(" ", text.replace("n\u2019t", " not").replace("n't", " not"))
    return {w.lower() for w in words(text)} & _TURNING


_INTO_LISTING = re.compile(r"^(?P<claim>.+?)(?:,?\s+(?:like\s+this|as\s+follows))?:\s+(?P<rest>.*)$",
                           re.S)
_CODE = re.compile(r"[{};=()\[\]]")


def _claims_before_listings(selection: CitationSource) -> CitationSource:
    """``selection`` with each sentence that runs from a colon into a code listing cut to
    the claim before the colon ("..., which is called an infinite loop: int n = 3; ..."),
    so the claim can be quoted; the text kept is the selection's own, word for word."""
    parts = []
    for sentence in split_sentences(selection.text):
        flat = " ".join(sentence.split())
        m = _INTO_LISTING.match(flat)
        if m and len(words(m.group("claim"))) >= 6 and len(_CODE.findall(m.group("rest"))) >= 2:
            parts.extend((m.group("claim").rstrip(",") + ".", m.group("rest")))
            continue
        parts.append(flat)
    return replace(selection, text="\n\n".join(parts))


def _holds_exact(exact: set[str], sentence: str) -> bool:
    """Every one of ``exact`` (see :func:`_exact_terms`) is in ``sentence``; a name may
    be inflected ("Europeans" / "European", "Normans" / "Norman")."""
    ws = [w.lower() for w in words(sentence)]
    hay = set(ws) | {n.replace(",", "") for n in numbers(sentence)}
    stems = {stem(w) for w in ws if w.isalpha()}
    return all(t in hay or (t.isalpha() and stem(t) in stems) for t in exact)


#: A sentence opening with one of these goes on about the one before it ("Polonia Warsaw
#: ... in 2000. *They* also won the cup twice."), and so does one whose opening words name
#: what came before by a demonstrative ("However, *this procedure* is more prone to ...",
#: "We call *this quantity* the ...").
_POINTS_BACK = re.compile(r"^\W*(?:he|she|it|they|his|her|its|their|this|these)\b|"
                          r"^\W*(?:[\w']+,?\s+){1,2}(?:this|these|such)\s+[a-z]{3,}|"
                          r"^\W*(?:by|in|with|for|from|because\s+of)\s+(?:this|these|that)\b",
                          re.I)
#: A sentence opening with one of these states what follows from the sentence before
#: ("... high variance in reproductive success. *Thus* rates of drift ... are higher"):
#: for "Why ...?" the reason is that sentence.
_CONCLUDES = re.compile(r"^\W*(?:thus|hence|therefore|so|consequently|as\s+a\s+result)\b", re.I)
#: A sentence whose content words are at most this share new to the question restates it
#: ("Sometimes, people will say that an inconsistent set 'contains a contradiction.'" for
#: "What do people mean when they say an inconsistent set contains a contradiction?").
RESTATES_NEW_SHARE = 0.34


def _sentences_before(selection: CitationSource) -> dict[str, list[str]]:
    """Each sentence of the selection (as :func:`quotes.rank_sentences` flattens it) and
    the sentences before it, nearest last."""
    sents = [" ".join(s.split()) for s in split_sentences(_claims_before_listings(selection).text)]
    return {b: sents[:i] for i, b in enumerate(sents)}


def _sentence_after(selection: CitationSource) -> dict[str, str]:
    """Each sentence of the selection and the sentence after it ("" for the last)."""
    sents = [" ".join(s.split()) for s in split_sentences(_claims_before_listings(selection).text)]
    return {b: (sents[i + 1] if i + 1 < len(sents) else "") for i, b in enumerate(sents)}


def _with_explanation(question: str, quote: quotes.Quote, following: str,
                      q_terms: set[str]) -> quotes.Quote:
    """``quote``, or its sentence read with the one after it: a sentence that restates
    the question (at most :data:`RESTATES_NEW_SHARE` of its content words are new to it)
    raises what the next sentence, pointing back to it, explains ("... 'contains a
    contradiction.' *By this*, they mean that it would be logically impossible ...")."""
    own = set(content_terms(quote.sentence))
    if (not following or not own or not _POINTS_BACK.match(following)
            or len(own - q_terms) / len(own) > RESTATES_NEW_SHARE):
        return quote
    return quotes.Quote(f"{quote.sentence} {following}", quote.source, quote.score)


#: A name of the question: capitalised words, maybe joined by "and" / "of" ("French and
#: Indian War", "Islamic Group's").
_NAME_RUN = re.compile(r"(?<!^)\b[A-Z][\w-]*(?:'s)?(?:\s+(?:(?:and|of)\s+)?[A-Z][\w-]*(?:'s)?)*")


def _named_before(question: str, sentence: str, earlier: list[str]) -> set[str]:
    """The exact terms (see :func:`_exact_terms`) of the question's names that
    ``sentence`` refers to by their head noun after "the" ("Other names for *the war*
    include ..." after "... became known as the French and Indian War"; "*the* major
    jihadi *group*" after "... (Islamic Group)"), when an earlier sentence of the selection
    holds the name: a definite description by a name's own noun is that name again."""
    out: set[str] = set()
    q = " ".join(question.split())
    for m in _NAME_RUN.finditer(q):
        name = re.sub(r"'s\b", "", m.group(0))
        parts = name.split()
        if len(parts) < 2:
            continue
        head = parts[-1].lower()
        if not re.search(r"\bthe\s+(?:[a-z][\w-]*\s+){0,2}%ss?\b" % re.escape(head), sentence):
            continue
        if any(re.search(r"\b%s\b" % r"\s+".join(map(re.escape, parts)), e) for e in earlier):
            out |= {w.lower() for w in parts if w[:1].isupper()}
    return out


def _with_antecedent(question: str, quote: quotes.Quote, previous: str, q_terms: set[str],
                     exact: set[str]) -> quotes.Quote:
    """``quote``, or its sentence read together with the one before it.

    A sentence that opens with a pronoun ("*They* also won the cup twice", "*He* had been
    replaced by Abercrombie") speaks of what the sentence before it names.  When the
    question's name, or the name a who-question asks for, is only in that sentence, the
    two sentences are the answer: judged together, quoted together (copied text of the
    selection), so the student reads whom the pronoun stands for.  So they are when the
    sentence alone holds too few of the question's words and the one before adds some
    ("... the chance that two parts ... fail in the same hour. We call this
    quantity the joint failure rate" for "What do you call the chance that ...?").
    The relevance score's
    keyword half is counted again over both sentences; its MiniLM half stays the
    sentence's own."""
    sentence = quote.sentence
    reason_before = bool(_WHY_Q.match(question)) and bool(_CONCLUDES.match(sentence))
    if not previous or not (_POINTS_BACK.match(sentence) or reason_before):
        return quote
    alone = len(q_terms & set(content_terms(sentence))) / len(q_terms)
    self_sufficient = _holds_exact(exact, sentence) and has_wanted_type(question, sentence)
    if self_sufficient and alone >= MIN_COVERAGE and not reason_before:
        return quote  # the sentence alone holds what it needs
    pair = f"{previous} {sentence}"
    if not (_holds_exact(exact, pair) and has_wanted_type(question, pair)):
        return quote
    both = len(q_terms & set(content_terms(pair))) / len(q_terms)
    if self_sufficient and both <= alone and not reason_before:
        return quote  # the sentence before adds none of the question's words
    return quotes.Quote(pair, quote.source, round(quote.score + (both - alone) / 2, 4))


#: The kind of thing a question asks for, named after its question word ("*What day of
#: the week* does ...", "*In what year* did ...", "*How many times* has ..."): lower-case
#: words up to a preposition or the verb.
_ASKED_KIND = re.compile(
    r"^\s*(?:(?:in|on|at|of|for|from|by|to|during|with)\s+)?(?:what|which|how\s+many|how\s+much)"
    r"\s+((?:[a-z][\w-]*\s+){1,3}?(?:of\s+the\s+[a-z]\w*\s+)?)(?=(?:of|in|on|at|for|from|is|are|"
    r"was|were|did|does|do|has|have|had|can|could|will|would|should|may|might)\b)")


def _asked_kind(question: str) -> set[str]:
    """The content words naming the time or the count ``question`` asks for (see
    :data:`_ASKED_KIND`): the answer ("on Wednesdays", "twice") stands in their place, so
    the sentence that answers need not repeat them; :func:`has_wanted_type` already
    requires a date or a number of it.  Another kind ("*Which sciences* ...", "*What
    nationality* ...") is kept: a sentence without it names something of another kind."""
    q = " ".join(question.split())
    m = _ASKED_KIND.match(q[:1].lower() + q[1:])
    if m is None or not (TIME_Q.match(q) or q.lower().startswith("how many")):
        return set()
    return set(content_terms(m.group(1)))


def answering_sentence(question: str, selection: CitationSource,
                       embedder: Any = None, model_answer: str = "") -> Optional[quotes.Quote]:
    """The sentence of the selection that clearly answers ``question``, or None.

    ``model_answer`` is the model's answer that could not be shown, when there is one.
    The sentence it was taken from (the first to hold every word it adds to the
    question) is tried first (the model's reading chooses among sentences that all pass
    the gate) and needs only :data:`MIN_COVERAGE_AGREED` of the question's words and a score
    of :data:`MIN_SCORE_AGREED`, at any rank; a sentence whose two terms it
    exchanges (it restates the question as "King Olaf paid tribute to Sweyn" over "Sweyn
    paid tribute to King Olaf") answers another question (an answer adding no word to
    the question exchanges no answer with a term of the question)."""
    ranked = quotes.rank_sentences(question, [_claims_before_listings(selection)], embedder)
    if not ranked:
        return None
    q_terms = set(content_terms(question))
    if not q_terms:
        return None
    exact = _exact_terms(question)
    turning = _turning_words(question)
    define = _DEFINE_Q.match(" ".join(question.split()))
    name_of = bool(define and NAME_OF_Q.match(define.group(1)))
    naming = (bool(define and NAMING_Q.search(define.group(1))) or name_of
              or bool(CALL_Q.match(question)))
    if naming:  # "What are the values in an array called?" asks for a name
        define = None
    who = WHO_NAMED_Q.match(" ".join(question.split()))
    _, span = answer_span(question, model_answer)
    source = next((q for q in ranked if answered_from(span, q.sentence)), None)
    candidates = [q for q in ranked[:2] if q is not source]
    if source is not None:
        candidates.insert(0, source)
    before = _sentences_before(selection)
    after = _sentence_after(selection)
    # The words naming what is asked for are not counted: the answer stands in their place
    # (the score's keyword half is counted again without them).
    wanted = (q_terms - _asked_kind(question)) or q_terms
    for cand in candidates:
        earlier = before.get(cand.sentence, [])
        best = _with_antecedent(question, cand, earlier[-1] if earlier else "", q_terms, exact)
        if best is cand:
            best = _with_explanation(question, cand, after.get(cand.sentence, ""), q_terms)
        s_terms = set(content_terms(best.sentence))
        # A name the sentence refers to as "the war", "the board" is held, words and all.
        named = _named_before(question, best.sentence, earlier)
        held = s_terms | set(content_terms(" ".join(sorted(named))))
        coverage = len(wanted & held) / len(wanted)
        best = replace(best, score=round(
            best.score + (coverage - len(q_terms & s_terms) / len(q_terms)) / 2, 4))
        if best.score < (MIN_SCORE_AGREED if cand is source else MIN_SCORE):
            continue
        have_exact = _holds_exact(exact - named, best.sentence)
        adds = bool(s_terms - q_terms)
        agreed = answered_from(span, best.sentence)
        log.debug("selection sentence %.2f coverage %.2f exact %s agreed %s: %s", best.score,
                  coverage, have_exact, agreed, best.sentence[:80])
        if turning - _turning_words(best.sentence):
            continue  # the question turns on a word the sentence lacks
        if not has_wanted_type(question, best.sentence):
            continue  # a who / when / how-many question needs a name / date / number
        if naming and not gives_name(best.sentence, question, name_of):
            continue  # "What is X called?" is answered by "... called Y", "... (Y)"
        if who and not says_who(best.sentence, who.group(1)):
            continue  # "Who were the Semuren?" is not answered by what befell them
        if define and not defines(best.sentence, define.group(1)):
            continue  # "What is a compiler?" is not answered by a sentence using the word
        floor = MIN_COVERAGE_AGREED if agreed else MIN_COVERAGE
        if coverage >= floor and have_exact and adds:
            return best
    return None


def selection_answer(question: str, selection: CitationSource, validator: Any,
                     pages: Any = None, model_answer: str = ""
                     ) -> Optional[tuple[str, tuple, Any, str]]:
    """The answer made of the selection's answering sentence: ``(text, citations,
    validation, sentence)``, or None when no sentence clearly answers, its citation does
    not verify, or the configured grounding check does not pass it."""
    best = answering_sentence(question, selection, validator.embedder, model_answer)
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
