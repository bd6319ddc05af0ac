"""One data folder, one count per key: the lock that keeps two servers from doubling it.

A server that counts the per-key rate limit in its own memory must be the only server on
its data folder: a second one would count the same keys afresh, and every key would get
its budget twice, silently.  Servers that count in the shared store (the audit database,
``--rate-limit-store shared``) see each other's counts and may share a folder.

So every server holds a lock on ``<data>/serve.lock`` while it runs: exclusive when it
counts in memory, shared when it counts in the shared store.  A server that cannot take
its lock stops at once and says why.  The operating system drops the lock when the
process ends, however it ends, so a crash leaves nothing to clean up.  (On Windows, where
only exclusive locks exist here, every server takes an exclusive lock.)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import IO, Optional

from bookreader.errors import AlreadyRunning

log = logging.getLogger(__name__)

LOCK_FILE = "serve.lock"


class FolderLock:
    """The held lock; :meth:`release` (or the end of the process) lets it go."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle: Optional[IO[bytes]] = handle

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()  # closing the file drops the lock
            self._handle = None


def lock_data_folder(data_dir: Path, *, shared: bool) -> FolderLock:
    """Lock ``data_dir`` for a server counting in memory (``shared`` False) or in the
    shared store (True).

    Raises:
        AlreadyRunning: another server holds a lock that this one cannot share.
    """
    path = Path(data_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")
    try:
        _lock(handle, shared)
    except OSError:
        handle.close()
        raise AlreadyRunning(_message(data_dir, shared)) from None
    log.info("Serving data folder %s (%s lock)", data_dir, "shared" if shared else "exclusive")
    return FolderLock(handle)


def _lock(handle: IO[bytes], shared: bool) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        return
    fcntl.flock(handle.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)


def _message(data_dir: Path, shared: bool) -> str:
    if shared:
        return (
            f"Another `bookreader serve` already serves the data folder {data_dir} and "
            "counts the rate limit in its own memory, so this server could not share its "
            "counts. Stop it, or start both with --rate-limit-store shared."
        )
    return (
        f"Another `bookreader serve` already serves the data folder {data_dir}. Two "
        "servers counting the rate limit in memory would each give every key its full "
        "budget, doubling it. Stop the other server, give this one its own data folder, "
        "or start both with --rate-limit-store shared (one count in the audit database)."
    )
