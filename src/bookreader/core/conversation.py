"""A book's conversation as Markdown, to share with peers (File > Export conversation,
``bookreader history export``).

Each question is a heading, the answer follows as it was shown, and its citations are listed
under it with the printed page label the reader sees and whether the excerpt was found on
that page.
"""

from __future__ import annotations

from collections.abc import Iterable

from bookreader.core.types import Answer, Mode

_MODE_NAMES = {
    Mode.BOOK: "whole book",
    Mode.SELECTED: "selected text",
    Mode.HIGHLIGHT: "selection and nearby pages",
}


def _quote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.strip().splitlines())


def conversation_markdown(title: str, answers: Iterable[Answer]) -> str:
    """The questions and answers about one book, oldest first, as a Markdown document."""
    answers = list(answers)
    out = [f"# Questions about *{title or 'an untitled book'}*", ""]
    if not answers:
        out += ["No questions have been asked about this book yet.", ""]
    for n, a in enumerate(answers, 1):
        mode = _MODE_NAMES.get(Mode(a.mode), str(a.mode))
        when = f", {a.created_at[:16].replace('T', ' ')} UTC" if a.created_at else ""
        out += [f"## {n}. {a.question.strip()}", "", f"*Asked about the {mode}{when}.*", ""]
        if a.selection and Mode(a.mode) is not Mode.BOOK:
            out += ["Selected text:", "", _quote(a.selection), ""]
        out += [a.text.strip() or "(no answer)", ""]
        if a.error:
            out += [f"*This question failed: {a.error}*", ""]
        elif a.confidence_level:
            level = getattr(a.confidence_level, "value", a.confidence_level)
            out += [f"Confidence: {level} ({a.confidence:.2f})", ""]
        if a.citations:
            out.append("Sources:")
            out.append("")
            for i, c in enumerate(a.citations, 1):
                page = f"page {c.page_label}" if c.page_label else "the selection"
                check = "" if c.verified else " (not found on that page)"
                where = f"{c.section}, {page}" if c.section else page
                out.append(f"{i}. {where}{check}: \u201c{c.excerpt.strip()}\u201d")
            out.append("")
    return "\n".join(out).rstrip() + "\n"
