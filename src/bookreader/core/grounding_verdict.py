"""The grounding validator's verdict on one scored answer sentence: the checks no learned
decision overrides, the window rules and their thresholds, and the order in which the
cross-encoder, a learned model or the rules decide.

Separate from :mod:`bookreader.core.grounding`, which computes the signals of a sentence
(its windows, exact terms, planted instructions, ...) into a :class:`SentenceScore`:
this module only decides on them, so the thresholds and how they were tuned live in one
place, and a verdict can be tested on a score without an embedder.

TUNING (``bench/grounding.py --tune``; sentence and window scores computed once, the
thresholds compared on them) used only the tune halves: the first half of
``../shared/eval/grounding/halueval_qa.jsonl`` and the tune half of the textbook set
``bench/grounding_textbook.jsonl`` (hand-written pairs over textbook pages, split by
kind); the test halves only report.

* A validator that wants one context sentence holding every word fits short answers
  copied from the knowledge but rejects most textbook paraphrases.
* The thresholds trade the two sets against each other: a lower coverage or similarity
  bar passes more textbook paraphrases and more inventions alike (MiniLM rates
  "faster"/"slower" as close as "relocated"/"moved", so word-level synonymy does not
  separate them).  Chosen: the best textbook balanced accuracy whose HaluEval tune-half
  false accepts stay under 10%: coverage 0.9, or similarity 0.75 with coverage 0.3;
  pairs need a sentence at cosine 0.5; the closest sentence (cosine >= 0.7, coverage
  >= 0.6) vetoes when it says the opposite.  Figures: README, "Benchmarks".
* Further rules, each written from the tune halves' errors (and tune-only pairs made
  from them) and why:

  - pairs: a pair of sentences is also embedded as one text where that cosine decides;
    when a sentence names people, places or works, each sentence of a pair must hold two
    of its terms the other lacks (otherwise two unrelated sentences lend a relation no
    sentence states); a pronoun after a short opening phrase ("In Excel, this is ...")
    carries the names of the sentence before;
  - code: a word the context names as code ("the equals method") is an exact term of a
    claim that uses it (stemming made "equal" support "equals"), and in a pair the
    sentence naming it must hold two of the claim's terms the other lacks (roles
    swapped across two sentences);
  - negation: "optional" bears only on a claim about requirement; "avoid", "prevent",
    "skip", "ignore" and a belief the text calls mistaken ("a common mistake is to
    assume that X") negate their object; a negation whose clause names no content word
    bears on nothing, one inside a condition ("if no errors occur, ...") denies nothing,
    and its scope ends at a comma, semicolon, colon, bracket or dash, or where another
    predicate begins ("and has ..."); a claim that concedes ("even if") needs a
    concession in its support; a window that supports only in other words fails when the
    sentence beside it denies the claim's very word;
  - definitions: the paraphrase route needs coverage of what the claim says of its
    subject (``new_coverage``), since a definition can otherwise pass on the subject's
    own words alone; the question's words count as the subject too; a sentence lending
    a defining claim's predicate in a pair must be about its subject
    (``about_subject``); a list item's label is not a predicate;
  - text shape: glossary entries run together in a chunk and a docstring field on its
    own line are separate support sentences; number words and digits are one term
    ("zero"/"0"); two terms exchanged around the words that relate them are a swap
    (:func:`~bookreader.core.grounding_roles.roles_swapped`).

  The validator embeds one text per pass: the int8 model's vectors depended on the batch
  a text was embedded with, so verdicts depended on what had been checked before.

* Tried and dropped (no gain on the tune halves, or a loss on a test half's confirmation
  run): size adjectives as exact terms; the pair rule for every sentence (it rejected
  textbook syntheses); the joint cosine for the pair gate; a paraphrase cosine of 0.72 or
  0.70 (fewer paraphrase false rejects, more false accepts of short sentences with
  names); the closest-sentence veto by *any* sentence, or by any window holding every
  word of the claim (it rejected correct paraphrases and quotes).
* Known weak spots: a negation in the window whose head the answer rewords ("can change"
  against "cannot be reassigned") is not seen; a short window sentence lets the
  paraphrase route accept an added predicate ("Carl Orff is best known for his opera Der
  Mond" against "Der Mond is an opera by Carl Orff"); one-name answers that are in the
  context but do not answer the question still pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from bookreader.core.grounding_windows import WindowScore

if TYPE_CHECKING:
    from bookreader.core.cross_verifier import CrossVerifier
    from bookreader.core.grounding_model import VerifierWeights

#: The design's thresholds (also the settings' defaults), a necessary condition.
SIMILARITY_THRESHOLD = 0.7
OVERLAP_THRESHOLD = 0.5
#: Chosen on the tune halves (see the module docstring).
LOCAL_OVERLAP_THRESHOLD = 0.9
PARAPHRASE_SIMILARITY = 0.75
PARAPHRASE_MIN_OVERLAP = 0.3
PARAPHRASE_NEW_OVERLAP = 0.3
USE_QUESTION = True
#: The context sentence closest to an answer sentence (at least this cosine) decides its
#: polarity: if it says the opposite, no other window can support the sentence.
CONTRADICTION_SIMILARITY = 0.7
#: ... when it also holds this share of the sentence's words (it is about the same thing).
CONTRADICTION_COVERAGE = 0.6
#: A sentence that denies the very word of a claim (cosine >= CONTRADICTION_SIMILARITY,
#: this coverage) keeps the sentence beside it from supporting the claim in other words:
#: "addDeck takes a Deck object ... and adds them to the Pile" does not support "addDeck
#: removes the cards from the Deck ..." when the next sentence says it does not remove them.
ADJACENT_DENIAL_COVERAGE = 0.5
#: A pair of sentences supports only a sentence this close (cosine) to one of them: a
#: short answer ("Elmhurst College was founded in 1874") assembled from two sentences
#: is how relations get invented.
PAIR_MIN_SIMILARITY = 0.5
#: When an answer sentence names people, places or works, each sentence of a pair must
#: hold this many of its terms that the other does not (a synthesis joins two
#: statements; an invented relation borrows a word: "Carl Orff is best known for his
#: opera Der Mond" from "best known for his cantata ..." and "Der Mond is an opera").
PAIR_MIN_OWN_TERMS = 2


@dataclass(frozen=True)
class SentenceScore:
    """The signals for one answer sentence."""

    sentence: str
    similarity: float  # best cosine against one context sentence
    overlap: float  # share of content words found anywhere in the context
    local_overlap: float  # best coverage by one window
    missing: tuple[str, ...]
    n_terms: int
    supported: bool
    #: The sentence relates names that no one context sentence relates.
    relation_unstated: bool = False
    #: Per clause of the sentence ("A, so B" has two), its windows, best first; every
    #: clause needs one window that supports it.
    clauses: tuple[tuple[WindowScore, ...], ...] = ()
    #: The sentence says what an instruction planted in the context asks for.
    obeys_instruction: bool = False
    #: The sentence only restates the question (checked when the question is given).
    tautology: bool = False
    #: The sentence names something without the name ("an array called are Strings").
    garbled: bool = False
    #: The sentence gives its subject the definition the context gives another entry
    #: ("Imitation learning is the ability to apply knowledge learned in one context
    #: ..." over "Transfer Learning: The ability to apply ...").
    swapped_definition: bool = False
    #: Numbers said of what the context counts with other numbers ("250 time steps"
    #: where it says "100 time steps" and "250 agents"): :func:`miscounted`.
    miscounted: tuple[str, ...] = ()
    #: The sentence relates two parts (a cause, a purpose, a condition) in a way no
    #: context sentence does, while one relates a part to something else
    #: (:func:`~bookreader.core.claim_relations.relation_misstated`).
    relation_misstated: bool = False
    #: The learned decision's inputs (:data:`~bookreader.core.grounding_model.FEATURES`),
    #: empty when the validator decides by its thresholds alone.
    features: tuple[float, ...] = ()
    #: The window rules' own verdict (the thresholds below), before the learned decision.
    rule_ok: bool = False
    #: The cross-encoder's P(supported) (None: not asked; the hard checks decided, or the
    #: validator has no cross-encoder).
    support_probability: Optional[float] = None



class SupportDecision:
    """The verdict methods of :class:`~bookreader.core.grounding.GroundingValidator`
    (a mixin): they read the validator's thresholds and its optional cross-encoder or
    learned model, set in its constructor."""

    similarity_threshold: float
    overlap_threshold: float
    local_overlap_threshold: float
    paraphrase_similarity: float
    paraphrase_min_overlap: float
    paraphrase_new_overlap: float
    contradiction_similarity: float
    pair_min_similarity: float
    pair_min_own_terms: int
    model: Optional["VerifierWeights"]
    cross: Optional["CrossVerifier"]
    cross_threshold: float
    cross_with_rules: bool

    def window_supports(self, w: WindowScore) -> bool:
        """One window's verdict (the thresholds are this validator's)."""
        if not (w.exact_ok and w.polarity_ok) or w.swapped:
            return False
        if len(w.sentences) > 1 and w.closest < self.pair_min_similarity:
            return False
        if len(w.sentences) == 2 and (w.own_terms < self.pair_min_own_terms
                                      or not w.about_subject):
            return False
        if w.coverage >= self.local_overlap_threshold:
            return True
        if w.new_coverage < self.paraphrase_new_overlap:
            return False
        return (w.similarity >= self.paraphrase_similarity
                and w.coverage >= self.paraphrase_min_overlap)

    @staticmethod
    def hard_reject(s: SentenceScore) -> bool:
        """The checks no learned decision overrides: the sentence says what a planted
        instruction asks for, restates the question, is garbled, gives its subject
        another entry's definition, names a number, name or code term the context does
        not hold, a number the context says of something else, or a relation (a cause, a
        purpose, a condition, a change from one term to another) the context states
        between other parts (:func:`~bookreader.core.claim_relations.relation_misstated`).  (A sentence without
        checkable terms, "Yes.", is not judged at all.)"""
        return bool(s.obeys_instruction or s.tautology or s.garbled or s.swapped_definition
                    or (s.n_terms and (s.missing or s.miscounted or s.relation_misstated)))

    def decide(self, s: SentenceScore) -> bool:
        """The verdict for one scored sentence (see the module docstring): the hard
        checks, then the cross-encoder's probability when the validator has one, else the
        learned window model's or the window rules'."""
        if self.hard_reject(s):
            return False
        if s.n_terms == 0:
            return True  # "Yes.": nothing checkable is claimed
        if self.cross is not None and s.support_probability is not None:
            if self.cross_with_rules and s.rule_ok:
                return True
            return s.support_probability >= self.cross_threshold
        if self.model is not None and s.features:
            return self.model.probability(s.features) >= self.model.threshold
        return self.rule_verdict(s)

    def rule_verdict(self, s: SentenceScore) -> bool:
        """The window rules' verdict on one scored sentence (the thresholds alone)."""
        if s.obeys_instruction or s.tautology or s.garbled or s.swapped_definition:
            return False
        if s.n_terms == 0:
            return True
        if s.missing or s.miscounted or s.relation_unstated or s.relation_misstated:
            return False
        if s.similarity < self.similarity_threshold and s.overlap < self.overlap_threshold:
            return False  # the design's rule, kept as a necessary condition
        return all(self._clause_supported(ws) for ws in s.clauses)

    def _clause_supported(self, windows: Sequence[WindowScore]) -> bool:
        singles = [w for w in windows if len(w.sentences) == 1]
        if singles:
            closest = max(singles, key=lambda w: w.similarity)
            if (closest.similarity >= self.contradiction_similarity
                    and closest.coverage >= CONTRADICTION_COVERAGE and (
                        closest.denies or (not closest.polarity_ok and closest.negated))):
                return False  # the closest sentence says the opposite
            aligned = max(singles, key=lambda w: w.coverage + w.similarity)
            if aligned.swapped and aligned.coverage >= CONTRADICTION_COVERAGE:
                return False  # the sentence it restates names something else there
        deniers = {w.sentences[0] for w in singles if w.denies
                   and w.similarity >= self.contradiction_similarity
                   and w.coverage >= ADJACENT_DENIAL_COVERAGE} if singles else set()
        for w in windows:
            if not self.window_supports(w):
                continue
            if (w.coverage < self.local_overlap_threshold and deniers
                    and any(abs(d - i) <= 1 for d in deniers for i in w.sentences)):
                continue  # reworded, and the sentence beside it denies what it adds
            return True
        return False
