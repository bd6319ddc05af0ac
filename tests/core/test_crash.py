"""Native crashes: faulthandler writes them to the log folder; the next start offers them
once (the window's dialog is tested in tests/ui, the command line's message here)."""

from __future__ import annotations

import faulthandler
import subprocess
import sys
import textwrap
from pathlib import Path

from bookreader import cli
from bookreader.crash import ARCHIVE_DIR, take_crash_reports

REPO = Path(__file__).resolve().parents[2]


def crash_a_process(log_dir: Path, process: str) -> int:
    """A real segmentation fault in a child that enabled the crash log."""
    code = textwrap.dedent(f"""
        import faulthandler, sys
        sys.path.insert(0, {str(REPO / 'src')!r})
        from bookreader.crash import enable_crash_log
        enable_crash_log({str(log_dir)!r}, {process!r})
        faulthandler._sigsegv()
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          timeout=60).returncode


def test_a_segfault_is_written_and_offered_once(tmp_path):
    assert crash_a_process(tmp_path, "library") != 0
    reports = take_crash_reports(tmp_path)
    assert len(reports) == 1
    report = reports[0]
    assert report.process == "library"
    assert "Segmentation fault" in report.text and "File" in report.text
    assert "library process stopped unexpectedly" in report.summary()
    assert report.path.parent.name == ARCHIVE_DIR and report.path.is_file()
    assert take_crash_reports(tmp_path) == []  # offered once


def test_the_command_line_reports_an_earlier_crash(tmp_path, capsys):
    data = tmp_path / "data"
    assert crash_a_process(data / "logs", "window") != 0
    assert cli.main(["--data-dir", str(data), "books"]) == 0
    err = capsys.readouterr().err
    assert "window process stopped unexpectedly" in err and "crash-reports" in err
    assert cli.main(["--data-dir", str(data), "books"]) == 0
    assert "stopped unexpectedly" not in capsys.readouterr().err
    faulthandler.enable(file=sys.__stderr__)  # the command line pointed it at its log folder
