"""``bookreader study cards|quiz|summary|export|due`` on a real ingested PDF, and the
audit record each generated set leaves."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from bookreader import cli
from bookreader.library import Library
from study_support import AFTER, CHAPTERS, LEAD_IN, VOCABULARY, code_listing_pdf, study_book


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    return tmp_path_factory.mktemp("study-cli-data")


@pytest.fixture(autouse=True)
def _shared_embedder(monkeypatch, embedder):
    monkeypatch.setattr(cli, "open_library", lambda settings: Library(settings, embedder=embedder))


@pytest.fixture(scope="module")
def book_id(data_root, embedder, tmp_path_factory):
    spec = study_book(tmp_path_factory.mktemp("pdf") / "study.pdf")
    with Library(cli.Settings.load(data_root), embedder=embedder) as lib:
        return lib.ingest(spec.path).book_id


def run(capsys, data: Path, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cards_for_a_chapter_are_cited_kept_and_audited(capsys, data_root, book_id, embedder):
    code, out, err = run(capsys, data_root, "study", "cards", book_id, "--chapter",
                         "Cells and Energy", "--keep", "--json")
    assert code == 0, err
    made = json.loads(out)
    fronts = {c["front"]: c for c in made["cards"]}
    assert set(VOCABULARY) <= set(fronts)
    assert made["kept"] == len(made["cards"])
    assert all(c["citation"]["verified"] for c in made["cards"])
    assert fronts["catalyst"]["citation"]["section"] == "1.2 Vocabulary"

    with Library(cli.Settings.load(data_root), embedder=embedder) as lib:
        rows = list(lib.audit.iter_rows(mode="study"))
        assert lib.history(book_id) == []  # study sets are not questions in the chat
    row = rows[-1]
    assert row["mode"] == "study" and row["backend"] == "rules"
    assert row["question"].startswith(f"Study cards: {CHAPTERS[0]} (pages 1-")
    assert row["selection_page"] == 0 and row["outcome"] == "answer"
    assert len(row["citations"]) == len(made["cards"])


def test_quiz_and_summary_by_printed_pages(capsys, data_root, book_id):
    code, out, err = run(capsys, data_root, "study", "quiz", book_id, "--pages", "1-3")
    assert code == 0, err
    assert "Answer:" in out and "page " in out and "Fill in the blank" in out
    code, out, err = run(capsys, data_root, "study", "summary", book_id, "--pages", "3-3",
                         "--json")
    assert code == 0, err
    lines = json.loads(out)["summary"]
    assert lines and all(ln["citation"]["page_label"] == "3" for ln in lines)


def test_export_kept_cards_as_csv_and_due_lists_them(capsys, data_root, book_id, tmp_path):
    run(capsys, data_root, "study", "cards", book_id, "--chapter", "Markets", "--keep")
    code, out, err = run(capsys, data_root, "study", "due", book_id, "--json")
    assert code == 0, err
    due = json.loads(out)
    assert due["cards"] >= len(VOCABULARY) and len(due["due"]) == due["cards"]
    target = tmp_path / "cards.csv"
    code, _, err = run(capsys, data_root, "study", "export", book_id, "--format", "csv",
                       "--out", str(target))
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8-sig"))))
    assert {"catalyst", "scarcity"} <= {r["front"] for r in rows}
    assert f"Exported {len(rows)} cards" in err


def test_missing_pages_and_unknown_chapters_are_explained(capsys, data_root, book_id):
    code, _, err = run(capsys, data_root, "study", "cards", book_id)
    assert code == 2 and "--pages A-B" in err
    code, _, err = run(capsys, data_root, "study", "cards", book_id, "--chapter", "Poetry")
    assert code == 2 and "outline" in err


def test_phrase_with_a_model_records_it_and_keeps_the_books_backs(capsys, data_root, book_id):
    code, out, err = run(capsys, data_root, "study", "cards", book_id, "--chapter",
                         "Markets", "--json")
    assert code == 0, err
    rules = json.loads(out)
    code, out, err = run(capsys, data_root, "study", "cards", book_id, "--chapter",
                         "Markets", "--phrase-with", "tiny", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["backend"] == "tiny" and rules["backend"] == "rules"
    assert [c["back"] for c in made["cards"]] == [c["back"] for c in rules["cards"]]
    with Library(cli.Settings.load(data_root)) as lib:
        assert list(lib.audit.iter_rows(mode="study"))[-1]["backend"] == "tiny"


def test_code_cards_only_with_code_and_the_audit_says_so(capsys, tmp_path, embedder):
    data = tmp_path / "data"
    with Library(cli.Settings.load(data), embedder=embedder) as lib:
        book = lib.ingest(code_listing_pdf(tmp_path / "code.pdf")).book_id
    code, out, err = run(capsys, data, "study", "cards", book, "--pages", "1-2", "--json")
    assert code == 0, err
    assert not [c for c in json.loads(out)["cards"] if c["kind"] == "code"]
    code, out, err = run(capsys, data, "study", "cards", book, "--pages", "1-2", "--code",
                         "--json")
    assert code == 0, err
    codes = {c["back"]: c for c in json.loads(out)["cards"] if c["kind"] == "code"}
    assert set(codes) == {LEAD_IN[:-1] + ".", AFTER}
    assert all(c["citation"]["verified"] for c in codes.values())
    assert "print(i)" in codes[LEAD_IN[:-1] + "."]["front"]
    code, out, err = run(capsys, data, "study", "cards", book, "--pages", "1-2", "--code")
    assert code == 0, err
    assert "What does this code do?\n   for i in range(1, 11):" in out
    with Library(cli.Settings.load(data)) as lib:
        questions = [r["question"] for r in lib.audit.iter_rows(mode="study")]
    assert questions[0].startswith("Study cards: ")
    assert questions[-1].startswith("Study cards with code cards: ")
