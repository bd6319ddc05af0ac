"""One question through the stages, in order.

    retrieve -> (gate) -> context -> generate -> parse -> cite -> check -> cite for
    display -> book sentences -> render -> choose

Each stage is a function of its own module taking and returning typed, frozen values
(:class:`~bookreader.core.answer.run.Run`, ``Retrieved``, ``Context``, ``Generated``,
``Draft``, ``Cited``, ``Verdict``, the :class:`~bookreader.core.types.Answer`); this module
only runs them and takes each early exit by its name:

* **not covered / not in the selection** (the mode's gate): before any model runs;
* **failed**: retrieval, the backend or the model failed (an Answer with ``error``);
* **timed out**: the answer was cut off by a budget (quotes when retrieval was sure);
* **declined**: the model said it cannot answer, or nothing of its answer is left;
* **refused**: a check refused the answer (the selection's answer, quotes or the
  fallback instead);
* **uncited**: a whole-book answer with no verified citation.

Only the user's Stop raises (:class:`~bookreader.errors.Cancelled`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, Sequence

from bookreader.core import prompts
from bookreader.core.types import Answer, AnswerStage, CancelFn, Passage
from bookreader.errors import BookReaderError, Cancelled, QueryTimeout

from bookreader.core.answer.check import check, uncited
from bookreader.core.answer.choose import RIVAL, applies, choose
from bookreader.core.answer.cite import cite_as_written, cite_for_display, with_book_sentences
from bookreader.core.answer.context import build_context
from bookreader.core.answer.draft import Generated, parse
from bookreader.core.answer.fallbacks import declined, not_shown, refused
from bookreader.core.answer.generate import generated, open_model, stream, timed_out
from bookreader.core.answer.modes import Retrieved, strategy
from bookreader.core.answer.render import answer, failed, verified
from bookreader.core.answer.run import Run

OnToken = Optional[Callable[[str], None]]


def retrieve(run: Run, retriever: Any) -> Retrieved | Answer:
    """The retrieve stage, or the Answer of a retrieval that failed."""
    mode = strategy(run)
    if mode.searches:
        run.on_stage(AnswerStage.SEARCHING)
    run = mode.prepare(run)
    try:
        return mode.retrieve(run, retriever)
    except QueryTimeout as exc:
        return failed(run, QueryTimeout(prompts.TIMEOUT_MESSAGE, details=exc.details))
    except Cancelled:
        raise
    except BookReaderError as exc:
        return failed(run, exc)


def answer_question(run: Run, retriever: Any, on_token: OnToken, cancel: CancelFn) -> Answer:
    """The Answer to ``run``'s question (the whole chain)."""
    found = retrieve(run, retriever)
    if isinstance(found, Answer):
        return found
    if cancel():
        raise Cancelled()
    run = found.run
    early = strategy(run).gate(found)
    if early is not None:
        return answer(run, early.text, fallback=True, confidence=early.confidence,
                      outcome=early.outcome)
    written = answer_passages(run, found.passages, found.confidence, on_token, cancel)
    return book_sentences_instead(run, written, found, cancel)


def answer_passages(run: Run, passages: Sequence[Passage], retrieval_conf: float,
                    on_token: OnToken, cancel: CancelFn) -> Answer:
    """The run's backend answers from ``passages``: context, generate, then
    :func:`finish`."""
    context = build_context(run, passages)
    run = context.run
    try:
        model = open_model(run)
    except BookReaderError as exc:
        return failed(run, exc)
    run = run.learned(model_name=model.name)
    # Loading a model (or the embedder the extractive backend and the validator use)
    # and reading the mode's fixed instructions are one-off costs, not part of an
    # answer's time budget.
    try:
        run.parts.load(model.backend, run.messages[:-1])
    except BookReaderError as exc:
        return failed(run, exc)
    if run.on_start is not None:  # the audit log's write-ahead record
        run.on_start(answer(run, "", fallback=False, confidence=0.0))
    run.on_stage(AnswerStage.READING)
    try:
        gen = stream(run, context, model, on_token, cancel)
    except Cancelled:
        raise
    except BookReaderError as exc:
        return failed(run, exc)
    if cancel():
        raise Cancelled()
    run.on_stage(AnswerStage.CHECKING)
    if gen.timed_out:
        return timed_out(run, context.passages, retrieval_conf, gen, model)
    return finish(run, context.passages, generated(gen), retrieval_conf)


def finish(run: Run, passages: Sequence[Passage], written: Generated,
           retrieval_conf: float) -> Answer:
    """What the model wrote, parsed, cited, checked and rendered (``passages``: those
    it read)."""
    t = time.perf_counter()
    draft = parse(run, written, retrieval_conf)
    if draft.declined:
        return declined(run, passages, retrieval_conf, draft, t)
    mode = strategy(run)
    sources = mode.sources(run, mode.checked_passages(run, passages))
    cited = cite_as_written(run, draft.text, sources)
    if cited is None:
        return declined(run, passages, retrieval_conf, draft, t)
    verdict = check(run, cited, "\n\n".join(s.text for s in sources), draft.text)
    if verdict.refusal:
        return refused(run, passages, retrieval_conf, draft, verdict.refusal,
                       verdict.validation, t)
    shown = cite_for_display(run, verdict.text, sources, cited.invented)
    if uncited(run, shown.citations):
        return not_shown(run, passages, retrieval_conf, draft, "uncited", verdict.validation,
                         t)
    final = with_book_sentences(run, shown, sources)
    return verified(run, draft, verdict.validation, shown.text, final.text, final.citations,
                    retrieval_conf, t)


def book_sentences_instead(run: Run, written: Answer, found: Retrieved,
                           cancel: CancelFn) -> Answer:
    """The choose stage: ``written``, or the book's sentences (the extractive backend's
    answer on the same passages) when they are the better bet."""
    if not applies(run, written) or not found.passages:
        return written
    t = time.perf_counter()
    book = answer_passages(run.with_backend(RIVAL), found.passages, found.confidence, None,
                           cancel)
    return choose(run, written, book, (time.perf_counter() - t) * 1000.0)
