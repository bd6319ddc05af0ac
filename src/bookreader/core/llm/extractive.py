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
import re
from typing import Any, Callable, Iterator, Optional, Sequence

# Re-exported: the quotes card ranks with the same rules (core/quotes.py imports them here).
from bookreader.core.llm.answer_type import (  # noqa: F401  (re-exported)
    _TASK_SECTION,
    CODE_CHARS,
    LEAD_IN_TO_CODE,
    META,
    TASK,
    TOC_LINE,
    COMPARISON_BONUS,
    answer_type_bonus,
    asks_for_name,
    code_penalty,
    comparison_sides,
    content_terms,
    form_penalty,
    heading_like,
    is_claiming_lead_in,
    is_alt_text,
    is_fragment_list,
    is_glossary_entry,
    is_import_line,
    is_title_line,
    looks_like_code,
    names_both,
    question_kind,
    reads_as_code,
    shown_sentence,
    unmarked,
    wants_code,
    without_list_number,
)
from bookreader.core.llm import answer_ranker
from bookreader.core.llm.answer_features import candidate_features, question_view
from bookreader.core.llm.continuation import continuation, is_enumerator
from bookreader.core.llm.extractive_candidates import (
    PRINTS_MESSAGE,
    Candidate,
    block_candidates,
    continues_with,
    cosine,
    embed,
    heading_match,
    is_prose,
    may_join,
    score_keywords,
    score_similarity,
)
from bookreader.core.llm.extractive_compose import (
    ADD_SHARE,
    CODE_ADD_SHARE,
    code_example,
    other_side,
    render,
)
from bookreader.core.llm.extractive_context import (  # noqa: F401  (re-exported)
    ContextBlock,
    ParsedPrompt,
    parse_prompt,
    prompt_from_request,
    split_sentences,
)
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
            text = "\n".join(render(c) for c in chosen) + f"\nConfidence: {confidence:.2f}"
            if len(text.split()) <= max_tokens or len(chosen) == 1:
                return text
            chosen = chosen[:-1]
        return fallback  # pragma: no cover - the loop always returns

    def rank(self, prompt: ParsedPrompt) -> list[Candidate]:
        """The context's candidate sentences scored for the question, best first (the
        :data:`RERANK_POOL` best by keywords); empty when nothing can be scored."""
        candidates = [c for block in prompt.blocks for c in block_candidates(block)]
        candidates = [c for c in candidates if c.terms]
        # A heading ("4.6 Retention and archiving") names a topic; it answers nothing.
        sentences = [c for c in candidates if not heading_like(c.sentence)]
        candidates = sentences or candidates
        query = list(dict.fromkeys(content_terms(prompt.question)))
        if not candidates or not query:
            return []
        score_keywords(candidates, query)
        ranked = sorted(candidates, key=lambda c: c.bm25, reverse=True)[:RERANK_POOL]
        if self._embedder is not None:
            score_similarity(self._embedder, ranked, prompt.question)
        kind = question_kind(prompt.question)
        asks_name = asks_for_name(prompt.question)
        sides = comparison_sides(prompt.question)
        q_terms = set(query)
        for c in ranked:
            # Keywords and meaning, meaning weighted more (SIMILARITY_WEIGHT).  (The maximum
            # of coverage and the mean, used before, let every sentence holding all the
            # question's words tie at 1.0, so similarity never separated them.)
            c.score = c.coverage if c.similarity is None else (
                (1 - SIMILARITY_WEIGHT) * c.coverage + SIMILARITY_WEIGHT * c.similarity)
            c.score += HEADING_WEIGHT * heading_match(c.heading, q_terms)
            c.score += answer_type_bonus(kind, c.sentence, q_terms, asks_name=asks_name)
            c.score += form_penalty(c.sentence)
            if names_both(c.sentence, sides):
                c.score += COMPARISON_BONUS
            if _TASK_SECTION.search(c.block.section):
                c.score -= 0.1  # exercises set tasks; the answer is usually in the text
        ranked.sort(key=lambda c: (c.score, c.bm25), reverse=True)
        model = answer_ranker.ranker()
        if model is not None:
            first = next((b.number for b in prompt.blocks if b.kind == "excerpt"), None)
            view = question_view(prompt.question, kind, sides, first, ranked)
            learned = {id(c): answer_ranker.order_score(model, candidate_features(c, view))
                       for c in ranked}
            ranked.sort(key=lambda c: (self._matches(c), learned[id(c)]), reverse=True)
        return ranked

    def select(self, prompt: ParsedPrompt) -> list[Candidate]:
        """The sentences to quote, best first; empty when the context does not answer."""
        ranked = self.rank(prompt)
        if not ranked:
            return []
        if not is_prose(ranked[0].sentence):
            # A comment or a listing line names what the code does; a sentence of prose of
            # its section nearly as good says it, and leads (the line may still follow it).
            # (Prose from another section is another topic: measured on the tune halves,
            # allowing it lost one answer.)
            code = ranked[0]
            prose = next((c for c in ranked[1:] if c.score >= code.score - PROSE_LEAD
                          and c.block.section == code.block.section and is_prose(c.sentence)
                          and may_join(c) and self._matches(c)), None)
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
        lead = next((c for c in ranked if may_join(c) and is_prose(c.sentence)), None)
        if best is not ranked[0] and lead is not None and lead.score > best.score:
            # The brief only decides that the context answers; the best-scored sentence of
            # prose (not a listing's line) says what the student asked ("Queues:
            # First-in, first-out collections of items." before "By the end of this
            # chapter, students will be able to: ... Implement stacks, queues and
            # deques").
            best = lead
        return self.compose(prompt, ranked, best)

    def compose(self, prompt: ParsedPrompt, ranked: list[Candidate], best: Candidate
                ) -> list[Candidate]:
        """The answer built around ``best``: the sentence it points back to, its
        continuation, and the ranked sentences that add the question's other words."""
        query = list(dict.fromkeys(content_terms(prompt.question)))
        first = next((b.number for b in prompt.blocks if b.kind == "excerpt"), None)
        sides = comparison_sides(prompt.question)
        q_terms = set(query)
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
                             usable=continues_with, related=related) if self.continue_best else 0
        for c in best.following[:taken]:
            if c.terms and not is_enumerator(c.sentence):
                chosen.append(c)
                covered |= set(c.terms)
        limit = self.max_sentences + len(chosen) - 1

        def fits(c: Candidate) -> bool:  # an added sentence keeps the answer short
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
            top = next((c for c in ranked[1:] if c.block.number == first and may_join(c)
                        and c.antecedent is None
                        and all(c.sentence != x.sentence for x in chosen)),
                       None)
            if top is not None and top.score >= self.top_share * best.score:
                chosen.append(top)
                covered |= set(top.terms)
        for c in ranked[1:]:
            if len(chosen) >= limit:
                break
            if c in chosen or any(c.sentence == x.sentence for x in chosen) or not may_join(c):
                continue
            if c.antecedent is not None and c.antecedent not in chosen:
                continue  # "This extends to arrays, ..." says nothing without its antecedent
            if PRINTS_MESSAGE.match(c.sentence) and not wants_code(prompt.question):
                continue  # what a program reports ("print("... completed")"), not the book
            adds_terms = any(t in c.terms and t not in covered for t in query)
            share = ADD_SHARE if is_prose(c.sentence) else CODE_ADD_SHARE
            if c.score >= share * best.score and adds_terms and fits(c):
                chosen.append(c)
                covered |= set(c.terms)
        other = other_side(chosen, ranked, sides, best)
        if other is not None and fits(other):
            chosen.append(other)
        if wants_code(prompt.question) and all(is_prose(c.sentence) for c in chosen):
            # "How do you declare an array in Java?": the prose says what a declaration
            # does; the book's example shows it.  The best lead-in to an example that
            # scores nearly as well as the answer ("... with a single line of code:") joins
            # it with the example's lines (a few words, beyond the answer's word bound).
            chosen += [c for c in code_example(ranked, best.score) if c not in chosen]
        return chosen

    def _related_to(self, best: Candidate, q_terms: set[str], question: str
                    ) -> Callable[[str], bool]:
        """Whether a sentence after a short best sentence is about the same thing: MiniLM
        similarity to the best sentence or to the question at least
        :data:`CONTINUATION_SIMILARITY`, or (without an embedder) a word in common."""
        about = set(best.terms) | q_terms

        def related(sentence: str) -> bool:
            if self._embedder is not None:
                try:
                    vs = embed(self._embedder, [sentence, best.sentence, question])
                except Exception:  # keywords decide; say why in the log
                    log.exception("extractive: embedding failed, using keywords only")
                else:
                    return max(cosine(vs[0], vs[1]),
                               cosine(vs[0], vs[2])) >= CONTINUATION_SIMILARITY
            return bool(set(content_terms(sentence)) & about)
        return related

    def _matches(self, c: Candidate) -> bool:
        """The sentence holds enough of the question's rare words, or says it in other
        words (:attr:`min_coverage`, :attr:`min_similarity`)."""
        return c.coverage >= self.min_coverage or (
            c.similarity is not None and c.similarity >= self.min_similarity)

    def _fallback_for(self, prompt: ParsedPrompt) -> str:
        if prompt.fallback:
            return prompt.fallback
        if any(b.kind == "selection" for b in prompt.blocks):
            return self.not_in_selection
        return self.not_covered
