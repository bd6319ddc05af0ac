"""The extractive backend: no model, the answer is the context's best sentences, quoted.

It reads the same prompt the language models read (the context blocks and the question:
:mod:`bookreader.core.llm.extractive_context`).

Every sentence of the excerpts and the selection is scored against the question with a
BM25-style keyword score (stemmed content words, inverse document frequency over the
context's sentences).  Whether the context answers at all is decided by *coverage*: the
IDF-weighted share of the question's content words that the best sentence contains.  A
question whose rare words appear nowhere in the context is not answered by it, however
well its common words match.  With an embedder, the few best keyword candidates are
re-ranked by MiniLM similarity as well (only those, so the backend stays instant).
The answer is prose where the context has it: list fragments and title-case headings rank
down and never join an answer, and a comment or listing line does not lead when a sentence
of prose scores nearly as well (:func:`~bookreader.core.llm.answer_type.form_penalty`,
:data:`PROSE_LEAD`).

When nothing matches well enough, the answer is the fixed sentence the system prompt asks
for ("write only: ..."), else the constructor's defaults.  Always available, always fast.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from bookreader.core.llm.answer_type import (  # noqa: F401  (re-exported)
    _QUESTION_WORDS,
    _TASK_SECTION,
    CODE_CHARS,
    CODE_PENALTY,
    LEAD_IN_TO_CODE,
    META,
    TASK,
    TOC_LINE,
    _showable,
    COMPARISON_BONUS,
    answer_type_bonus,
    code_penalty,  # quotes rank with it (core/quotes.py)
    comparison_sides,
    content_terms,
    form_penalty,
    heading_like,
    is_claiming_lead_in,
    is_comment,
    is_alt_text,
    is_fragment_list,
    is_glossary_entry,
    is_heading,
    is_import_line,
    is_title_line,
    looks_like_code,
    names_both,
    names_side,
    question_kind,
    reads_as_code,
    shown_sentence,
    unmarked,
    wants_code,
    without_list_number,
)
from bookreader.core.code_text import is_code_line
from bookreader.core.llm.continuation import continuation, is_enumerator, is_lead_in
from bookreader.core.llm.extractive_context import (  # noqa: F401  (re-exported)
    SELECTION_SECTION,
    ContextBlock,
    ParsedPrompt,
    candidate_units,
    parse_prompt,
    prompt_from_request,
    split_sentences,
)
from bookreader.core.model_output import format_citation
from bookreader.core.types import AnswerRequest, CancelFn, Message, Token

log = logging.getLogger(__name__)

DEFAULT_NOT_COVERED = "This question is not covered in the book."
DEFAULT_NOT_IN_SELECTION = "The selected text does not contain the answer."

#: Weight of the match between the heading a sentence stands under and the question (a
#: sentence under "10.9 List comprehension" answers "What is a list comprehension?").
#: Measured on the tune halves against 0.15 and 0: 0.3 cited a gold page for 2 more.
HEADING_WEIGHT = 0.3
#: Weight of MiniLM similarity against keyword coverage in a sentence's score: meaning
#: counts for more than shared words (0.7 answered more tune questions correctly than an
#: even 0.5 on every book, gold page cited unchanged).
SIMILARITY_WEIGHT = 0.7
#: Most words of the best sentence, its continuation and the sentences added for the
#: question's other words (the first passage's sentence is added beyond it: it points at
#: the page the retriever ranked first).  A student's answer, not a page.
MAX_ANSWER_WORDS = 60
#: Least MiniLM similarity (to the best sentence or to the question) of the sentence that
#: follows a short best sentence for it to join the answer: "So 76 inches is 6 feet, 4
#: inches." was followed by "Many people (and textbooks) incorrectly refer to % as the
#: modulus operator".  0.3 and 0.4 measured alike on the tune halves (no answer lost).
CONTINUATION_SIMILARITY = 0.3
#: Best keyword candidates re-ranked by meaning (with an embedder).  A smaller pool (12)
#: let a sentence saying the answer in other words ("The comparison operators work with
#: tuples") miss the cut.
RERANK_POOL = 30


#: How far below a leading comment or listing line a sentence of prose of its section may
#: score and still lead the answer in its place.  0.15 and 0.25 measured alike on the tune
#: halves, and the same as no such rule (0): it changes which sentence leads ("Binary
#: search halves the sorted range at every step ..." before "\"\"\"Find key by binary
#: search\"\"\""), not how many answers hold the gold answer's words.
PROSE_LEAD = 0.15
#: Least score, as a share of the best sentence's, of a sentence of prose added to the
#: answer for the question's words the others lack (a comment or a listing line needs
#: :data:`CODE_ADD_SHARE`).  On the tune halves 0.5-0.65 answered more questions
#: correctly than 0.75, and 0.8 fewer.
ADD_SHARE = 0.65
CODE_ADD_SHARE = 0.75


#: A sentence whose subject is a pronoun for something the sentence before names
#: ("This is accomplished through ...", "In Python 2, this is a built-in function").
_POINTS_BACK = re.compile(
    r"^\s*(?:(?:in|for|with|on)\s+[^,]{1,30},\s+)?(?:it|this|these|they|those|such)\s+"
    r"(?!is\s+(?:\w+\s+)?(?:possible|important|common|often|easy|hard|difficult|tempting|"
    r"useful|necessary|likely|a\s+good\s+idea)\b)"
    r"(?:is|are|was|were|can|allows?|means?|makes?|uses?|has|have|provides?|\w+ed|\w+s)\b",
    re.IGNORECASE)


def heading_match(heading: str, q_terms: set[str]) -> float:
    """(share of the heading's content words in the question) x (share of the question's
    in the heading); section numbers are ignored."""
    terms = set(content_terms(re.sub(r"\d+(?:\.\d+)*\.?", " ", heading)))
    hit = len(terms & q_terms)
    if not hit or not q_terms:
        return 0.0
    return (hit / len(terms)) * (hit / len(q_terms))


def _block_candidates(block: ContextBlock) -> list["_Candidate"]:
    """The block's sentences as candidates, each with the heading it stands under (the
    block's section until a heading line inside the block)."""
    out = []
    heading = block.section
    for s in candidate_units(block.text):
        if is_heading(s):
            heading = s
        out.append(_Candidate(s, block, Counter(content_terms(s)), heading=heading))
    for n, c in enumerate(out):
        c.following = out[n + 1:n + 1 + _FOLLOWING]
        c.previous = out[n - 1] if n else None
        if c.previous is not None and _reads_with(c, c.previous):
            # "This can be achieved with short, clear error messages.": "this" is the
            # sentence before ("Usability: Users should understand what went wrong ..."),
            # so the two are read together to judge what the sentence answers.
            c.antecedent = c.previous
    return out


def _reads_with(c: "_Candidate", before: "_Candidate") -> bool:
    """True when ``c`` points back ("This is ...", "It uses ...") to ``before``, a sentence
    that can be shown before it (the antecedent :meth:`ExtractiveBackend.select` puts in
    front of it when it is chosen)."""
    return bool(_POINTS_BACK.match(c.sentence) and before.terms and _showable(before.sentence)
                and not is_enumerator(before.sentence) and not is_lead_in(before.sentence))


#: Sentences after each candidate kept for its continuation (a lead-in's list items).
_FOLLOWING = 8


@dataclass(eq=False)
class _Candidate:
    sentence: str
    block: ContextBlock
    terms: Counter
    bm25: float = 0.0
    coverage: float = 0.0
    similarity: Optional[float] = None
    score: float = 0.0
    heading: str = ""
    following: list = field(default_factory=list)  # the block's next candidates
    previous: Optional["_Candidate"] = None  # the block's candidate before this one
    #: The sentence before, when this one points back to it (:func:`_reads_with`): the
    #: two are judged together.
    antecedent: Optional["_Candidate"] = None

    @property
    def reading(self) -> str:
        """The text the candidate is judged on."""
        a = self.antecedent
        return self.sentence if a is None else f"{a.sentence} {self.sentence}"

    @property
    def read_terms(self) -> Counter:
        """The content words of :attr:`reading` (``terms`` stay the sentence's own)."""
        return self.terms if self.antecedent is None else self.terms + self.antecedent.terms


class ExtractiveBackend:
    """Answers with the context's best supporting sentences, quoted, with citations.

    Args:
        embedder: Optional sentence embedder (the bundled MiniLM) used to re-rank the best
            keyword candidates; anything with ``embed(list[str])`` or ``encode(list[str])``
            returning vectors.
        not_covered: The book-mode fallback sentence when the prompt names none.
        not_in_selection: The selection fallback sentence when the prompt names none.
        min_coverage: Least IDF-weighted share of the question's content words that the
            best sentence must contain for the context to count as answering.
        min_similarity: With an embedder, a sentence at least this similar to the
            question also counts as answering (paraphrases share few words).
        max_sentences: Most sentences quoted (3: the best, the first excerpt's best when it
            is another, and one that adds question words; a third sentence only joins when
            it scores at least :data:`ADD_SHARE` of the best (a line of code
            :data:`CODE_ADD_SHARE`) and covers a question word the others do not.
            Measured with 2 instead: 4-5 points fewer answers correct on each of the three
            books).
        continue_best: The sentences that continue the best one in its passage (a
            resolution such as "The problem is that ...", a lead-in's list:
            :mod:`bookreader.core.llm.continuation`) join it, beyond ``max_sentences``
            (after a short best sentence, only a next sentence about the same thing:
            :data:`CONTINUATION_SIMILARITY`); a best sentence whose subject points back
            ("This is accomplished through ...") is shown after the sentence before it.
        max_words: Most words of the best sentence, its continuation and the sentences
            added after them (the first excerpt's sentence, added for its page, is not
            counted against it); None for no bound.
        top_share: When no chosen sentence comes from the first excerpt, its best sentence
            is added if it scores at least this share of the best one: the retriever ranked
            that passage first with the whole book in view, and it holds the page that
            explains the topic more often than any other.
    """

    name = "extractive"

    def __init__(
        self,
        embedder: Any = None,
        *,
        not_covered: str = DEFAULT_NOT_COVERED,
        not_in_selection: str = DEFAULT_NOT_IN_SELECTION,
        min_coverage: float = 0.5,
        min_similarity: float = 0.5,
        max_sentences: int = 3,
        top_share: float = 0.3,
        continue_best: bool = True,
        max_words: Optional[int] = MAX_ANSWER_WORDS,
    ) -> None:
        self._embedder = embedder
        self.not_covered = not_covered
        self.not_in_selection = not_in_selection
        self.min_coverage = min_coverage
        self.min_similarity = min_similarity
        self.max_sentences = max_sentences
        self.top_share = top_share
        self.continue_best = continue_best
        self.max_words = max_words

    @property
    def model_name(self) -> str:
        return "extractive (keywords + MiniLM)" if self._embedder else "extractive (keywords)"

    def warm_up(self) -> None:
        """Nothing to load."""

    # --- the protocol --------------------------------------------------------------
    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 500,
        temperature: float = 0.1,
        cancel: Optional[CancelFn] = None,
        request: Optional[AnswerRequest] = None,
    ) -> Iterator[Token]:
        """Yield the answer word by word (``temperature`` is ignored: nothing is sampled).

        With ``request`` the context and question come from it, not from the messages.
        """
        text = self.answer(messages, max_tokens=max_tokens, request=request)
        pieces = re.findall(r"\s*\S+", text)[: max(0, max_tokens)]
        for piece in pieces:
            if cancel is not None and cancel():
                return
            yield Token(piece)

    # --- the work ------------------------------------------------------------------
    def answer(self, messages: Sequence[Message], *, max_tokens: int = 500,
               request: Optional[AnswerRequest] = None) -> str:
        """The whole answer text for ``messages`` (what :meth:`stream` yields)."""
        prompt = prompt_from_request(request) if request is not None else parse_prompt(messages)
        fallback = self._fallback_for(prompt)
        chosen = self.select(prompt)
        if not chosen:
            return fallback
        confidence = min(1.0, max(c.score for c in chosen))
        # Drop sentences from the end until the answer fits in max_tokens words.
        while chosen:
            text = "\n".join(_render(c) for c in chosen) + f"\nConfidence: {confidence:.2f}"
            if len(text.split()) <= max_tokens or len(chosen) == 1:
                return text
            chosen = chosen[:-1]
        return fallback  # pragma: no cover - the loop always returns

    def select(self, prompt: ParsedPrompt) -> list[_Candidate]:
        """The sentences to quote, best first; empty when the context does not answer."""
        candidates = [c for block in prompt.blocks for c in _block_candidates(block)]
        candidates = [c for c in candidates if c.terms]
        # A heading ("4.6 Retention and archiving") names a topic; it answers nothing.
        sentences = [c for c in candidates if not heading_like(c.sentence)]
        candidates = sentences or candidates
        query = list(dict.fromkeys(content_terms(prompt.question)))
        if not candidates or not query:
            return []
        self._score_keywords(candidates, query)
        ranked = sorted(candidates, key=lambda c: c.bm25, reverse=True)[:RERANK_POOL]
        first = next((b.number for b in prompt.blocks if b.kind == "excerpt"), None)
        if self._embedder is not None:
            self._score_similarity(ranked, prompt.question)
        kind = question_kind(prompt.question)
        sides = comparison_sides(prompt.question)
        q_terms = set(query)
        for c in ranked:
            # Keywords and meaning, meaning weighted more (SIMILARITY_WEIGHT).  (The maximum
            # of coverage and the mean, used before, let every sentence holding all the
            # question's words tie at 1.0, so similarity never separated them.)
            c.score = c.coverage if c.similarity is None else (
                (1 - SIMILARITY_WEIGHT) * c.coverage + SIMILARITY_WEIGHT * c.similarity)
            c.score += HEADING_WEIGHT * heading_match(c.heading, q_terms)
            c.score += answer_type_bonus(kind, c.sentence, q_terms)
            c.score += form_penalty(c.sentence)
            if names_both(c.sentence, sides):
                c.score += COMPARISON_BONUS
            if _TASK_SECTION.search(c.block.section):
                c.score -= 0.1  # exercises set tasks; the answer is usually in the text
        ranked.sort(key=lambda c: (c.score, c.bm25), reverse=True)
        if not _prose(ranked[0].sentence):
            # A comment or a listing line names what the code does; a sentence of prose of
            # its section nearly as good says it, and leads (the line may still follow it).
            # (Prose from another section is another topic: measured on the tune halves,
            # allowing it lost one answer.)
            code = ranked[0]
            prose = next((c for c in ranked[1:] if c.score >= code.score - PROSE_LEAD
                          and c.block.section == code.block.section and _prose(c.sentence)
                          and _added(c) and self._matches(c)), None)
            if prose is not None:
                ranked.remove(prose)
                ranked.insert(0, prose)
        best = ranked[0]
        if not self._matches(best):
            # A brief or a sentence about the chapter ("In this chapter, you'll learn how to
            # use while and for loops") ranks down, and so do list fragments and headings
            # (form_penalty), but they still show the topic is there: the decision stays
            # what it was before they were ranked down.
            best = next((c for c in ranked if (TASK.match(c.sentence) or META.match(c.sentence)
                                               or form_penalty(c.sentence) < 0)
                         and c.score + 0.4 >= ranked[0].score and self._matches(c)), best)
        answers = self._matches(best)
        log.debug(
            "extractive: best coverage %.2f similarity %s bm25 %.2f -> %s",
            best.coverage, best.similarity, best.bm25, "answer" if answers else "fallback",
        )
        if not answers:
            return []
        lead = next((c for c in ranked if _added(c) and _prose(c.sentence)), None)
        if best is not ranked[0] and lead is not None and lead.score > best.score:
            # The brief only decides that the context answers; the best-scored sentence of
            # prose (not a listing's line) says what the student asked ("Queues:
            # First-in, first-out collections of items." before "By the end of this
            # chapter, students will be able to: ... Implement stacks, queues and
            # deques").
            best = lead
        chosen = [best]
        covered = set(best.terms)
        before = best.antecedent
        if before is not None and (self.max_words is None or len(
                before.sentence.split()) + len(best.sentence.split()) <= self.max_words):
            # "This is accomplished through a hash function ...": the sentence before
            # says what "this" is ("A hash table maps keys to values ...").
            # Measured on the six halves: 2 more held-out answers correct, none lost.
            chosen.insert(0, before)
            covered |= set(before.terms)
        # The sentences that continue the best one ("The problem is that ...", a lead-in's
        # list) are part of its answer (core/llm/continuation.py).
        related = self._related_to(best, q_terms, prompt.question)
        taken = continuation(best.sentence, [c.sentence for c in best.following],
                             usable=_continues_with, related=related) if self.continue_best else 0
        for c in best.following[:taken]:
            if c.terms and not is_enumerator(c.sentence):
                chosen.append(c)
                covered |= set(c.terms)
        limit = self.max_sentences + len(chosen) - 1

        def fits(c: _Candidate) -> bool:  # an added sentence keeps the answer short
            return self.max_words is None or sum(
                len(x.sentence.split()) for x in chosen) + len(c.sentence.split()) <= self.max_words
        if is_glossary_entry(best.sentence) and limit > len(chosen):
            # A vocabulary entry defines the term; the running text where the book explains
            # it is the page to read, so it goes with the entry when it is close enough.
            # (Running text, not an exercise's instruction such as "Analyze the halting
            # problem and its implications." beside the entry for "What is the halting
            # problem?".)
            text = next((c for c in ranked[1:] if not is_glossary_entry(c.sentence)
                         and not TASK.match(c.sentence) and c.antecedent is None
                         and c.score >= 0.6 * best.score), None)
            if text is not None and fits(text):
                chosen.append(text)
                covered |= set(text.terms)
        if (self.top_share and first is not None and len(chosen) < limit
                and all(c.block.number != first for c in chosen)):
            # The retriever ranked the first excerpt best with the whole book in view: its
            # best sentence points the student at that page when it is nearly as good.
            top = next((c for c in ranked[1:] if c.block.number == first and _added(c)
                        and c.antecedent is None
                        and all(c.sentence != x.sentence for x in chosen)),
                       None)
            if top is not None and top.score >= self.top_share * best.score:
                chosen.append(top)
                covered |= set(top.terms)
        for c in ranked[1:]:
            if len(chosen) >= limit:
                break
            if c in chosen or any(c.sentence == x.sentence for x in chosen) or not _added(c):
                continue
            if c.antecedent is not None and c.antecedent not in chosen:
                continue  # "This extends to arrays, ..." says nothing without its antecedent
            if _PRINTS_MESSAGE.match(c.sentence) and not wants_code(prompt.question):
                continue  # what a program reports ("print("... completed")"), not the book
            adds_terms = any(t in c.terms and t not in covered for t in query)
            share = ADD_SHARE if _prose(c.sentence) else CODE_ADD_SHARE
            if c.score >= share * best.score and adds_terms and fits(c):
                chosen.append(c)
                covered |= set(c.terms)
        other = self._other_side(chosen, ranked, sides, best)
        if other is not None and fits(other):
            chosen.append(other)
        if wants_code(prompt.question) and all(_prose(c.sentence) for c in chosen):
            # "How do you declare an array in Java?": the prose says what a declaration
            # does; the book's example shows it.  The best lead-in to an example that
            # scores nearly as well as the answer ("... with a single line of code:") joins
            # it with the example's lines (a few words, beyond the answer's word bound).
            chosen += [c for c in _code_example(ranked, best.score) if c not in chosen]
        return chosen

    @staticmethod
    def _other_side(chosen: list[_Candidate], ranked: list[_Candidate],
                    sides: tuple[str, str] | None, best: _Candidate) -> Optional[_Candidate]:
        """For a comparison answered for one side only, the best sentence of prose naming
        the other side, when it scores at least :data:`ADD_SHARE` of the best one ("What is
        the difference between a stack and a queue?" answered by "A stack is last in,
        first out ..." alone needs "A queue is first in, first out ...")."""
        if sides is None or any(names_both(c.sentence, sides) for c in chosen):
            return None
        named = [s for s in sides if any(names_side(c.sentence, s, sides) for c in chosen)]
        if len(named) != 1:
            return None
        missing = sides[1] if named[0] == sides[0] else sides[0]
        return next((c for c in ranked if c not in chosen and _added(c) and _prose(c.sentence)
                     and names_side(c.sentence, missing, sides)
                     and c.score >= ADD_SHARE * best.score), None)

    def _related_to(self, best: _Candidate, q_terms: set[str], question: str
                    ) -> Callable[[str], bool]:
        """Whether a sentence after a short best sentence is about the same thing: MiniLM
        similarity to the best sentence or to the question at least
        :data:`CONTINUATION_SIMILARITY`, or (without an embedder) a word in common."""
        about = set(best.terms) | q_terms

        def related(sentence: str) -> bool:
            if self._embedder is not None:
                try:
                    vs = _embed(self._embedder, [sentence, best.sentence, question])
                except Exception:  # keywords decide; say why in the log
                    log.exception("extractive: embedding failed, using keywords only")
                else:
                    return max(_cosine(vs[0], vs[1]),
                               _cosine(vs[0], vs[2])) >= CONTINUATION_SIMILARITY
            return bool(set(content_terms(sentence)) & about)
        return related

    def _matches(self, c: _Candidate) -> bool:
        """The sentence holds enough of the question's rare words, or says it in other
        words (:attr:`min_coverage`, :attr:`min_similarity`)."""
        return c.coverage >= self.min_coverage or (
            c.similarity is not None and c.similarity >= self.min_similarity)

    def _score_keywords(self, candidates: list[_Candidate], query: list[str]) -> None:
        n = len(candidates)
        df: Counter = Counter()
        for c in candidates:
            df.update(set(c.terms))
        idf = {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query}
        total_idf = sum(idf.values()) or 1.0
        avg_len = sum(sum(c.terms.values()) for c in candidates) / n
        k1, b = 1.2, 0.75
        for c in candidates:
            terms = c.read_terms  # (the document frequencies count each sentence once)
            length = sum(terms.values())
            score = 0.0
            hit_idf = 0.0
            for t in query:
                tf = terms.get(t, 0)
                if tf:
                    hit_idf += idf[t]
                    score += idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg_len))
            c.bm25 = score
            c.coverage = hit_idf / total_idf

    def _score_similarity(self, candidates: list[_Candidate], question: str) -> None:
        texts = [question] + [c.reading for c in candidates]
        try:
            vectors = _embed(self._embedder, texts)
        except Exception:  # the keyword answer still stands; say why in the log
            log.exception("extractive: embedding failed, using keywords only")
            return
        q = vectors[0]
        for c, v in zip(candidates, vectors[1:]):
            c.similarity = _cosine(q, v)

    def _fallback_for(self, prompt: ParsedPrompt) -> str:
        if prompt.fallback:
            return prompt.fallback
        if any(b.kind == "selection" for b in prompt.blocks):
            return self.not_in_selection
        return self.not_covered


#: Most words of a code example shown after its lead-in for a question that asks for
#: code (:func:`~bookreader.core.llm.answer_type.wants_code`): a declaration or a call,
#: not a listing.
CODE_EXAMPLE_WORDS = 25


def _code_example(ranked: Sequence[_Candidate], best_score: float) -> list[_Candidate]:
    """The best lead-in that claims something ("Of course, you can also declare the
    variable and create the array with a single line of code:") scoring at least
    :data:`ADD_SHARE` of the best sentence, with the short, whole code after it (not the
    first line of a block: "for (int i = 0; i < values.length; i++) {"); empty when there
    is none."""
    for c in ranked:
        if c.score < ADD_SHARE * best_score:
            break
        after = c.following[0].sentence if c.following else ""
        if (after and is_claiming_lead_in(c.sentence) and not _prose(after)
                and not is_comment(after) and not after.rstrip().endswith(("{", ":"))
                and len(after.split()) <= CODE_EXAMPLE_WORDS):
            return [c, c.following[0]]
    return []


#: A line that prints or logs a message ('print("Data cleaning steps completed")'): it
#: would join an answer to "What are the data cleaning steps?" as if it were a sentence
#: of the book.
_PRINTS_MESSAGE = re.compile(
    r"""^\s*(?:print|printf|puts|echo|console\.log|System\.out\.print(?:ln|f)?|"""
    r"""(?:self\.)?(?:get_)?log(?:ger|ging)?(?:\(\))?\.\w+)\s*\(?\s*[fFrRbB]?["']""")


def _added(c: _Candidate) -> bool:
    """A candidate that may join the answer beside its best sentence: not list fragments or
    a heading (:func:`~bookreader.core.llm.answer_type.form_penalty`)."""
    return form_penalty(c.sentence) == 0


def _continues_with(sentence: str) -> bool:
    """A sentence that may continue the best one (:func:`_showable`): not a statement of a
    listing ("using System; using System.IO;" after "Reading the file line by line helps
    keep memory use low ..."); a comment that says in words what the listing does may
    ("# Install the test runner" after "To install the test runner, you'll need ...:")."""
    return _showable(sentence) and (is_comment(sentence) or not is_code_line(sentence))


def _prose(sentence: str) -> bool:
    """Not a code comment, a docstring or a line of a listing."""
    return not (is_comment(sentence) or looks_like_code(sentence) or is_code_line(sentence))


def _render(c: _Candidate) -> str:
    """``sentence [Source: Section (Page X) - "quote"]``, or the sentence in quotes when
    the block carries no page; without the next list item's number that PDF text leaves
    at a sentence's end (as the quotes card shows it)."""
    sentence = without_list_number(c.sentence)  # "... their environment: 1." shows no "1."
    if not c.block.page_label:
        return f"\u201c{unmarked(sentence)}\u201d"
    shown = shown_sentence(sentence)
    return f"{shown} {format_citation(c.block.section, c.block.page_label, _quote(sentence))}"


def _quote(sentence: str, max_words: int = 30) -> str:
    """A verbatim piece of ``sentence`` without double quotes or comment marks, at most
    ``max_words`` long."""
    parts = [p.strip() for p in re.split(r'["“”]', unmarked(sentence))]
    best = max(parts, key=lambda p: len(p.split()))
    words = best.split()
    return " ".join(words[:max_words])


def _embed(embedder: Any, texts: list[str]) -> list[Sequence[float]]:
    for method in ("embed", "encode"):
        fn: Any = getattr(embedder, method, None)  # a duck-typed embedder
        if callable(fn):
            vectors: Any = fn(texts)
            return list(vectors)
    raise TypeError(f"{type(embedder).__name__} has neither embed() nor encode()")


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    # numpy: the pure-Python sums cost ~4 ms per candidate sentence on a busy server
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    return float(np.dot(va, vb)) / (na * nb) if na and nb else 0.0
