"""Realistic synthetic answers, for the audit benchmark, the tests and a demo report.

Sizes follow what the answering pipeline produces: five retrieved passages of about 1,000
characters each in the prompt, answers of a few sentences across several lines, citations,
validation scores, and about one answer in twenty that falls back or fails.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import replace
from typing import Optional

from bookreader.core.types import (
    Answer,
    Chunk,
    Citation,
    Message,
    Mode,
    Passage,
    Retrieval,
    Validation,
)

BOOKS = [
    ("b" * 8 + "01", "Introduction to Thermodynamics"),
    ("b" * 8 + "02", "Cell Biology, 4th edition"),
]
CHAPTERS = [
    "1 Systems and States", "2 Energy and the First Law", "3 Entropy",
    "4 Heat Engines", "5 Free Energy", "6 Phase Equilibria", "7 Statistical Views",
]
_WORDS = (
    "energy entropy system state heat work temperature pressure volume process cycle "
    "engine efficiency equilibrium reversible irreversible boundary surroundings molecule "
    "gas ideal law first second internal enthalpy free phase transition capacity"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _paragraph(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    while sum(len(s) + 1 for s in out) < chars:
        out.append(_sentence(rng, rng.randint(8, 18)))
    return " ".join(out)


def make_answer(
    rng: Optional[random.Random] = None,
    *,
    mode: Optional[Mode] = None,
    error: str = "",
    passage_chars: int = 1000,
) -> Answer:
    """One synthetic :class:`Answer`, every field filled in."""
    rng = rng or random.Random()
    mode = mode or rng.choices(list(Mode), weights=(6, 3, 2))[0]
    book_id, title = rng.choice(BOOKS)
    passages = []
    for i in range(5 if mode != Mode.SELECTED else 0):
        page = rng.randint(0, 300)
        chunk = Chunk(
            chunk_id=uuid.UUID(int=rng.getrandbits(128)).hex,
            book_id=book_id,
            position=page * 3 + i,
            text=_paragraph(rng, passage_chars),
            page_start=page,
            page_end=page + rng.choice((0, 0, 1)),
            label_start=str(page + 1),
            label_end=str(page + 1),
            chapter=CHAPTERS[min(page // 45, len(CHAPTERS) - 1)],
            section=f"{page // 45 + 1}.{page % 5 + 1}",
            char_start=0,
            char_end=passage_chars,
        )
        s = round(rng.uniform(0.3, 0.95), 4)
        passages.append(Passage(chunk, s, round(s * 0.9, 4), round(rng.random(), 4)))
    passages.sort(key=lambda p: -p.score)
    question = _sentence(rng, rng.randint(6, 14))[:-1] + "?"
    selection = _paragraph(rng, rng.randint(200, 1500)) if mode != Mode.BOOK else ""
    retrieval = (
        Retrieval(question, tuple(passages), round(rng.uniform(0.4, 0.95), 4),
                  round(rng.uniform(5, 60), 3))
        if passages else None
    )
    sel_page = rng.randint(0, 300) if selection else None
    context = "\n\n".join(p.chunk.text for p in passages) or selection
    text = "\n".join(_sentence(rng, rng.randint(10, 20)) for _ in range(rng.randint(2, 5)))
    fallback = rng.random() < 0.05
    conf = round(rng.betavariate(5, 2), 4)
    level = "high" if conf >= 0.75 else "medium" if conf >= 0.5 else "low"
    cites = tuple(
        Citation(p.chunk.section, p.chunk.page_start, p.chunk.label_start,
                 p.chunk.text[:80], verified=rng.random() < 0.9,
                 rects=((72.0, 100.0 + 12 * k, 320.0, 111.0 + 12 * k),))
        for k, p in enumerate(passages[: rng.randint(1, 2)])
    )
    gen = round(rng.uniform(800, 5000), 3)
    first = round(rng.uniform(80, 600), 3)
    validation = Validation(round(rng.uniform(0.5, 0.95), 4), round(rng.uniform(0.3, 0.9), 4),
                            rng.random() < 0.9, round(rng.uniform(10, 40), 3))
    answer = Answer(
        query_id=uuid.UUID(int=rng.getrandbits(128)).hex,
        answer_id=uuid.UUID(int=rng.getrandbits(128)).hex,
        question=question,
        mode=mode,
        text="This topic is not covered in the book." if fallback else text,
        fallback=fallback,
        in_selected_text=None if mode == Mode.BOOK else rng.random() < 0.8,
        confidence=conf,
        confidence_level=level,
        citations=() if fallback else cites,
        validation=None if fallback else validation,
        backend="bundled",
        model="SmolLM2-135M-Instruct.Q4_1.gguf",
        latency_ms=round(gen + first + 50, 3),
        first_token_ms=first,
        generation_ms=gen,
        retrieval=retrieval,
        prompt=(
            Message("system", "Answer only from the context. Cite pages as [Source: ...]."),
            Message("user", f"Context:\n{context}\n\nQuestion: {question}"),
        ),
        raw_output=text + "\n[Source: 3.1 (Page 12) - \"energy\"]",
        book_id=book_id,
        book_title=title,
        selection=selection,
        stage_ms={"retrieval": retrieval.latency_ms if retrieval else 0.0,
                  "generation": gen, "validation": validation.ms},
        selection_page=sel_page,
        chapter=CHAPTERS[min(sel_page // 45, len(CHAPTERS) - 1)] if sel_page is not None else "",
    )
    if error:
        answer = replace(answer, error=error, text="", citations=(), validation=None, outcome=None,
                         confidence=0.0, confidence_level="low")
    return answer
