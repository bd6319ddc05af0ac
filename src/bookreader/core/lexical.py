"""BM25 keyword search over a book's chunks, with a tokenizer that understands code.

The tokenizer lowercases, drops English stop words and applies the Porter stemmer (NLTK's
algorithm only: no downloaded corpora).  Textbooks about programming are full of tokens
like ``System.out.println``, ``ArrayList`` or ``my_var``; splitting them on punctuation
alone would lose the exact identifier and keeping them whole would miss a reader who types
"array list".  So a compound token yields both: the whole token (lowercased, unstemmed)
and its stemmed parts, with camelCase split as well::

    >>> tokenize("Call System.out.println on an ArrayList")
    ['call', 'system.out.println', 'system', 'out', 'println', 'arraylist', 'array', 'list']

A few words that are stop words in prose but keywords in code (``for``, ``while``, ``if``,
``do``, ``each``, ``this``) are kept, so "for loop" and "while loop" stay distinct.

Persistence: the index is saved as the token lists (gzip JSON, ~0.4 MB for 1,500 chunks)
next to the book's store and reloaded without re-tokenising.  ``bench/store.py`` on 1,500
chunks of 200 words of a textbook, 2 busy cores: build 1.1 s
(tokenising and stemming dominate), load 0.1 s plus 0.07 s for the postings on the first
query.  So the library saves after ingest and loads on open; :meth:`LexicalIndex.load`
returns None (rebuild) when the file is missing, stale or damaged.
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
import os
import re
import unicodedata
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np
from nltk.stem import PorterStemmer
from rank_bm25 import BM25Okapi

from bookreader.core.types import CancelFn, Chunk, ProgressFn, SearchFilter, check_cancel
from bookreader.errors import StoreError

log = logging.getLogger(__name__)

#: Bumped whenever tokenize() changes, so saved indexes built by an older tokenizer are
#: rebuilt instead of silently mismatching the query tokens.
TOKENIZER_VERSION = 2

# English stop words (function words that carry no topic).  Written for this project;
# close in spirit to the common lists, plus contractions with the apostrophe removed
# (the tokenizer strips apostrophes before matching).
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did does doing down during few from further
    had has have having he her here hers herself him himself his how i in into is it its
    itself just me more most my myself no nor not now of off on once only or other ought
    our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they those through to too under until up
    upon very was we were what when where which who whom why will with would you your
    yours yourself yourselves also may might must shall us via yet
    s t d ll m re ve o y
    dont doesnt didnt isnt arent wasnt werent hasnt havent hadnt wont wouldnt shouldnt
    couldnt cant cannot mustnt neednt shant im ive id youre youve youd youll hes shes its
    were theyre theyve theyd theyll weve wed well thats theres whats whos lets
    """.split()
) - {"out", "well"}  # "out" as in System.out; "well" is rarely a function word in books

#: Prose stop words that are keywords in code; never dropped.
CODE_WORDS: frozenset[str] = frozenset({"for", "while", "if", "do", "each", "this"})

# A raw token: word characters joined by code punctuation (System.out.println,
# java.util.List, std::vector, a->b, http://x.org/y, 3.14, read-only), or the
# language names C++, C#, F#.
_RAW_TOKEN = re.compile(r"[A-Za-z]\+\+|[A-Za-z]#|\w+(?:(?:->|[.:/#\-])+\w+)*")
_JOINERS = re.compile(r"(?:->|[._:/#\-])+")
# camelCase / PascalCase / acronym boundaries: "parseInt", "ArrayList", "HTMLParser".
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_APOSTROPHE_S = re.compile(r"[\'\u2019]s\b", re.IGNORECASE)
_APOSTROPHE = re.compile(r"[\'\u2019]")
_MAX_TOKEN_LEN = 64

#: A Greek letter a text prints as a symbol ("β1", "σ²", the mathematical italic "𝛽"), not
#: inside a Greek word: a student types its name ("beta 1"), so the letter is read as
#: its name and the two meet in the index.
_GREEK_SYMBOL = re.compile(r"(?<![\u0370-\u03ff])"
                           r"[\u00b5\u0391-\u03c9\u03d0-\u03f5\U0001d6a8-\U0001d7c9]"
                           r"(?![\u0370-\u03ff])")


@functools.lru_cache(maxsize=512)
def _greek_name(letter: str) -> str:
    """" beta " for "β", "𝛽" or "ϐ" (a letter's own name, spaced); anything else as it is."""
    name = unicodedata.name(unicodedata.normalize("NFKC", letter), "").split()
    if len(name) >= 4 and name[0] == "GREEK" and name[2] == "LETTER":
        return f" {name[-1].lower()} "
    if len(name) >= 3 and name[0] == "GREEK" and name[-1] == "SYMBOL":
        return f" {name[-2].lower()} "
    return letter

_stemmer = PorterStemmer()  # a pure function table; holds no state between calls


@functools.lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    return _stemmer.stem(word, to_lowercase=False)


def _word(part: str) -> Optional[str]:
    """A lowercased, stemmed simple word, or None when it is a stop word."""
    low = part.lower()
    if low in CODE_WORDS:
        return low
    if low in STOP_WORDS:
        return None
    if low.isdigit() or len(low) <= 2:
        return low
    return _stem(low)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into BM25 terms: lowercase, code-aware, stop words out, stemmed.

    Compound tokens (``System.out.println``, ``my_var``, ``ArrayList``) produce the whole
    token unstemmed plus each stemmed part; numbers such as ``3.14`` stay whole.
    """
    text = _APOSTROPHE.sub("", _APOSTROPHE_S.sub("", text))
    if not text.isascii():
        text = _GREEK_SYMBOL.sub(lambda m: _greek_name(m.group()), text)
    out: list[str] = []
    for match in _RAW_TOKEN.finditer(text):
        raw = match.group()
        if len(raw) > _MAX_TOKEN_LEN:
            continue
        parts = [p for p in _JOINERS.split(raw) if p]
        compound = len(parts) > 1
        if compound:
            out.append(raw.lower())
            if all(p.isdigit() for p in parts):  # 3.14, 2.1.3, 10-20
                continue
        elif raw.endswith(("++", "#")):  # c++, c#
            out.append(raw.lower())
            continue
        for part in parts:
            pieces = _CAMEL.findall(part) if not part.islower() else [part]
            if len(pieces) > 1:
                whole = part.lower()
                out.append(whole if compound else _stem(whole))
                out.extend(w for w in map(_word, pieces) if w)
            else:
                w = _word(part)
                if w:
                    out.append(w)
    return out


class LexicalIndex:
    """A BM25 (Okapi) index over one book's chunks.

    Build it with :meth:`build` (tokenises every chunk) or :meth:`load` (reads the saved
    token lists).  ``scores`` returns raw BM25 scores; the hybrid ranker normalises them.
    """

    def __init__(self, chunks: Sequence[Chunk], corpus: Sequence[Sequence[str]]) -> None:
        if len(chunks) != len(corpus):
            raise ValueError("one token list per chunk is required")
        self._chunks: list[Chunk] = list(chunks)
        self._corpus: list[list[str]] = [list(toks) for toks in corpus]
        # rank_bm25 divides by the corpus size and the average length: an empty book (or
        # one whose text is all stop words) has no BM25 model and scores 0 everywhere.
        total = sum(len(toks) for toks in self._corpus)
        self._bm25: Optional[BM25Okapi] = BM25Okapi(self._corpus) if total else None
        self._postings: Optional[dict[str, tuple[np.ndarray, np.ndarray]]] = None
        self._length_norm: Optional[np.ndarray] = None

    # --- construction -----------------------------------------------------------------
    @classmethod
    def build(
        cls,
        chunks: Iterable[Chunk],
        progress: Optional[ProgressFn] = None,
        cancel: Optional[CancelFn] = None,
    ) -> "LexicalIndex":
        """Tokenise ``chunks`` and build the index.

        Raises:
            Cancelled: ``cancel()`` returned True.
        """
        chunk_list = list(chunks)
        corpus: list[list[str]] = []
        total = len(chunk_list)
        for i, chunk in enumerate(chunk_list):
            if i % 200 == 0:
                check_cancel(cancel)
                if progress is not None:
                    progress(i, total, "Building the keyword index")
            corpus.append(tokenize(chunk.text))
        if progress is not None:
            progress(total, total, "Building the keyword index")
        return cls(chunk_list, corpus)

    def save(self, path: Path) -> None:
        """Write the token lists to ``path`` (gzip JSON), atomically.

        Raises:
            StoreError: the file cannot be written.
        """
        path = Path(path)
        data = {
            "tokenizer_version": TOKENIZER_VERSION,
            "chunk_ids": [c.chunk_id for c in self._chunks],
            "tokens": self._corpus,
        }
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as fh:
                json.dump(data, fh, separators=(",", ":"))
            os.replace(tmp, path)
        except OSError as exc:
            raise StoreError(
                f"Cannot write the keyword index {path}: {exc.strerror or exc}. "
                "Check that the disk is not full and the data folder is writable.",
                details=repr(exc),
            ) from exc

    @classmethod
    def load(cls, path: Path, chunks: Iterable[Chunk]) -> Optional["LexicalIndex"]:
        """The index saved at ``path`` for exactly these ``chunks``, or None.

        None (with the reason logged) means the caller should :meth:`build` and
        :meth:`save` again: the file is missing, unreadable, written by another tokenizer
        version, or for a different set of chunks (for example after a resumed ingest).
        """
        path = Path(path)
        chunk_list = list(chunks)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError) as exc:
            log.warning("Rebuilding the keyword index: cannot read %s: %s", path, exc)
            return None
        if data.get("tokenizer_version") != TOKENIZER_VERSION:
            log.info("Rebuilding the keyword index %s: tokenizer changed", path)
            return None
        by_id = dict(zip(data.get("chunk_ids", []), data.get("tokens", [])))
        if len(by_id) != len(chunk_list) or any(c.chunk_id not in by_id for c in chunk_list):
            log.info("Rebuilding the keyword index %s: the book's chunks changed", path)
            return None
        return cls(chunk_list, [by_id[c.chunk_id] for c in chunk_list])

    # --- queries ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def chunks(self) -> list[Chunk]:
        """The indexed chunks, in the order given to :meth:`build`."""
        return list(self._chunks)

    def knows(self, term: str) -> bool:
        """True when ``term`` (a :func:`tokenize` term) occurs in some chunk of the book."""
        return self._bm25 is not None and term in self._bm25.idf

    def vocabulary(self) -> frozenset[str]:
        """Every :func:`tokenize` term of the book."""
        return frozenset(self._bm25.idf) if self._bm25 is not None else frozenset()

    def scores(
        self, query: str, flt: Optional[SearchFilter] = None, top_k: Optional[int] = None
    ) -> list[tuple[Chunk, float]]:
        """Raw BM25 scores of the chunks inside ``flt``, best first.

        Every accepted chunk is returned (with score 0 when no query term matches) unless
        ``top_k`` limits the list.  Ties keep the chunks' original order.
        """
        if flt is None:
            idx = np.arange(len(self._chunks))
        else:
            idx = np.array(
                [i for i, c in enumerate(self._chunks) if flt.accepts(c)], dtype=np.int64
            )
        if idx.size == 0:
            return []
        values = self._all_scores(tokenize(query))
        if flt is not None:
            values = values[idx]
        order = np.argsort(-values, kind="stable")
        if top_k is not None:
            order = order[: max(top_k, 0)]
        return [(self._chunks[int(idx[j])], float(values[j])) for j in order]

    def warm_up(self) -> None:
        """Build now the postings the first query would build (:meth:`_all_scores`)."""
        if self._bm25 is not None and self._postings is None:
            self._build_postings(self._bm25)

    def _all_scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25Okapi scores of every chunk, as ``rank_bm25``'s ``get_scores`` defines them.

        ``get_scores`` walks every document in Python for every query term (about 8 ms a
        query on 1,500 chunks here); this walks only the documents that contain the term,
        through postings built on first use, with rank_bm25's own idf, k1, b and lengths.
        """
        bm = self._bm25
        values = np.zeros(len(self._chunks))
        if bm is None or not terms:
            return values
        if self._postings is None:
            self._build_postings(bm)
        assert self._postings is not None and self._length_norm is not None
        for term in terms:  # repeated query terms count again, as in rank_bm25
            posting = self._postings.get(term)
            idf = bm.idf.get(term) or 0.0
            if posting is None or not idf:
                continue
            docs, tf = posting
            values[docs] += idf * (tf * (bm.k1 + 1) / (tf + self._length_norm[docs]))
        return values

    def _build_postings(self, bm: BM25Okapi) -> None:
        lists: dict[str, tuple[list[int], list[int]]] = {}
        for i, freqs in enumerate(bm.doc_freqs):
            for term, tf in freqs.items():
                entry = lists.get(term)
                if entry is None:
                    lists[term] = ([i], [tf])
                else:
                    entry[0].append(i)
                    entry[1].append(tf)
        self._postings = {
            t: (np.asarray(d, dtype=np.int64), np.asarray(f, dtype=np.float64))
            for t, (d, f) in lists.items()
        }
        doc_len = np.asarray(bm.doc_len, dtype=np.float64)
        self._length_norm = bm.k1 * (1 - bm.b + bm.b * doc_len / bm.avgdl)
