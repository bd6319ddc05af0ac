"""The context's sentences as candidates of an extractive answer, and how they score.

A :class:`Candidate` is one sentence of a context block with the heading it stands under,
the sentences after it (its continuation) and the sentence before it when it points back
to it ("This is ..."): the two are read together.  Candidates score by keywords (BM25 and
IDF-weighted coverage of the question's words, :func:`score_keywords`) and, with an
embedder, by MiniLM cosine; :func:`may_join`, :func:`continues_with` and
:func:`is_prose` say what may join an answer beside its best sentence.

Separate from :mod:`bookreader.core.llm.extractive`, which decides which candidates
answer: this module only cuts, reads and scores sentences, with no choice in it.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from bookreader.core.code_text import is_code_line
from bookreader.core.llm.answer_type import (
    _showable,
    content_terms,
    form_penalty,
    is_comment,
    is_heading,
    looks_like_code,
)
from bookreader.core.llm.continuation import is_enumerator, is_lead_in
from bookreader.core.llm.extractive_context import ContextBlock, candidate_units

log = logging.getLogger(__name__)

#: A sentence whose subject is a pronoun for something the sentence before names
#: ("This is accomplished through ...", "In Python 2, this is a built-in function").
POINTS_BACK = re.compile(
    r"^\s*(?:(?:in|for|with|on)\s+[^,]{1,30},\s+)?(?:it|this|these|they|those|such)\s+"
    r"(?!is\s+(?:\w+\s+)?(?:possible|important|common|often|easy|hard|difficult|tempting|"
    r"useful|necessary|likely|a\s+good\s+idea)\b)"
    r"(?:is|are|was|were|can|allows?|means?|makes?|uses?|has|have|provides?|\w+ed|\w+s)\b",
    re.IGNORECASE)


def heading_match(heading: str, q_terms: set[str]) -> float:
    """(share of the heading's content words in the question) x (share of the question's
    in the heading); section numbers are ignored."""
    terms = set(content_terms(re.sub(r"\d+(?:\.\d+)*\.?", " ", heading)))
    hit = len(terms & q_terms)
    if not hit or not q_terms:
        return 0.0
    return (hit / len(terms)) * (hit / len(q_terms))


def block_candidates(block: ContextBlock) -> list["Candidate"]:
    """The block's sentences as candidates, each with the heading it stands under (the
    block's section until a heading line inside the block)."""
    out = []
    heading = block.section
    for s in candidate_units(block.text):
        if is_heading(s):
            heading = s
        out.append(Candidate(s, block, Counter(content_terms(s)), heading=heading))
    for n, c in enumerate(out):
        c.following = out[n + 1:n + 1 + FOLLOWING]
        c.previous = out[n - 1] if n else None
        if c.previous is not None and reads_with(c, c.previous):
            # "This can be achieved with short, clear error messages.": "this" is the
            # sentence before ("Usability: Users should understand what went wrong ..."),
            # so the two are read together to judge what the sentence answers.
            c.antecedent = c.previous
    return out


def reads_with(c: "Candidate", before: "Candidate") -> bool:
    """True when ``c`` points back ("This is ...", "It uses ...") to ``before``, a sentence
    that can be shown before it (the antecedent :meth:`ExtractiveBackend.select` puts in
    front of it when it is chosen)."""
    return bool(POINTS_BACK.match(c.sentence) and before.terms and _showable(before.sentence)
                and not is_enumerator(before.sentence) and not is_lead_in(before.sentence))


#: Sentences after each candidate kept for its continuation (a lead-in's list items).
FOLLOWING = 8


@dataclass(eq=False)
class Candidate:
    sentence: str
    block: ContextBlock
    terms: Counter
    bm25: float = 0.0
    coverage: float = 0.0
    similarity: Optional[float] = None
    #: P(the sentence states the answer) by the learned ranker, when it ran.
    answers: Optional[float] = None
    score: float = 0.0
    heading: str = ""
    following: list = field(default_factory=list)  # the block's next candidates
    previous: Optional["Candidate"] = None  # the block's candidate before this one
    #: The sentence before, when this one points back to it (:func:`reads_with`): the
    #: two are judged together.
    antecedent: Optional["Candidate"] = None

    @property
    def reading(self) -> str:
        """The text the candidate is judged on."""
        a = self.antecedent
        return self.sentence if a is None else f"{a.sentence} {self.sentence}"

    @property
    def read_terms(self) -> Counter:
        """The content words of :attr:`reading` (``terms`` stay the sentence's own)."""
        return self.terms if self.antecedent is None else self.terms + self.antecedent.terms


def score_keywords(candidates: list[Candidate], query: list[str]) -> None:
    """Each candidate's BM25 score and coverage (the IDF-weighted share of the query's
    words its reading holds) for ``query``; the document frequencies count each
    sentence once."""
    n = len(candidates)
    df: Counter = Counter()
    for c in candidates:
        df.update(set(c.terms))
    idf = {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query}
    total_idf = sum(idf.values()) or 1.0
    avg_len = sum(sum(c.terms.values()) for c in candidates) / n
    k1, b = 1.2, 0.75
    for c in candidates:
        terms = c.read_terms  # (the document frequencies count each sentence once)
        length = sum(terms.values())
        score = 0.0
        hit_idf = 0.0
        for t in query:
            tf = terms.get(t, 0)
            if tf:
                hit_idf += idf[t]
                score += idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg_len))
        c.bm25 = score
        c.coverage = hit_idf / total_idf


#: A line that prints or logs a message ('print("Data cleaning steps completed")'): it
#: would join an answer to "What are the data cleaning steps?" as if it were a sentence
#: of the book.
PRINTS_MESSAGE = re.compile(
    r"""^\s*(?:print|printf|puts|echo|console\.log|System\.out\.print(?:ln|f)?|"""
    r"""(?:self\.)?(?:get_)?log(?:ger|ging)?(?:\(\))?\.\w+)\s*\(?\s*[fFrRbB]?["']""")


def may_join(c: Candidate) -> bool:
    """A candidate that may join the answer beside its best sentence: not list fragments or
    a heading (:func:`~bookreader.core.llm.answer_type.form_penalty`)."""
    return form_penalty(c.sentence) == 0


def continues_with(sentence: str) -> bool:
    """A sentence that may continue the best one (:func:`_showable`): not a statement of a
    listing ("using System; using System.IO;" after "Reading the file line by line helps
    keep memory use low ..."); a comment that says in words what the listing does may
    ("# Install the test runner" after "To install the test runner, you'll need ...:")."""
    return _showable(sentence) and (is_comment(sentence) or not is_code_line(sentence))


def is_prose(sentence: str) -> bool:
    """Not a code comment, a docstring or a line of a listing."""
    return not (is_comment(sentence) or looks_like_code(sentence) or is_code_line(sentence))


def embed(embedder: Any, texts: list[str]) -> list[Sequence[float]]:
    for method in ("embed", "encode"):
        fn: Any = getattr(embedder, method, None)  # a duck-typed embedder
        if callable(fn):
            vectors: Any = fn(texts)
            return list(vectors)
    raise TypeError(f"{type(embedder).__name__} has neither embed() nor encode()")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    # numpy: the pure-Python sums cost ~4 ms per candidate sentence on a busy server
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    return float(np.dot(va, vb)) / (na * nb) if na and nb else 0.0


def score_similarity(embedder: Any, candidates: list[Candidate], question: str) -> None:
    """Each candidate's MiniLM cosine to the question (its reading: with the sentence it
    points back to); left None when embedding fails (the keyword scores still stand)."""
    texts = [question] + [c.reading for c in candidates]
    try:
        vectors = embed(embedder, texts)
    except Exception:  # the keyword answer still stands; say why in the log
        log.exception("extractive: embedding failed, using keywords only")
        return
    q = vectors[0]
    for c, v in zip(candidates, vectors[1:]):
        c.similarity = cosine(q, v)
