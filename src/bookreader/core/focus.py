"""Focus a long selection on the sentences that bear on the question.

A small local model reads its prompt slowly: the bundled SmolLM2-135M reads about 270
prompt tokens a second on two cores, so a 1,500-character selection (a long SQuAD
paragraph, or a page of a textbook) costs about 1.5 s before the first token.  It also
answers better from three relevant sentences than from fifteen.  For such a backend the
prompt carries the selection's most relevant sentences, up to a character budget, in
their original order; a gap between two kept runs is shown as " ... ".

This is still the selection and nothing else (no store, no retrieval): every sentence
shown to the model is a sentence of the selection, and the answer's citations and its
grounding check are made against the *whole* selection, so an answer from a sentence the
model did not see is judged exactly as before.  Backends that read fast (Claude, the
extractive backend) and larger GGUF models get the whole selection.

Scoring: the IDF-weighted share of the question's content words a sentence holds
(rare words count most, as in the extractive backend), plus MiniLM cosine similarity to
the question when an embedder is given.  The best sentence's predecessor is kept with it
when there is room, since it usually holds what "it" or "this" refers to.  A long
stretch without sentence ends (a code listing, a list, a table) is ranked line by line,
and kept lines keep their line breaks.

Whole-book mode (:func:`focus_passages`) ranks the retrieved passages' sentences together.
A tier's spec chooses the ranking: ``"keywords"`` (the score above) or ``"answer_split"``
(the default tier ``small``): the extractive backend's sentence score
(:func:`~bookreader.core.focus_ranking.answer_scores`: a definition for "what is", a
procedure for "how"; a heading, a lead-in to a code listing or a contents line never
shown for its own sake), on the units the extractive backend splits (a glossary entry, a
lead-in and its listing apart).
``bench/focus_quality.py`` measures what each ranking shows without running a model.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from typing import Any, Optional, Sequence


from bookreader.core.code_text import ends_in_comment, is_code_line, is_comment
from bookreader.core.focus_ranking import (
    UNUSABLE,
    answer_scores,
    answer_units,
    sentence_answer_scores,
    similarities,
)
from bookreader.core.llm import extractive as ex
from bookreader.core.sentences import content_terms, split_sentences

log = logging.getLogger(__name__)

GAP = " ... "
#: Characters of framing one more passage costs in the prompt (its excerpt tags).
PASSAGE_COST = 80
#: Between kept runs of a retrieved passage: a line break, not " ... ".  A model told to
#: quote exact words copied the dots into its quotes (text the book does not have),
#: and runs on separate lines end a copied quote where the book's sentence ends.
PASSAGE_GAP = "\n"


def _keyword_scores(sentences: Sequence[str], question: str) -> list[float]:
    query = list(dict.fromkeys(content_terms(question)))
    if not query:
        return [0.0] * len(sentences)
    terms = [set(content_terms(s)) for s in sentences]
    n = len(sentences)
    df: Counter = Counter()
    for t in terms:
        df.update(t & set(query))
    idf = {q: math.log(1.0 + (n - df[q] + 0.5) / (df[q] + 0.5)) for q in query}
    total = sum(idf.values()) or 1.0
    return [sum(idf[q] for q in query if q in t) / total for t in terms]



def _units(text: str, max_chars: int) -> tuple[list[str], list[str]]:
    """Sentences, with a long multi-line one (code, a list, a table) split into its lines.

    Returns the units and, for each, what joins it to the unit before when both are kept.
    """
    units: list[str] = []
    joins: list[str] = []
    for sentence in split_sentences(text):
        lines = [ln.rstrip() for ln in sentence.split("\n") if ln.strip()]
        if len(sentence) > max_chars // 2 and len(lines) > 1:
            for k, line in enumerate(lines):
                units.append(line)
                joins.append(" " if k == 0 else "\n")
        else:
            units.append(sentence)
            joins.append(" ")
    return units, joins


def ranked_units(text: str, budgets: Sequence[int]) -> set[str]:
    """Every unit :func:`focus_passages` may rank for a passage ``text`` under any of the
    character ``budgets`` and any ranking (a long multi-line sentence is split into lines
    under a small budget; ``answer_split`` splits further), for vectors computed ahead
    (:mod:`bookreader.core.unit_vectors`)."""
    out: set[str] = set()
    for budget in budgets:
        units, joins = _units(text, budget)
        out.update(units)
        out.update(answer_units(units, joins)[0])
    return out


def focus(
    text: str,
    question: str,
    max_chars: Optional[int],
    *,
    embedder: Any = None,
) -> str:
    """The sentences of ``text`` most relevant to ``question``, at most ``max_chars`` long.

    Args:
        text: The selection (already trimmed and length-checked).
        question: The student's question.
        max_chars: The budget; ``None`` or a text already within it returns ``text``.
        embedder: Optional MiniLM embedder (``embed(list[str])`` -> unit vectors).

    Returns:
        ``text`` itself when it fits, else its best sentences in their original order,
        runs separated by ``" ... "``.  At least the best sentence is always kept (cut at
        the budget only when that one sentence alone is longer).
    """
    if max_chars is None or len(text) <= max_chars:
        return text
    sentences, joins = _units(text, max_chars)
    if len(sentences) <= 1:
        return text[:max_chars]
    scores = _scores(sentences, question, embedder)
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    best = order[0]
    if len(sentences[best]) >= max_chars:
        return sentences[best][:max_chars]
    chosen = {best}
    used = len(sentences[best]) + 2 * len(GAP)  # room for a leading and a trailing gap
    wanted = ([best - 1] if best > 0 else []) + order[1:]
    for i in wanted:
        if i in chosen:
            continue
        cost = len(sentences[i]) + len(GAP)
        if used + cost > max_chars:
            continue
        chosen.add(i)
        used += cost
    shown = _render(sentences, joins, sorted(chosen))
    log.debug("Selection focused: %d of %d characters", len(shown), len(text))
    return shown


def _scores(units: Sequence[str], question: str, embedder: Any) -> list[float]:
    scores = _keyword_scores(units, question)
    if embedder is not None:
        sims = similarities(embedder, units, question)
        if sims is not None:
            scores = [k + s for k, s in zip(scores, sims)]
    return scores


def _render(units: Sequence[str], joins: Sequence[str], kept: Sequence[int],
            gap: str = GAP) -> str:
    """The kept units in order, runs joined as in the text, gaps shown as ``gap``
    (" ... " also marks what is left out at either end; a line break does not)."""
    marked = gap == GAP
    out: list[str] = [GAP.lstrip()] if kept[0] > 0 and marked else []
    for prev, i in zip([None, *kept], kept):
        if prev is not None:
            out.append(joins[i] if i == prev + 1 else gap)
        out.append(units[i])
    if kept[-1] < len(units) - 1 and marked:
        out.append(GAP.rstrip())
    return "".join(out).strip()


def unique_sentences(texts: Sequence[str]) -> list[str]:
    """``texts`` with every sentence already shown by an earlier text left out.

    Retrieved chunks overlap (the chunker repeats a sentence or two at each boundary), and
    a local tier's few hundred characters of focused passages once held the same sentence
    twice, in two excerpts, instead of the sentence that answered.  A text none of whose
    sentences repeat is returned unchanged; one that only repeats becomes empty (and is
    not shown).  Citations and the grounding check still use the whole chunks.
    """
    seen: set[str] = set()
    out: list[str] = []
    for text in texts:
        sentences = split_sentences(text)
        keys = [_sentence_key(s) for s in sentences]
        out.append(_without(text, sentences, keys, seen))
        seen.update(keys)
    return out


def _sentence_key(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def _without(text: str, sentences: Sequence[str], keys: Sequence[str], seen: set[str]) -> str:
    """``text`` without its sentences whose keys are in ``seen`` (as :func:`unique_sentences`
    shows it)."""
    kept = [s for s, k in zip(sentences, keys) if k not in seen]
    return text if len(kept) == len(sentences) else " ".join(kept)


def overlap_variants(texts: Sequence[str]) -> list[str]:
    """What :func:`unique_sentences` may make of each of a book's chunk ``texts`` (in
    reading order) when a neighbour was retrieved before it: without the sentences it
    shares with the chunk before, with the chunk after, or with both (the chunker repeats
    sentences at each boundary).  Only texts that change are listed."""
    split = [split_sentences(t) for t in texts]
    keys = [[_sentence_key(s) for s in ss] for ss in split]
    out: list[str] = []
    for i, text in enumerate(texts):
        before = set(keys[i - 1]) if i > 0 else set()
        after = set(keys[i + 1]) if i + 1 < len(texts) else set()
        for seen in (before, after, before | after):
            if seen & set(keys[i]):
                variant = _without(text, split[i], keys[i], seen)
                if variant != text and variant:
                    out.append(variant)
    return out


def focus_passages(
    texts: Sequence[str],
    question: str,
    max_chars: int,
    *,
    embedder: Any = None,
    passage_cost: int = PASSAGE_COST,
    sections: Sequence[str] = (),
    ranking: str = "keywords",
    order: str = "text",
) -> list[tuple[int, str]]:
    """The most relevant sentences of several retrieved passages, ``max_chars`` in all.

    For a local model tier in whole-book and highlight modes: instead of the first
    passage whole (and nothing of the others), the prompt carries the sentences of all
    passages that bear most on the question, ranked together, each passage's kept
    sentences in their original order, runs on separate lines.  Citations and the
    grounding check still use the whole passages.

    Each passage shown costs its framing too (``passage_cost`` characters: the
    ``<excerpt id section page>`` tags, about 20 tokens), so a sentence from a passage
    not yet shown must be worth that much more room: the budget goes to fewer passages'
    best sentences rather than to one sentence each of many.

    Args:
        sections: Each text's section heading (``ranking="answer"`` matches it against
            the question, as the extractive backend does).
        ranking: ``"keywords"``: IDF keyword share plus MiniLM similarity; ``"answer"``:
            the extractive backend's sentence score (:func:`answer_scores`), which prefers
            a sentence of the answer's type and never a heading or a lead-in to code.
        order: ``"text"``: the passages in the order of ``texts``; ``"best_first"``:
            the passage holding the best sentence first, then by their best kept
            sentence; ``"best_last"``: the reverse (the best next to the question).

    Returns:
        ``(index into texts, shown text)`` for each passage that keeps a sentence, in the
        order asked; at least the best sentence of all is kept.
    """
    units: list[str] = []
    joins: list[str] = []
    owner: list[int] = []
    for k, text in enumerate(texts):
        u, j = _units(text, max_chars)
        if ranking == "answer_split":
            u, j = answer_units(u, j)
        units.extend(u)
        joins.extend(j)
        owner.extend([k] * len(u))
    if not units:
        return []
    if sum(len(t) + passage_cost for t in texts) <= max_chars + passage_cost:
        return [(k, t) for k, t in enumerate(texts)]
    if ranking == "answer_split":
        scores = answer_scores(units, owner, question, embedder, sections)
    elif ranking == "answer":
        scores = sentence_answer_scores(units, joins, owner, question, embedder, sections)
    else:
        scores = _scores(units, question, embedder)
    order_ = sorted(range(len(units)), key=lambda i: (-scores[i], i))
    best = order_[0]
    chosen = {best}
    shown = {owner[best]}
    used = min(len(units[best]), max_chars) + 2 * len(GAP)
    before = [best - 1] if best > 0 and owner[best - 1] == owner[best] else []
    if ranking != "keywords" and before and scores[before[0]] <= UNUSABLE:
        before = []  # a heading or a lead-in to code says nothing the best one needs
    wanted = before + order_[1:]
    how = ranking != "keywords" and ex.question_kind(question) == "procedure"
    said = {" ".join(units[best].lower().split())}
    if how:
        used = _with_commented_code(units, joins, owner, chosen, best, used, max_chars)
    for i in wanted:
        if i in chosen:
            continue
        if ranking != "keywords" and scores[i] <= UNUSABLE:
            continue
        key = " ".join(units[i].lower().split())
        if key in said:  # two passages share the unit (split apart differently)
            continue
        cost = len(units[i]) + len(GAP) + (0 if owner[i] in shown else passage_cost)
        if used + cost > max_chars:
            continue
        chosen.add(i)
        shown.add(owner[i])
        said.add(key)
        used += cost
        if how:
            used = _with_commented_code(units, joins, owner, chosen, i, used, max_chars)
    out: list[tuple[int, str, float]] = []
    for k in range(len(texts)):
        idx = [i for i in range(len(units)) if owner[i] == k]
        kept = [n for n, i in enumerate(idx) if i in chosen]
        if not kept:
            continue
        # the next list item's number left at a unit's end ("... the main stages are:
        # 1.") is not shown: the model copied it ("The principles ... are 1.") and its
        # answer ended there
        mine = [units[i] if ranking == "keywords" else ex.without_list_number(units[i])
                for i in idx]
        text = _render(mine, [joins[i] for i in idx], kept, PASSAGE_GAP)
        top = max(scores[idx[n]] for n in kept)
        out.append((k, text[:max_chars] if len(kept) == 1 else text, top))
    if order == "best_first":
        out.sort(key=lambda x: -x[2])
    elif order == "best_last":
        out.sort(key=lambda x: x[2])
    return [(k, text) for k, text, _ in out]


def _with_commented_code(units: Sequence[str], joins: list[str], owner: Sequence[int],
                         chosen: set[int], i: int, used: int, max_chars: int) -> int:
    """Keep the line of code the kept comment line ``i`` describes, if there is room
    (adds to ``chosen``, on a line of its own); returns the characters used.

    For a "how" question a listing's comments carry the question's words ("# Create
    virtual environment") and rank high, while the line they describe ("python -m venv
    env") carries none and would be left out: the model would read what to do but not
    how.  The line a comment describes is the line after it.
    """
    j = i + 1
    if (j < len(units) and owner[j] == owner[i] and j not in chosen
            and ends_in_comment(units[i])
            and is_code_line(units[j]) and not is_comment(units[j])
            and used + len(units[j]) + len(GAP) <= max_chars):
        chosen.add(j)
        joins[j] = "\n"  # a comment ends at its line's end
        used += len(units[j]) + len(GAP)
    return used


