"""Study tools: flashcards, quizzes, chapter summaries, spaced review and exports.

Everything is made from the book's own sentences (glossary and vocabulary entries,
defining sentences, key statements), and every item carries a citation whose excerpt was
found on its page by the answering pipeline's citation check.  No Qt here.
"""

from bookreader.core.study.generate import KINDS, StudyScope, chapter_scope, generate
from bookreader.core.study.model import (
    SET_CARDS,
    SET_QUIZ,
    SET_SUMMARY,
    QuizItem,
    StudyCard,
    StudySet,
    SummaryLine,
    study_set_to_dict,
)

__all__ = ["KINDS", "SET_CARDS", "SET_QUIZ", "SET_SUMMARY", "QuizItem", "StudyCard",
           "StudyScope", "StudySet", "SummaryLine", "chapter_scope", "generate",
           "study_set_to_dict"]
