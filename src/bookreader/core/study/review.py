"""Spaced review: a book's saved cards, scheduled with FSRS.

The cards a student keeps live in one JSON file per book (``study.json`` in the book's
folder of the data folder), each with its FSRS state (:class:`fsrs.Card`, the scheduler
Anki uses).  A review shows the cards that are due; rating one (1 again, 2 hard, 3 good,
4 easy) schedules it again with :meth:`fsrs.Scheduler.review_card` and saves the file at
once (written to a temporary file, then renamed, so a crash never leaves half a file).
Fuzzing is off, so the same ratings on the same days give the same schedule.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Optional

from bookreader.core.study.model import StudyCard
from bookreader.core.types import Citation
from bookreader.errors import BookReaderError, InvalidInput

log = logging.getLogger(__name__)

DECK_FILE = "study.json"
DECK_VERSION = 1
RATINGS = {1: "again", 2: "hard", 3: "good", 4: "easy"}


def _now(now: Optional[datetime]) -> datetime:
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc)


def _card_to_json(card: StudyCard) -> dict[str, Any]:
    c = card.citation
    return {"card_id": card.card_id, "kind": card.kind, "front": card.front, "back": card.back,
            "chapter": card.chapter, "term": card.term,
            "citation": {"section": c.section, "page": c.page, "page_label": c.page_label,
                         "excerpt": c.excerpt, "verified": c.verified,
                         "rects": [list(r) for r in c.rects]}}


def _card_from_json(d: dict[str, Any]) -> StudyCard:
    c = d["citation"]
    cit = Citation(section=c.get("section", ""), page=int(c.get("page", -1)),
                   page_label=c.get("page_label", ""), excerpt=c.get("excerpt", ""),
                   verified=bool(c.get("verified", False)),
                   rects=tuple(tuple(r) for r in c.get("rects") or ()))
    return StudyCard(card_id=d["card_id"], kind=d["kind"], front=d["front"], back=d["back"],
                     citation=cit, chapter=d.get("chapter", ""), term=d.get("term", ""))


class ReviewDeck:
    """A book's saved cards and their schedules.

    Args:
        folder: The book's folder in the data folder.
    """

    def __init__(self, folder: Path) -> None:
        import fsrs

        self.path = Path(folder) / DECK_FILE
        self._fsrs = fsrs
        self.scheduler = fsrs.Scheduler(enable_fuzzing=False)
        self._lock = threading.Lock()
        self._cards: dict[str, StudyCard] = {}
        self._states: dict[str, Any] = {}  # card id -> fsrs.Card
        self._reviews = 0
        self._load()

    # --- file -----------------------------------------------------------------------------
    def _load(self) -> None:
        if not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for entry in data.get("cards", []):
                card = _card_from_json(entry)
                self._cards[card.card_id] = card
                self._states[card.card_id] = self._fsrs.Card.from_dict(entry["fsrs"])
            self._reviews = int(data.get("reviews", 0))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BookReaderError(
                f"The saved study cards in {self.path} cannot be read ({exc}). Move the file "
                "away to start a new deck; the book itself is unaffected.",
                details=repr(exc)) from exc

    def _save(self) -> None:
        data = {"version": DECK_VERSION, "reviews": self._reviews,
                "cards": [{**_card_to_json(c), "fsrs": self._states[c.card_id].to_dict()}
                          for c in self._cards.values()]}
        tmp = self.path.with_suffix(".json.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise BookReaderError(
                f"Cannot save the study cards to {self.path}: {exc.strerror or exc}. Free "
                "some disk space or check the data folder's permissions.",
                details=repr(exc)) from exc

    # --- cards ----------------------------------------------------------------------------
    def add(self, cards: Iterable[StudyCard], now: Optional[datetime] = None) -> int:
        """Keep ``cards`` for review (new ones are due now); a card already kept keeps its
        schedule.  Returns how many were new."""
        when = _now(now)
        added = 0
        with self._lock:
            for n, card in enumerate(cards):
                if card.card_id in self._cards:
                    self._cards[card.card_id] = card  # its citation may have been refreshed
                    continue
                self._cards[card.card_id] = card
                self._states[card.card_id] = self._fsrs.Card(
                    card_id=int(card.card_id, 16) & ((1 << 62) - 1) or n + 1, due=when)
                added += 1
            self._save()
        return added

    def remove(self, card_id: str) -> None:
        with self._lock:
            if self._cards.pop(card_id, None) is not None:
                self._states.pop(card_id, None)
                self._save()

    def cards(self) -> list[StudyCard]:
        return list(self._cards.values())

    def due(self, now: Optional[datetime] = None) -> list[StudyCard]:
        """The cards due at ``now``, the longest overdue first."""
        when = _now(now)
        due = [(self._states[k].due, c) for k, c in self._cards.items()
               if self._states[k].due <= when]
        due.sort(key=lambda p: p[0])
        return [c for _, c in due]

    def next_due(self, card_id: str) -> datetime:
        return self._state(card_id).due

    def _state(self, card_id: str) -> Any:
        state = self._states.get(card_id)
        if state is None:
            raise InvalidInput(f"No saved study card has the id {card_id}. Make the cards "
                               "again or pick one from the review list.")
        return state

    def rate(self, card_id: str, rating: int, now: Optional[datetime] = None) -> datetime:
        """Record a review (1 again, 2 hard, 3 good, 4 easy); returns when it is due next."""
        if rating not in RATINGS:
            raise InvalidInput(f"A rating is 1 (again), 2 (hard), 3 (good) or 4 (easy), "
                               f"not {rating!r}.")
        with self._lock:
            state = self._state(card_id)
            new, _ = self.scheduler.review_card(state, self._fsrs.Rating(rating),
                                                review_datetime=_now(now))
            self._states[card_id] = new
            self._reviews += 1
            self._save()
            log.info("Study card %s rated %s; due %s", card_id, RATINGS[rating], new.due)
            return new.due

    def stats(self, now: Optional[datetime] = None) -> dict[str, int]:
        return {"cards": len(self._cards), "due": len(self.due(now)), "reviews": self._reviews}

