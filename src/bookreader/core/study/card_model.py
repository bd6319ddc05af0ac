"""The learned decision whether a card's back defines its front (or answers it).

The patterns of :mod:`bookreader.core.study.terms` find the sentences that have the shape
of a definition ("X is a ...", "... is called X", "term: text") or of a key statement;
many of them still are not what a student can learn from: a reference-list entry
("Publisher: American Institute of Physics."), a sentence about one example's variable,
praise ("X is a very handy tool"), a remark that points at a formula.  Fixed rules
catch the cases they were written on; this module weighs the signals together with a
logistic regression, so a decision made on books of several fields carries to the next.

Each candidate is read as a vector of :data:`FEATURES`: the form and kind of the card,
the rules the reading breaks (:data:`~bookreader.core.study.terms.FLAGS`), the shape of
the sentence (where the defining verb is, whether the term is its subject, whether it
opens with a pronoun or a demonstrative), its length, its share of digits and symbols,
reference-list patterns (a year in brackets, "pp.", "et al.", a publisher, a journal
volume), words of an example or of code, and how the book uses the term (how often the
pages read name it, whether a heading names it, whether the book writes its head word
capitalised inside sentences as a name).

The weights are trained by ``tools/train_card_model.py`` (``make train-card-model``) on
hand verdicts of cards (``bench/study_judgments.json``) and written to
``build/card_model.npz``; :func:`load_weights` reads them (a missing, altered or unreadable
file is a :class:`~bookreader.errors.ModelError`).  Inference is a dot product (numpy only).

Status: an experiment, off by default.  Measured leave-one-book-out (the trainer's
``--lobo``) on 378 judged candidates of seven books, the model ranks cards worse than the
rules' own choice, which is one of its features: the rules keep 286 with 263 judged ok
(92 %); the model at about the same count (290) keeps 241 ok (83 %), at its chosen
threshold 222 with 197 ok (89 %); inside the rules' choice it tells good cards from bad
no better than chance (AUC 0.52; MiniLM vectors of the card, tried as features, did not
help either).  So :func:`~bookreader.core.study.generate.generate` makes cards by the
rules; :func:`~bookreader.core.study.cards.candidates` uses a model only when given one.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Optional, Sequence, TypeAlias

from bookreader.core import logistic
from bookreader.core.logistic import LogisticWeights
from bookreader.core.sentences import key_only, words
from bookreader.core.study.names import NameEvidence
from bookreader.core.study.terms import FLAGS

FORMS = ("entry", "defining", "called", "question")
FEATURES = (
    *(f"form_{f}" for f in FORMS),
    *(f"flag_{f}" for f in FLAGS),
    "log_back_words", "term_words", "term_capitalised", "verb_position", "term_is_subject",
    "opens_pointing", "points_anywhere", "digit_share", "symbol_share", "reference_like",
    "example_words", "code_words", "authorial", "evaluative_words", "no_end_mark",
    "log_term_mentions", "term_in_outline", "term_is_name", "definite_subject",
    "two_sentences", "rule_choice", "opens_article", "opens_to_verb", "opens_ing",
    "opens_capital_word", "predicate_article", "predicate_adjective", "code_instance",
    "list_item",
)

_DEFINING_VERB = re.compile(r"\b(?:is|are|means|refers?|called|known|termed|define[ds]?|"
                            r"denote[ds]?)\b", re.IGNORECASE)
_OPENS_POINTING = re.compile(r"^\W*(?:this|these|that|those|it|they|its|their|here|such)\b",
                             re.IGNORECASE)
_POINTING = re.compile(r"\b(?:this|these|above|below|following|previous|preceding|former|"
                       r"latter|aforementioned)\b", re.IGNORECASE)
#: What a reference-list entry holds: a year in brackets or after a comma, pages, "et al.",
#: a publisher, a journal's volume and issue, an address.
_REFERENCE = re.compile(
    r"\((?:19|20)\d\d[a-z]?\)|,\s*(?:19|20)\d\d\b|\bpp?\.\s*\d|\bet\s+al\b|\bvol\.|"
    r"\b(?:press|publishers?|publishing|journal|proceedings|university|edition|eds?\.|"
    r"isbn|doi|monographs|series|translation|inc\.|ltd)\b|\d+\(\d+\):\d+|https?:|www\.",
    re.IGNORECASE)
_EXAMPLE = re.compile(r"\b(?:example|e\.g\.|for\s+instance|suppose|consider|imagine|"
                      r"in\s+this\s+case|here\s+we|line|listing|step|fourth|seventh)\b",
                      re.IGNORECASE)
_CODE = re.compile(r"\b(?:parameter|argument|variable|method|function|object|class|file|"
                   r"column|attribute|module|loop)\b|[_()\[\]]\w|\w\(", re.IGNORECASE)
#: A front that names one instance in code ("parameter ca", "the function logspace").
_CODE_INSTANCE = re.compile(r"^\s*(?:what\s+\w+\s+)?(?:the\s+)?(?:parameter|option|function|"
                            r"method|module|class|object|variable|argument|file|column|"
                            r"line|value|return\s+value)\b", re.IGNORECASE)
_AUTHORIAL = re.compile(r"\b(?:we|our|us|i|you|your|me|my)\b", re.IGNORECASE)
_EVALUATIVE = re.compile(r"\b(?:important|major|common|useful|good|great|nice|simple|"
                         r"versatile|interesting|powerful|popular|miracles?|rewarding|"
                         r"creative|sophisticated|obvious|recurring|striking)\b",
                         re.IGNORECASE)


#: The flashcard model's weights (:class:`~bookreader.core.logistic.LogisticWeights`).
CardWeights: TypeAlias = LogisticWeights


class BookUse:
    """How the pages read use their words: enough to say how often a term is named."""

    def __init__(self, sentences: Sequence[str], names: NameEvidence) -> None:
        self.keys = [key_only(s) for s in sentences]
        self.names = names
        self._mentions: dict[str, int] = {}

    def mentions(self, term: str) -> int:
        key = key_only(term)
        if key not in self._mentions:
            self._mentions[key] = sum(key in k for k in self.keys) if key else 0
        return self._mentions[key]


def _share(text: str, test) -> float:
    chars = [ch for ch in text if not ch.isspace()]
    return sum(1 for ch in chars if test(ch)) / len(chars) if chars else 0.0


def features(form: str, flags: Sequence[str], front: str, back: str, term: str,
             use: Optional[BookUse] = None, rule_choice: bool = False,
             list_item: bool = False) -> list[float]:
    """The feature vector of one candidate card (in the order of :data:`FEATURES`).

    ``rule_choice``: the rules alone would make this card from its sentence;
    ``list_item``: the sentence is one of a run of "label: text" lines or bullets."""
    ws = words(back)
    t = r"\s+".join(re.escape(w) for w in term.split())
    verb = _DEFINING_VERB.search(back)
    subject = re.match(rf"^\W*(?:(?:an?|the)\s+)?{t}\b", back, re.IGNORECASE)
    head = term.split()[-1] if term.split() else ""
    first = ws[0].lower() if ws else ""
    after = [w.lower() for w in words(back[verb.end():])[:3]] if verb else []
    out = [float(form == f) for f in FORMS]
    out += [float(f in flags) for f in FLAGS]
    out += [
        math.log1p(len(ws)),
        float(len(term.split())),
        float(bool(term[:1].isupper())),
        (len(words(back[:verb.start()])) / max(1, len(ws))) if verb else 1.0,
        float(bool(subject)),
        float(bool(_OPENS_POINTING.match(back))),
        float(bool(_POINTING.search(back))),
        _share(back, str.isdigit),
        _share(back, lambda ch: not (ch.isalnum() or ch in ".,;:'\"()-\u2019\u201c\u201d")),
        float(len(_REFERENCE.findall(back))),
        float(bool(_EXAMPLE.search(back))),
        float(bool(_CODE.search(f"{front} {back}"))),
        float(bool(_AUTHORIAL.search(back))),
        float(bool(_EVALUATIVE.search(back))),
        float(not back.rstrip().rstrip("\"'\u201d\u2019)").endswith((".", "!", "?"))),
        math.log1p(use.mentions(term)) if use else 0.0,
        float(use.names.in_outline(term)) if use else 0.0,
        float(use.names.name_word(head)) if use and head else 0.0,
        float(bool(re.match(r"^\s*what\s+\w+\s+the\s", front, re.IGNORECASE))),
        float(len(re.findall(r"[.!?]\s+[A-Z]", back)) > 0),
        float(rule_choice),
        float(first in ("a", "an", "the", "any", "one")),
        float(first == "to"),
        float(first.endswith("ing")),
        float(bool(first) and back.lstrip()[:1].isupper() and first not in (
            "a", "an", "the", "any", "one", "to") and not first.endswith("ing")),
        float(bool(after) and after[0] in ("a", "an", "the", "any", "one")),
        float(bool(after) and bool(_EVALUATIVE.match(after[0] if after[0] not in (
            "a", "an", "the") or len(after) < 2 else after[1]))),
        float(bool(_CODE_INSTANCE.match(front))),
        float(list_item),
    ]
    return out


def load_weights(path: Path, expected_sha256: str = "") -> CardWeights:
    """The weights in the ``.npz`` at ``path`` (checked against ``expected_sha256`` when
    given).

    Raises:
        ModelError: the file is missing, altered, unreadable or made for other features.
    """
    return logistic.load_weights(path, FEATURES, what="The flashcard model",
                                 remedy="make train-card-model",
                                 expected_sha256=expected_sha256)
