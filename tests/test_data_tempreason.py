"""TempReason: shared-half questions per level, the id joins, the TimeBench facts/contexts and corpus."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from temporag.data import tempreason
from temporag.data.errors import DataFormatError, MissingDataError

SHARED_COUNTS = {"l1": 2_000, "l1_future": 1_000, "l2": 2_698, "l3": 2_213}


@pytest.mark.parametrize("level", tempreason.LEVELS)
def test_shared_half_counts(shared_data, level):
    questions = tempreason.load_questions(level, data_dir=shared_data)
    assert len(questions) == SHARED_COUNTS[level]
    assert all(q.level == level for q in questions)
    rows = [q.row for q in questions]
    assert rows == sorted(rows)


def test_first_rows(shared_data):
    l2 = tempreason.load_questions("l2", data_dir=shared_data)
    assert l2[0] == tempreason.Question(
        0, "l2", "Which employer did Jaroslav Pelikan work for in Jan, 1948?", "Valparaiso University"
    )
    l1 = tempreason.load_questions("l1", data_dir=shared_data)
    assert (l1[0].row, l1[0].answer) == (2, "Mar, 1249")


@pytest.mark.parametrize("level", tempreason.JOINED_LEVELS)
def test_ids_join_every_shared_row(shared_data, level):
    questions = tempreason.load_questions(level, data_dir=shared_data)
    ids = tempreason.load_ids(level, data_dir=shared_data)
    assert set(ids) == {q.row for q in questions}
    assert all(i.original_id.startswith(level.upper() + "_Q") for i in ids.values())
    if level == "l2":
        first = ids[0]
        assert (first.original_id, first.date, first.answer_dyg_rag) == (
            "L2_Q457939_P108_0",
            "January 11, 1948",
            "Valparaiso University",
        )
        assert first.doc_key == "L2_Q457939_P108"
    else:
        assert ids[2].original_id == "L3_Q457939_P108_3" and ids[2].date is None


def test_with_context_and_corpus(shared_data):
    l2 = tempreason.load_with_context("l2", data_dir=shared_data)
    l3 = tempreason.load_with_context("l3", data_dir=shared_data)
    assert (len(l2), len(l3)) == (513, 434)
    assert l2[0].row == 30 and l2[0].answers == ("University of Rennes 2 – Upper Brittany",)
    assert l2[0].fact_context.startswith("Dominique Kalifa works for University of Rennes 2")
    shared_rows = {q.row for q in tempreason.load_questions("l2", data_dir=shared_data)}
    assert {item.row for item in l2} <= shared_rows
    docs = tempreason.load_corpus_docs(shared_data)
    assert len(docs) == 1_995
    assert Counter(d.kind for d in docs) == {"context": 222, "fact_context": 1_773}
    keys = {k for d in docs for k in d.keys}
    assert all(item.original_id.rsplit("_", 1)[0] in keys for item in l2 + l3)


def test_holdout_half_is_absent(shared_data):
    with pytest.raises(MissingDataError, match="test_l2.holdout_half"):
        tempreason.load_questions("l2", half="holdout", data_dir=shared_data)
    with pytest.raises(KeyError):
        tempreason.load_ids("l1", data_dir=shared_data)


def test_level_mismatch_and_duplicate_rows(tmp_path):
    path = tmp_path / "tempreason" / "test_l2.shared_half.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {"row": 0, "level": "l2", "question": "q", "answer": "a"},
        {"row": 1, "level": "l3", "question": "q", "answer": "a"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"test_l2.shared_half.jsonl line 2: level 'l3' in a l2 file"):
        tempreason.load_questions("l2", data_dir=tmp_path)
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps(lines[0]) + "\n" + json.dumps(lines[0]) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"dup.jsonl line 2: row 0 appears twice"):
        tempreason.load_questions(questions_file=dup)


def test_bad_corpus_kind(tmp_path):
    path = tmp_path / "tempreason" / "timebench_context" / "corpus_docs.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"doc_id": 0, "kind": "page", "keys": ["L2_Q1_P1"], "text": "t"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(DataFormatError, match=r"corpus_docs.jsonl line 1: kind 'page' is not one of"):
        tempreason.load_corpus_docs(tmp_path)
