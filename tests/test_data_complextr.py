"""ComplexTR (DyG-RAG's processed test set) on the real shared files, and malformed inputs."""

from __future__ import annotations

import json

import pytest

from temporag.data import complextr
from temporag.data.errors import DataFormatError, MissingDataError


def test_corpus_counts(shared_data):
    docs = complextr.load_corpus(shared_data)
    assert len(docs) == 112
    assert sum(len(d.context) for d in docs) == 1_101_442  # statistics.json total_chars
    assert docs[0].doc_id == 0 and docs[0].title == "Hans KramersHendrik Anthony"


def test_shared_half_questions(shared_data):
    questions = complextr.load_questions(data_dir=shared_data)
    assert len(questions) == 164
    assert questions[0] == complextr.DygQuestion(
        0, "Which employer did Hans Kramers work for in October 1920?", "University of Copenhagen"
    )
    assert all(0 <= q.id < 329 for q in questions)


def test_holdout_half_is_not_shared(shared_data):
    with pytest.raises(MissingDataError, match="complextr"):
        complextr.load_questions("holdout_half", data_dir=shared_data)


def test_demo_corpus(shared_data):
    docs = complextr.load_demo_corpus(shared_data)
    assert len(docs) == 12 and docs[0].title == "Leicester City"


def test_questions_file_overrides_split(tmp_path):
    own = tmp_path / "mine.json"
    own.write_text(json.dumps([{"id": 7, "question": "Who?", "answer": "X"}]), encoding="utf-8")
    assert complextr.load_questions(questions_file=own) == [complextr.DygQuestion(7, "Who?", "X")]


def test_malformed_corpus_names_file_and_line(tmp_path):
    path = tmp_path / "complextr" / "dyg_rag" / "Corpus.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        '[\n {"doc_id": 0, "title": "A", "context": "a"},\n {"doc_id": 1, "title": "B"}\n]', encoding="utf-8"
    )
    with pytest.raises(DataFormatError) as err:
        complextr.load_corpus(tmp_path)
    assert "Corpus.json line 3: record 1: missing field 'context'" in str(err.value)
    assert "DyG-RAG Corpus.json" in str(err.value)


def test_duplicate_question_id(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(
        '[{"id": 1, "question": "a", "answer": "b"},\n{"id": 1, "question": "c", "answer": "d"}]',
        encoding="utf-8",
    )
    with pytest.raises(DataFormatError, match=r"q.json line 2: record 1: id 1 appears twice"):
        complextr.parse_questions(path)


def test_missing_corpus(tmp_path):
    with pytest.raises(MissingDataError, match="Corpus.json"):
        complextr.load_corpus(tmp_path)
