"""Quizzes made from cited cards: cloze, multiple choice and true/false.

Every item is answerable from its cited sentence alone:

* **cloze**: the card's term blanked out of its cited sentence; filling the blank with the
  answer gives the sentence back (:func:`answerable` checks exactly that);
* **multiple choice**: the same blanked sentence with the term and up to three other
  terms of the same chapter (term cards, so every option is a name the chapter defines;
  options that occur in the prompt are left out, so only one fits);
* **true/false**: the cited sentence as it stands (true), or negated ("is" -> "is not",
  "can" -> "cannot") or with its term swapped for another term of the chapter (false) -
  the verifier's own kinds of perturbation.  Which one an item gets is fixed by its id.
"""

from __future__ import annotations

import random
import re
from typing import Optional, Sequence

from bookreader.core.sentences import key_only
from bookreader.core.study.model import (
    CARD_TERM,
    QUIZ_CHOICE,
    QUIZ_CLOZE,
    QUIZ_TRUE_FALSE,
    QuizItem,
    StudyCard,
    stable_id,
)

BLANK = "_____"
#: Options of a multiple-choice item (the answer and this many minus one distractors).
CHOICES = 4
#: Fewest distractors a multiple-choice item needs (else it becomes a cloze item).
MIN_DISTRACTORS = 2
_NEGATABLE = re.compile(r"\b(is|are|was|were|can|will|should|must|does|do)\b(?!\s+not\b)",
                        re.IGNORECASE)


def _term_pattern(term: str) -> re.Pattern[str]:
    t = r"\s+".join(re.escape(w) for w in term.split())
    return re.compile(rf"(?<![\w-]){t}(?:e?s)?(?![\w-])", re.IGNORECASE)


def blank_out(sentence: str, term: str) -> tuple[str, str]:
    """``sentence`` with every occurrence of ``term`` blanked, and the first occurrence as
    written there (the answer); ``("", "")`` when the term does not occur."""
    pat = _term_pattern(term)
    m = pat.search(sentence)
    if m is None:
        return "", ""
    return pat.sub(BLANK, sentence), m.group(0)


def negate(sentence: str) -> Optional[str]:
    """``sentence`` with its first auxiliary verb negated, or None when it has none."""
    m = _NEGATABLE.search(sentence)
    if m is None:
        return None
    word = m.group(1)
    neg = "cannot" if word.lower() == "can" else f"{word} not"
    return sentence[:m.start()] + neg + sentence[m.end():]


def _shown(excerpt: str) -> str:
    """The excerpt as a sentence: the citation keeps the page's words up to the last
    letter or digit, so a full stop is put back for the prompt."""
    return excerpt if excerpt.endswith((".", "!", "?", "\"", "\u201d", ")")) else excerpt + "."


def answerable(item: QuizItem) -> bool:
    """True when the item's answer follows from its cited sentence alone (see above)."""
    cited = key_only(item.citation.excerpt)
    if item.kind in (QUIZ_CLOZE, QUIZ_CHOICE):
        prompt = item.prompt.split("\n", 1)[-1]
        filled = prompt.replace(BLANK, item.answer)
        return bool(item.answer) and key_only(filled) == cited and (
            item.kind == QUIZ_CLOZE or (item.answer in item.options
                                        and all(key_only(o) not in key_only(prompt)
                                                for o in item.options if o != item.answer)))
    if item.kind == QUIZ_TRUE_FALSE:
        statement = key_only(item.prompt.split(":", 1)[-1])
        return (statement == cited) == (item.answer == "True")
    return False


def _distractors(card: StudyCard, pool: Sequence[StudyCard], prompt: str, answer: str,
                 rng: random.Random) -> list[str]:
    same = [c for c in pool if c.chapter == card.chapter] or list(pool)
    seen = {key_only(answer)}
    out: list[str] = []
    others = [c.term for c in same if c.kind == CARD_TERM and c.card_id != card.card_id]
    rng.shuffle(others)
    prompt_key = key_only(prompt)
    for term in others:
        k = key_only(term)
        if not k or k in seen or k in prompt_key or k in key_only(answer):
            continue
        seen.add(k)
        out.append(term)
        if len(out) >= CHOICES - 1:
            break
    return out


def make_quiz(cards: Sequence[StudyCard], *, kinds: Sequence[str] = (
        QUIZ_CLOZE, QUIZ_CHOICE, QUIZ_TRUE_FALSE), limit: Optional[int] = None) -> list[QuizItem]:
    """Quiz items from ``cards`` (their citations are the items'), in the cards' order."""
    terms = [c for c in cards if c.kind == CARD_TERM]
    items: list[QuizItem] = []
    for n, card in enumerate(cards):
        sentence = _shown(card.citation.excerpt)
        whole = key_only(card.back) == key_only(sentence)  # a sentence, not an entry's half
        item_id = stable_id(card.card_id, "quiz")
        rng = random.Random(item_id)
        want_tf = QUIZ_TRUE_FALSE in kinds and whole and (card.kind != CARD_TERM or n % 3 == 2)
        item: Optional[QuizItem] = None
        if card.kind == CARD_TERM and not want_tf:
            blanked, answer = blank_out(sentence, card.term)
            if blanked:
                if QUIZ_CHOICE in kinds and n % 2 == 1:
                    wrong = _distractors(card, terms, blanked, answer, rng)
                    if len(wrong) >= MIN_DISTRACTORS:
                        options = [answer] + wrong
                        rng.shuffle(options)
                        item = QuizItem(item_id, QUIZ_CHOICE,
                                        f"Which term fills the blank?\n{blanked}", answer,
                                        card.citation, tuple(options), card.chapter)
                if item is None and QUIZ_CLOZE in kinds:
                    item = QuizItem(item_id, QUIZ_CLOZE, f"Fill in the blank:\n{blanked}",
                                    answer, card.citation, (), card.chapter)
        if item is None and QUIZ_TRUE_FALSE in kinds and whole:
            truth = int(item_id, 16) % 2 == 0
            statement: Optional[str] = sentence if truth else None
            if not truth:
                statement = negate(sentence)
                if statement is None and card.kind == CARD_TERM:
                    wrong = _distractors(card, terms, sentence, card.term, rng)
                    if wrong:
                        blanked, _ = blank_out(sentence, card.term)
                        statement = blanked.replace(BLANK, wrong[0]) if blanked else None
                if statement is None:
                    statement, truth = sentence, True
            item = QuizItem(item_id, QUIZ_TRUE_FALSE, f"True or false: {statement}",
                            "True" if truth else "False", card.citation, ("True", "False"),
                            card.chapter)
        if item is not None and answerable(item):
            items.append(item)
        if limit is not None and len(items) >= limit:
            break
    return items
