"""TimeQA: human-annotated documents, the human train items, TimeBench contexts; absent files."""

from __future__ import annotations

import json

import pytest

from temporag.data import timeqa
from temporag.data.errors import DataFormatError, MissingDataError


@pytest.fixture(scope="module")
def documents(shared_data):
    return timeqa.load_human_annotated("train", shared_data)


def test_human_annotated_counts(documents):
    assert len(documents) == 320
    questions = timeqa.questions_of(documents)
    assert len(questions) == 1_171
    first = documents[0]
    assert first.index == "/wiki/Newton_D._Baker_House#P466" and first.type == "P466"
    assert questions[0].question == "Who owned the Newton D. Baker House in Washington DC from 1811 to 1827?"
    assert questions[0].spans == (timeqa.AnswerSpan(18, 11, 23, "George Peter"),)
    # every span points at its answer text inside its paragraph
    for doc in documents:
        for q in doc.questions:
            for s in q.spans:
                assert doc.paras[s.para][s.start : s.end] == s.text


@pytest.mark.parametrize("variant", ["easy", "hard"])
def test_human_items_match_the_documents(shared_data, documents, variant):
    items = timeqa.load_human_items(variant, data_dir=shared_data)
    assert len(items) == 1_171
    by_idx = {q.idx: q for q in timeqa.questions_of(documents)}
    assert [i.idx for i in items] == list(by_idx)
    for item in items:
        assert item.targets == by_idx[item.idx].answers
        for target, start, end in zip(item.targets, item.starts, item.ends, strict=True):
            assert item.context[start:end] == target
    hard_first = "Who owned the Newton D. Baker House in Washington DC before Mar 1811?"
    assert items[0].question == (hard_first if variant == "hard" else by_idx[items[0].idx].question)


def test_timebench_contexts(shared_data):
    contexts = timeqa.load_timebench_contexts(shared_data)
    assert len(contexts) == 678
    assert len({link for c in contexts for link in c.links}) == 454
    assert contexts[0].links == ("/wiki/1._FC_Köln",)


def test_held_out_and_absent_files_raise_missing(shared_data):
    with pytest.raises(MissingDataError, match="human_annotated_test"):
        timeqa.load_human_annotated("test", shared_data)
    with pytest.raises(MissingDataError, match="human_test.easy"):
        timeqa.load_human_items("easy", split="test", data_dir=shared_data)
    with pytest.raises(MissingDataError, match="timeqa_hard_500"):
        timeqa.load_timebench_questions("hard", shared_data)
    with pytest.raises(MissingDataError, match="Question.json"):
        timeqa.load_dyg_rag_questions(shared_data)


def test_timebench_questions_format(tmp_path):
    path = tmp_path / "timeqa" / "timebench" / "timeqa_easy_500.jsonl"
    path.parent.mkdir(parents=True)
    rec = {
        "question": "Q?",
        "context": "c",
        "answer": [""],
        "question_type": "in_explicit",
        "idx": "/wiki/X#P39#0",
    }
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (q,) = timeqa.load_timebench_questions("easy", tmp_path)
    assert q.answers == ("",) and q.idx == "/wiki/X#P39#0"


def test_bad_span_paragraph_names_line(tmp_path):
    path = tmp_path / "timeqa" / "human_annotated_train.json"
    path.parent.mkdir(parents=True)
    doc = {
        "index": "/wiki/X#P1",
        "type": "P1",
        "link": "/wiki/X",
        "paras": ["only one"],
        "questions": [["Q?", [{"para": 3, "from": 0, "end": 1, "answer": "o"}]]],
    }
    path.write_text("[\n" + json.dumps(doc) + "\n]", encoding="utf-8")
    with pytest.raises(
        DataFormatError,
        match=r"human_annotated_train.json line 2: record 0: /wiki/X#P1#0: "
        r"answer paragraph 3 is outside 0..0",
    ):
        timeqa.load_human_annotated("train", tmp_path)


def test_bad_item_line(tmp_path):
    path = tmp_path / "items.jsonl"
    good = {
        "idx": "a#0",
        "question": "q",
        "context": "ctx",
        "targets": ["c"],
        "from": [0],
        "end": [1],
        "paragraphs": [{"title": "t", "text": "x"}],
    }
    bad = dict(good, end=[1, 2])
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"items.jsonl line 2: targets/from/end have different lengths"):
        timeqa.parse_items(path)
