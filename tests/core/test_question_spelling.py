"""A word the student types with underscores is searched as the book spells it."""

from __future__ import annotations

from bookreader.core.lexical import tokenize
from bookreader.core.question_subject import spelled_as_in_book


def _knows(*words: str):
    terms = {t for w in words for t in tokenize(w)}
    return terms.__contains__


def test_a_subscript_typed_with_an_underscore_is_the_books_joined_symbol():
    # a genetics book prints the subscripts side by side: FST, FIS; a statistics book H0
    knows = _knows("FST", "FIS", "H0", "measure")
    assert spelled_as_in_book("What does F_ST measure?", knows) == "What does FST measure?"
    assert spelled_as_in_book("Why is F_IS <= F_ST?", knows) == "Why is FIS <= FST?"
    assert spelled_as_in_book("When do we reject H_0?", knows) == "When do we reject H0?"


def test_a_name_the_book_writes_with_underscores_or_never_uses_is_kept():
    # code keeps its underscores when the book has them; an unknown word stays as typed
    knows = _knows("my_var", "myvar", "FST")
    assert spelled_as_in_book("What is my_var?", knows) == "What is my_var?"
    assert spelled_as_in_book("What does F_IT measure?", knows) == "What does F_IT measure?"
    assert spelled_as_in_book("What is snake_case?", knows) == "What is snake_case?"
