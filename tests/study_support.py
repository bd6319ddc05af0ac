"""A small real textbook for the study-tool tests, written with PyMuPDF.

Chapter 1 has definitions in running text, a figure caption, a code comment that reads
like a definition, a "Vocabulary" section of "term: definition" entries and an
"Exercises" section (nothing from there may become a card).  Chapter 2 has definitions
in running text and a "Glossary" of "term Definition" entries without colons.  Chapter 3
has no definitions at all, and one of its pages is an image with no text layer.
"""

from __future__ import annotations

from pathlib import Path

import fitz

from pdf_factory import LEADING, BookSpec, Line, book_pdf, filler, lines_for, make_pdf

RUNNING_DEFINITIONS_1 = [
    "A mitochondrion is an organelle that releases energy from food through respiration.",
    "Osmosis is the movement of water across a membrane from a dilute solution to a "
    "concentrated one.",
    "An enzyme is a protein that speeds up a chemical reaction without being used up.",
]
VOCABULARY = {
    "catalyst": "A substance that speeds up a reaction without being changed by it.",
    "homeostasis": "The keeping of a stable internal state in a living body.",
    "photosynthesis": "The process by which plants make sugar from light, water and "
                      "carbon dioxide.",
    "diffusion": "The spreading of particles from a region of high concentration to a "
                 "region of low concentration.",
}
RUNNING_DEFINITIONS_2 = [
    "Supply is the amount of a good that sellers are willing to sell at a given price.",
    "Demand is the amount of a good that buyers are willing to buy at a given price.",
    "An equilibrium price is the price at which the quantity supplied equals the "
    "quantity demanded.",
    "Inflation refers to a general rise in prices across an economy over time.",
]
GLOSSARY = {
    "opportunity cost": "The value of the best alternative given up when making a choice.",
    "scarcity": "The condition of having limited resources for unlimited wants.",
}
#: Sentences that must never become cards: an exercise, a caption, a code comment.
EXERCISE_SENTENCE = "A vacuole is a storage space that you should describe in your own words."
CAPTION = "Figure 1.2: A cell membrane is a thin layer shown here with its pores."
CODE_LINE = "# A buffer is a region of memory used to hold data"

CHAPTERS = ["1 Cells and Energy", "2 Markets and Prices", "3 Travel Notes"]


def study_book(path: Path) -> BookSpec:
    """The test book (see the module docstring); the scanned page is the last one."""
    ch1 = [
        ("1.1 Inside the Cell",
         filler(6, 1) + "\n\n" + " ".join(RUNNING_DEFINITIONS_1[:2]) + " " + filler(3, 2)
         + "\n\n" + CAPTION + "\n\n" + RUNNING_DEFINITIONS_1[2] + " " + filler(4, 3)
         + "\n\n" + CODE_LINE + "\n\n" + filler(20, 4)),
        ("1.2 Vocabulary", "\n\n".join(f"{t}: {d}" for t, d in VOCABULARY.items())),
        ("1.3 Exercises", "Exercise 1.1 " + EXERCISE_SENTENCE + "\n\n" + filler(3, 5)),
    ]
    ch2 = [
        ("2.1 Buying and Selling",
         " ".join(RUNNING_DEFINITIONS_2[:2]) + " " + filler(8, 6) + "\n\n"
         + " ".join(RUNNING_DEFINITIONS_2[2:]) + " " + filler(8, 7)),
        ("2.2 Glossary", "\n\n".join(f"{t} {d}" for t, d in GLOSSARY.items())),
    ]
    ch3 = [("3.1 On the Road", filler(30, 8)), ("3.2 By the Sea", filler(30, 9))]
    spec = book_pdf(path, [(CHAPTERS[0], ch1), (CHAPTERS[1], ch2), (CHAPTERS[2], ch3)])
    _append_scanned_page(spec)
    return spec


def _append_scanned_page(spec: BookSpec) -> None:
    """Add an image-only page (a picture of text, no text layer) at the end of the book."""
    src = fitz.open()
    page = src.new_page()
    page.insert_text((72, 100), "Osmosis is the movement of water, as a picture only.")
    png = page.get_pixmap(dpi=50).tobytes("png")
    src.close()
    with fitz.open(spec.path) as doc:
        p = doc.new_page()
        p.insert_image(p.rect, stream=png)
        tmp = spec.path.with_suffix(".tmp.pdf")
        doc.save(tmp, garbage=1, deflate=True)
    tmp.replace(spec.path)
    spec.page_count += 1


# --- a page of program listings, for code cards -------------------------------------
CODE_CHAPTER = "1 Loops"
LEAD_IN = "The following program prints the numbers from 1 to 10:"
LOOP = ["for i in range(1, 11):", "    print(i)"]
UNEXPLAINED = ["total = 0", "total = total + 5"]
AFTER = "This function returns the larger of its two numbers."
BIGGER = ["def bigger(a, b):", "    if a > b:", "        return a", "    return b"]


def _code_page(parts: list[tuple[str, list[str] | str]]) -> list[Line]:
    """Prose paragraphs (Helvetica) and listings (Courier, a line each) down a page."""
    out: list[Line] = []
    y = 100.0
    for kind, body in parts:
        if kind == "prose":
            lines = lines_for(str(body), top=y)
            out.extend(lines)
            y = lines[-1].y + LEADING * 1.8
        else:
            for text in body:
                out.append(Line(text, y=y, font="cour"))
                y += LEADING
            y += LEADING * 0.8
    return out


def code_listing_pdf(path: Path) -> Path:
    """Two pages with listings in Courier: one led in by a sentence that says what it
    does, one explained by the sentence after it, and one nobody explains."""
    first = _code_page([
        ("prose", filler(3, 1) + " Loops repeat a piece of work many times. " + LEAD_IN),
        ("code", LOOP),
        ("prose", filler(4, 2)),
        ("prose", "Variables keep values between the steps of a program."),
        ("code", UNEXPLAINED),
        ("prose", filler(4, 3)),
    ])
    second = _code_page([
        ("prose", filler(4, 4) + " Here is a small definition to read."),
        ("code", BIGGER),
        ("prose", AFTER + " " + filler(3, 5)),
    ])
    return make_pdf(path, [first, second], toc=[(1, CODE_CHAPTER, 0)])
