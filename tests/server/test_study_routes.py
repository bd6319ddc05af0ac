"""``POST /v1/books/{id}/study/...`` against a real ``bookreader serve`` process."""

from __future__ import annotations

import csv
import io

import httpx

from bookreader.core.sentences import key_only


def _post(server, tool, body, key="alice"):
    return httpx.post(f"{server.url}/v1/books/{server.book.book_id}/study/{tool}", json=body,
                      headers={"Authorization": f"Bearer {server.tokens[key]}"}, timeout=300)


def _audit_rows(data_dir):
    from bookreader.core.audit import AuditLog

    with AuditLog(f"sqlite:///{data_dir / 'audit.sqlite3'}") as log:
        return list(log.iter_rows(mode="study"))


def test_cards_are_cited_on_their_pages_and_audited_with_the_key(extractive_server,
                                                                  sample_pdf):
    import fitz

    pages = [0, extractive_server.book.page_count - 1]
    r = _post(extractive_server, "cards", {"pages": pages, "limit": 40})
    assert r.status_code == 200, r.text
    made = r.json()
    assert made["kind"] == "cards" and made["cards"]
    with fitz.open(sample_pdf) as doc:
        for card in made["cards"]:
            cit = card["citation"]
            assert cit["verified"]
            assert key_only(cit["excerpt"]) in key_only(doc[cit["page"]].get_text())
    assert len({c["front"] for c in made["cards"]}) == len(made["cards"])
    rows = [r for r in _audit_rows(extractive_server.data_dir) if r["client_id"] == "alice"]
    assert rows and rows[-1]["mode"] == "study" and rows[-1]["backend"] == "rules"
    # the server's extractive backend quotes and cannot phrase: the rules' fronts stay
    again = _post(extractive_server, "cards", {"pages": pages, "limit": 40, "phrase": True})
    assert again.status_code == 200, again.text
    assert again.json()["cards"] == made["cards"] and again.json()["backend"] == "rules"
    # code cards asked for: the book's pages hold no explained listing, so the same cards,
    # and the audit record says they were asked for
    coded = _post(extractive_server, "cards", {"pages": pages, "limit": 40, "code": True})
    assert coded.status_code == 200, coded.text
    assert coded.json()["cards"] == made["cards"]
    assert any("Code cards were asked for" in n for n in coded.json()["notes"])
    rows = [r for r in _audit_rows(extractive_server.data_dir) if r["client_id"] == "alice"]
    assert rows[-1]["question"].startswith("Study cards with code cards: ")


def test_quiz_summary_and_csv_export(extractive_server):
    body = {"pages": [0, extractive_server.book.page_count - 1]}
    quiz = _post(extractive_server, "quiz", body)
    assert quiz.status_code == 200 and quiz.json()["quiz"]
    summary = _post(extractive_server, "summary", {"chapter": "Reading a Book"})
    assert summary.status_code == 200, summary.text
    assert all(ln["citation"]["verified"] for ln in summary.json()["summary"])
    export = _post(extractive_server, "export", {**body, "format": "csv"})
    assert export.status_code == 200
    assert export.headers["content-disposition"].endswith('cards.csv"')
    rows = list(csv.reader(io.StringIO(export.content.decode("utf-8-sig"))))
    assert rows[0][0] == "front" and len(rows) > 1


def test_bad_requests_are_explained(extractive_server):
    r = _post(extractive_server, "cards", {})
    assert r.status_code == 422 and "pages" in r.json()["error"]
    r = _post(extractive_server, "cards", {"pages": [0, 1], "phrase": "yes"})
    assert r.status_code == 422 and "phrase" in r.json()["error"]
    r = _post(extractive_server, "cards", {"pages": [0, 1], "code": "yes"})
    assert r.status_code == 422 and "code" in r.json()["error"]
    r = _post(extractive_server, "cards", {"pages": [0, 1], "limit": 0})
    assert r.status_code == 422 and "limit" in r.json()["error"]
    r = _post(extractive_server, "poems", {"pages": [0, 1]})
    assert r.status_code == 404
    r = _post(extractive_server, "cards", {"chapter": "No Such Chapter"})
    assert r.status_code in (400, 422) and "outline" in r.json()["error"]
    r = httpx.post(f"{extractive_server.url}/v1/books/{extractive_server.book.book_id}"
                   "/study/cards", json={"pages": [0, 1]})
    assert r.status_code == 401
