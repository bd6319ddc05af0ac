"""Labels, remarks and pointing subjects make no study card; definitions by a condition do
(sentences from a linear algebra book, a logic book, a programming book and a robotics
book; the whole-book checks skip without ../shared/eval)."""

from __future__ import annotations

import pytest

from bookreader.core.pdf import PdfBook
from bookreader.core.study import StudyScope, chapter_scope, generate
from bookreader.core.study.labels import repeated_labels
from bookreader.core.study.terms import definition_in

V, U, T, S, R, F = "\U0001d449", "\U0001d448", "\U0001d447", "\U0001d446", "\U0001d411", "\U0001d405"


@pytest.mark.parametrize("name,labels,terms", [
    ("math_ladr4e", {"caution"}, {"vector space", "colophon"}),
    ("thinkjava2", {"hint"}, {"bug", "virtual machine"}),
    ("physical_ai_textbook", {"objective", "steps"}, {"proprioception", "impact phase"}),
])
def test_heads_a_book_repeats_are_labels_and_its_terms_are_not(eval_dir, name, labels, terms):
    with PdfBook.open(eval_dir / "books" / f"{name}.pdf") as pdf:
        found = repeated_labels(pdf)
        assert repeated_labels(pdf) is found  # once per open book
    assert labels <= found
    assert not terms & found


def test_a_callout_label_makes_no_card_in_a_chapter(eval_dir):
    # "Caution: With respect to nonorthonormal bases, the matrix of T* does not ...": a
    # label the book heads five remarks with, not a term
    with PdfBook.open(eval_dir / "books" / "math_ladr4e.pdf") as pdf:
        scope = chapter_scope(list(pdf.toc), "Operators on Inner Product Spaces",
                              pdf.page_count)
        fronts = {c.front for c in generate(pdf, pdf.book_id, "cards", scope).cards}
    assert "Caution" not in fronts
    assert {"self-adjoint", "normal"} <= fronts


@pytest.mark.parametrize("sentence", [
    # a label's remark: a clause, not what the label is (linear algebra)
    f"Caution: If an operator {T} has a upper-triangular matrix with respect to some basis, "
    f"then the eigenvalues of {T} are exactly the entries on the diagonal.",
    f"Warning: There may not exist an orthonormal basis that simultaneously puts the "
    f"matrices of both {S} and {T} into these nice diagonal forms.",
    "Informal proof: When a product of polynomials is expanded using the distributive "
    "property, it does not matter whether the symbol is z or T.",
    "Colophon: Notes on Typesetting",  # a title
    # a subject named by pointing at a neighbouring formula, item or result
    "The formula below for the norm is called Parseval\u2019s identity.",
    "The inequality in (d) is called the triangle inequality, thus using the same "
    "terminology that we used for the norm.",
    "The corresponding result is called the polar decomposition, which gives a beautiful "
    "description of an arbitrary operator.",
    "The matrix in the next result is called the Vandermonde matrix.",
    "Sentences like this are called contingent sentences.",  # logic
    "Diagrams like this one that show the state of the program are called memory "
    "diagrams.",  # programming
    # a result proved elsewhere, not a definition
    f"The minimal polynomial of {T} is a polynomial multiple of the minimal polynomial of "
    f"{T}|{U}(by 5.31).",
    # an instance named by its symbols
    f"The composition {S}{T} is a linear map from {U} to {V}.",
    f"The standard basis of {R}2 is an orthonormal basis consisting of eigenvectors of {S}.",
    f"A typical element of {R}2 is a point (a, b).",
    "The symbol means \u201cend of proof\u201d.",
])
def test_labels_remarks_and_pointers_define_nothing(sentence):
    assert definition_in(sentence) is None


@pytest.mark.parametrize("sentence,term", [
    # a label's text that describes it (robotics): kept
    ("Impact Phase: When the swing foot contacts the ground", "Impact Phase"),
    ("Active vision: Robots can move their cameras to improve perception", "Active vision"),
    # a pointer in an aside, or with its antecedent in the same text (logic): kept
    ("The sentence on the left-hand side of the conditional (R in this example) is called "
     "the antecedent.", "antecedent"),
    ("In order to know the truth-value of (D \u2194E), for instance, you only need to know "
     "the truth-value of D and the truth-value of E. Connectives that work in this way are "
     "called truth-functional.", "truth-functional"),
    # a definition by its condition, and the first of two names (linear algebra, logic)
    (f"A subset {U} of {V} is called a subspace of {V} if {U} is also a vector space with the "
     f"same additive identity, addition, and scalar multiplication as on {V}.", "subspace"),
    ("A vector space is called finite-dimensional if some list of vectors in it spans the "
     "space.", "finite-dimensional"),
    ("Elements of a vector space are called vectors or points.", "vectors"),
    ("Predicates with n places, for some number n, are called n-place or n-adic.",
     "n-place"),
    # the symbol a term is taken over is a placeholder; a short name keeps its "of the"
    (f"A linear functional on {V} is a linear map from {V} to {F}.", "linear functional"),
    ("A sum of scalar multiples of the vectors in a list is called a linear combination of "
     "the list.", "linear combination"),
    ("The formula that follows the quantifier is called the scope of the quantifier.",
     "scope of the quantifier"),
    # a result number inside a definition that lists its properties is not a proof
    ("A field is a set containing at least two distinct elements called 0 and 1, along with "
     "operations of addition and multiplication satisfying all properties listed in 1.3.",
     "field"),
    (f"A vector space over {R} is called a real vector space.", "real vector space"),
])
def test_definitions_kept_or_newly_read(sentence, term):
    found = definition_in(sentence)
    assert found is not None and found.term == term


def test_a_label_repeated_in_a_made_book_makes_no_card_and_a_term_entry_does(tmp_path):
    from pdf_factory import make_pdf

    pages = [
        f"Buffers hold data between two stages of a pipeline. Readers fill them first.\n\n"
        f"Reminder: Every stage must drain its buffer before the next batch starts number "
        f"{i}.\n\nThe stages run one after another in this chapter." for i in range(3)]
    pages.append("Throughput: The number of items a pipeline finishes in one second.\n\n"
                 "Reminder: Latency and throughput trade against each other in practice.")
    with PdfBook.open(make_pdf(tmp_path / "labels.pdf", pages)) as pdf:
        assert "reminder" in repeated_labels(pdf) and "throughput" not in repeated_labels(pdf)
        assert pdf.plain_text(3).startswith("Throughput:")
        cards = generate(pdf, pdf.book_id, "cards", StudyScope(0, 3)).cards
    fronts = {c.front for c in cards}
    assert "Throughput" in fronts and "Reminder" not in fronts
