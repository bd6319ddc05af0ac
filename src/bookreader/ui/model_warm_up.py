"""Loading the open book's index and the language model before the first question.

A mixin of :class:`~bookreader.ui.main_window.MainWindow` (kept apart to keep that file
short): once the book on screen is ready to ask, :meth:`ModelWarmUpMixin.warm_up` asks
the library to load what its first question would load, on the lane questions use, and
shows a quiet note in the status bar while the local model loads.  The window keeps which
books were warmed (``_warmed_books``, cleared when Settings rebuild the library) and
emits ``model_warmed`` when the load is done.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QTimer

from bookreader.core.types import BookInfo, BookState
from bookreader.errors import BookReaderError
from bookreader.ui.library_service import _norm

log = logging.getLogger(__name__)


class ModelWarmUpMixin:
    """The warm-up of the main window's open book and model."""

    #: Load the model as soon as a book is ready to ask (the benchmark turns it off to
    #: measure a first question without it).
    warm_up_models = True

    # Provided by MainWindow.
    settings: Any
    service: Any
    current_path: Any
    status_model: Any
    model_warmed: Any
    _warmed_books: set[str]
    _model_warm: bool

    def warm_up(self, info: BookInfo) -> None:
        """Load the open book's index and the language model in the background once the
        book is ready to ask, so the first question does not wait for them.  Quiet: a note
        in the status bar, no dialog; nothing for Claude (no request before a question).
        It runs on the lane questions use, so a question asked meanwhile waits for it."""
        if (not self.warm_up_models or info.state is not BookState.READY
                or self.current_path is None or _norm(info.path) != self.current_path
                or info.book_id in self._warmed_books):
            return
        from bookreader.api import backend_kind

        try:
            kind = backend_kind(self.settings)
        except BookReaderError as exc:  # an unknown name: the question says what to do
            log.info("No warm-up: %s", exc.user_message)
            return
        if kind == "claude":
            return
        self._warmed_books.add(info.book_id)
        local = kind == "llama"
        if local and not self._model_warm:
            self.status_model.setText("Loading the language model…")
        self.service.warm_up(info.book_id, on_success=self._on_warmed,
                             on_failure=self._on_warm_failed,
                             on_cancel=lambda: self._on_warm_cancelled(info.book_id))

    def _on_warmed(self, name: str) -> None:
        self._model_warm = bool(name)
        if self.status_model.text():
            self.status_model.setText("Language model ready" if name else "")
            QTimer.singleShot(5000, self.status_model, self._clear_ready_note)
        self.model_warmed.emit(name)

    def _clear_ready_note(self) -> None:
        if self.status_model.text() == "Language model ready":
            self.status_model.setText("")

    def _on_warm_cancelled(self, book_id: str) -> None:
        # The lanes were stopped (quit, another data folder): the next ready book warms.
        self._warmed_books.discard(book_id)
        self.status_model.setText("")

    def _on_warm_failed(self, exc: BaseException) -> None:
        # Library.warm_up logs and swallows what a user can cause; this is unexpected,
        # and the next question reports it as it always does.
        log.error("Warming up the language model failed: %r\n%s", exc,
                  getattr(exc, "remote_traceback", ""))
        self.status_model.setText("")
        self.model_warmed.emit("")
