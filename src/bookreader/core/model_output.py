"""The model's output format, read (and written) in one place.

A model answers in sentences, each followed by its citations, and ends with a confidence
line::

    The energy is stored in ATP. [Source: Cells (Page 12) - "stored in a molecule called ATP"]
    Confidence: 0.9

This module owns that grammar: :func:`format_citation` writes a marker,
:func:`parse_citations` and :func:`claim_units` read markers back, :func:`split_confidence`
reads the confidence line, and :func:`parse_answer` turns a model's raw text into a
:class:`ParsedAnswer` (the answer text the checks see, its claims with their citations, the
stated confidence and what was removed on the way).  Citations, answering, the grounding
validator and the window (through :meth:`bookreader.core.types.Answer.citation_marks`) all
read answers through it; nothing else carries a copy of the marker's regular expression.

Small models bend the format, so the reader is lenient: ``[Sources: ...]``, a missing
colon, the page inside the section ("Cells, page 12"), ``pp.``, any quote style, a missing
closing quote.  Two forms are not citations and are removed: a marker that never closes
(everything from its ``[Source:`` on is dropped) and one longer than
:data:`MAX_CITATION_CHARS` (a copied paragraph, not a pointer).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

log = logging.getLogger(__name__)


def split_sentences(text: str) -> list[str]:
    # Imported on first use: the window numbers markers (citation_numbers) without
    # loading NLTK's stemmer, which core.sentences brings and which takes seconds.
    from bookreader.core.sentences import split_sentences as split

    return split(text)


def words(text: str) -> list[str]:
    from bookreader.core.sentences import words as find_words

    return find_words(text)

#: A citation longer than this (characters) is a copied paragraph, not a pointer.
MAX_CITATION_CHARS = 400

# --- citation markers ------------------------------------------------------------------

_OPEN_Q = "\"\u201c\u201d\u201e\u00ab'\u2018\u2019"
_CLOSE_Q = "\"\u201c\u201d\u00bb'\u2018\u2019"
_CITE_RE = re.compile(
    r"\[\s*Sources?\s*:?\s*"
    # A section may hold its own brackets ("Hypertext Transfer Protocol (HTTP) Basics"),
    # never "(Page X)".
    r"(?P<section>(?:[^\[\]()" + _OPEN_Q + r"]|\((?!\s*(?:pages?|pp?\.?)\s*[\w\-\u2013]+\s*\))"
    r"[^()\[\]" + _OPEN_Q + r"]*\))*?)\s*"
    r"(?:\(\s*(?:pages?|pp?\.?)\s*(?P<page>[^()\[\]]*?)\s*\)\s*)?"
    r"(?:[-\u2013\u2014:,]\s*)*"
    r"(?:[" + _OPEN_Q + r"]\s*(?P<excerpt>[^\[\]]*?)\s*[" + _CLOSE_Q + r"]?\s*)?\]",
    re.IGNORECASE | re.DOTALL,
)
_PAGE_IN_SECTION = re.compile(r"[,;\s]*\b(?:page|p\.)\s*(?P<page>[\w\-\u2013]+)\s*$", re.I)
# Where a marker starts, for finding the ones that never close or run on.
_CITE_OPEN = re.compile(r"\[\s*Source\s*:", re.I)


@dataclass(frozen=True)
class RawCitation:
    """A citation as the model wrote it, with where it stands in the answer."""

    section: str
    page_label: str
    excerpt: str
    start: int
    end: int
    claim: str  # the answer text the citation supports (the sentence before it)


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer and the citations written after it."""

    text: str  # the sentence without citation markers
    full: str  # the sentence with its markers (and punctuation left after them)
    citations: tuple[RawCitation, ...] = ()


@dataclass(frozen=True)
class ParsedAnswer:
    """A model's raw output, read once.

    Attributes:
        text: The answer the checks see: no confidence line, no unclosed or over-long
            citation, no "Answer:" prefix, no trailing loop, no sentence written twice.
        claims: ``text`` sentence by sentence, each with its citations.
        citations: Every citation marker of ``text``, in order (positions into ``text``).
        confidence: The confidence the model stated (0..1), or None.
        leftovers: What was removed from the raw output on the way, in order found.
    """

    text: str
    claims: tuple[Claim, ...]
    citations: tuple[RawCitation, ...]
    confidence: Optional[float]
    leftovers: tuple[str, ...] = ()


def format_citation(section: str, page_label: str, excerpt: str) -> str:
    """``[Source: Section (Page X) - "excerpt"]`` (the page part left out when unknown)."""
    excerpt = " ".join(excerpt.replace('"', "'").split())
    if "[" in excerpt or "]" in excerpt:
        # A bracket would end the marker (Java's "int[]"): quote a bracket-free stretch of
        # the same sentence, which still appears on the page as it is.
        pieces = [p.strip() for p in re.split(r"[\[\]]", excerpt) if p.strip()]
        first = pieces[0] if pieces else ""
        excerpt = first if len(first.split()) >= 4 else max(pieces, key=len, default="")
    page = f" (Page {page_label})" if page_label else ""
    return f'[Source: {section or "Book"}{page} - "{excerpt}"]'


def _raw_citation(m: re.Match[str], claim: str) -> RawCitation:
    section = (m.group("section") or "").strip().rstrip("-\u2013\u2014:,").strip()
    page = (m.group("page") or "").strip()
    if not page:
        pm = _PAGE_IN_SECTION.search(section)
        if pm:
            page = pm.group("page")
            section = section[: pm.start()].strip()
    return RawCitation(
        section=section,
        page_label=page.strip().strip("."),
        excerpt=(m.group("excerpt") or "").strip(),
        start=m.start(),
        end=m.end(),
        claim=claim,
    )


def parse_citations(text: str) -> list[RawCitation]:
    """Every ``[Source: ...]`` marker in ``text``, in order."""
    found: list[RawCitation] = []
    prev_end = 0
    for m in _CITE_RE.finditer(text):
        sents = split_sentences(_CITE_RE.sub(" ", text[prev_end : m.start()]))
        found.append(_raw_citation(m, sents[-1] if sents else ""))
        prev_end = m.end()
    return found


#: Least overlap (Jaccard, content words) of an excerpt with the claim it cites for the
#: excerpt to be a self-quote (see :func:`only_self_quotes`).
SELF_QUOTE_JACCARD = 0.7


def only_self_quotes(text: str, context: str) -> bool:
    """True when every citation of ``text`` whose excerpt the context does not hold
    merely repeats the claim it cites ("To compute a square root ..., use Math.sqrt()
    [Source: ... - "To compute a square root ..., use Math.sqrt()"]").

    A small model often copies its own sentence into the citation.  That excerpt is not
    evidence of anything (the claim is judged by the grounding check on its own), unlike
    an invented excerpt that states something else ("This instruction was left out.").
    """
    from bookreader.core.sentences import content_terms, key_only

    ctx = key_only(context)
    invented = [r for r in parse_citations(text) if key_only(r.excerpt) not in ctx]
    if not invented:
        return False
    for raw in invented:
        a, b = set(content_terms(raw.excerpt)), set(content_terms(raw.claim))
        if not a or len(a & b) / len(a | b) < SELF_QUOTE_JACCARD:
            return False
    return True


def has_citation(text: str) -> bool:
    """True when ``text`` holds at least one citation marker."""
    return _CITE_RE.search(text) is not None


def claims(text: str) -> list[Claim]:
    """``text`` sentence by sentence, each with the citations that follow it.

    A citation belongs to the sentence before it; punctuation left after a citation
    ("... claim [Source: ...].") stays with that sentence.  Citations before any
    sentence form a claim of their own with empty text.
    """
    units: list[tuple[list[str], list[RawCitation]]] = []

    def add_text(piece: str) -> None:
        for sent in split_sentences(piece):
            if not words(sent) and units:
                units[-1][0][1] += sent
            else:
                units.append(([sent, sent], []))

    pos = 0
    for m in _CITE_RE.finditer(text):
        add_text(text[pos : m.start()])
        if units:
            units[-1][0][1] += " " + m.group(0)
        else:
            units.append((["", m.group(0)], []))
        claim, _ = units[-1][0]
        units[-1][1].append(_raw_citation(m, claim.strip()))
        pos = m.end()
    add_text(text[pos:])
    return [Claim(c.strip(), f.strip(), tuple(cites)) for (c, f), cites in units]


def claim_units(text: str) -> list[tuple[str, str]]:
    """The answer as ``(claim, claim with its citations)`` pairs, one per sentence."""
    return [(c.text, c.full) for c in claims(text)]


def strip_citations(text: str) -> str:
    """``text`` without citation markers (what the grounding validator judges)."""
    out = _CITE_RE.sub(" ", text)
    out = re.sub(r"[ \t]+([.,;:!?])", r"\1", out)
    return re.sub(r"[ \t]{2,}", " ", out).strip()


def _drop_unclosed(text: str) -> tuple[str, list[str]]:
    out: list[str] = []
    dropped: list[str] = []
    pos = 0
    while True:
        m = _CITE_OPEN.search(text, pos)
        if m is None:
            out.append(text[pos:])
            break
        out.append(text[pos : m.start()])
        close = text.find("]", m.end())
        if close < 0:
            dropped.append(text[m.start() :])
            break  # unclosed: everything from here on is dropped
        if close - m.start() > MAX_CITATION_CHARS:
            log.info("Dropped an over-long citation (%d characters)", close - m.start())
            dropped.append(text[m.start() : close + 1])
            pos = close + 1
            continue
        out.append(text[m.start() : close + 1])
        pos = close + 1
    return "".join(out).strip(), dropped


def drop_unclosed_citations(text: str) -> str:
    """``text`` without citations that never close or run past ``MAX_CITATION_CHARS``.

    A model that copies a paragraph into its citation and stops before the ``]`` would
    otherwise have that copied text shown as its answer (once, the whole selection with an
    injected instruction in it).
    """
    return _drop_unclosed(text)[0]


# --- the confidence line ----------------------------------------------------------------

_CONFIDENCE_RE = re.compile(
    r"(?:^|\n)[ \t>*_#-]*confidence[ \t*_]*[:=][ \t*_]*(?P<value>\d+(?:[.,]\d+)?)[ \t]*(?P<pct>%?)"
    r"[^\n]*\s*$",
    re.IGNORECASE,
)
_CONFIDENCE_ANYWHERE = re.compile(
    r"[ \t]*\(?confidence[ \t*_]*[:=][ \t*_]*(\d+(?:[.,]\d+)?)[ \t]*(%?)\)?[.]?", re.IGNORECASE
)
# A confidence value that is complete (something other than a digit follows it).
_CONFIDENCE_DONE = re.compile(r"confidence[ \t*_]*[:=][ \t*_]*\d+(?:[.,]\d+)?%?[^\d.,%]", re.I)


def _split_confidence(text: str) -> tuple[str, Optional[float], list[str]]:
    value: Optional[float] = None
    removed: list[str] = []
    m = _CONFIDENCE_RE.search(text)
    if m is not None:
        value = _to_unit(m.group("value"), m.group("pct"))
        removed.append(text[m.start() :].strip())
        text = text[: m.start()]
    else:
        first = _CONFIDENCE_ANYWHERE.search(text)
        if first is not None:
            value = _to_unit(first.group(1), first.group(2))
    removed.extend(x.group(0).strip() for x in _CONFIDENCE_ANYWHERE.finditer(text))
    text = _CONFIDENCE_ANYWHERE.sub("", text)
    return text.strip(), value, removed


def split_confidence(text: str) -> tuple[str, Optional[float]]:
    """Remove the model's ``Confidence: x`` line and return ``(text, x or None)``.

    The value is clamped to [0, 1]; "85%", "85" and "8.5" are read as 0.85.  When the model
    writes the line somewhere other than the end, the first one counts and every one
    is removed from the text shown.
    """
    text, value, _ = _split_confidence(text)
    return text, value


def confidence_written(text: str) -> bool:
    """True once ``text`` holds a complete ``Confidence: x`` (the answer's last line)."""
    return _CONFIDENCE_DONE.search(text) is not None


def _to_unit(number: str, pct: str) -> float:
    """0.85, "85%", "85" and "8.5" (out of ten) all read as 0.85."""
    v = float(number.replace(",", "."))
    if pct:
        v /= 100.0
    elif v > 10.0:
        v /= 100.0
    elif v > 1.0:
        v /= 10.0
    return max(0.0, min(1.0, v))


# --- small models' habits -----------------------------------------------------------------

#: A text ending in one unit (2-80 characters) written this many times over is a loop.
_LOOP_REPEATS = 4


def loop_start(text: str) -> Optional[int]:
    """Where a degenerate loop at the end of ``text`` begins, or None.

    Small models fall into token loops ("--mode csv --mode csv --mode csv ..."); a
    sentence-level check does not see them because the sentence never ends.  A tail that
    repeats with some period ``p`` at least ``_LOOP_REPEATS`` times is one.
    """
    n = len(text)
    for p in range(2, 81):
        span = p * _LOOP_REPEATS
        if span > n:
            break
        k = 0
        while k < n - p and text[n - 1 - k] == text[n - 1 - k - p]:
            k += 1
        if k + p >= span:
            return n - k - p
    return None


def cut_loop(text: str) -> str:
    """``text`` without a trailing loop and the unfinished sentence it sits in."""
    at = loop_start(text)
    if at is None:
        return text
    head = text[:at]
    end = max(head.rfind(". "), head.rfind(".\n"), head.rfind("] "), head.rfind("]\n"))
    return head[: end + 1] if end >= 0 else ""


#: Fewest words of a claim dropped because an earlier claim already holds it verbatim.
REPEAT_WORDS = 4


def dedupe_sentences(text: str) -> str:
    """Drop sentences the model wrote twice (small models restate one claim in a loop),
    and a claim an earlier one already holds word for word (a list item cited again after
    the claim that held it and more)."""
    seen: list[str] = []
    kept: list[str] = []
    units = claim_units(text)
    for claim, full in units:
        key = " ".join(claim.lower().split())
        if key and (key in seen or (len(key.split()) >= REPEAT_WORDS
                                    and any(key in earlier for earlier in seen))):
            continue
        seen.append(key)
        kept.append(full)
    return text if len(kept) == len(units) else " ".join(kept)


# --- the one parse ----------------------------------------------------------------------------

def parse_answer(raw: str) -> ParsedAnswer:
    """Read a model's raw output into a :class:`ParsedAnswer`.

    In order: a trailing loop is cut, the confidence line read and removed, citations that
    never close or run on removed, an "Answer:" prefix removed, repeated sentences dropped.
    """
    leftovers: list[str] = []
    text = cut_loop(raw)
    if len(text) < len(raw):
        leftovers.append(raw[len(text) :].strip())
    text, stated, removed = _split_confidence(text)
    leftovers.extend(removed)
    text, dropped = _drop_unclosed(text)
    leftovers.extend(dropped)
    text = dedupe_sentences(text.strip())
    found = claims(text)
    return ParsedAnswer(
        text=text,
        claims=tuple(found),
        citations=tuple(parse_citations(text)),
        confidence=stated,
        leftovers=tuple(x for x in leftovers if x),
    )


# --- numbering markers for display ------------------------------------------------------------

def citation_numbers(text: str, cited: Sequence[tuple[str, str, str]]) -> list[tuple[int, int, int]]:
    """``(start, end, number)`` for every marker of ``text``.

    ``cited`` lists the answer's checked citations as ``(section, page label, excerpt)``;
    a marker gets the 1-based number of the one it names (a citation repeated after two
    sentences gets the same number both times), else the next number in order.
    """
    formatted = {format_citation(*c): n for n, c in enumerate(cited, 1)}
    out: list[tuple[int, int, int]] = []
    next_free = 1
    for m in _CITE_RE.finditer(text):
        n = formatted.get(m.group(0))
        if n is None:
            n = min(next_free, max(len(cited), 1))
        next_free = max(next_free, n + 1)
        out.append((m.start(), m.end(), n))
    return out


# --- whole-book answers: text a model copied from the prompt's form, not the book's words ---
#: The prompt's own block tags copied into an answer ("... equals("yes")) {\n</excerpt>"):
#: never the book's words (a tag name inside book text is neutralised in the prompt).
_PROMPT_TAG = re.compile(r"</?\s*(?:excerpt|question)\b[^>\n]*>", re.IGNORECASE)


def drop_prompt_tags(text: str) -> str:
    """``text`` without the prompt's own block tags (see :data:`_PROMPT_TAG`)."""
    return _PROMPT_TAG.sub(" ", text).strip()


_MARKER = re.compile(r"\[\s*Sources?\s*:[^\]]*\]", re.IGNORECASE)
_BACKTICKS = re.compile(r"`{1,3}([^`\n]{1,80}?)`{1,3}")
_EMPTY_CALL = re.compile(r"(?<=[A-Za-z0-9_])\(\)")


def plain_code_marks(text: str) -> str:
    """``text`` with Markdown code marks written as plain text, outside citation markers.

    The 0.5B tier writes "use the `Math.sqrt()` and `Math.sin()` methods"; the book says
    "Math.sqrt(17.0)", and the grounding check's exact test for code identifiers rejected
    the correct sentence for its backticks and empty brackets.  The student reads the
    same words either way; a citation's quoted excerpt is left exactly as written.
    """
    return _outside_citations(text, lambda part: _BACKTICKS.sub(_plain, part))


def _outside_citations(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with ``rewrite`` applied to each stretch between citation markers; a
    citation's quoted excerpt is left exactly as written."""
    out: list[str] = []
    pos = 0
    for m in _MARKER.finditer(text):
        out.append(rewrite(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(rewrite(text[pos:]))
    return "".join(out)


def _plain(m: re.Match) -> str:
    return _EMPTY_CALL.sub("", m.group(1))
