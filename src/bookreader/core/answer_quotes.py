"""A verified answer's citations and the book's sentences quoted beside it.

After a whole-book answer passes the grounding check (``core/answer/cite.py``):

* :func:`repoint_citations` moves a citation that quotes a sentence unrelated to its
  claim to the context sentence that holds the claim, and :func:`trim_excerpts` cuts an
  over-long excerpt to the words of its claim;
* :func:`with_best_quote` quotes the book's own sentences for the question beside a
  small tier's thin answer (the extractive backend's choice, then the sentence that
  follows the one the answer restates: :func:`following_sentences`).

Split from :mod:`bookreader.core.quotes` (the quotes card, task requests, tautologies),
whose sentence choice these reuse.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Sequence

from bookreader.core import quotes
from bookreader.core.citations import (
    CitationChecker,
    CitationSource,
    format_citation,
    strip_citations,
    verify_answer,
)
from bookreader.core.llm.extractive_context import split_sentences
from bookreader.core.model_output import claims, parse_citations
from bookreader.core.sentences import content_terms, words

log = logging.getLogger(__name__)


#: A cited excerpt holding less than this share of its claim's content words does not
#: support the claim (the model quoted a neighbouring passage).
REPOINT_CITED_MAX = 0.34
#: The context sentence a citation is moved to holds at least this share of them.
REPOINT_BEST_MIN = 0.6


def repoint_citations(text: str, sources: Sequence[CitationSource], pages: Any = None) -> str:
    """``text`` with each citation that quotes a sentence unrelated to its claim moved to
    the context sentence that does hold the claim.

    A small model often writes a correct sentence from one excerpt and quotes another
    ("a computer can be any device that stores and processes data" cited with the next
    passage's sentence about touchscreens): the citation verifies (the words are on the
    page) but sends the student to the wrong page.  When the cited excerpt holds under
    :data:`REPOINT_CITED_MAX` of the claim's content words and a context sentence holds at
    least :data:`REPOINT_BEST_MIN` of them, the marker is replaced by one quoting that
    sentence verbatim (its stretch of ``EXCERPT_WORDS`` words holding most of the
    claim's words, when longer), so the usual check verifies it on its page.  Nothing else
    of the answer changes.
    """
    units = claims(text)
    if not any(u.citations for u in units):
        return text
    checker = CitationChecker(sources, pages)
    out: list[str] = []
    changed = False
    for unit in units:
        want = set(content_terms(unit.text))
        if len(want) < 3 or not unit.citations:
            out.append(unit.full)
            continue
        cited = max(len(want & set(content_terms(c.excerpt))) / len(want) for c in unit.citations)
        if cited >= REPOINT_CITED_MAX:
            out.append(unit.full)
            continue
        best = checker.support_for(unit.text)
        if best is None or len(want & set(content_terms(best.excerpt))) / len(want) < REPOINT_BEST_MIN:
            out.append(unit.full)
            continue
        quote = _best_window(best.excerpt, want)
        tail = unit.full[unit.full.rfind("]") + 1:] if "]" in unit.full else ""
        log.info("Citation moved to the sentence that holds its claim (page %s)", best.page_label)
        out.append(f"{unit.text} {format_citation(best.section, best.page_label, quote)}{tail}")
        changed = True
    return " ".join(out) if changed else text


#: A citation excerpt longer than this (words) is cut to its best
#: ``EXCERPT_WORDS``.
MAX_SHOWN_EXCERPT_WORDS = 25


def trim_excerpts(text: str) -> str:
    """``text`` with every citation excerpt longer than :data:`MAX_SHOWN_EXCERPT_WORDS`
    words cut to its stretch of ``EXCERPT_WORDS`` words holding most of its claim's
    content words.

    A model told to copy exact words often copies a whole paragraph into its citation; the
    student needs the words that prove the claim, and the stretch stays verbatim on the
    page, so the usual check verifies it and highlights only it.
    """
    pieces: list[str] = []
    pos = 0
    for raw in parse_citations(text):
        if len(raw.excerpt.split()) <= MAX_SHOWN_EXCERPT_WORDS:
            continue
        want = set(content_terms(raw.claim)) or set(content_terms(raw.excerpt))
        window = _best_window(raw.excerpt, want)
        pieces += [text[pos:raw.start], format_citation(raw.section, raw.page_label, window)]
        pos = raw.end
    if not pieces:
        return text
    return "".join(pieces) + text[pos:]


def _best_window(sentence: str, want: set[str]) -> str:
    """The stretch of ``sentence`` (at most ``EXCERPT_WORDS`` words) holding most of
    the terms ``want``; the first such stretch on ties."""
    tokens = sentence.split()
    if len(tokens) <= quotes.EXCERPT_WORDS:
        return " ".join(tokens)
    best, best_score = 0, -1
    for start in range(len(tokens) - quotes.EXCERPT_WORDS + 1):
        window = " ".join(tokens[start:start + quotes.EXCERPT_WORDS])
        score = len(want & set(content_terms(window)))
        if score > best_score:
            best, best_score = start, score
    return " ".join(tokens[best:best + quotes.EXCERPT_WORDS])


#: Least share of the best quote's content words an answer must lack for the quote to be
#: added beside it (see ``with_best_quote``).
QUOTE_NEW_SHARE = 0.5
#: Most book sentences quoted beside a verified answer: as many as the extractive backend
#: answers with, since its third sentence is often the one on another page that explains
#: the question.  Three rather than two cites the gold page more often for a few more
#: words of answer.
ANSWER_QUOTES = 3


def with_best_quote(question: str, text: str, citations: tuple, sources: Sequence[Any],
                    context: str, validator: Any, pages: Any = None,
                    embedder: Any = None) -> tuple[str, tuple]:
    """A verified whole-book answer with the book's sentences for the question quoted
    beside it, when the answer does not already say what they say.

    A small model's verified answer is often true but thin ("Characters like letters
    are stored in a data type called char."): the sentences the extractive backend
    would answer with (:func:`bookreader.core.quotes.extractive_quotes`, at most
    :data:`ANSWER_QUOTES`) are added as quote lines with verified citations, so the
    student reads the book's own words and has the page.  A sentence is added only
    when at least :data:`QUOTE_NEW_SHARE` of its content words are not yet in the
    text, and the whole text must still pass the grounding check with it (one at a time:
    a quote the check cannot confirm is left out, not every quote with it).  When the extractive
    choice is what the answer already says, the sentence after it (or after the one the
    answer cites) is offered next (:func:`following_sentences`).

    ``embedder`` ranks the sentences: the answerer's own MiniLM, the one the extractive
    backend answers with in place of a model, so both choose alike (the validator's int8
    copy, the default, chooses other sentences, and fewer of them answer the question).
    """
    embedder = embedder or validator.embedder
    picked = quotes.extractive_quotes(question, sources, embedder, k=ANSWER_QUOTES)
    anchors = [q.sentence for q in picked] + [c.excerpt for c in citations if c.verified]
    picked = picked + following_sentences(sources, anchors)
    have = set(content_terms(strip_citations(text)))
    asked = set(content_terms(question))
    added: list[quotes.Quote] = []
    shown, shown_citations = text, citations
    for q in picked:
        if len(added) >= ANSWER_QUOTES:
            break
        if defines_another_term(q.sentence, asked):
            continue
        want = set(content_terms(q.sentence))
        if not want or len(want - have) / len(want) < QUOTE_NEW_SHARE:
            continue
        _, own = verify_answer(quotes.render_quotes([q]), sources, pages, add_missing=False)
        if not own or not all(c.verified for c in own):
            continue  # the quote's citation must verify on its page
        joined = text + "\n" + quotes.render_quotes(added + [q])
        new_text, new_citations = verify_answer(joined, sources, pages, add_missing=False)
        if not validator.validate(new_text, context).passed:
            # one quote the check cannot confirm no longer keeps the others out
            log.info("Quote not added: the answer with it did not pass the check")
            continue
        added.append(q)
        have |= want
        shown, shown_citations = new_text, new_citations
    if sum(c.verified for c in shown_citations) <= sum(c.verified for c in citations):
        # only the sentence the answer already cites, said again: the answer points there
        return text, citations
    return shown, shown_citations


#: A glossary entry: a lower-case term of at most four words (as textbooks print their
#: vocabulary), a colon, its definition.  A capitalised label ("ISO 9001: Quality
#: management ...", "Data Sources: ...") heads a list item, not a definition.
_GLOSSARY_ENTRY = re.compile(r"^\s*([a-z][\w'\u2019-]*(?:\s[\w'\u2019-]+){0,3})\s*:\s+\S")


def defines_another_term(sentence: str, asked: set[str]) -> bool:
    """True for a glossary entry whose term shares no word with the question ("sprite: A
    computer graphic ..." quoted beside an answer to "What is polymorphism?"): it defines
    something the student did not ask about."""
    m = _GLOSSARY_ENTRY.match(sentence)
    if not m or set(content_terms(m.group(1))) & asked:
        return False
    return True


#: Sentences read on after an anchor (the book's best sentence, or the one the answer
#: cites), offered after the extractive choice: the sentence after the one that names a
#: term often explains it, for a few more words of answer.
READ_ON = 1


def following_sentences(sources: Sequence[CitationSource], anchors: Sequence[str],
                        k: int = READ_ON) -> list[quotes.Quote]:
    """The ``k`` sentences that follow each anchor in its passage, when quotable.

    A small model's verified answer usually restates the book's best sentence for the
    question ("Hash tables are essential for looking up values by key in constant average
    time"); the explanation is the sentence after it.
    """
    keys = [" ".join(words(a.lower())[:8]) for a in anchors if len(words(a)) >= 4]
    split = [(src, [" ".join(x.split()) for x in split_sentences(src.text)]) for src in sources]
    # each sentence's words once, to find an anchor's first eight words in it
    flat = [(src, sents, i, " ".join(words(sent.lower())))
            for src, sents in split for i, sent in enumerate(sents)]
    out: list[quotes.Quote] = []
    seen: set[str] = set()
    for key in keys:
        found = next(((src, sents, i) for src, sents, i, said in flat if key in said), None)
        if found is None:
            continue
        src, sents, i = found
        for nxt in sents[i + 1:i + 1 + k]:
            if nxt.lower() not in seen and quotes.usable_sentence(nxt):
                seen.add(nxt.lower())
                out.append(quotes.Quote(nxt, src, 0.0))
    return out
