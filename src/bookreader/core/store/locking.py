"""A per-book lock between BookReader processes.

Two windows writing the same Qdrant Edge shard would corrupt it, so a store takes an
exclusive, non-blocking OS lock on a small file next to the shard before opening it.  The
operating system releases the lock when the file is closed or the process dies (even on
``kill -9``), so a crash never leaves a book locked.  The lock file holds the owner's
process id and role (the window's library process, a command), only to make the message
true and friendly.

POSIX uses ``fcntl.flock``; Windows uses ``msvcrt.locking`` on the first byte.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from pathlib import Path
from typing import IO, Optional

from bookreader.errors import BookLocked, StoreError

log = logging.getLogger(__name__)

try:  # POSIX
    import fcntl

    def _try_lock(fh: IO[str]) -> bool:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fh: IO[str]) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fh: IO[str]) -> bool:
        try:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fh: IO[str]) -> None:
        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)


class BookLock:
    """An exclusive lock on ``path`` held from :meth:`acquire` until :meth:`release`.

    Args:
        path: The lock file (created if missing), e.g. ``books/<id>/shard.lock``.
        book_id: Named in the error message.
    """

    def __init__(self, path: Path, book_id: str) -> None:
        self.path = Path(path)
        self.book_id = book_id
        self._fh: Optional[IO[str]] = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def acquire(self) -> "BookLock":
        """Take the lock without waiting.

        Raises:
            BookLocked: another process (or another store in this one) holds it.
            StoreError: the lock file cannot be created.
        """
        if self._fh is not None:
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # "a+" creates the file without truncating the owner's pid before we own it.
            fh = open(self.path, "a+", encoding="utf-8")
        except OSError as exc:
            raise StoreError(
                f"Cannot create the lock file {self.path}: {exc.strerror or exc}. "
                "Check that the data folder exists and is writable.",
                details=repr(exc),
            ) from exc
        if not _try_lock(fh):
            owner, role = _read_owner(fh)
            fh.close()
            who = ROLES.get(role, "another BookReader process")
            pid = f" (process {owner})" if owner else ""
            raise BookLocked(
                f"This book is in use by {who}{pid}, which may be changing its index. "
                f"{ADVICE.get(role, ADVICE[''])}",
                details=f"book {self.book_id}, lock file {self.path}",
            )
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()} {multiprocessing.current_process().name}\n")
            fh.flush()
        except OSError as exc:  # the lock still works; only the message loses the pid
            log.warning("Cannot write the owner into %s: %s", self.path, exc)
        self._fh = fh
        log.debug("Locked book %s (%s)", self.book_id, self.path)
        return self

    def release(self) -> None:
        """Give the lock up.  Safe to call twice."""
        fh, self._fh = self._fh, None
        if fh is None:
            return
        try:
            _unlock(fh)
        finally:
            fh.close()
        log.debug("Unlocked book %s", self.book_id)

    def __enter__(self) -> "BookLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_holder(path: Path) -> Optional[tuple[str, str]]:
    """``(pid, who)`` of the process holding the lock at ``path`` now, or None when nobody
    does (or the file cannot be read).  Takes the lock for an instant when it is free."""
    try:
        fh = open(path, "r", encoding="utf-8")
    except OSError:
        return None
    try:
        if _try_lock(fh):
            _unlock(fh)
            return None
        pid, role = _read_owner(fh)
    finally:
        fh.close()
    if pid and int(pid) == os.getpid():
        return pid, "this BookReader process"
    return pid, ROLES.get(role, "another BookReader process")


#: Who holds a lock, by the process name written into the lock file.
ROLES = {
    "library": "an open BookReader window",
    "window": "an open BookReader window",
    "cli": "a `bookreader` command",
}
ADVICE = {
    "library": "Reading commands (ask, search, books, audit) work beside it; to change the "
               "book (ingest again, remove), close that window first.",
    "window": "Reading commands (ask, search, books, audit) work beside it; to change the "
              "book (ingest again, remove), close that window first.",
    "cli": "Wait for that command to finish, then try again.",
    "": "Wait for it to finish or close it, then try again.",
}


def _read_owner(fh: IO[str]) -> tuple[str, str]:
    """(pid, role) written by the lock's owner; empty strings when unknown."""
    try:
        fh.seek(0)
        parts = fh.read(64).split()
    except OSError:
        return "", ""
    pid = parts[0] if parts and parts[0].isdigit() else ""
    role = parts[1] if len(parts) > 1 and pid else ""
    return pid, role
