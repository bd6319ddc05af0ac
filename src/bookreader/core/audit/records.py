"""Turning an :class:`Answer` into an audit row and back, scrubbing secrets, and hashing.

The record hash is the SHA-256 of the record's *canonical JSON*: every field except
``record_hash`` itself (``prev_hash`` and ``seq`` included, which chains each record to the
one before and pins its position), NULL fields left out, keys sorted, no spaces, UTF-8.
Values are normalised by column type first (a float column always hashes as a float), so the
live database, PostgreSQL and an exported JSON file all give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from datetime import datetime, timezone
from typing import Any, Iterable, Optional

from bookreader.core.audit.schema import COLUMN_KINDS, COLUMNS
from bookreader.core.types import Answer, Citation, Message, Mode, Outcome, Validation

#: ``prev_hash`` of the very first record.
GENESIS_HASH = "0" * 64
EXCERPT_CHARS = 500
REDACTED = "[REDACTED]"

# Anything that looks like a credential.  Deliberately broad: a false positive costs a few
# characters of a log line, a false negative leaks a key into a file students hand in.
# Each pattern runs only when its literal marker occurs in the text (a substring search is
# a hundred times cheaper than the regex), so scrubbing a 6 kB prompt costs microseconds.
# Entries: (markers, look for them in the lower-cased text?, pattern).
_SECRET_RULES: list[tuple[tuple[str, ...], bool, re.Pattern]] = [
    (("sk-",), False, re.compile(r"(?<![A-Za-z0-9])sk-(?:ant-[A-Za-z0-9_\-]{8,}"
                                 r"|[A-Za-z0-9_\-]{20,})")),  # Anthropic, OpenAI-style keys
    (("bearer",), True, re.compile(r"\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*", re.I)),
    (("api", "token", "secret"), True, re.compile(  # api_key=..., "x-api-key": "..."
        r"(?P<kv>\b(?:x-api-key|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
        r"[\"']?\s*[:=]\s*)(?:\"[^\"]{4,}\"|'[^']{4,}'|[^\s,;\"']{6,})", re.I)),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False,
     re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),  # GitHub tokens
    (("hf_",), False, re.compile(r"\bhf_[A-Za-z0-9]{30,}")),  # Hugging Face tokens
    (("akia",), True, re.compile(r"\bAKIA[0-9A-Z]{16}\b", re.I)),  # AWS access key ids
    (("xox",), False, re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),  # Slack tokens
    (("eyJ",), False, re.compile(  # JSON Web Tokens
        r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")),
]

#: Any long run of letters and digits mixed (32+ characters, both kinds, no marker): the
#: shape of an API key nobody wrote a rule for.  Hashes the log keeps on purpose
#: (record ids, SHA-256 columns) are not scrubbed (see answer_to_row).
_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9_])(?=[A-Za-z0-9_]*\d)(?=[A-Za-z0-9_]*[A-Za-z])"
                       r"[A-Za-z0-9_]{32,}(?![A-Za-z0-9_])")


# Lower-cased markers of every rule: text with none of them skips all the rules.
_ANY_MARKER = ("sk-", "bearer", "api", "token", "secret", "gh", "hf_", "akia", "xox", "eyj")


def _redact(m: re.Match) -> str:
    kv = m.groupdict().get("kv")
    return (kv or "") + REDACTED


def scrub(text: str) -> str:
    """``text`` with anything that looks like an API key or token replaced by [REDACTED]."""
    if len(text) < 12:  # shorter than any credential the rules look for
        return text
    if len(text) >= 32:
        text = _KEY_LIKE.sub(REDACTED, text)
    lowered = text.lower()
    if not any(m in lowered for m in _ANY_MARKER):
        return text
    for markers, fold, pattern in _SECRET_RULES:
        if fold:
            lowered = text.lower() if lowered is None else lowered
            hay = lowered
        else:
            hay = text
        if any(m in hay for m in markers):
            text = pattern.sub(_redact, text)
            lowered = None
    return text


def scrub_value(value: Any) -> Any:
    """:func:`scrub` applied to every string inside ``value`` (dicts, lists, tuples)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v) for v in value]
    return value


def utc_timestamp(when: Optional[datetime] = None) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC: fixed width, so text order is time order."""
    when = when or datetime.now(timezone.utc)
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: str) -> datetime:
    """The inverse of :func:`utc_timestamp` (also accepts other ISO-8601 forms)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _finite(x: Optional[float]) -> Optional[float]:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _json_safe(value: Any) -> Any:
    """Plain JSON values: tuples become lists, NaN/inf become None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, Mode):
        return value.value
    return value


def normalise(row: dict[str, Any]) -> dict[str, Any]:
    """Every column of ``row`` coerced to its column's Python type (missing ones as None)."""
    out: dict[str, Any] = {}
    for name in COLUMNS:
        value = row.get(name)
        kind = COLUMN_KINDS[name]
        if value is None:
            out[name] = None
        elif kind == "float":
            out[name] = _finite(value)
        elif kind == "int":
            out[name] = int(value)
        elif kind == "bool":
            out[name] = bool(value)
        elif kind == "json":
            if isinstance(value, str):  # a driver that hands JSON back as text
                value = json.loads(value)
            out[name] = _json_safe(value)
        else:
            out[name] = str(value)
    return out


def canonical_json(row: dict[str, Any], *, normalised: bool = False) -> str:
    """The exact text that is hashed (see the module docstring)."""
    row = row if normalised else normalise(row)
    content = {k: v for k, v in row.items() if v is not None and k != "record_hash"}
    return json.dumps(
        content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def record_hash(row: dict[str, Any], *, normalised: bool = False) -> str:
    """SHA-256 (hex) of the record's canonical JSON, ``prev_hash`` included."""
    text = canonical_json(row, normalised=normalised)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- Answer -> row -------------------------------------------------------------------------
def _citation_dict(c: Citation) -> dict[str, Any]:
    return {
        "section": c.section,
        "page": c.page,
        "page_label": c.page_label,
        "excerpt": c.excerpt,
        "verified": c.verified,
        "repaired": c.repaired,
        "rects": [list(r) for r in c.rects],
    }


def answer_to_row(
    answer: Answer, *, session_id: str, excerpt_only: bool, client_id: Optional[str] = None
) -> dict[str, Any]:
    """The audit row for ``answer``, secrets scrubbed; ``seq``, ``created_at`` and the hashes
    are filled in by the writer under its lock.  ``client_id`` names who asked through the
    server (an API key's name); None for the desktop app and the command line."""
    retrieval = answer.retrieval
    passages = retrieval.passages if retrieval is not None else ()
    chunks = [
        {
            "chunk_id": p.chunk.chunk_id,
            "page_start": p.chunk.page_start,
            "page_end": p.chunk.page_end,
            "page_label": p.chunk.page_label,
            "chapter": p.chunk.chapter,
            "section": p.chunk.section,
            "score": p.score,
            "dense_score": p.dense_score,
            "bm25_score": p.bm25_score,
        }
        for p in passages
    ]
    selection = answer.selection or ""
    v = answer.validation
    stage = dict(answer.stage_ms or {})
    retrieval_ms = retrieval.latency_ms if retrieval is not None else stage.get("retrieval")
    chapter = answer.chapter or (passages[0].chunk.chapter if passages else "")
    mode = answer.mode.value if isinstance(answer.mode, Mode) else str(answer.mode)
    row: dict[str, Any] = {
        "record_id": str(uuid.uuid4()),
        "query_id": answer.query_id,
        "answer_id": answer.answer_id,
        "session_id": session_id,
        "book_id": answer.book_id or None,
        "book_title": answer.book_title or None,
        "mode": mode,
        "question": answer.question,
        "selection_excerpt": selection[:EXCERPT_CHARS] if selection else None,
        # Over the original text, so it can be matched against the book; a digest reveals
        # nothing even when the selection held something that the scrubber removes below.
        "selection_sha256": hashlib.sha256(selection.encode("utf-8")).hexdigest()
        if selection
        else None,
        "selection": selection if selection and not excerpt_only else None,
        "retrieval_query": retrieval.query if retrieval is not None else None,
        "n_chunks": len(passages),
        "chunks": chunks,
        "retrieval_ms": retrieval_ms,
        "first_token_ms": answer.first_token_ms,
        "generation_ms": answer.generation_ms,
        "validation_similarity": v.similarity if v else None,
        "validation_overlap": v.overlap if v else None,
        "validation_passed": v.passed if v else None,
        # the column holds 64 characters; a model server's long address is cut (its host
        # is in "model" too)
        "backend": (answer.backend if len(answer.backend) <= 64
                    else answer.backend[:61] + "...") if answer.backend else None,
        "model": answer.model or None,
        "prompt": [{"role": m.role, "content": m.content} for m in answer.prompt],
        "raw_output": answer.raw_output,
        "answer_text": answer.text,
        "confidence": answer.confidence,
        "confidence_level": answer.confidence_level or None,
        "citations": [_citation_dict(c) for c in answer.citations],
        "success": not answer.error,
        "error_message": answer.error or None,
        "fallback": answer.fallback,
        "in_selected_text": answer.in_selected_text,
        "truncation_warning": answer.truncation_warning or None,
        "replaced_by_validator": answer.replaced_by_validator,
        "latency_ms": answer.latency_ms,
        "retrieval_confidence": retrieval.confidence if retrieval is not None else None,
        "stage_ms": stage,
        "validation_details": {
            "ms": v.ms,
            "unsupported_sentences": list(v.unsupported_sentences),
            "missing_terms": list(v.missing_terms),
        }
        if v
        else None,
        "chapter": chapter or None,
        "selection_page": answer.selection_page,
        "client_id": client_id or None,
        "outcome": getattr(answer.outcome, "value", answer.outcome) or None,
    }
    keep_raw = {"record_id", "selection_sha256", "query_id", "answer_id", "session_id",
                "completes", "book_id"}
    return {k: (v if k in keep_raw else scrub_value(v)) for k, v in row.items()}


def seal(row: dict[str, Any], *, seq: int, prev_hash: str, created_at: str) -> dict[str, Any]:
    """``row`` placed in the chain: position, time, previous hash and its own hash."""
    row = normalise({**row, "seq": seq, "prev_hash": prev_hash, "created_at": created_at})
    row["record_hash"] = record_hash(row, normalised=True)
    return row


# --- row -> Answer -------------------------------------------------------------------------
def row_to_answer(row: dict[str, Any]) -> Answer:
    """Rebuild the :class:`Answer` the chat history shows.  ``retrieval`` stays None: the
    log keeps the chunks' ids, pages and scores, not their text."""
    row = normalise(row)
    v = None
    if row["validation_passed"] is not None:
        details = row["validation_details"] or {}
        v = Validation(
            similarity=row["validation_similarity"] or 0.0,
            overlap=row["validation_overlap"] or 0.0,
            passed=row["validation_passed"],
            ms=details.get("ms") or 0.0,
            unsupported_sentences=tuple(details.get("unsupported_sentences") or ()),
            missing_terms=tuple(details.get("missing_terms") or ()),
        )
    citations = tuple(
        Citation(
            section=c.get("section", ""),
            page=int(c.get("page", -1)),
            page_label=c.get("page_label", ""),
            excerpt=c.get("excerpt", ""),
            verified=bool(c.get("verified", False)),
            repaired=bool(c.get("repaired", False)),
            rects=tuple(tuple(r) for r in c.get("rects") or ()),
        )
        for c in row["citations"] or ()
    )
    try:
        mode = Mode(row["mode"])
    except ValueError:
        mode = row["mode"]
    return Answer(
        query_id=row["query_id"],
        answer_id=row["answer_id"],
        question=row["question"],
        mode=mode,
        text=row["answer_text"] or "",
        fallback=bool(row["fallback"]),
        in_selected_text=row["in_selected_text"],
        confidence=row["confidence"] or 0.0,
        confidence_level=row["confidence_level"] or "",
        citations=citations,
        validation=v,
        truncation_warning=row["truncation_warning"] or "",
        backend=row["backend"] or "",
        model=row["model"] or "",
        latency_ms=row["latency_ms"] or 0.0,
        first_token_ms=row["first_token_ms"],
        generation_ms=row["generation_ms"] or 0.0,
        retrieval=None,
        prompt=tuple(Message(m["role"], m["content"]) for m in row["prompt"] or ()),
        raw_output=row["raw_output"] or "",
        replaced_by_validator=bool(row["replaced_by_validator"]),
        error=row["error_message"] or "",
        book_id=row["book_id"] or "",
        book_title=row["book_title"] or "",
        selection=row["selection"] or row["selection_excerpt"] or "",
        stage_ms=dict(row["stage_ms"] or {}),
        chapter=row["chapter"] or "",
        selection_page=row["selection_page"],
        created_at=row["created_at"] or "",
        outcome=_outcome(row.get("outcome")),
    )


def _outcome(value: Any) -> Optional[Outcome]:
    """The stored outcome, or None (derived from fallback/error) for older records."""
    if not value:
        return None
    try:
        return Outcome(value)
    except ValueError:
        return None


def iter_pages(row: dict[str, Any]) -> Iterable[tuple[int, str]]:
    """The (0-based page, label) a question was about, for the most-asked-pages chart: the
    selection's page, else the cited pages, else the top passage's first page."""
    cited = [(c["page"], c.get("page_label") or _pdf_page(c["page"]))
             for c in row.get("citations") or () if c.get("page", -1) >= 0]
    if row.get("selection_page") is not None:
        page = row["selection_page"]
        # The printed label, as the window shows it: a citation or passage on that page
        # knows it; else the PDF page, said as such (never a number that looks printed).
        label = next((lab for p, lab in cited if p == page), None) or next(
            (str(c.get("page_label") or "").split("-")[0] for c in row.get("chunks") or ()
             if c.get("page_start") == page and c.get("page_label")), None)
        yield page, label or _pdf_page(page)
        return
    if cited:
        yield from dict(cited).items()
        return
    chunks = row.get("chunks") or ()
    if chunks:
        c = chunks[0]
        yield c["page_start"], (str(c.get("page_label") or "").split("-")[0]
                                or _pdf_page(c["page_start"]))


def _pdf_page(page: int) -> str:
    """A page without a known printed label, named by its place in the PDF."""
    return f"PDF page {page + 1}"
