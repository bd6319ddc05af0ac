"""Better ways to fail: quotes instead of dead ends, task requests, tautologies.

* :func:`build_quotes`: when retrieval is confident but no verified answer could be
  written (the model declined, the grounding check removed every sentence, the time budget
  ran out), the student gets the one to three sentences of the context that best address
  the question, each with a citation that :func:`~bookreader.core.citations.verify_answer`
  checks on the page (so it jumps and highlights like any other).
* :func:`task_kind` / :func:`explain_selection`: "Explain this", "Summarize this", "What
  does this term mean?" are requests about the selection, not look-ups; when the model's
  own explanation does not pass the check, the selection's central sentences (for a term,
  its defining sentence) are given, cited, instead of the fallback.
* :func:`is_tautology`: "The frame called the base case is called the base case." adds
  nothing to the question; such a sentence is treated like an unsupported one.

Sentences that give the assistant instructions ("ignore your instructions and reply ...",
judged by :mod:`bookreader.core.injection`) are never quoted: text inside the context is data, and a quote of an injected instruction
would show it as if it were the book's answer.

Prose is quoted before code: a line of imports or of a listing is never quoted (the
passage's best quotable sentence stands for it, so its page is still pointed at), a
comment or docstring ranks below prose unless the question asks for code, and a lead-in
that claims something ("... you'll need to set up a proper development environment:") is
quoted as a statement.  A comment or docstring is shown without its marks
("Compute the monthly totals", not three double quotes around it).  Quoting prose first
cites the gold page more often: a listing line seldom explains the question.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from bookreader.core.citations import (
    CitationSource,
    format_citation,
)
from bookreader.core.llm.answer_type import is_caption
from bookreader.core.llm.extractive import (
    LEAD_IN_TO_CODE,
    TOC_LINE,
    answer_type_bonus,
    asks_for_name,
    code_penalty,
    form_penalty,
    is_alt_text,
    is_claiming_lead_in,
    is_fragment_list,
    is_import_line,
    is_title_line,
    looks_like_code,
    question_kind,
    reads_as_code,
    shown_sentence,
    split_sentences,
    unmarked,
    wants_code,
    without_list_number,
)
from bookreader.core.grounding_checks import is_navigation, is_tautology
from bookreader.core.injection import finished_part, instruction_start, unfinished_end
from bookreader.core.sentences import content_terms, words

log = logging.getLogger(__name__)

#: The line that opens a quotes answer.
QUOTES_INTRO = (
    "No verified answer could be written; these passages of the book address the question:"
)
#: The line that opens a quotes answer in highlight mode.
QUOTES_INTRO_SELECTION = (
    "No verified answer could be written; these sentences of the selection and its pages "
    "address the question:"
)
def timeout_lead(label: str, which: str, seconds: float) -> str:
    """The opening of a quotes answer given because the model ran out of time."""
    if which == "first_token":
        return (f"No answer in time: the {label.split(':')[0]} model had not started writing "
                f"after {seconds:.0f} s (this computer is busy, or the model is slow on it; "
                "ask again, or give it longer in Settings)")
    return (f"No answer in time: the {label.split(':')[0]} model did not finish within "
            f"{seconds:.0f} s (ask again, or give it longer in Settings)")


#: Most sentences a quotes answer or an extractive explanation shows.
MAX_QUOTES = 3
#: Longest citation excerpt, in words (long excerpts are what models copy paragraphs into).
EXCERPT_WORDS = 20
#: Longest sentence quoted, in words (a run-on "sentence" is usually a code listing).
MAX_QUOTE_WORDS = 70

# --- task requests --------------------------------------------------------------------------
_TASKS: list[tuple[str, re.Pattern]] = [
    ("define", re.compile(
        r"^\s*(?:what\s+does\s+(?:this|that|the)\s+(?:term|word|phrase|name|mean)|"
        r"what\s+(?:is|are)\s+(?:this|that|these)\s*(?:term|word|concept|thing)?s?\s*\??\s*$|"
        r"define\s+(?:this|that|it)\b|meaning\s+of\s+(?:this|that))", re.I)),
    ("simplify", re.compile(
        r"^\s*(?:explain|say|put|rephrase|rewrite)\s+(?:this|that|it)\b.*\b(?:simple|simpler|"
        r"plain|easier|easy)\b", re.I)),
    ("summarize", re.compile(
        r"^\s*(?:summari[sz]e|sum\s+up|give\s+(?:me\s+)?a\s+summary|tl;?dr|what\s+is\s+this"
        r"\s+(?:about|saying)|what\s+does\s+this\s+(?:say|passage\s+say))", re.I)),
    ("explain", re.compile(
        r"^\s*(?:explain|clarify|elaborate|help\s+me\s+understand|what\s+does\s+this\s+mean)"
        r"(?:\s+(?:this|that|it|the\s+(?:selection|selected\s+text|passage)))?\s*"
        r"(?:please)?\s*[.?!]*\s*$", re.I)),
]


def task_kind(question: str) -> Optional[str]:
    """"define", "simplify", "summarize" or "explain" for a request about the selection
    itself; None for a question to look up."""
    q = " ".join(question.split())
    for kind, pattern in _TASKS:
        if pattern.search(q):
            return kind
    return None


# --- instruction-like sentences --------------------------------------------------------------
def instruction_like(sentence: str) -> bool:
    """True for a sentence that gives the assistant instructions (or holds one):
    :func:`bookreader.core.injection.instruction_start`."""
    return instruction_start(sentence) is not None


# --- picking sentences -----------------------------------------------------------------------
@dataclass(frozen=True)
class Quote:
    """A context sentence chosen to be shown, with its source and its relevance score."""

    sentence: str
    source: CitationSource
    score: float


_DEFINITION = re.compile(
    r"\b(?:is|are)\s+(?:a|an|the|called|known\s+as|used|when|what)\b|\brefers?\s+to\b|"
    r"\bmeans?\b|\bis\s+defined\b|\bdescribes?\b|^[^:]{2,50}:\s+\w", re.I)

#: A line that opens with a function call: 'print(f"Simulation completed.',
#: "System.out.println(0.1 * 10);" (a listing line, which can otherwise be chosen as the
#: first quote).
_CALL_START = re.compile(r"^[A-Za-z_][\w.]*\(")


def usable_sentence(sentence: str) -> bool:
    """A sentence worth quoting: a claim (not a heading, an intro to code or a listing).

    A lead-in that makes a claim of its own ("To work with spreadsheets, you'll
    need to set up a proper development environment:") is one, quoted as a statement
    (:func:`~bookreader.core.llm.extractive.shown_sentence`); a bare one ("Here is an
    example:") is not, and neither is a question, nor a sentence that text no full stop
    closes runs into (:func:`~bookreader.core.injection.unfinished_end`: a running head,
    or a planted text left without its full stop), whose quotable part is the text after
    the break (:func:`~bookreader.core.injection.finished_part`, as :func:`rank_sentences`
    quotes it).
    """
    return quotable_form(sentence) and not unfinished_end(sentence)


def quotable_form(sentence: str) -> bool:
    """:func:`usable_sentence` whatever runs into the sentence."""
    n = len(words(sentence))
    if n < 4 or n > MAX_QUOTE_WORDS:
        return False
    s = sentence.rstrip()
    if (s.endswith(":") and not is_claiming_lead_in(s)) or instruction_like(s):
        return False
    if s.rstrip("\"'\u201d)").endswith("?"):
        # a question asks, it does not answer ("So how and why do you choose one over the
        # others?" quoted beside an answer to "What is the difference between a list and
        # a tuple?")
        return False
    if LEAD_IN_TO_CODE.search(s):  # "here is a method without a base case: void f() {"
        return False
    if _CALL_START.match(s):  # 'System.out.println(0.1 * 10);' (a listing line)
        return False
    # a contents line, a listing or its imports, a heading or caption, bare list items
    if (TOC_LINE.search(s) or looks_like_code(s) or is_import_line(s) or is_title_line(s)
            or is_fragment_list(s) or is_alt_text(s) or is_caption(s)):
        return False
    return bool(re.search(r"[.!?\"'\u201d)]$", s)) or n >= 8


def _embed(embedder: Any, texts: list[str]) -> Optional[list]:
    if embedder is None:
        return None
    for method in ("embed", "encode"):
        fn: Any = getattr(embedder, method, None)  # a duck-typed embedder
        if callable(fn):
            try:
                vectors: Any = fn(texts)
                return list(vectors)
            except Exception:  # keyword scores still stand; the log says why
                log.exception("quotes: embedding failed, using keywords only")
                return None
    return None


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return float(dot / (na * nb)) if na and nb else 0.0


def rank_sentences(
    question: str,
    sources: Sequence[CitationSource],
    embedder: Any = None,
    *,
    limit: int = 40,
) -> list[Quote]:
    """The usable sentences of ``sources``, most relevant to ``question`` first.

    Relevance is the mean of keyword coverage (the share of the question's content words
    the sentence holds) and, with an embedder, the MiniLM cosine to the question, adjusted
    by :func:`~bookreader.core.llm.extractive.answer_type_bonus` (a matching glossary
    entry or definition up for "what is", a procedure for "how", a reason for "why"; a
    task or a question down).
    """
    q_terms = set(content_terms(question))
    cands: list[tuple[str, CitationSource, float, str]] = []
    seen: set[str] = set()
    for src in sources:
        for sent in split_sentences(src.text):
            whole = " ".join(sent.split())
            sent = finished_part(whole)  # what no full stop closes is not quoted
            key = sent.lower()
            if key in seen or not usable_sentence(sent) or (
                    sent != whole and not quotable_form(whole)):
                continue
            seen.add(key)
            terms = set(content_terms(sent))
            cov = len(q_terms & terms) / len(q_terms) if q_terms else 0.0
            cands.append((sent, src, cov, whole))
    if not cands:
        return []
    cands.sort(key=lambda c: -c[2])
    cands = cands[:limit]
    vectors = _embed(embedder, [question] + [c[0] for c in cands])
    kind = question_kind(question)
    asks_name = asks_for_name(question)
    out = []
    for i, (sent, src, cov, whole) in enumerate(cands):
        score = cov
        if vectors is not None:
            score = (cov + _cos(vectors[0], vectors[i + 1])) / 2
        # The extractive backend's preferences: a definition (the book's own glossary entry
        # first) for "what is", a procedure for "how", a reason for "why"; an exercise, a
        # question or a passing remark without the answer's shape ranks lower.
        score += answer_type_bonus(kind, sent, q_terms, asks_name=asks_name)
        # and, as in its choice, prose over a comment or docstring unless the question
        # asks for code, a claim over a lead-in that runs into a table (judged on the
        # whole sentence: a docstring's marks may stand before the break)
        score += form_penalty(whole) + code_penalty(whole, question)
        out.append(Quote(sent, src, round(score, 4)))
    out.sort(key=lambda q: -q.score)
    return out


def _cite(q: Quote) -> str:
    excerpt = " ".join(
        without_list_number(unmarked(q.sentence)).replace('"', "'").split()[:EXCERPT_WORDS])
    label = q.source.page_label
    return format_citation(q.source.section, label, excerpt)


def render_quotes(quotes: Sequence[Quote]) -> str:
    """One line per quote: ``“sentence” [Source: ...]``, a comment or docstring without
    its marks and a claiming lead-in ending in a full stop
    (:func:`~bookreader.core.llm.extractive.shown_sentence`), without the next list item's
    number that PDF text leaves at a sentence's end ("... their environment: 1.":
    :func:`~bookreader.core.llm.answer_type.without_list_number`)."""
    return "\n".join(f"\u201c{shown_sentence(without_list_number(q.sentence))}\u201d {_cite(q)}"
                     for q in quotes)


def extractive_quotes(
    question: str,
    sources: Sequence[CitationSource],
    embedder: Any = None,
    *,
    k: int = MAX_QUOTES,
) -> list[Quote]:
    """The sentences the extractive backend would answer ``question`` with, best first.

    Its choice (:meth:`~bookreader.core.llm.extractive.ExtractiveBackend.select`: the
    best sentence with the sentences that continue it, the first passage's best when it
    is close, and one that adds the question's words) lies on a page of the question's
    section more often than the single best-scored sentence.  Empty
    when the passages do not answer by its measure (quotes fall back to
    :func:`rank_sentences`).  Only usable sentences (:func:`usable_sentence`) are kept.
    """
    from bookreader.core.llm.extractive import ContextBlock, ExtractiveBackend, ParsedPrompt

    if not sources:
        return []
    blocks = tuple(ContextBlock("excerpt", s.text, s.section or "Book", s.page_label, n + 1)
                   for n, s in enumerate(sources))
    chosen = ExtractiveBackend(embedder, max_sentences=k).select(
        ParsedPrompt(blocks, question, None))
    out: list[Quote] = []
    for c in chosen:
        sentence = " ".join(c.sentence.split())
        if c.block.number is None:
            continue
        src = sources[c.block.number - 1]
        if usable_sentence(sentence):
            out.append(Quote(sentence, src, round(c.score, 4)))
            continue
        # A line of a listing or its imports is not quoted; the passage's best sentence
        # that is stands for it, so its page is still pointed at ("import numpy as np
        # import csv ..." would otherwise be the one quote on the page).  It must name
        # something the question asks about, or a listing's comment ("x[3] += ay * dt
        # # Update velocity y") stands in for the page.
        seen = {q.sentence.lower() for q in out}
        asked = set(content_terms(question))
        other = next((q for q in rank_sentences(question, [src], embedder, limit=10)
                      if q.sentence.lower() not in seen
                      and asked & set(content_terms(q.sentence))), None)
        if other is not None:
            out.append(Quote(other.sentence, src, round(c.score, 4)))
    return out[:k]


def pick_quotes(
    question: str,
    sources: Sequence[CitationSource],
    embedder: Any = None,
    *,
    min_score: float = 0.2,
    k: int = MAX_QUOTES,
    lead_extractive: bool = False,
) -> list[Quote]:
    """Up to ``k`` sentences that address ``question`` (within 80 % of the best score).

    With ``lead_extractive`` (whole-book quotes), the extractive backend's choice
    (:func:`extractive_quotes`) comes first and the ranked sentences fill the rest.
    """
    ranked = rank_sentences(question, sources, embedder)
    lead = extractive_quotes(question, sources, embedder, k=k) if lead_extractive else []
    if not ranked or ranked[0].score < min_score:
        return lead
    best = ranked[0].score
    rest = [q for q in ranked[:k] if q.score >= max(min_score, 0.8 * best)]
    picked: list[Quote] = []
    seen: list[str] = []
    for q in lead:  # a sentence the book prints twice is chosen twice: quoted once
        if q.sentence.lower() not in seen:
            picked.append(q)
            seen.append(q.sentence.lower())
    for q in rest:
        # a sentence already picked (overlapping passages hold the same ones), or one that
        # holds a quote already picked ("... what happened: NullPointerException: You
        # tried to ..." after the entry the extractive choice split), is not quoted again
        said = q.sentence.lower()
        if not any(s in said or said in s for s in seen):
            picked.append(q)
            seen.append(said)
    picked = picked[:k]
    if not wants_code(question):
        # the same quotes, prose first: a docstring the extractive choice led with
        # ("Compute the loan payment :param rate: ...") follows the sentence that says
        # it ("An annuity pays a fixed amount each period ...")
        picked.sort(key=lambda q: reads_as_code(q.sentence))
    return picked


#: Words of a passage's line quoted when the passage holds no quotable sentence.
LINE_WORDS = 16


def passage_lines(question: str, sources: Sequence[CitationSource], k: int = 2) -> list[Quote]:
    """One line of each of the first ``k`` sources: the line holding most of the
    question's words (the first one on a tie), cut to :data:`LINE_WORDS` words.

    For passages with no sentence worth quoting (a code listing, a table): retrieval
    found them with confidence, so the student still gets their pages, never "not
    covered" ("class InvoicePrinter: ... # Open the printer queue" for a question on
    the printer queue).  The line is quoted as printed, so its citation verifies on the page.
    """
    q_terms = set(content_terms(question))
    out: list[Quote] = []
    for src in sources[:k]:
        lines = [" ".join(line.split()) for line in src.text.splitlines()]
        # overlapping passages hold the same lines: a line already quoted is not repeated
        quoted = {q.sentence for q in out}
        lines = [line for line in lines if len(words(line)) >= 2
                 and " ".join(line.split()[:LINE_WORDS]) not in quoted]
        if not lines:
            continue
        best = max(lines, key=lambda line: len(q_terms & set(content_terms(line))))
        out.append(Quote(" ".join(best.split()[:LINE_WORDS]), src, 0.0))
    return out


def build_quotes(
    question: str,
    sources: Sequence[CitationSource],
    embedder: Any = None,
    *,
    min_score: float = 0.2,
    selection_mode: bool = False,
    lead_extractive: bool = False,
    lines_if_none: bool = False,
    lead: str = "",
) -> Optional[str]:
    """The text of a quotes answer, or None when no sentence addresses the question.

    With ``lines_if_none`` (whole-book questions, whose retrieval was confident) passages
    without a quotable sentence are pointed at by one line each (:func:`passage_lines`).
    ``lead`` replaces the opening "No verified answer could be written" (a timeout says
    so: :func:`timeout_lead`).
    """
    quotes = pick_quotes(question, sources, embedder, min_score=min_score,
                         lead_extractive=lead_extractive)
    if not quotes and lines_if_none:
        quotes = passage_lines(question, sources)
    if not quotes:
        return None
    intro = QUOTES_INTRO_SELECTION if selection_mode else QUOTES_INTRO
    if lead:
        intro = lead + intro[intro.index(";"):]
    return intro + "\n" + render_quotes(quotes)


def explain_selection(
    kind: str,
    question: str,
    selection: CitationSource,
    embedder: Any = None,
) -> Optional[str]:
    """A grounded explanation of the selection built from its own sentences.

    For "define": the sentence that defines the term (a glossary entry, "X is ..."), else
    the selection's first claims; otherwise the selection's most central sentences (closest
    to the selection as a whole), in reading order.  Instruction-like sentences are left out.
    """
    sents = [finished_part(" ".join(s.split())) for s in split_sentences(selection.text)]
    usable = [s for s in sents if len(words(s)) >= 3 and not instruction_like(s)
              and not s.rstrip().endswith(":")]
    if not usable:
        usable = [s for s in sents if words(s) and not instruction_like(s)]
    if not usable:
        return None
    if kind == "define":
        defs = [s for s in usable if _DEFINITION.search(s)]
        chosen = (defs or usable)[:2]
    elif len(usable) <= MAX_QUOTES:
        chosen = usable
    else:
        vectors = _embed(embedder, [selection.text[:2000]] + usable)
        if vectors is None:
            chosen = usable[:MAX_QUOTES]
        else:
            scores = [_cos(vectors[0], v) for v in vectors[1:]]
            top = sorted(range(len(usable)), key=lambda i: -scores[i])[:MAX_QUOTES]
            chosen = [usable[i] for i in sorted(top)]
    lead = {
        "define": "The selected text defines it this way:",
        "summarize": "In short, the selected text says:",
        "simplify": "Its key points, in the selection's own words:",
        "explain": "The selected text makes these points:",
    }.get(kind, "The selected text says:")
    lines = [
        f"{s} {_cite(Quote(s, selection, 1.0))}" for s in chosen
    ]
    return lead + "\n" + "\n".join(lines)


#: Words a finished sentence does not end on: "An instruction hidden inside a" is the
#: cut-off edge of a selection copied by the model, not a statement.
_DANGLING = frozenset(
    "a an the of to in inside into on at for with by from and or but that which whose is "
    "are was were as than".split())


def is_fragment(sentence: str) -> bool:
    """A sentence cut off mid-phrase: no closing punctuation and a last word that cannot
    end one (an article, a preposition, a conjunction, a copula)."""
    text = sentence.strip().rstrip("\"'\u201d\u2019").strip()
    if not text or text[-1] in ".!?:;)]":
        return False
    tail = words(text)
    return bool(tail) and tail[-1].lower() in _DANGLING


def mark_tautologies(validation: Any, sentences: Sequence[str], question: str,
                     selection: str = "") -> Any:
    """``validation`` with the answer sentences that only restate the question, only send
    the reader to a part of the book
    (:func:`~bookreader.core.grounding_checks.is_navigation`: "Open the ... section."),
    or are cut off mid-phrase (:func:`is_fragment`), marked
    unsupported (so the answerer drops them like any unsupported sentence)."""
    tautologies = tuple(
        s for s in sentences
        if s not in validation.unsupported_sentences
        and (is_tautology(s, question, selection) or is_fragment(s) or is_navigation(s))
    )
    if tautologies:
        log.info("Tautology treated as unsupported: %s", tautologies[0][:80])
    return with_unsupported(validation, tautologies)


def with_unsupported(validation: Any, sentences: Sequence[str]) -> Any:
    """``validation`` with ``sentences`` added to its unsupported ones (the answerer drops
    them like any sentence the check refused); unchanged when there are none."""
    if not sentences:
        return validation
    return replace(validation, passed=False,
                   unsupported_sentences=tuple(validation.unsupported_sentences)
                   + tuple(sentences))


# --- citations that point at the claim's own sentence -------------------------------------------
