"""A generated PDF ingested into a real Library (Qdrant Edge shard, MiniLM), for
module-scoped fixtures of whole-book tests."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from bookreader.config import Settings

from pdf_factory import book_pdf


@contextmanager
def indexed_book(root: Path, name: str, chapters: Any, embedder: Any,
                 **pdf_options: Any) -> Iterator[tuple[Settings, Any, Any]]:
    """``(settings, retriever, pdf)`` of ``chapters`` written to ``root/name`` by
    :func:`pdf_factory.book_pdf` and ingested; the library is closed afterwards."""
    from bookreader.library import Library

    settings = Settings(data_dir=root / "data")
    settings.ensure_dirs()
    spec = book_pdf(root / name, chapters, **pdf_options)
    lib = Library(settings, embedder=embedder)
    info = lib.ingest(spec.path)
    try:
        yield settings, lib.retriever(info.book_id), lib.open_pdf(info.book_id)
    finally:
        lib.close()
