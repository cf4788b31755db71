"""CronQuestions: the official quintuple KG format (on a fixture: the KG is not staged), the Wikidata
label files and Complex-CronQuestions.  The fixture's facts are made up for the format test."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from temporag.data import cronquestions
from temporag.data.errors import DataFormatError, MissingDataError

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture()
def cron_dir(tmp_path) -> Path:
    """The fixture laid out as the data folder expects (the KG is stored under a non-data name in git)."""
    kg_dir = tmp_path / "cronquestions" / "kg"
    kg_dir.mkdir(parents=True)
    for src in (FIXTURES / "cronquestions" / "kg").iterdir():
        name = "full.txt" if src.name == "full.fixture.tsv" else src.name
        (kg_dir / name).write_bytes(src.read_bytes())
    return tmp_path


def test_fixture_kg_in_official_format(cron_dir):
    kg = cronquestions.load_kg(data_dir=cron_dir)
    assert kg.stats() == {"facts": 5, "entities": 7, "relations": 2, "timestamps": 5}
    assert kg.granularity == "year"
    assert kg.entities == sorted(kg.entities)  # CronKGQA numbers entities in sorted id order
    assert kg.verbalise(0) == "Luca Bucci member of sports team Parma Calcio 1913 (1993–1997)"
    assert kg.verbalise(4).endswith("(1924)")
    years = np.datetime64("1970") + kg.t_end.astype("timedelta64[D]")
    assert str(years[0])[:4] == "1997"
    raw = cronquestions.load_kg(data_dir=cron_dir, labels=False)
    assert raw.verbalise(0).startswith("Q516460 P54 Q2693")


@pytest.mark.parametrize(
    "line, problem",
    [
        ("Q1\tP2\tQ3\t1990", "expected 5 tab-separated fields, got 4"),
        ("Q1\tP2\tQ3\t1990\tnow", "end year 'now' is not an integer"),
        ("Q1\tQ2\tQ3\t1990\t1991", "relation 'Q2' is not a Wikidata P-id"),
        ("Q1\tP2\tQ3\t1995\t1991", "start year 1995 is after end year 1991"),
    ],
)
def test_malformed_kg_line(tmp_path, line, problem):
    path = tmp_path / "full.txt"
    path.write_text("Q1\tP2\tQ3\t1990\t1991\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        cronquestions.parse_kg(path)
    assert f"full.txt line 2: {problem}" in str(err.value)
    assert "start_year<TAB>end_year" in str(err.value)


def test_bce_years(tmp_path):
    path = tmp_path / "full.txt"
    path.write_text("Q1\tP2\tQ3\t-44\t-44\n", encoding="utf-8")
    kg = cronquestions.parse_kg(path)
    assert kg.t_start[0] < 0 and kg.t_start[0] == kg.t_end[0]


def test_kg_is_not_staged(shared_data):
    with pytest.raises(MissingDataError, match="cronquestions"):
        cronquestions.load_kg(data_dir=shared_data)


def test_label_files(shared_data):
    entities = cronquestions.load_entity_text(shared_data)
    relations = cronquestions.load_relation_text(shared_data)
    assert (len(entities), len(relations)) == (125_726, 203)
    assert entities["Q23008452"] == "Ronja von Rönne" and relations["P140"] == "religion"


def test_complex_valid_questions(shared_data):
    questions = cronquestions.load_complex_questions("valid", shared_data)
    assert len(questions) == 5_020
    assert Counter(q.type for q in questions) == {"first_last": 3_433, "before_after": 797, "time_join": 790}
    assert all(isinstance(a, int) for q in questions if q.answer_type == "time" for a in q.answers)
    first = questions[0]
    assert (first.answers, first.entities, first.relations) == (("Q2693",), ("Q516460",), ("P54",))
    assert first.text == "So what was the first team Luca Bucci was playing with?"
    assert dict(first.annotation) == {"head": "Q516460", "adj": "first"}
    labels = cronquestions.load_entity_text(shared_data)
    assert all(e in labels for q in questions for e in q.entities)  # the label file covers every entity


def test_test_split_is_held_out(shared_data):
    with pytest.raises(MissingDataError, match="questions_complex"):
        cronquestions.load_complex_questions("test", shared_data)


def test_time_answer_must_be_a_year(tmp_path):
    rec = {
        "question": "When?",
        "answers": ["1924"],
        "answer_type": "time",
        "template": "t",
        "entities": [],
        "times": [],
        "relations": ["P39"],
        "type": "first_last",
        "annotation": {},
        "uniq_id": 1,
        "paraphrases": [],
    }
    path = tmp_path / "valid.jsonl"
    path.write_text(json.dumps(dict(rec, answers=[1924])) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"valid.jsonl line 2: answers\[0\] should be int, got str"):
        cronquestions.load_complex_questions(questions_file=path)
