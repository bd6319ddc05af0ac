"""A question naming a term of the book is covered: a heading or an index entry of the book,
or a numbered name ("Rule 30"), that a top passage uses word for word; and a name the book
prints with accents ("Barab\u00b4asi", as a PDF extracts it) is no unknown word when typed
without them.  On a fixture PDF ingested into a real Library, and on the chunks of two
evaluation books.
"""

from __future__ import annotations

import pytest

from bookreader.config import Settings
from bookreader.core import retrieval_calibration as rc
from bookreader.core import retrieval_terms as rt
from bookreader.core.chunking import Chunker
from bookreader.core.pdf import PdfBook
from bookreader.core.retrieval_priors import chunk_headings, not_a_topic
from bookreader.core.types import Chunk, Passage
from bookreader.library import Library

from pdf_factory import book_pdf

CHAPTERS = [
    ("1 Cellular Automata", [
        ("1.1 Elementary Automata",
         "An elementary cellular automaton is a row of cells, each on or off. At every time "
         "step each cell looks at itself and its two neighbours and follows a table of eight "
         "entries, so there are 256 possible tables, numbered from 0 to 255."),
        ("1.2 Randomness",
         "Some tables generate patterns that look random. Rule 30 is an example: started "
         "from a single cell that is on, the left side of its pattern is regular but the "
         "centre column passes many statistical tests of randomness."),
    ]),
    ("2 Networks", [
        ("2.1 Growing Graphs",
         "A network model developed by Barab\u00b4asi and Albert grows a graph one node at a "
         "time. Each new node connects to existing nodes with a probability proportional to "
         "their degree, which makes the degree distribution heavy-tailed. On a log-log "
         "scale its tail falls on a straight line: there is a \u201cpower law\u201d relation "
         "between a degree and its probability, and the \u201cslope\u201d is its exponent."),
        ("2.2 Constants in Programs",
         "A value written into a program without a name is called a magic number. Giving it "
         "a name as a constant makes the program easier to read and to change."),
    ]),
    ("Index", [
        ("Index",
         "automaton, 1, 2 degree distribution, 3 magic number, 4 preferential attachment, "
         "3 randomness, 2"),
    ]),
]


@pytest.fixture(scope="module")
def library(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("terms")
    settings = Settings(data_dir=root / "data")
    settings.ensure_dirs()
    spec = book_pdf(root / "complexity.pdf", CHAPTERS)
    with Library(settings, embedder=embedder) as lib:
        book_id = lib.ingest(spec.path).book_id
        yield lib, book_id


def test_a_numbered_name_a_top_passage_uses_is_covered(library):
    lib, book_id = library
    retriever = lib.retriever(book_id)
    r, parts = retriever.explain("What does Rule 30 do?")
    assert parts["form"] == 1.0  # the cosine alone said "not covered" on a real book (0.40)
    assert retriever.is_covered(r), r.confidence
    assert "Rule 30" in r.passages[0].chunk.text


def test_an_index_term_a_top_passage_uses_is_covered(library):
    lib, book_id = library
    retriever = lib.retriever(book_id)
    assert ("magic", "number") in retriever.book_terms  # from the index, not a heading
    r, parts = retriever.explain("How do I get rid of a magic number in my code?")
    assert parts["form"] == 1.0 and retriever.is_covered(r)


def test_a_term_the_book_puts_in_quotation_marks_is_covered(library):
    """No heading or index entry names it, and the cosine alone said "not covered" on a
    real book (0.42): how a book marks a term it introduces, its page text having no
    italics."""
    lib, book_id = library
    retriever = lib.retriever(book_id)
    assert ("power", "law") in retriever.book_terms
    assert not any(len(t) < 2 for t in retriever.book_terms)  # "slope" alone is no term
    r, parts = retriever.explain("What is a power law?")
    assert parts["form"] == 1.0 and retriever.is_covered(r)


def test_a_name_typed_without_the_books_accents_is_known(library):
    lib, book_id = library
    retriever = lib.retriever(book_id)
    _, parts = retriever.explain("How does the Barabasi model grow a network?")
    assert parts["unknown"] == 0.0
    # a specialised word the book never uses is still unknown, and a named term does not
    # make such a question covered
    r, parts = retriever.explain("How does Rule 30 compare with the Nagel-Schreckenberg model?")
    assert parts["unknown"] == 1.0 and parts["form"] == 0.0


def test_unrelated_questions_with_numbers_stay_declined(library):
    lib, book_id = library
    retriever = lib.retriever(book_id)
    for question in ("Which team won the 1966 World Cup final?",
                     "How do I bake bread at 220 degrees?"):
        r, parts = retriever.explain(question)
        assert parts["form"] == 0.0 and not retriever.is_covered(r), (question, r.confidence)


def _passage(text: str) -> Passage:
    return Passage(Chunk("c", "b", 0, text, 0, 0, "1", "1", "", "", 0, len(text)), 0.5, 0.5, 0.0)


def test_fold_accents():
    assert rt.fold_accents("Barab\u00e1si") == "Barabasi"
    assert rt.fold_accents("Barab\u00b4asi and Erd\u02ddos") == "Barabasi and Erdos"
    assert rt.fold_accents("Cauchy\u2013Schwarz") == "Cauchy-Schwarz"
    assert rt.fold_accents("x^2 and `code`") == "x^2 and `code`"  # not between letters


def test_named_terms_need_the_words_in_order_and_a_top_passage_using_them():
    terms = frozenset({("magic", "number"), ("binari", "search")})
    assert rt.named_terms("What is a magic number?", terms) == [("magic", "number")]
    assert rt.named_terms("Is a number ever magic?", terms) == []
    assert rt.named_terms("What does Rule 30 do?", frozenset()) == [("rule", "30")]
    top = [_passage("Rule 30 is an example of a random pattern.")]
    assert rt.names_book_term("What does Rule 30 do?", top, frozenset())
    assert not rt.names_book_term("What does Rule 110 do?", top, frozenset())
    assert not rt.names_book_term("What is a magic number?", top, terms)


def _chunks(eval_dir, embedder, name: str) -> list[Chunk]:
    with PdfBook.open(eval_dir / "books" / f"{name}.pdf") as pdf:
        return list(Chunker(embedder.count_tokens).chunks(pdf.iter_pages(), pdf.book_id))


def test_think_complexity_rule_30_and_its_accented_names(eval_dir, embedder):
    chunks = _chunks(eval_dir, embedder, "computing_thinkcomplexity2")
    terms = rt.book_terms(chunks, not_a_topic, chunk_headings)
    assert ("watt", "strogatz") in {t[:2] for t in terms}  # a heading of the book
    rule = [_passage(c.text) for c in chunks if "Rule 30 is an example" in c.text]
    assert rule and rt.names_book_term("What does Rule 30 do?", rule, terms)
    ba = [c.text for c in chunks if "Barab\u00b4asi" in c.text]
    assert ba and "barabasi" in rt.term_sequence(ba[0])


def test_think_java_index_terms(eval_dir, embedder):
    chunks = _chunks(eval_dir, embedder, "thinkjava2")
    terms = rt.book_terms(chunks, not_a_topic, chunk_headings)
    assert {("magic", "number"), ("binari", "search"), ("stack", "diagram")} <= terms
    question = "What is a magic number and how do I get rid of one with a constant?"
    top = [_passage(c.text) for c in chunks if "magic number" in c.text][:3]
    assert top and rt.names_book_term(question, top, terms)
    # an out-of-scope question of the same field names no term of the book
    assert rt.named_terms("What are sealed classes in Java?", terms) == []


@pytest.mark.parametrize("question,unknown", [
    # a quoted example sentence is the student's own words (logic book)
    ("Why can't sentential logic show that 'All dogs bark; Rex is a dog; so Rex barks' is "
     "valid?", 0.0),
    ("When I say \u201cthe barks of Rex are loud\u201d, is that a sentence?", 0.0),
    # a quoted term is still looked up (programming book)
    ("What is a 'barks' class in Java?", 1.0),
    ("What does Rex barks do?", 1.0),
])
def test_no_unknown_word_is_looked_for_in_a_quoted_example(question, unknown):
    top = [_passage("All dogs are mammals.")]
    found = rc.evidence(question, top, lambda word: word.lower() in {"barks", "rex"})
    assert found.unknown == unknown


def test_a_subject_the_book_never_names_is_unknown(library):
    lib, book_id = library
    retriever = lib.retriever(book_id)
    _, parts = retriever.explain("What are sealed automata?")
    assert parts["unknown"] == 1.0  # "sealed": one word piece, so not specialised
    _, parts = retriever.explain("How do elementary automata work?")
    assert parts["unknown"] == 0.0


@pytest.mark.parametrize("question,subject", [
    ("What is the liar paradox and why is it a problem for logic?", "liar"),
    ("How does fuzzy logic handle statements that are only partly true?", "fuzzy"),
    ("How do I read a Moody chart to find the friction factor in a pipe?", "Moody"),
    ("What does the volatile keyword do?", "volatile"),
    ("Who was Napoleon Bonaparte's first wife?", "Napoleon"),
    ("How do lambda expressions work in Java?", "lambda expressions"),  # the whole subject
    ("What is a p-value, in plain words?", "p-value"),
    ("What does it mean for a sample to be i.i.d.?", ""),  # a pronoun: no subject
    ("What does 'or' mean in logic?", ""),  # a quoted example is no term to look up
    ("Why do harmful mutations stick around in a population?", ""),  # "why": left out
    ("How many rows does a truth table need?", ""),
])
def test_asked_subject_starts_where_the_question_names_its_subject(question, subject):
    from bookreader.core.question_subject import asked_subject

    assert asked_subject(question) == subject


@pytest.mark.parametrize("question", [
    "What is the traffic automaton and why does it look random?",
    "How does fuzzy randomness differ from the patterns of Rule 30?",
    "How do I draw a tree graph of the nodes?",
])
def test_a_question_whose_subject_the_book_never_names_is_declined(library, question):
    # one word piece each ("traffic", "fuzzy", "tree"), so no specialised unknown word, and
    # the subject runs on past where a "What is X?" pattern ends
    lib, book_id = library
    retriever = lib.retriever(book_id)
    retrieval, parts = retriever.explain(question)
    assert parts["unknown"] == 1.0
    assert not retriever.is_covered(retrieval)


@pytest.mark.parametrize("question", [
    "How does an elementary automaton choose the next state of a cell?",
    "What is preferential attachment and why does it make the degree distribution "
    "heavy-tailed?",
    "How do I give a magic number a name in a program?",
])
def test_a_question_whose_subject_the_book_names_is_kept(library, question):
    lib, book_id = library
    retriever = lib.retriever(book_id)
    retrieval, parts = retriever.explain(question)
    assert parts["unknown"] == 0.0
    assert retriever.is_covered(retrieval)


def test_a_hyphenated_word_is_known_when_the_book_uses_its_parts(library):
    # the book writes "growing graph" and "degree distribution", never hyphenated
    lib, book_id = library
    retriever = lib.retriever(book_id)
    retrieval, parts = retriever.explain("How does a growing-graph model connect new nodes?")
    assert parts["unknown"] == 0.0 and retriever.is_covered(retrieval)
    _, parts = retriever.explain("What is the degree-distribution of a growing graph?")
    assert parts["unknown"] == 0.0
    # a part the book never uses still makes the word unknown
    _, parts = retriever.explain("How does a lattice-graph model connect new nodes?")
    assert parts["unknown"] == 1.0


def test_book_uses():
    knows = {"pressur", "driven", "flow", "reachabl", "node", "linkedlist"}.__contains__
    assert rt.book_uses("pressure-driven", knows)
    assert rt.book_uses("reachable-nodes", knows)
    assert rt.book_uses("LinkedList", knows)
    assert not rt.book_uses("module-info", knows)
    assert not rt.book_uses("creeping-flow", knows)
    assert rt.book_uses("the", knows)  # a stop word names nothing


def test_absent_subject_on_physical_ai(eval_dir, embedder):
    from bookreader.core.question_subject import asked_subject

    chunks = _chunks(eval_dir, embedder, "physical_ai_textbook")
    knows = rt.accented_terms(c.text for c in chunks) | {
        t for c in chunks for t in rt.term_sequence(c.text)}
    absent = {q: rt.absent_subject(asked_subject(q), knows.__contains__) for q in (
        "How do hydraulic actuators power heavy robots?",
        "How do underwater robots navigate without GPS?",
        "How do I compute the Zero Moment Point of a biped robot from its center of mass?",
        "What is the inverted pendulum model of bipedal walking?")}
    assert absent == {"How do hydraulic actuators power heavy robots?": True,
                      "How do underwater robots navigate without GPS?": True,
                      "How do I compute the Zero Moment Point of a biped robot from its "
                      "center of mass?": False,
                      "What is the inverted pendulum model of bipedal walking?": False}


def test_absent_subject_on_think_java(eval_dir, embedder):
    from bookreader.core.question_subject import asked_subject

    chunks = _chunks(eval_dir, embedder, "thinkjava2")
    knows = rt.accented_terms(c.text for c in chunks) | {
        t for c in chunks for t in rt.term_sequence(c.text)}
    absent = {q: rt.absent_subject(asked_subject(q), knows.__contains__) for q in (
        "How do lambda expressions work in Java?", "What are sealed classes in Java?",
        "What is a magic number?", "How does a switch statement work, and why do I need break?",
        "What does the volatile keyword do?",
        "What does the extends keyword do, and what is a superclass?")}
    assert absent == {"How do lambda expressions work in Java?": True,
                      "What are sealed classes in Java?": True,
                      "What does the volatile keyword do?": True,
                      "What does the extends keyword do, and what is a superclass?": False,
                      "What is a magic number?": False,
                      "How does a switch statement work, and why do I need break?": False}
