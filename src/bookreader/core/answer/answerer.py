"""The Answerer: the one entry point that answers questions in the three modes.

:meth:`Answerer.ask` checks the input before anything runs (:func:`clean_question`,
:func:`clean_selection`, the page range), then runs the stages of
:mod:`bookreader.core.answer.pipeline`.  Errors after that come back as an Answer with
``error`` set instead of raising; only the user's Stop raises
:class:`~bookreader.errors.Cancelled`.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Optional, Sequence

from bookreader.core import prompts
from bookreader.core.grounding import GroundingValidator
from bookreader.core.inputs import clean_question, clean_selection
from bookreader.core.llm.specs import spec_for
from bookreader.core.types import Answer, AnswerStage, CancelFn, Message, Mode, never_cancel
from bookreader.errors import BookReaderError, Cancelled, InvalidInput

from bookreader.core.answer.pipeline import answer_question
from bookreader.core.answer.run import Parts, Run, backend_spec, no_stage

log = logging.getLogger(__name__)


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

    @property
    def parts(self) -> Parts:
        """The components the answering stages use."""
        return Parts(self.settings, self.embedder, self.validator, self._backend_factory,
                     self._budget_fn, self.load)

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
        run = Run(self.parts, question, question, mode, name, backend_spec(name, self.settings),
                  t0, book_id=book_id, book_title=book_title, selection=sel_text,
                  warning=warning, page_range=page_range, pages=pages, on_start=on_start,
                  on_stage=on_stage or no_stage)
        if cancel():
            raise Cancelled()
        return answer_question(run, retriever, on_token, cancel)

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

    def backend(self, name: str) -> Any:
        """The backend called ``name`` from this answerer's factory (the library's
        registry builds each once), for other tools that use the same model."""
        return self._backend_factory(name)

    def warm_up(self, backend: Optional[str] = None) -> str:
        """Do now the one-off work of the next whole-book question :
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
