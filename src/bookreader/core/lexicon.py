"""Shared vocabulary of the answering checks: the connectives that state a relation.

One owner for the words that join two parts of a sentence into a relation (a cause, a
purpose, a condition), read by :mod:`bookreader.core.claim_relations`.  Each connective
is listed once, with the kind of relation it states and which of its two parts is the
*ground* (the cause, the purpose or the condition) and which the *consequent*:

* ground after: "X *because* Y", "X *in order to* Y", "X *if* Y" (and fronted:
  "*Because* Y, X");
* ground before: "Y*, so* X", "Y *leads to* X", "Y*; therefore* X" (and opening a
  sentence, the sentence before is the ground: "Y. *Therefore,* X").

Plain data; the patterns are built from these tuples where they are read.
"""

from __future__ import annotations

CAUSE = "cause"
PURPOSE = "purpose"
CONDITION = "condition"
#: "X, which means Y": Y says what X amounts to; either part can be read from the other,
#: so the two parts may be given in either order.
MEANING = "meaning"

#: (connective, kind): the part after the connective is the ground of the part before.
GROUND_AFTER: tuple[tuple[str, str], ...] = (
    ("because of", CAUSE), ("because", CAUSE), ("since", CAUSE), ("due to", CAUSE),
    ("owing to", CAUSE), ("thanks to", CAUSE), ("on account of", CAUSE),
    ("as a result of", CAUSE), ("as a consequence of", CAUSE),
    ("is caused by", CAUSE), ("are caused by", CAUSE), ("was caused by", CAUSE),
    ("were caused by", CAUSE), ("is due to", CAUSE), ("are due to", CAUSE),
    ("results from", CAUSE), ("result from", CAUSE), ("resulted from", CAUSE),
    ("arises from", CAUSE), ("arise from", CAUSE), ("stems from", CAUSE),
    ("is the result of", CAUSE), ("is a result of", CAUSE),
    ("in order to", PURPOSE), ("in order for", PURPOSE), ("so that", PURPOSE),
    ("so as to", PURPOSE),
    ("only if", CONDITION), ("if and only if", CONDITION), ("if", CONDITION),
    ("unless", CONDITION), ("provided that", CONDITION), ("as long as", CONDITION),
    ("so long as", CONDITION),
)

#: (connective, kind): the part before the connective is the ground of the part after.
#: The adverbs among them (:data:`ADVERBS`) join clauses only after a comma, a semicolon
#: or "and"; opening a sentence or inside a clause they go on from the sentence before.
GROUND_BEFORE: tuple[tuple[str, str], ...] = (
    ("so", CAUSE), ("therefore", CAUSE), ("thus", CAUSE), ("hence", CAUSE),
    ("consequently", CAUSE), ("as a result", CAUSE), ("as a consequence", CAUSE),
    ("for this reason", CAUSE), ("which means that", MEANING), ("which means", MEANING),
    ("this means that", MEANING), ("this means", MEANING), ("which is why", CAUSE),
    ("that is why", CAUSE), ("this is why", CAUSE),
    ("causes", CAUSE), ("cause", CAUSE), ("caused", CAUSE), ("causing", CAUSE),
    ("leads to", CAUSE), ("lead to", CAUSE), ("led to", CAUSE), ("leading to", CAUSE),
    ("results in", CAUSE), ("result in", CAUSE), ("resulted in", CAUSE),
    ("resulting in", CAUSE), ("gives rise to", CAUSE), ("give rise to", CAUSE),
    ("gave rise to", CAUSE), ("is the reason for", CAUSE), ("is the reason why", CAUSE),
    ("are the reason for", CAUSE), ("is responsible for", CAUSE),
    ("are responsible for", CAUSE),
)

#: Prepositions that order two terms as a change's start and end ("changed *from* 0.751
#: *to* 0.827", "converts *from* Celsius *to* Fahrenheit"): exchanged, the claim says the
#: opposite change.
CHANGE_FROM, CHANGE_TO = "from", "to"

#: Connectives of :data:`GROUND_BEFORE` that are sentence adverbs (see there).
ADVERBS = frozenset(("so", "therefore", "thus", "hence", "consequently", "as a result",
                     "as a consequence", "for this reason"))

#: Words after "so" that make it something else than "therefore": "so that" (a purpose),
#: "so far", "so on", "so-called", "so many".
NOT_AFTER_SO = frozenset("that as far on forth much many long called too to".split())

#: Words before "cause" that make it a noun ("the cause of the error"), not a verb.
NOUN_BEFORE_CAUSE = frozenset(
    "the a an its their his her our your my this that root main common one no of each "
    "probable likely possible".split())

#: Nouns that name a piece of language: "*the word* piano", "*the term* bug".  A
#: sentence "The word X is ..." says something of the word, not of the thing it names
#: (where it comes from, how it is spelt), unless its verb defines the thing ("means",
#: "refers to", "stands for").
LANGUAGE_NOUNS = frozenset("word words term terms name names phrase abbreviation acronym".split())
