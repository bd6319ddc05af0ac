"""One answer sentence against the context: its windows, and the terms checked exactly.

:func:`score_windows` scores a sentence against its candidate *support windows* (one
context sentence, a pair of neighbours, or a list with its header) on the signals the
module docstring of :mod:`bookreader.core.grounding` describes: cosine, coverage, exact
terms, polarity, swapped terms, quantifiers, a pair's own terms.  :func:`missing_terms`
and :func:`relation_unstated` check a sentence against the whole context.  The verdict on
these scores is :class:`~bookreader.core.grounding.GroundingValidator`'s.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from bookreader.core.claim_text import (
    about_action,
    claim_terms,
    concedes,
    concession_marked,
    denies,
    negation_cues,
    number_terms,
    opposite_words,
    polarity_agrees,
    polarity_terms,
    speaks_of_requirement,
    strip_verdict,
)
from bookreader.core.claim_swaps import is_opposite, repeated_stems, swapped_terms
from bookreader.core.exact_terms import (
    CAPITALISED,
    COMPARATIVES,
    code_key,
    code_terms,
    comparative_restated,
    covered,
    name_key,
    name_runs,
    quantifiers,
    ranks,
    ranks_differ,
    relation_names,
    squash,
)
from bookreader.core.grounding_checks import (
    defined_subject,
    echoed_terms,
    given_terms,
    outside_subject,
)
from bookreader.core.grounding_context import Context
from bookreader.core.grounding_roles import roles_swapped
from bookreader.core.sentences import STOPWORDS, stem, words

if TYPE_CHECKING:
    from bookreader.core.grounding import GroundingValidator

#: Context sentences embedded per answer sentence (the lexically closest ones).
CANDIDATES_PER_SENTENCE = 6
#: Of those, the best few are also tried in pairs (plus their neighbours).
PAIR_CANDIDATES = 4


@lru_cache(maxsize=16384)
def _window_terms(sentence: str) -> list[str]:
    """A context sentence's :func:`claim_terms`, in order (cached; read only)."""
    return claim_terms(sentence)


@lru_cache(maxsize=16384)
def name_stems(sentence: str) -> frozenset[str]:
    """The stems of a sentence's names (:func:`relation_names`, numbers left out)."""
    return frozenset(stem(n) for n in relation_names(sentence) if not n[0].isdigit())


@dataclass(frozen=True)
class WindowScore:
    """How well one context sentence, or pair of sentences, supports an answer sentence."""

    sentences: tuple[int, ...]  # indices into the context's support sentences
    similarity: float
    coverage: float
    exact_ok: bool  # every number, name and code term of the sentence is in the window
    polarity_ok: bool  # negated in both or in neither (see the module docstring)
    #: The sentence puts a number, an opposite or another term of the context in the
    #: place of one of the window's (:func:`~bookreader.core.claim_swaps.swapped_terms`).
    swapped: bool = False
    #: Of the sentence's terms, the fewest that one sentence of the window alone holds
    #: (a single sentence, or a sentence naming no person, place or work: all its
    #: terms).  A pair whose second sentence only lends a word to a relation between
    #: names is how relations get invented.
    own_terms: int = 0
    #: The best cosine of one of its sentences alone (``similarity`` also counts a
    #: pair's sentences embedded together).
    closest: float = 1.0
    #: Coverage of the terms that say something of the claim's subject (its terms less
    #: :func:`~bookreader.core.grounding_checks.given_terms`).
    new_coverage: float = 1.0
    #: One of the two negates the very word the other asserts
    #: (:func:`~bookreader.core.claim_text.denies`).
    denies: bool = False
    #: The window holds a negation of its own.
    negated: bool = False
    #: For a claim that defines its subject ("The Zero Moment Point is the point where
    #: ..."), every sentence of a pair that lends what the claim says of the subject is
    #: about that subject: it names it or goes on from the sentence that does ("It ...",
    #: or after a line ending in ":").
    about_subject: bool = True


def exact_terms(sentence: str) -> tuple[list[str], set[str], list[str]]:
    """The sentence's code terms, numbers and names (name keys), checked exactly."""
    names = [n for n in relation_names(sentence) if not n[0].isdigit()]
    return code_terms(sentence), number_terms(sentence), names

def missing_terms(sentence: str, ctx: Context) -> list[str]:
    """Numbers, names, code terms and comparatives found nowhere in the context."""
    codes, nums, _ = exact_terms(sentence)
    missing = [t for t in codes if code_key(t) not in ctx.squashed]
    missing += sorted(n for n in nums if n not in ctx.numbers)
    ws = words(sentence)
    for i, w in enumerate(ws):
        if w[0].isdigit() or not CAPITALISED.match(w):
            continue
        if i == 0 and not (len(ws) > 1 and CAPITALISED.match(ws[1])):
            continue  # a capital that only starts the sentence
        lw = name_key(w)
        if lw in STOPWORDS or len(lw) < 2 or lw in ctx.lower_words or stem(lw) in ctx.terms:
            continue
        if squash(w) in ctx.squashed:
            continue
        missing.append(w)
    for run in name_runs(sentence):
        if f" {' '.join(run)} " not in ctx.keys and " ".join(run) not in missing:
            missing.append(" ".join(run))
    for i, w in enumerate(ws):
        lw = w.lower()
        if (lw in COMPARATIVES and lw not in ctx.lower_words and w not in missing
                and not comparative_restated(ws, i, ctx.keys)):
            missing.append(w)
    return missing

def relation_unstated(sentence: str, ctx: Context) -> bool:
    """True when the sentence's names all occur in the context but in no one sentence.

    "Stanford University is located in Chestnut Hill" built from a sentence about
    Stanford and another about Boston College: every word is in the context, the
    relation is not.  Applies to sentences relating two or more names.  A number and its
    number word are one name ("12 residential Houses" is stated by "twelve residential
    Houses").
    """
    names = relation_names(sentence)
    if len(names) < 2:
        return False
    return not any(names <= sw | nums for sw, nums in zip(ctx.sentence_words,
                                                          ctx.sentence_numbers))


def score_windows(v: "GroundingValidator", sentence: str, ctx: Context,
                  question: str = "") -> list[WindowScore]:
    """The sentence scored against its candidate windows of ``ctx`` (best first), with the
    thresholds and the cached sentence vectors of the validator ``v``."""
    n_ctx = len(ctx.windows)
    tset = set(claim_terms(sentence))
    if not n_ctx or not tset:
        return []
    ranked = sorted(range(n_ctx), key=lambda i: -len(tset & ctx.sentence_terms[i]))
    chosen = ranked[:CANDIDATES_PER_SENTENCE]
    v._embed([sentence] + [ctx.windows[i] for i in chosen])
    vec = v._vectors[sentence]
    sims = {i: float(vec @ v._vectors[ctx.windows[i]]) for i in chosen}
    codes, nums, names = exact_terms(sentence)
    claim = strip_verdict(sentence)
    # A word the context names as code is exact in the claim ("equals" is not "equal").
    named = [w for w in dict.fromkeys(x.lower() for x in words(claim)) if w in ctx.code_names]
    codes = list(codes) + [w for w in named if w not in {c.lower() for c in codes}]
    quants = quantifiers(claim)
    s_cues = negation_cues(claim)
    requirement = speaks_of_requirement(claim)
    cterms = set(claim_terms(claim))
    pterms = polarity_terms(claim, cterms)
    claim_ranks = ranks(claim)
    twice = repeated_stems(claim)  # "A list is ... much like a list"
    conceding = concedes(claim)
    said = tset - given_terms(claim, question if v.use_question else "")
    subject = defined_subject(claim)
    subject_seq, echo = echoed_terms(claim)
    joint_sims: dict[tuple[int, ...], float] = {}
    claim_names = name_stems(claim)
    # Names of people, places, works (not identifiers such as NullPointerException):
    # a relation between them stitched from two sentences is how facts get invented.
    # The same holds for two methods or operators the book names: what one does, said
    # of the other ("== tests ... characters, while equals tests ... integers").
    proper_names = any(not any(c.isupper() for c in w[1:]) for w in words(claim)
                       if stem(name_key(w)) in claim_names)

    def score(idx: tuple[int, ...]) -> WindowScore:
        wterms = set().union(*(ctx.sentence_terms[i] for i in idx))
        n_cov = sum(1 for t in tset if covered(t, wterms))
        n_new = sum(1 for t in said if covered(t, wterms))
        if echo:
            # What the claim says of its subject in the subject's own words must be said
            # outside the subject's name: each such word counts once more.
            rest = set().union(*(outside_subject(_window_terms(ctx.windows[i]), subject_seq)
                                 for i in idx))
            hits = sum(1 for t in echo if covered(t, rest))
            n_cov, n_new = n_cov + hits, n_new + hits
        cov = n_cov / (len(tset) + len(echo)) if tset else 1.0
        new_cov = n_new / (len(said) + len(echo)) if said or echo else 1.0
        wwords = set().union(*(ctx.sentence_words[i] for i in idx))
        exact = (
            all(any(code_key(c) in ctx.sentence_squashed[i] for i in idx) for c in codes)
            and nums <= set().union(*(ctx.sentence_numbers[i] for i in idx))
            and all(n in wwords or stem(n) in wterms for n in names)
            and quants <= quantifiers(" ".join(ctx.windows[i] for i in idx))
        )
        # A sentence that goes on "It has no effect ..." negates its predecessor.
        near = set(idx) | {i + 1 for i in idx if i + 1 < n_ctx and ctx.continues[i + 1]}
        # The sentence's negations need one of the same kind in the window; the
        # window's negations that bear on the sentence's words need one in it.
        w_cues = about_action(claim, [c for i in near for c in ctx.negation_cues[i]])
        near_text = " ".join(ctx.windows[i] for i in sorted(near))
        w_pterms = polarity_terms(" ".join(ctx.windows[i] for i in idx), wterms)
        polarity = polarity_agrees(s_cues, w_cues, pterms, w_pterms, requirement) and not any(
            opposite_words(claim, ctx.windows[i]) for i in idx) and (
            not conceding or concession_marked(near_text))
        denial = len(idx) == 1 and (denies(s_cues, about_action(claim, ctx.negation_cues[idx[0]]),
                                           pterms, w_pterms)
                                    or opposite_words(claim, ctx.windows[idx[0]]))
        # A term swapped in one sentence of a pair that the other holds is synthesis.
        # In a list, a term of another item put in this item's place is a swap: the
        # items are parallel statements about different things.
        swapped = any(x.isdigit() or is_opposite(x, y) or not covered(x, wterms)
                      or len(idx) > 2 or (x in twice and x in ctx.nouns)
                      for i in idx for x, y in swapped_terms(claim, ctx.windows[i], ctx.nouns)
                      ) or any(ranks_differ(claim_ranks, ctx.ranks[i])
                               or roles_swapped(claim, ctx.windows[i]) for i in idx)
        def own_terms(i: int) -> int:
            return sum(1 for t in tset if covered(t, ctx.sentence_terms[i]) and not any(
                covered(t, ctx.sentence_terms[j]) for j in idx if j != i))

        if proper_names:
            own = min(own_terms(i) for i in idx)
        elif named:
            # The sentence naming the method must say what the claim says of it; the
            # other one may only add a detail ("two" strings).
            own = min((own_terms(i) for i in idx
                       if any(c in ctx.sentence_words[i] for c in named)), default=len(tset))
        else:
            own = len(tset)
        closest = max(sims.get(i, 0.0) for i in idx)
        about = len(idx) != 2 or not subject or all(
            any(covered(t, ctx.sentence_terms[i]) for t in subject)
            or (i == idx[1] and (ctx.continues[i] or ctx.windows[idx[0]].rstrip().endswith(":")))
            for i in idx if any(covered(t, ctx.sentence_terms[i]) for t in said - subject))
        return WindowScore(idx, max(closest, joint_sims.get(idx, 0.0)), cov, exact, polarity,
                           swapped, own, closest, new_cov, denial,
                           any(ctx.negation_cues[i] for i in idx), about)

    singles = [score((i,)) for i in chosen]
    best = sorted(chosen, key=lambda i: -(sims[i] + len(tset & ctx.sentence_terms[i])
                                           / max(1, len(tset))))[:PAIR_CANDIDATES]
    pairs: set[tuple[int, ...]] = set()
    if not v.adjacent_pairs_only:
        for a, b in itertools.combinations(best, 2):
            pairs.add((min(a, b), max(a, b)))
    for i in best[:2]:
        for j in (i - 1, i + 1):
            if 0 <= j < n_ctx:
                pairs.add((min(i, j), max(i, j)))
    # A list as a whole: "Plants take in nutrients by several routes:" and its items
    # ("1. Roots: ...") support "Plants take in nutrients through roots, ... and leaves".
    pairs |= {ctx.lists[i] for i in best[:2] if ctx.lists[i]}
    for p in pairs:
        for i in p:
            sims.setdefault(i, 0.0)
    out = singles + [score(p) for p in sorted(pairs)]
    if v.joint_pairs and not any(v.window_supports(w) for w in out):
        # A pair is also embedded as one text, only where its cosine decides (every
        # other check passes): a sentence can restate two sentences together better
        # than either alone, and embedding every pair would cost a third more time.
        joint = {w.sentences: " ".join(ctx.windows[i] for i in w.sentences) for w in out
                 if len(w.sentences) == 2 and v.window_supports(
                     dataclasses.replace(w, similarity=1.0))}
        if joint:
            v._embed(list(joint.values()))
            joint_sims.update({p: float(vec @ v._vectors[t]) for p, t in joint.items()})
            out = [score(w.sentences) if w.sentences in joint else w for w in out]
    out.sort(key=lambda w: -(w.coverage + w.similarity))
    return out
