"""``bench/rule_counts.py`` counts regular expressions, word lists and thresholds by
reading the code's syntax tree, so text in comments and docstrings is never counted."""

from __future__ import annotations

from pathlib import Path

from bench_modules import load_bench


def _load():
    return load_bench("rule_counts.py")


SOURCE = '''"""re.compile("in a docstring") is not a rule."""
import re

# re.search("in a comment") is not a rule either
_A = re.compile(r"\\bx\\b")
MIN_SHARE = 0.5
MAX_WORDS = 30
_NEG = frozenset({"not", "no", "never", "none", "nor"})
_FEW = ("a", "b")
_SPLIT = "one two three four five six".split()


class Rules:
    LIMIT = 3
    WORDS = ["w1", "w2", "w3", "w4", "w5"]

    def check(self, text):
        return re.sub("a", "b", text) and re.match("c", text)
'''


def test_counts_rules_in_code_not_in_comments(tmp_path: Path):
    bench = _load()
    core = tmp_path / "core"
    (core / "llm").mkdir(parents=True)
    (core / "rules.py").write_text(SOURCE, encoding="utf-8")
    (core / "pdf.py").write_text('import re\nX = re.compile("p")\n', encoding="utf-8")
    (core / "llm" / "extractive.py").write_text('import re\nre.findall("y", "")\n',
                                                encoding="utf-8")
    (core / "llm" / "claude.py").write_text('import re\nre.findall("z", "")\n',
                                            encoding="utf-8")
    result = bench.counts(core)
    rules = result["modules"]["rules.py"]
    assert rules["regexes"] == 3
    assert rules["word_lists"] == 3 and rules["words"] == 5 + 6 + 5
    assert rules["thresholds"] == 3
    # The PDF reader and a backend are not answering code; the extractive backend is.
    assert sorted(result["modules"]) == ["llm/extractive.py", "rules.py"]
    assert result["total"]["regexes"] == 4


def test_counts_the_real_answering_code():
    bench = _load()
    result = bench.counts()
    assert result["total"]["modules"] >= 10
    assert result["total"]["regexes"] > 0
    assert "answering.py" in result["modules"]
