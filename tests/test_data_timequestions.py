"""TimeQuestions dev questions (the only shared split) and malformed records."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from temporag.data import timequestions
from temporag.data.errors import DataFormatError, MissingDataError


@pytest.fixture(scope="module")
def dev(shared_data):
    return timequestions.load_questions("dev", shared_data)


def test_dev_counts(dev):
    assert len(dev) == 3_236
    types = Counter(t for q in dev for t in q.types)
    assert types == {"Explicit": 1_302, "Temp.Ans": 1_177, "Ordinal": 587, "Implicit": 296}
    assert {q.split for q in dev} == {"development"}


def test_first_question_and_answers(dev):
    q = dev[0]
    assert (q.id, q.question, q.signals, q.types) == (
        9709,
        "what was disneys first color movie",
        ("ORDINAL",),
        ("Ordinal",),
    )
    (answer,) = q.answers
    assert (answer.qid, answer.text) == ("Q134430", "Snow White and the Seven Dwarfs")
    values = [a for q in dev for a in q.answers if a.answer_type == "Value"]
    assert values and all(a.qid is None and a.text == a.value for a in values)


def test_test_and_train_are_not_shared(shared_data):
    for split in ("test", "train"):
        with pytest.raises(MissingDataError, match=f"{split}.json"):
            timequestions.load_questions(split, shared_data)


def test_unknown_answer_type_names_line(tmp_path):
    good = {
        "Id": 1,
        "Question": "q",
        "Temporal signal": [],
        "Temporal question type": ["Explicit"],
        "Answer": [{"AnswerType": "Value", "AnswerArgument": "1990"}],
    }
    bad = dict(good, Id=2, Answer=[{"AnswerType": "Date", "AnswerArgument": "1990"}])
    path = tmp_path / "dev.json"
    path.write_text("[\n" + json.dumps(good) + ",\n" + json.dumps(bad) + "\n]", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"dev.json line 3: record 1: AnswerType 'Date' is not one of"):
        timequestions.load_questions(questions_file=path)


def test_unknown_question_type(tmp_path):
    rec = {
        "Id": 1,
        "Question": "q",
        "Temporal signal": [],
        "Temporal question type": ["Sometimes"],
        "Answer": [],
    }
    path = tmp_path / "q.json"
    path.write_text(json.dumps([rec]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"q.json line 1: record 0: unknown temporal question type"):
        timequestions.parse_questions(path)
