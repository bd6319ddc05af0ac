"""The library's catalogue: one small JSON file per book in the data folder.

``<data>/books/<book_id>/book.json`` sits next to the book's shard and its saved BM25 token
lists.  ``state`` is a :class:`~bookreader.core.types.BookState`: "indexing" while an ingest
runs (and after one was interrupted: ingesting again resumes it), "ready", or "failed".
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Optional

from bookreader.core.types import BookInfo, BookState
from bookreader.errors import BookNotFound, StoreError

log = logging.getLogger(__name__)

BOOK_FILE = "book.json"
#: Shortest id prefix accepted as a book reference.
MIN_PREFIX = 4


class Catalogue:
    """Reads and writes the catalogue entries under ``books_dir``."""

    def __init__(self, books_dir: Path, *, edge: bool = True,
                 lexical_file: str = "bm25.json.gz") -> None:
        self.books_dir = books_dir
        #: Check for a shard folder (the Edge store keeps one per book).
        self.edge = edge
        self.lexical_file = lexical_file

    def folder(self, book_id: str) -> Path:
        return self.books_dir / book_id

    def read(self, book_id: str) -> Optional[dict]:
        path = self.folder(book_id) / BOOK_FILE
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("Ignoring the unreadable catalogue entry %s: %s", path, exc)
            return None

    def write(self, record: dict) -> None:
        folder = self.folder(record["book_id"])
        path = folder / BOOK_FILE
        record["updated"] = time.time()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(record, indent=2), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            path.with_suffix(".tmp").unlink(missing_ok=True)
            raise StoreError(
                f"Cannot write the library catalogue {path}: {exc.strerror or exc}. "
                "Check that the data folder is writable and the disk is not full.",
                details=repr(exc),
            ) from exc

    def damage(self, record: dict) -> str:
        """Why a ready book's index is unusable (a part missing or unreadable), or ""."""
        if record.get("state") != BookState.READY:
            return ""
        from bookreader.core.storage import index_damage

        return index_damage(self.folder(record["book_id"]), edge=self.edge,
                            lexical_file=self.lexical_file)

    def info(self, record: dict) -> BookInfo:
        try:
            state = BookState(record.get("state", BookState.FAILED))
        except ValueError:
            state = BookState.FAILED
        message = record.get("message", "")
        if state is BookState.INDEXING:
            message = self._indexing_message(message)
        damage = self.damage(record)
        if damage:
            state = BookState.DAMAGED
            message = (f"Damaged: re-index. {damage[0].upper()}{damage[1:]}. Ingest the book "
                       "again (Index again in the library panel, or `bookreader ingest` with "
                       "its PDF) to rebuild it.")
        return BookInfo(
            book_id=record["book_id"],
            title=record.get("title", ""),
            path=record.get("path", ""),
            page_count=int(record.get("page_count", 0)),
            chunk_count=int(record.get("chunk_count", 0)),
            state=state,
            message=message,
            pages_without_text=tuple(record.get("pages_without_text", ())),
        )

    def _indexing_message(self, message: str) -> str:
        """An unfinished book's message; when the disk is full now, that is said first (an
        ingest stopped by a full disk may not have been able to write why)."""
        from bookreader.core.storage import MB, MIN_FREE_TO_OPEN, free_bytes

        free = free_bytes(self.books_dir)
        if free >= MIN_FREE_TO_OPEN:
            return message
        return (f"Indexing stopped: the disk holding the data folder is full ({free / MB:.0f} "
                "MB free). Free some space, then ingest the book again to finish it.")

    def books(self) -> list[BookInfo]:
        """Every book, sorted by title."""
        out: list[BookInfo] = []
        if not self.books_dir.is_dir():
            return out
        for folder in self.books_dir.iterdir():
            record = self.read(folder.name) if folder.is_dir() else None
            if record is not None and record.get("book_id") == folder.name:
                out.append(self.info(record))
        out.sort(key=lambda b: (b.title.casefold(), b.book_id))
        return out

    def find(self, ref: str | Path) -> BookInfo:
        """A book by id, unique id prefix, or PDF path.  Raises BookNotFound."""
        text = str(ref).strip()
        if not text:
            raise BookNotFound("No book was named. Give a book id or the PDF's path.")
        record = self.read(text) if "/" not in text and "\\" not in text else None
        if record is not None:
            return self.info(record)
        books = self.books()
        candidate = Path(text).expanduser()
        if candidate.is_file():
            resolved = str(candidate.resolve())
            for b in books:
                if b.path == resolved:
                    return b
            from bookreader.core.pdf import file_book_id

            record = self.read(file_book_id(candidate))
            if record is not None:
                return self.info(record)
            raise BookNotFound(
                f"{candidate} is not in the library yet. Run `bookreader ingest {candidate}` first."
            )
        if len(text) >= MIN_PREFIX:
            matches = [b for b in books if b.book_id.startswith(text.lower())]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                raise BookNotFound(
                    f"'{text}' matches {len(matches)} books. Give more of the book id "
                    "(`bookreader books` lists them)."
                )
        raise BookNotFound(
            f"No book in the library matches '{text}'. Give a book id from `bookreader books` "
            "or the path of a PDF you have ingested."
        )
