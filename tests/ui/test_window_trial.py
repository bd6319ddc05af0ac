"""tools/window_trial.py drives the real window as a student would: the questions go through
the chat panel's input, each card's first citation is followed to its highlighted page, and
every answer is kept with a picture of the window (the bundled sample book, extractive)."""

from __future__ import annotations

import json

from PySide6.QtGui import QImage

from window_trial import find_run, parse_line, read_questions, run_trial, table

SELECTED = ('[select pdf:3 "The first time" ... "called ingestion."] What is reading every page '
            'and building a search index called?')
QUESTIONS = ("# the bundled guide\n\nWhere does the audit log live?\n"
             "  How do I ask about a passage I selected?  \n" + SELECTED + "\n")


def test_trial_asks_through_the_chat_panel_and_follows_citations(make_app, tmp_path):
    qfile = tmp_path / "questions.txt"
    qfile.write_text(QUESTIONS, encoding="utf-8")
    questions = read_questions(qfile)
    assert questions == ["Where does the audit log live?",
                         "How do I ask about a passage I selected?", SELECTED]
    built = []

    def factory(settings):
        built.append(make_app(settings))
        return built[-1]

    out = tmp_path / "trial"
    report = run_trial(questions, out, data_dir=tmp_path / "data", backend="extractive",
                       app_factory=factory, say=lambda _line: None)
    win = built[0].window
    saved = json.loads((out / "answers.json").read_text(encoding="utf-8"))
    assert saved["answers"] == json.loads(json.dumps(report["answers"]))
    assert saved["book"].endswith("bookreader-guide.pdf")
    # Typed into the question box and sent with Enter: one card per question, box emptied.
    cards = win.chat.cards()
    asked = [parse_line(q)[1] for q in questions]
    assert [c.question_label.text() for c in cards] == asked
    assert win.chat.question_edit.toPlainText() == ""
    # The last line selected a passage of page 3 and asked about it from its menu.
    chosen = saved["answers"][-1]
    assert chosen["question"] == asked[-1]
    assert chosen["selection"]["mode"] == "selected" and chosen["selection"]["page_index"] == 2
    selected = " ".join(chosen["selection"]["text"].split())
    assert selected.startswith("The first time") and selected.endswith("called ingestion.")
    assert chosen["badges"][0] == "Selected text"
    assert "ingestion" in chosen["answer_text"].lower()
    assert all(c["page_index"] == 2 for c in chosen["citations"])
    assert win.chat.selection == "" and win.chat.current_mode().value == "book"
    for record, card in zip(saved["answers"][:-1], cards):
        assert record["outcome"] == "answer", record
        assert record["backend"] == "extractive"
        assert record["shown_text"] == card.answer_label.text()
        assert record["badges"][0] == "Whole book" and len(record["badges"]) >= 2
        assert record["citations"] and all(c["excerpt"] for c in record["citations"])
        assert record["total_ms"] > 0 and record["ui_total_ms"] > 0
        # The first chip was clicked: the reader went to its page and highlighted it.
        followed = record["followed"]
        assert followed["page_index"] == record["citations"][0]["page_index"]
        assert followed["highlight_rects"] > 0, record
        image = QImage(record["screenshot"])
        assert (image.width(), image.height()) == (win.width(), win.height())
    # The last click is the one on screen now.
    assert win.reader.citation_highlight()[0] == saved["answers"][-1]["followed"]["page_index"]
    assert win.reader.current_page() == saved["answers"][-1]["followed"]["reader_page"]
    lines = table(saved).splitlines()
    assert len(lines) == 3 + 2 * len(questions)
    assert lines[1].split()[:2] == ["1", "answer"]
    assert "[selected pdf:3] What is reading every page" in lines[5]


def test_a_line_names_the_passage_to_select():
    sel, question = parse_line('[nearby pdf:12 "Recursion is" \u2026 "base case."] Why?')
    assert question == "Why?"
    assert sel is not None and (sel.nearby, sel.page, sel.first, sel.last) == (
        True, 11, "Recursion is", "base case.")
    assert parse_line("  What is a base case?  ") == (None, "What is a base case?")
    words = "A method that calls itself is recursive. The base case ends it .".split()
    assert find_run(words, "calls itself", "base case") == (3, 9)
    assert find_run(words, "ends it", "recursive") is None  # the end comes before the start
    assert find_run(words, "a loop", "base case") is None
