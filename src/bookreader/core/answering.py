"""The three ways to ask: whole book, selected text, highlight.

One :meth:`Answerer.ask` runs the chain question -> (retrieval) -> prompt -> model ->
citations -> grounding -> answer, and returns an :class:`~bookreader.core.types.Answer`
with everything the UI and the audit log need.

* **Whole book**: hybrid retrieval (at most ``retrieval_timeout_s``); below the
  confidence threshold the answer is :data:`~bookreader.core.prompts.NOT_COVERED` and no
  model runs.
* **Selected text**: the selection is the whole context.  This path never touches the
  store, the retriever or the audit database (a test proves it); the PDF is read only to
  place the citation's highlight when the selection's pages are given.
* **Highlight**: the selection plus ``highlight_top_k`` chunks retrieved inside the
  selection's page range and its chapter(s) (both, when it crosses a chapter boundary).

Input is checked before anything runs (:func:`clean_question`, :func:`clean_selection`).
Errors after that (a model that fails to load, a broken network, a slow retrieval) come
back as an Answer with ``error`` set instead of raising, so the caller can record them;
only the user's Stop raises :class:`~bookreader.errors.Cancelled`.

Every answer carries an :class:`~bookreader.core.types.Outcome`.  "Not covered" is said
only when whole-book retrieval finds nothing above the threshold; when retrieval is
confident but no verified answer can be written (the model declined, the grounding check
removed every sentence, the time budget ran out) the outcome is ``quotes``: the one to
three sentences of the retrieved passages that best address the question, each with a
verified citation (:mod:`bookreader.core.quotes`).  Requests about the selection itself
("Explain this", "Summarize this") always get a grounded explanation of a non-empty
selection.  A sentence that only restates the question is treated as unsupported.

Confidence of an ``answer`` is a calibrated estimate of being correct
(:mod:`bookreader.core.confidence`); every other outcome is capped below "medium".
Levels: high > 0.85, medium 0.70-0.85, low < 0.70.

The run is split by responsibility: this module retrieves, builds the prompt (and the
structured :class:`~bookreader.core.types.AnswerRequest` backends receive beside it) and
checks the answer; :mod:`bookreader.core.generation` streams it within its budgets and stop
rules; :mod:`bookreader.core.model_output` reads the model's text once
(:func:`~bookreader.core.model_output.parse_answer`); :mod:`bookreader.core.outcomes`
assembles the Answer of every outcome.

Timing: ``first_token_ms`` counts from the call (what the user waits for);
``stage_ms`` holds ``retrieval``, ``prompt``, ``first_token`` (from the start of
generation), ``generation`` and ``validation``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

from bookreader.core import answer_quotes, book_answer, prompts, quotes
from bookreader.core import confidence as calibration
from bookreader.core.citations import CitationSource, strip_citations, verify_answer
from bookreader.core.focus import focus, focus_passages, unique_sentences
from bookreader.core.generation import budget_pair, generate
from bookreader.core.grounding import GroundingValidator, supported_part
from bookreader.core.inputs import (  # noqa: F401 - part of this module's API
    MAX_QUESTION_CHARS,
    MAX_SELECTION_CHARS,
    clean_question,
    clean_selection,
)
from bookreader.core.grounding_checks import swaps_compared_side
from bookreader.core.llm.answer_type import (
    comparison_sides,
    is_formula,
    question_kind,
    reads_as_code,
    wants_code,
    wants_formula,
)
from bookreader.core.llm.specs import family_spec, spec_for, timeout_message
from bookreader.core.model_output import (  # noqa: F401 - part of this module's API
    drop_code_name_claims,
    drop_fragments,
    drop_prompt_tags,
    drop_unclosed_citations,
    end_lead_ins,
    loop_start,
    only_self_quotes,
    parse_answer,
    plain_code_marks,
    plain_math_marks,
)
from bookreader.core.outcomes import (  # noqa: F401 - part of this module's API
    DEFAULT_GENERATION_CONFIDENCE,
    RETRIEVAL_WEIGHT,
    OutcomeAssembly,
    combine_confidence,
    confidence_level,
    declines,
    generation_confidence,
)
from bookreader.core.retrieval import is_covered, search_question
from bookreader.core.selection_answer import (
    beside_answer,
    first_unsupported,
    selection_answer,
    turns_on_absent_word,
)
from bookreader.core.selection_relevance import names_absent_number, off_target
from bookreader.core.selection_types import lacks_asked_kind
from bookreader.core.sentences import key_only, split_sentences, words
from bookreader.core.types import (
    Answer,
    AnswerStage,
    CancelFn,
    Message,
    Mode,
    Outcome,
    Passage,
    Retrieval,
    SearchFilter,
    never_cancel,
)
from bookreader.errors import BookReaderError, Cancelled, InvalidInput, QueryTimeout

log = logging.getLogger(__name__)

#: Below this grounding similarity an answer whose citation excerpt the model invented is
#: rejected even when its words are all in the context (see ``_finish``).
INVENTED_MIN_SIMILARITY = 0.70


def _no_stage(_stage: AnswerStage) -> None:
    """The default ``on_stage``: nobody is told."""


class Answerer:
    """Answers questions in the three modes.

    Args:
        settings: Thresholds, top-k values, time budgets, default backend.
        embedder: The shared MiniLM (grounding, and the extractive backend's re-ranking).
        backend_factory: ``factory(name) -> LLMBackend``; by default
            :func:`bookreader.core.llm.registry.create_backend`.
        budget_fn: ``budget(name) -> (first-token seconds, total seconds)`` (None: no
            such limit; a single number is a total budget); by default
            :func:`bookreader.core.llm.registry.budget_for` (the spec table).
        validator: The grounding validator; built from ``embedder`` and the settings'
            thresholds when omitted.
    """

    def __init__(
        self,
        settings: Any,
        *,
        embedder: Any,
        backend_factory: Optional[Callable[[str], Any]] = None,
        budget_fn: Optional[Callable[[str], Any]] = None,
        validator: Optional[GroundingValidator] = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        from bookreader.core.llm import registry

        def default_factory(name: str) -> Any:
            return registry.create_backend(name, settings, embedder=embedder)

        def default_budget(name: str) -> Any:
            return registry.budget_for(name, settings)

        self._backend_factory: Callable[[str], Any] = backend_factory or default_factory
        self._budget_fn: Callable[[str], Any] = budget_fn or default_budget
        if validator is None:
            copy = getattr(embedder, "quantized_copy", None)
            validator = GroundingValidator(
                copy() if copy is not None else embedder,
                settings.grounding_similarity_threshold,
                settings.grounding_overlap_threshold,
            )
        self.validator = validator

    # --- the one entry point --------------------------------------------------------------
    def ask(
        self,
        question: Any,
        *,
        mode: Mode,
        retriever: Any = None,
        pages: Any = None,
        selection: Any = None,
        page_range: Optional[tuple[int, int]] = None,
        backend: Optional[str] = None,
        on_token: Optional[Callable[[str], None]] = None,
        cancel: CancelFn = never_cancel,
        book_id: str = "",
        book_title: str = "",
        on_start: Optional[Callable[[Answer], None]] = None,
        on_stage: Optional[Callable[[AnswerStage], None]] = None,
    ) -> Answer:
        """Answer ``question`` in ``mode``.

        ``on_start`` gets a provisional Answer (question, selection, retrieval, prompt; no
        text) just before the model starts: the audit log's write-ahead record.
        ``on_stage`` hears each :class:`AnswerStage` as it begins (the window says what is
        happening while the student waits).

        Raises:
            InvalidInput: a bad question or selection, or a mode without what it needs
                (before anything runs).
            Cancelled: ``cancel()`` turned true.
        """
        t0 = time.perf_counter()
        mode = Mode(mode)
        question = clean_question(question)
        sel_text, warning = ("", "")
        if mode is not Mode.BOOK:
            if selection is None:
                raise InvalidInput("Select some text in the book first, then ask about it.")
            sel_text, warning = clean_selection(selection)
        if mode is not Mode.SELECTED and retriever is None:
            raise InvalidInput("Open a book first: this kind of question searches the book.")
        if page_range is not None:
            a, b = int(page_range[0]), int(page_range[1])
            if a < 0 or b < a:
                raise InvalidInput(
                    f"The page range {a + 1}-{b + 1} is not valid. Give the first page, then the last."
                )
            count = getattr(pages, "page_count", None)
            if isinstance(count, int) and b >= count:
                raise InvalidInput(
                    f"The page range {a + 1}-{b + 1} goes past the end of the book "
                    f"({count} pages). Check the pages of the selection."
                )
            page_range = (a, b)
        if mode is Mode.HIGHLIGHT and page_range is None:
            raise InvalidInput(
                "Highlight questions need the pages of the selection. Select text in the reader "
                "(or give --pages A-B)."
            )
        from bookreader.core.llm.registry import resolve_name

        name = resolve_name(backend, self.settings)
        run = _Run(self, question, mode, name, t0, book_id, book_title, sel_text, warning)
        run.page_range = page_range
        run.pages = pages
        run.on_start = on_start
        run.on_stage = on_stage or _no_stage
        if cancel():
            raise Cancelled()
        return run.execute(retriever, on_token, cancel)

    def load(self, model: Any, prefix: Sequence[Message]) -> None:
        """The one-off work before a model answers: load both embedders (the extractive
        backend's and the validator's) and ``model``, and have a local model read
        ``prefix`` (the mode's rules and worked example, the same for every question of a
        mode: read once per session, like loading the model, not once per answer).

        Raises:
            BookReaderError: a model that cannot be loaded.
        """
        self.embedder.warm_up()
        self.validator.embedder.warm_up()
        if model is None:
            return
        model.warm_up()
        prime = getattr(model, "prime", None)
        if prime is not None and prefix:
            prime(prefix)

    def warm_up(self, backend: Optional[str] = None) -> str:
        """Do now the one-off work of the next whole-book question (see ``_generate``):
        load both embedders and the backend ``ask(backend=backend)`` would use, and have
        a local model read the whole-book rules prefix a real question sends.

        Claude needs nothing (and no request is sent).  Never raises a BookReaderError: a
        missing or broken model is logged, and the question itself reports it.

        Returns:
            The backend name warmed, or "" when no model was loaded (Claude, a failure).
        """
        from bookreader.core.llm.registry import resolve_name

        name = resolve_name(backend, self.settings)
        try:
            if spec_for(name).kind in ("claude", "openai"):  # remote: nothing to load
                self.load(None, ())
                return ""
            # the rules prefix is the same whatever the question
            self.load(self._backend_factory(name),
                      prompts.messages_for(prompts.request_for(Mode.BOOK, "?"))[:-1])
        except BookReaderError as exc:
            log.warning("Warm-up of %s failed (the next question reports it): %s", name,
                        exc.user_message)
            return ""
        log.info("Warmed up %s", name)
        return name


class _Run(OutcomeAssembly):
    """The state of one question while it is being answered."""

    def __init__(
        self,
        owner: Answerer,
        question: str,
        mode: Mode,
        backend_name: str,
        t0: float,
        book_id: str,
        book_title: str,
        selection: str,
        warning: str,
    ) -> None:
        self.owner = owner
        self.settings = owner.settings
        self.question = question
        #: The text as the student asked it (recorded); ``question`` is what the stages
        #: answer: the question part alone when an instruction came with it.
        self.asked = question
        self.mode = mode
        self.backend_name = backend_name
        # a model server's spec is its model family's (core/llm/specs.py)
        self.spec = family_spec(spec_for(backend_name), self.settings.openai_model)
        self.t0 = t0
        self.book_id = book_id
        self.book_title = book_title
        self.selection = selection
        self.warning = warning
        self.page_range: Optional[tuple[int, int]] = None
        self.pages: Any = None
        self.stage_ms: dict[str, float] = {}
        self.retrieval: Optional[Retrieval] = None
        self.messages: tuple[Message, ...] = ()
        self.model_name = ""
        self.chapter = ""
        #: Passage (by id) -> the part of its text shown to the model, when focused.
        self.shown: dict[int, str] = {}
        self.on_start: Optional[Callable[[Answer], None]] = None
        self.on_stage: Callable[[AnswerStage], None] = _no_stage

    # --- helpers ----------------------------------------------------------------------
    # --- the chain ----------------------------------------------------------------------
    def execute(self, retriever: Any, on_token: Optional[Callable[[str], None]], cancel: CancelFn) -> Answer:
        if self.mode is not Mode.SELECTED:
            self.on_stage(AnswerStage.SEARCHING)
        try:
            passages = self._retrieve(retriever)
        except QueryTimeout as exc:
            return self._failed(QueryTimeout(prompts.TIMEOUT_MESSAGE, details=exc.details))
        except Cancelled:
            raise
        except BookReaderError as exc:
            return self._failed(exc)
        if cancel():
            raise Cancelled()
        retrieval_conf = 1.0 if self.mode is not Mode.BOOK else (self.retrieval.confidence if self.retrieval else 0.0)
        if self.mode is Mode.BOOK and not (
            passages and self.retrieval is not None
            and is_covered(self.retrieval, self.settings.confidence_threshold)
        ):
            log.info("Not covered: retrieval confidence %.2f", retrieval_conf)
            self.chapter = passages[0].chunk.chapter if passages else ""
            return self._answer(
                prompts.NOT_COVERED,
                fallback=True,
                confidence=1.0 - retrieval_conf,
                outcome=Outcome.NOT_COVERED,
            )
        if self.mode is Mode.SELECTED and (turns_on_absent_word(self.question, self.selection)
                                           or names_absent_number(self.question, self.selection)):
            return self._answer(prompts.NOT_IN_SELECTION, fallback=True, confidence=0.8,
                                outcome=Outcome.NOT_IN_SELECTION)
        answer = self._generate(passages, retrieval_conf, on_token, cancel)
        return book_answer.choose(self, answer, passages, retrieval_conf, cancel)

    def _writing(self, on_token: Optional[Callable[[str], None]]) -> Callable[[str], None]:
        """``on_token``, telling :attr:`on_stage` that writing began at the first token."""
        started: list[bool] = []

        def token(text: str) -> None:
            if not started:
                started.append(True)
                self.on_stage(AnswerStage.WRITING)
            if on_token is not None:
                on_token(text)

        return token

    def _retrieve(self, retriever: Any) -> list[Passage]:
        if self.mode is Mode.SELECTED:
            self.stage_ms["retrieval"] = 0.0
            self.chapter = self._chapter_of_selection()
            return []
        t = time.perf_counter()
        if self.mode is Mode.BOOK:
            # "What is X? At the end, tell me a joke.": the instruction is data; the
            # question part may be what is searched and answered (the whole is recorded).
            retrieval, self.question = search_question(retriever, self.question,
                                                       self.settings.top_k)
        else:
            if self.page_range is None:  # ask() refuses a highlight question without one
                raise InvalidInput("Highlight questions need the pages of the selection.")
            a, b = self.page_range
            chapters = self._chapters(a, b)
            self.chapter = chapters[0] if chapters else ""
            flt = SearchFilter(page_start=a, page_end=b, chapters=tuple(chapters))
            query = f"{self.question}\n{self.selection[:500]}"
            retrieval = retriever.search(query, top_k=self.settings.highlight_top_k, flt=flt)
            # Belt and braces: nothing outside the filter may reach the prompt.
            kept = tuple(p for p in retrieval.passages if flt.accepts(p.chunk))
            if len(kept) != len(retrieval.passages):
                log.error("Retriever returned %d passages outside the filter; dropped",
                          len(retrieval.passages) - len(kept))
                retrieval = replace(retrieval, passages=kept)
        # The retriever enforces the retrieval budget (QueryTimeout) stage by stage.
        self.stage_ms["retrieval"] = (time.perf_counter() - t) * 1000.0
        self.retrieval = retrieval
        if self.mode is Mode.BOOK and retrieval.passages:
            self.chapter = retrieval.passages[0].chunk.chapter
        return list(retrieval.passages)

    def _chapters(self, a: int, b: int) -> list[str]:
        """Chapters of pages a..b, in order (empty when the PDF is not at hand)."""
        if self.pages is None:
            return []
        chapters: list[str] = []
        for i in range(a, b + 1):
            ch = self.pages.page(i).chapter
            if ch not in chapters:
                chapters.append(ch)
        return [c for c in chapters if c] if any(chapters) else []

    def _chapter_of_selection(self) -> str:
        if self.pages is None or self.page_range is None:
            return ""
        try:
            return self.pages.page(self.page_range[0]).chapter
        except (IndexError, ValueError, BookReaderError) as exc:
            log.warning("Selection page %s unknown: %s", self.page_range[0], exc)
            return ""

    # --- prompt, generation, checks -------------------------------------------------------
    def _select_excerpts(self, passages: Sequence[Passage]) -> list[Passage]:
        budget = self.spec.context_chars
        if self.spec.focus_context and passages:
            # A local tier reads the best sentences of all passages, not the first whole.
            picked = focus_passages(unique_sentences([p.chunk.text for p in passages]),
                                    self.question, budget,
                                    embedder=self.owner.validator.embedder,
                                    sections=[p.chunk.section or p.chunk.chapter
                                              for p in passages],
                                    ranking=self.spec.focus_ranking,
                                    order=self.spec.focus_order)
            picked = [(k, text) for k, text in picked if text.strip()] or picked[:1]
            self.shown = {id(passages[k]): text for k, text in picked}
            return [passages[k] for k, _ in picked]
        chosen: list[Passage] = []
        used = 0
        for p in passages:
            n = len(p.chunk.text)
            if chosen and used + n > budget:
                break
            chosen.append(p)
            used += n
        return chosen

    def _only_code(self, text: str) -> bool:
        """A language model's answer that is nothing but lines of code, for a question
        that does not ask for code (:func:`~bookreader.core.llm.answer_type.wants_code`).

        Formulas are an answer to a question that asks how something is computed
        (:func:`~bookreader.core.llm.answer_type.wants_formula`): "bmi = weight / (height *
        height)" for "How do I compute the body mass index?" (the grounding check has
        found each on its page)."""
        if self.spec.kind == "extractive" or wants_code(self.question):
            return False
        sentences = [s for s in self.owner.validator.answer_sentences(text) if s.strip()]
        # Judged line by line: a sentence that introduces a formula runs on into the lines
        # under it ("... use the following formula:\nbmi = weight / (height * height)
        # \n...\nwhere:\n- weight is the body mass in kilograms"), and the whole read as
        # code.  A lead-in (a line ending in ":") says nothing by itself.
        lines = [ln.strip().lstrip("-*\u2022 ") for s in sentences for ln in s.splitlines()]
        body = [ln for ln in lines if words(ln) and not ln.endswith(":")] or sentences
        if body and wants_formula(self.question) and all(map(is_formula, body)):
            return False
        return bool(body) and all(reads_as_code(s) for s in body)

    def _mark_swapped_sides(self, text: str, validation: Any, context: str) -> Any:
        """``validation`` with the sentences that say of one side of a comparison what the
        context says only of the other marked unsupported
        (:func:`~bookreader.core.grounding_checks.swaps_compared_side`: "The important
        difference is that lists are immutable." over "... that tuples are immutable.")."""
        sides = comparison_sides(self.question)
        if sides is None:
            return validation
        context_sentences = split_sentences(context)
        swapped = tuple(s for s in self.owner.validator.answer_sentences(text)
                        if s not in validation.unsupported_sentences
                        and swaps_compared_side(s, context_sentences, sides))
        if swapped:
            log.info("Said of the other side of the comparison: %s", swapped[0][:80])
        return quotes.with_unsupported(validation, swapped)

    def _checked_passages(self, shown: Sequence[Passage]) -> list[Passage]:
        """The passages an answer is checked and cited against: in whole-book mode every
        retrieved passage, the ones the model read first.

        A local tier reads ~600 characters of their best sentences (``_select_excerpts``);
        what it says beyond them is the book's when another retrieved passage says it, and
        is cited there (the book's sentences quoted beside an answer come from every
        retrieved passage too).  Checked against the shown passages only, such an answer
        became quotes, and a wrong claim the shown ones did not contradict could pass
        ("you can use the break statement" to skip to the next iteration: the passage
        about ``continue`` was retrieved, not shown)."""
        if self.mode is not Mode.BOOK or self.retrieval is None:
            return list(shown)
        ids = {id(p) for p in shown}
        return list(shown) + [p for p in self.retrieval.passages if id(p) not in ids]

    def _generate(
        self,
        passages: Sequence[Passage],
        retrieval_conf: float,
        on_token: Optional[Callable[[str], None]],
        cancel: CancelFn,
    ) -> Answer:
        t = time.perf_counter()
        passages = self._select_excerpts(passages)
        excerpts = [
            prompts.Excerpt(i + 1, p.chunk.section or p.chunk.chapter, p.chunk.page_label,
                            self.shown.get(id(p), p.chunk.text))
            for i, p in enumerate(passages)
        ]
        sel_label = ""
        if self.page_range and self.page_range[0] == self.page_range[1] and self.pages is not None:
            sel_label = CitationSource.for_selection("", self.page_range, self.pages).label_start
        shown = self.selection if self.mode is Mode.BOOK else focus(
            self.selection, self.question, self.spec.selection_chars,
            embedder=self.owner.validator.embedder)
        request = prompts.request_for(
            self.mode, self.question, excerpts=excerpts, selection=shown,
            selection_page_label=sel_label,
        )
        self.messages = tuple(prompts.messages_for(request))
        self.stage_ms["prompt"] = (time.perf_counter() - t) * 1000.0

        try:
            backend = self.owner._backend_factory(self.backend_name)
            first_budget, total_budget = budget_pair(self.owner._budget_fn(self.backend_name))
        except BookReaderError as exc:
            return self._failed(exc)
        self.model_name = getattr(backend, "model_name", "") or self.backend_name
        # Loading a model (or the embedder the extractive backend and the validator use)
        # and reading the mode's fixed instructions are one-off costs, not part of an
        # answer's time budget.
        try:
            self.owner.load(backend, self.messages[:-1])
        except BookReaderError as exc:
            return self._failed(exc)

        if self.on_start is not None:
            self.on_start(self._answer("", fallback=False, confidence=0.0))
        max_tokens = int(self.settings.max_new_tokens)
        if self.spec.max_tokens:
            max_tokens = min(max_tokens, self.spec.max_tokens)
        self.on_stage(AnswerStage.READING)
        try:
            gen = generate(
                backend, self.messages, request=request, max_tokens=max_tokens,
                temperature=float(self.settings.temperature), first_budget=first_budget,
                total_budget=total_budget, max_claims=self.spec.max_claims,
                quote_words=self.spec.quote_words, started=self.t0,
                stage_ms=self.stage_ms, on_token=self._writing(on_token), cancel=cancel,
            )
        except Cancelled:
            raise
        except BookReaderError as exc:
            return self._failed(exc)
        if cancel():
            raise Cancelled()
        self.on_stage(AnswerStage.CHECKING)
        # Only an answer that was cut off is a timeout: one that finished is kept,
        # however long it took.  A cut-off answer with confident retrieval still leaves
        # the student with quotes of the pages to read.
        if gen.timed_out:
            seconds = first_budget if gen.timed_out == "first_token" else total_budget
            message = timeout_message(self.spec, gen.timed_out, float(seconds or 0.0))
            log.warning("Generation with %s over its %s budget of %.1f s",
                        self.backend_name, gen.timed_out, seconds)
            common = dict(raw_output=gen.raw, first_token_ms=gen.first_token_ms,
                          generation_ms=gen.generation_ms)
            rescued = self._no_answer(passages, retrieval_conf, common, reason="timeout",
                                      lead=quotes.timeout_lead(self.spec.label, gen.timed_out,
                                                               float(seconds or 0.0)))
            if rescued is not None:
                return rescued
            return self._answer(
                message, fallback=True, confidence=0.0,
                error=message, outcome=Outcome.TIMEOUT, **common,
            )
        return self._finish(gen.raw, passages, retrieval_conf, gen.logprobs, gen.first_token_ms,
                            gen.generation_ms, answer_source=gen.cut)

    def _selection_rescue(self) -> bool:
        """Selected text, not about the selection itself, not the extractive backend."""
        return (self.mode is Mode.SELECTED and quotes.task_kind(self.question) is None
                and self.spec.kind != "extractive")

    def _from_selection(self, common: dict, t: float) -> Optional[Answer]:
        """Selected text: the selection's sentence that clearly answers, in place of a model
        answer that cannot be shown (:mod:`bookreader.core.selection_answer`)."""
        if not self._selection_rescue():
            return None
        sel = CitationSource.for_selection(self.selection, self.page_range, self.pages)
        found = selection_answer(self.question, sel, self.owner.validator, self.pages,
                                 model_answer=common.get("raw_output") or "")
        if found is None:
            return None
        text, citations, validation, sentence = found
        signals = self._signals(sentence, validation, 1.0,
                                calibration.generation_confidence(None, []))
        self.stage_ms["validation"] = (time.perf_counter() - t) * 1000.0
        return self._answer(text, fallback=False, confidence=calibration.calibrated(signals),
                            citations=citations, validation=validation, in_selected_text=True,
                            confidence_signals=signals.as_dict(), replaced_by_validator=True,
                            outcome=Outcome.ANSWER, **common)

    def _finish(
        self,
        raw: str,
        passages: Sequence[Passage],
        retrieval_conf: float,
        logprobs: list[float],
        first_token_ms: Optional[float],
        generation_ms: float,
        answer_source: Optional[str] = None,
    ) -> Answer:
        t = time.perf_counter()
        fallback_sentence = prompts.fallback_text(self.mode)
        source = raw if answer_source is None else answer_source
        parsed = parse_answer(source)
        text, stated = parsed.text, parsed.confidence
        if self.mode is Mode.BOOK:
            # a label ("Obstacle avoidance behavior.") answers no "how" or "why"
            how = question_kind(self.question) in ("procedure", "reason")
            text = drop_code_name_claims(
                drop_fragments(plain_code_marks(plain_math_marks(drop_prompt_tags(text))),
                               labels=how))
        gen_conf = generation_confidence(stated, logprobs)
        confidence = combine_confidence(retrieval_conf, gen_conf)
        common = dict(raw_output=raw, first_token_ms=first_token_ms, generation_ms=generation_ms)

        if not text or declines(text):
            self.stage_ms["validation"] = (time.perf_counter() - t) * 1000.0
            rescued = self._no_answer(passages, retrieval_conf, common, reason="declined")
            if rescued is not None:
                return rescued
            return self._answer(fallback_sentence, fallback=True, confidence=confidence, **common)

        sources = self._sources(self._checked_passages(passages))
        context = "\n\n".join(s.text for s in sources)
        raw_text = text
        text, citations = verify_answer(text, sources, self.pages, add_missing=False)
        if self.mode is Mode.BOOK and citations:
            # again once the citations are repaired: an invented excerpt ("Process camera
            # measurement") is replaced by the code name the page holds
            named = drop_code_name_claims(text)
            if named != text and not named:
                self.stage_ms["validation"] = (time.perf_counter() - t) * 1000.0
                return self._no_answer(passages, retrieval_conf, common, reason="declined") \
                    or self._answer(fallback_sentence, fallback=True, confidence=confidence,
                                    **common)
            if named != text:
                text, citations = verify_answer(named, sources, self.pages, add_missing=False)
        # Citations whose excerpt the model invented (found nowhere in the context, so
        # replaced by the closest real sentence): remembered across the second pass below.
        invented = {(c.page, key_only(c.excerpt)) for c in citations if c.repaired}
        validation = self.owner.validator.validate(text, context, question=self.question)
        validation = self._mark_tautologies(text, validation)
        validation = self._mark_swapped_sides(text, validation, context)
        if (invented and validation.passed and validation.similarity < INVENTED_MIN_SIMILARITY
                and not only_self_quotes(raw_text, context)):
            # The model quoted words the context does not hold, and its answer is only
            # loosely like the context: the usual shape of a conclusion stitched from the
            # passage's own words ("the warning says the instruction was left out").
            log.info("Rejected: an invented citation excerpt and similarity %.2f",
                     validation.similarity)
            validation = replace(validation, passed=False)
            return self._from_selection(common, t) or self._not_shown(
                passages, retrieval_conf, common, "rejected", validation, confidence, t)
        replaced = False
        if not validation.passed:
            kept = supported_part(text, validation)
            if kept is None:
                replaced = True
            elif self.mode is Mode.SELECTED and first_unsupported(
                    self.owner.validator.answer_sentences(text), validation):
                replaced = True  # what is left explains an answer that is not shown
            else:
                log.info("Dropped %d unsupported sentence(s)", len(validation.unsupported_sentences))
                text = kept
        if not replaced and self.mode is Mode.BOOK and self._only_code(text):
            # "total, count = row_sums" three times, all that is left of "How do I
            # calculate the average ...?" once its claim was dropped: a line of a listing
            # copied from the excerpts says nothing the student asked
            log.info("Only lines of code left for a question that asks for none")
            replaced = True
        if replaced:
            return self._from_selection(common, t) or self._not_shown(
                passages, retrieval_conf, common, "rejected", validation, confidence, t)
        if (self._selection_rescue() and off_target(self.question, text, self.selection,
                                                    self.owner.validator.embedder)) or (
                self.mode is Mode.SELECTED and lacks_asked_kind(self.question, strip_citations(text))):
            return self._from_selection(common, t) or self._not_shown(
                passages, retrieval_conf, common, "off target", validation, confidence, t)
        text, citations = verify_answer(text, sources, self.pages, add_missing=True)
        # A citation quoting a sentence unrelated to its claim moves to the one that holds
        # it; one quoting a whole paragraph keeps the words for its claim.
        moved = answer_quotes.trim_excerpts(
            answer_quotes.repoint_citations(text, sources, self.pages))
        if moved != text:
            text, citations = verify_answer(moved, sources, self.pages, add_missing=True)
        if invented:  # the second pass finds the repaired excerpts verbatim (or a stretch)
            citations = tuple(replace(c, repaired=True) if any(
                key_only(c.excerpt) in key for page, key in invented if page == c.page)
                else c for c in citations)
        if self.mode is Mode.BOOK and not any(c.verified for c in citations):
            # Every claim of a whole-book answer carries a citation a student can follow;
            # an answer none of whose sentences could be tied to a page is not shown as one.
            return self._not_shown(passages, retrieval_conf, common, "uncited", validation,
                                   confidence, t)
        model_text = text  # the confidence signals judge what the model wrote
        if self.mode is Mode.BOOK and self.spec.answer_quote:
            # the book's sentences beside it come from every retrieved passage, not only
            # the ~600 characters the model read (which can miss the page that explains it)
            every = self._sources(self.retrieval.passages) if self.retrieval else sources
            text, citations = answer_quotes.with_best_quote(
                self.question, text, citations, every, "\n\n".join(s.text for s in every),
                self.owner.validator, self.pages, embedder=self.owner.embedder)
        elif self._selection_rescue():  # the selection's answering sentence beside it
            text, citations = beside_answer(self.question, text, citations, sources[0],
                                            self.owner.validator, self.pages) or (text, citations)
        in_sel: Optional[bool] = None
        if self.mode is Mode.SELECTED:
            in_sel = True
        elif self.mode is Mode.HIGHLIGHT:
            in_sel = self.owner.validator.validate(text, self.selection).passed
        signals = self._signals(model_text, validation, retrieval_conf, gen_conf)
        confidence = calibration.calibrated(signals)
        if self.mode is Mode.BOOK and self.spec.kind != "extractive":
            # A model's lead-in keeps its claim, not the list's "1." left before the
            # citation.  Only as shown: the confidence judged the text as written (it is
            # fitted on it, and an answer just above book_answer.MIN_CONFIDENCE can fall
            # below it without the number), and the extractive backend's sentences keep
            # theirs.
            text = end_lead_ins(text)
        self.stage_ms["validation"] = (time.perf_counter() - t) * 1000.0
        return self._answer(
            text, fallback=False, confidence=confidence, citations=citations,
            validation=validation, confidence_signals=signals.as_dict(),
            in_selected_text=in_sel, outcome=Outcome.ANSWER, **common,
        )
