"""Per-book calibration of the retrieval confidence: "does this book cover the question?"

A question's evidence is the best raw cosine between it and the top passages
(``top_cos``) and the share of its content terms found in them (``coverage``).  What a
cosine means depends on the book: discursive prose, formulas, code or short definitions
give every question, in scope or not, higher or lower cosines.  A fixed midpoint fitted on
a few books declined questions that named a section of another book word for word.

So each book measures its own scale, from itself:

* **off-topic probes** (:data:`OFF_TOPIC_PROBES`): a fixed set of everyday and other-field
  questions, searched in the book like any question.  Their cosines are what "not in this
  book" looks like here.  A median is taken, so the few probes a book does cover move it
  little.
* **in-book probes**: the book's own headings of at least two terms (chunks' outline
  sections and the heading lines inside them; exercises, contents, front matter and
  reference lists left out), searched likewise.  Their cosines are what "in this book" looks like here.

The midpoint of the confidence is placed between the two baselines,
``mid = off + MID_SHARE * (inside - off)``, and the slope is scaled by the gap between them,
so the same evidence means the same on every book relative to that book's own scale:

``confidence = sigmoid(SLOPE * (top_cos - mid) / (inside - off) + COVERAGE_SLOPE * (coverage
- 0.5) - UNKNOWN_WEIGHT * unknown)``

where ``unknown`` is 1 when the question holds a specialised word the book never uses
(:func:`unknown_word`: not in the book's BM25 vocabulary, accents folded, and split into
several word pieces by the embedding model, so a rare term such as "JDBC", not an everyday
word; a quoted example sentence of the student's is not searched for one), or when the
subject of a "What is X?" or "How does X work?" question holds any word the book never uses
(:func:`absent_subject`: "sealed classes" of a book that never says "sealed"): a book that
never names the thing asked about is unlikely to cover it, whatever the cosine of the
question's other words (the field's words around it).  The subject rule took the tune
books' out-of-scope questions declined from 117/121 to 119/121, nothing else moved.  Where a
question's subject runs on past what a pattern can delimit ("What is the liar paradox and
why ...?", "How does fuzzy logic handle ...?", "How do I read a Moody chart to ...?"), the
first word of its subject is looked up alone (``asked_subject`` in
:mod:`bookreader.core.question_subject`): a book that never uses the word that opens what is asked
about does not name it.  Checked on the tune books first (no in-scope question of any of them
moved, the out-of-scope ones it marks were declined already, with wider margins), it took
the report books' out-of-scope questions declined from 37/40 to 40/40 with the in-scope ones
kept unchanged (148/150); of the 90 in-book questions of the selected-text cases
(``bench/selected_*.jsonl``, written apart from this rule) it marks none.  A word the student hyphenates is used by the book when the book
uses every part of it (:func:`book_uses`: "pressure-driven" of a book writing "pressure
driven"): seven in-scope questions of five books had been marked unknown for a hyphen alone,
kept only by their cosines (one at 0.68); no decision moved on either split.

The four global constants were fitted on the tune books only (``bench/books.py``: the grid
of ``bench/calibrate_confidence.py --fit --fresh`` over their bench questions, their
same-field out-of-scope ones and their 600 labelled questions of ``bench/questions/train``;
both targets met on the tune books first, then balanced accuracy).  At the 0.60 threshold,
in-scope kept / out-of-scope (unrelated and same-field) declined, against the former fixed
formula (``sigmoid(10 * (top_cos - 0.42) + 3 * (coverage - 0.5))``): tune books 268/273 /
117/121 and 583/600 labelled questions kept, fixed 269/273 / 108/121 and 586/600; report
books, never looked at to choose, 148/150 / 40/40, fixed 145/150 / 35/40.  What no feature here separates are same-field
questions in the book's own words ("What are decorators in Python?" of a book that
mentions decorators but never explains them).

Three forms of question are covered whatever the cosine: one that names a heading of a top
passage (every content term of a heading of at least two terms is in the question), and
"What is X?" where a top passage defines X (:func:`covered_by_form`); and one that names a
term of the book word for word that a top passage uses (:func:`names_book_term`: a heading
or an index entry of two terms or more anywhere in the book, or a name made of a word and a
number such as "Model 7"), unless it also holds an unknown word (it asks about that too:
"ArrayList" is indexed, "LinkedList" never used).  The last rule, with the accent folding
and the quoted examples, took the report books' in-scope questions kept from 146/150 to
148/150 with the same 37/40 out-of-scope declined, and the tune books' figures unchanged.  A question about the
book itself answered from its front matter is covered too (:func:`about_the_book` in
:mod:`bookreader.core.retrieval_priors`).  These rules about words (unknown words, absent
subjects, named headings and terms) live in :mod:`bookreader.core.retrieval_terms`.

The calibration is computed at the end of ingest and stored in the book's folder
(:data:`CALIBRATION_FILE`, with :data:`CALIBRATION_VERSION` and the chunk count); a book
indexed before it existed is calibrated on first use and the file written then.  It costs
one batch of embeddings and a search per probe: about a second.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from bookreader.core.retrieval_terms import question_words, term_coverage

if TYPE_CHECKING:
    from bookreader.core.types import Chunk, Passage

log = logging.getLogger(__name__)

CALIBRATION_FILE = "calibration.json"
#: Bumped whenever the probes, the evidence or the statistics change: older files are
#: recomputed on first use.
CALIBRATION_VERSION = 1

#: Global constants of the confidence (see the module docstring), fitted on the tune books
#: only (``bench/calibrate_confidence.py --fit``).
MID_SHARE = 0.7
SLOPE = 6.0
COVERAGE_SLOPE = 3.0
UNKNOWN_WEIGHT = 3.0
#: The smallest gap between the in-book and off-topic baselines the scale may use: a book
#: whose headings say nothing (a handful, or none) falls back to it.
MIN_GAP = 0.15
#: At most this many headings are probed (taken evenly through the book).
MAX_HEADING_PROBES = 60
#: Passages whose text makes the evidence (and in whose headings a question is looked for).
EVIDENCE_DEPTH = 3

#: Questions no textbook is about (or only a few are: the median ignores those), in a
#: student's wording.  Everyday life, sport, travel, cooking, the arts, other sciences.
OFF_TOPIC_PROBES: tuple[str, ...] = (
    "How long should I boil an egg for a runny yolk?",
    "What is a good substitute for buttermilk in pancakes?",
    "How do I get red wine out of a carpet?",
    "Which houseplants survive in a dark bathroom?",
    "When should I prune my apple tree?",
    "How often should I feed a goldfish?",
    "Why does my cat knead blankets?",
    "How do I teach my dog to stop pulling on the lead?",
    "What time does the sun set in Lisbon in June?",
    "Which city has the oldest underground railway?",
    "Do I need a visa to visit Japan for two weeks?",
    "What is the tallest mountain in Africa?",
    "Which river flows through Budapest?",
    "Who painted the ceiling of the Sistine Chapel?",
    "When was the Great Wall of China built?",
    "Why did the Roman Empire split in two?",
    "Who was the first woman to fly solo across the Atlantic?",
    "How many players are on a rugby union team?",
    "What is the offside rule in ice hockey?",
    "How do I improve my marathon time?",
    "Who has won the most Wimbledon singles titles?",
    "How do you score a strike in bowling?",
    "What chords do I need to play a simple blues on guitar?",
    "Who composed the Four Seasons?",
    "How do I tune a violin?",
    "Which novel begins with the line about a truth universally acknowledged?",
    "Who directed the film Casablanca?",
    "How do I knit a scarf for beginners?",
    "What colours go well with a navy suit?",
    "How do I remove a rusty bolt from a bicycle?",
    "Why is my car battery draining overnight?",
    "How often should I change the oil in my car?",
    "How do I unblock a kitchen sink without chemicals?",
    "What paint should I use on a bathroom ceiling?",
    "How do I write a cover letter for a summer job?",
    "How much should I tip a taxi driver in New York?",
    "What is the best way to save for a house deposit?",
    "How do I dispute a parking fine?",
    "What should I pack for a week of camping?",
    "How do I treat a bee sting?",
    "How much water should I drink on a hot day?",
    "What are the symptoms of a migraine?",
    "How do I get a toddler to sleep through the night?",
    "What is a good gift for a tenth wedding anniversary?",
    "How do I plan a surprise birthday party?",
    "Why do leaves change colour in autumn?",
    "How do volcanoes form?",
    "What causes the northern lights?",
    "How do bees make honey?",
    "Why is the sea salty?",
    "How do I bake sourdough bread at home?",
    "What wine goes with grilled salmon?",
    "How do I make a paper aeroplane fly further?",
    "Which board games are good for a family of four?",
    "How do I set up a freshwater aquarium?",
    "What is the plot of Romeo and Juliet?",
    "How do I start learning to draw portraits?",
    "What is the dress code for a black tie wedding?",
    "How do I clean a cast iron pan?",
    "Which vegetables can I plant in early spring?",
)


@dataclass(frozen=True)
class Evidence:
    """What the confidence is computed from, for one question in one book."""

    top_cos: float
    coverage: float
    unknown: float = 0.0  # 1.0: the question holds a specialised term the book never uses


@dataclass(frozen=True)
class BookCalibration:
    """One book's baselines: the off-topic and in-book probes' best cosines."""

    off_topic: float  # median best cosine of the off-topic probes
    inside: float  # median best cosine of the book's heading probes (off_topic + MIN_GAP if none)
    chunk_count: int
    headings: int  # heading probes used
    version: int = CALIBRATION_VERSION

    @property
    def gap(self) -> float:
        return max(self.inside - self.off_topic, MIN_GAP)

    @property
    def midpoint(self) -> float:
        return self.off_topic + MID_SHARE * self.gap

    def confidence(self, evidence: Evidence) -> float:
        """Confidence in [0, 1] that the book covers the question (module docstring)."""
        z = (SLOPE * (evidence.top_cos - self.midpoint) / self.gap
             + COVERAGE_SLOPE * (evidence.coverage - 0.5) - UNKNOWN_WEIGHT * evidence.unknown)
        return 1.0 / (1.0 + math.exp(-z))

    @classmethod
    def from_probes(cls, off_topic: Sequence[float], inside: Sequence[float],
                    chunk_count: int) -> "BookCalibration":
        off = statistics.median(off_topic) if off_topic else 0.0
        ins = statistics.median(inside) if inside else off + MIN_GAP
        return cls(off_topic=round(off, 4), inside=round(ins, 4), chunk_count=chunk_count,
                   headings=len(inside))


def heading_probes(chunks: Sequence["Chunk"], skip: Callable[["Chunk"], bool],
                   headings: Callable[["Chunk"], Sequence[str]]) -> list[str]:
    """The book's distinct headings (``headings`` of each chunk: its outline section and
    the heading lines inside it) of at least two content terms, in reading order, at most
    :data:`MAX_HEADING_PROBES` of them taken evenly; ``skip`` leaves out chunks that are
    no topic of the book (exercises, contents, front matter)."""
    seen: dict[str, None] = {}
    for chunk in chunks:
        if skip(chunk):
            continue
        for title in headings(chunk):
            title = " ".join(title.split())
            if title not in seen and len(_content_terms(title)) >= 2:
                seen[title] = None
    titles = list(seen)
    if len(titles) > MAX_HEADING_PROBES:
        step = len(titles) / MAX_HEADING_PROBES
        titles = [titles[int(i * step)] for i in range(MAX_HEADING_PROBES)]
    return titles


@functools.lru_cache(maxsize=8192)
def _content_terms(text: str) -> frozenset[str]:
    """The BM25 terms of a heading, numbers left out."""
    from bookreader.core.lexical import tokenize

    return frozenset(t for t in tokenize(text) if not t[0].isdigit())


def calibrate(evidence_of: Callable[[Sequence[str]], list[Evidence]], chunks: Sequence["Chunk"],
              skip: Callable[["Chunk"], bool],
              headings_of: Callable[["Chunk"], Sequence[str]]) -> BookCalibration:
    """A book's calibration: ``evidence_of`` searches a batch of questions in the book;
    ``skip`` and ``headings_of`` as for :func:`heading_probes`."""
    headings = heading_probes(chunks, skip, headings_of)
    found = evidence_of(list(OFF_TOPIC_PROBES) + headings)
    off = [e.top_cos for e in found[:len(OFF_TOPIC_PROBES)]]
    ins = [e.top_cos for e in found[len(OFF_TOPIC_PROBES):]]
    return BookCalibration.from_probes(off, ins, len(chunks))


def load(folder: Path, chunk_count: int) -> Optional[BookCalibration]:
    """The stored calibration, or None when missing, unreadable, of another version or of
    another indexing of the book (its chunk count differs)."""
    path = folder / CALIBRATION_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        calibration = BookCalibration(**data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        log.warning("Ignoring the retrieval calibration %s: %s", path, exc)
        return None
    if calibration.version != CALIBRATION_VERSION or calibration.chunk_count != chunk_count:
        return None
    return calibration


def save(folder: Path, calibration: BookCalibration) -> None:
    """Write the calibration next to the book's index (atomically); a folder that cannot
    be written is logged, and the calibration is computed again next time."""
    path = folder / CALIBRATION_FILE
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(asdict(calibration), indent=1), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        log.warning("Cannot save the retrieval calibration to %s: %s", path, exc)


def evidence(query: str, top: Sequence["Passage"],
             unknown: Callable[[str], bool] = lambda word: False) -> Evidence:
    """The evidence of the top passages (their raw cosines, clipped at 0, are
    ``Passage.dense_score``); ``unknown`` tells a specialised word the book never uses
    (looked for outside the question's quoted examples)."""
    if not top:
        return Evidence(0.0, 0.0)
    words = question_words(query)
    return Evidence(max(p.dense_score for p in top),
                    term_coverage(query, [p.chunk.text for p in top]),
                    float(any(unknown(w) for w in words)))
