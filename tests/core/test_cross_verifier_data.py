"""The public entailment / paraphrase loaders of tools/cross_verifier_data.py.

Written in the sets' own file formats (invented sentences, not the sets' text): labels
map to supported / unsupported, tokenized text reads as prose, the premise stays in its
padded context, and a missing directory or file is skipped with a note.
"""

from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.environ["BOOKREADER_TEST_TOOLS"])

import cross_verifier_data as data  # noqa: E402

PAWS = [
    "id\tsentence1\tsentence2\tlabel",
    "1\tThe Lorn River is a tributary of the Ashby River in Norway .\t"
    "The Ashby River is a tributary of the Lorn River in Norway .\t0",
    "2\tIn 1990 , the school moved to `` Green Hall '' ( the old library ) .\t"
    "The school moved to `` Green Hall '' , the old library , in 1990 .\t1",
    "3\tMaria Olsen was born in Bergen and grew up in Oslo .\t"
    "Maria Olsen was born in Oslo and grew up in Bergen .\t0",
    "4\tThe bridge was finished in 1921 by the city 's engineers .\t"
    "The city 's engineers finished the bridge in 1921 .\t1",
]


@pytest.fixture
def xdata(tmp_path):
    files = {
        "paws/dev.tsv": "\n".join(PAWS) + "\n",
        "scitail/scitail_1.0_train.tsv":
            "Copper conducts electricity well because its electrons move freely.\t"
            "Copper is a good conductor of electricity.\tentails\n"
            "Copper is used in wires and pipes.\tCopper is a poor conductor of heat.\tneutral\n",
        "sick/SICK_train.txt":
            "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
            "1\tA dog is running on the beach\tAn animal is running\t4.2\tENTAILMENT\n"
            "2\tA dog is running on the beach\tNo dog is running\t3.1\tCONTRADICTION\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_paws_pairs_are_labelled_and_read_as_prose(xdata):
    pairs = data.paws(xdata, 10, random.Random(0))
    assert len(pairs) == 4 and sum(p.label for p in pairs) == 2
    for p in pairs:
        assert p.kind == ("paraphrase" if p.label else "swapped")
        assert " ," not in p.claim and "``" not in p.claim and " ." not in p.claim
    assert any('"Green Hall" (the old library)' in p.context + p.claim for p in pairs)
    # the other sentence of the pair is in the (possibly padded) context
    rows = [tuple(data.detokenize(x) for x in r.split("\t")[1:3]) for r in PAWS[1:]]
    for p in pairs:
        assert any((a in p.context and p.claim == b) or (b in p.context and p.claim == a)
                   for a, b in rows)

def test_padding_never_adds_a_sentence_about_the_claim():
    pool = ["Maria Olsen was born in Bergen.", "Maria Olsen grew up in Oslo.",
            "The bridge was finished in 1921.", "Copper conducts electricity."]
    for seed in range(20):
        ctx = data._padded(pool[0], "Maria Olsen was born in Oslo.", pool, random.Random(seed))
        assert pool[0] in ctx and pool[1] not in ctx


def test_scitail_and_sick_labels(xdata):
    sci = data.scitail(xdata, 10, random.Random(0))
    assert sorted((p.kind, p.label) for p in sci) == [("entails", True), ("neutral", False)]
    sick = data.sick(xdata, 10, random.Random(0))
    assert sorted((p.kind, p.label) for p in sick) == [("contradiction", False),
                                                       ("entailment", True)]
    assert all(p.claim.endswith(".") and p.claim[0].isupper() for p in sick)


def test_missing_data_is_skipped_with_a_note(tmp_path, capsys, monkeypatch):
    assert data.paws(tmp_path, 10, random.Random(0)) == []
    assert data.scitail(None, 10, random.Random(0)) == []
    assert "PAWS" in capsys.readouterr().err
    monkeypatch.delenv(data.XDATA_ENV, raising=False)
    assert data.xdata_dir(None) is None
    assert data.XDATA_ENV in capsys.readouterr().err
    monkeypatch.setenv(data.XDATA_ENV, str(tmp_path))
    assert data.xdata_dir(None) == tmp_path
