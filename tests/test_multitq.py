"""The MultiTQ loader on the real KG and questions, and its bad-input paths."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from temporag.data import multitq
from temporag.data.errors import DataFormatError, MissingDataError
from temporag.timeutil import day_of, iso_day


def test_kg_counts_match_star_rag_table1(kg):
    # STAR-RAG Table 1, MultiTQ row
    assert kg.stats() == {"facts": 461_329, "entities": 10_488, "relations": 251, "timestamps": 4_017}
    assert kg.n_triples == 166_760
    assert iso_day(int(kg.t_start.min())) == "2005-01-01"
    assert iso_day(int(kg.t_start.max())) == "2015-12-31"


def test_kg_first_facts_and_quoted_names(kg):
    assert kg.entities[kg.s[0]] == "Abdul_Kalam"
    assert kg.relations[kg.r[1]] == "Make_statement"
    assert kg.verbalise(1) == "Abdul Kalam Make statement Swraj Paul on 2005-01-01"
    # CSV quoting is undone: a name with embedded quotes is read as entity2id spells it
    quoted = [e for e in kg.entities if '"' in e]
    assert 'Nicholas_"Nick"_Xenophon' in quoted
    assert len(kg.by_entity[kg.entity_id['Nicholas_"Nick"_Xenophon']]) > 0


def test_official_splits(kg):
    assert len(kg.split("train")) == 322_958
    assert len(kg.split("valid")) == 69_224
    assert len(kg.split("test")) == 69_147
    assert iso_day(int(kg.t_start[kg.split("train")[-1]])) == "2012-08-06"
    assert iso_day(int(kg.t_start[kg.split("valid")[0]])) == "2012-08-07"


def test_indexes_agree_with_columns(kg):
    e = kg.entity_id["Iraq"]
    facts = kg.by_entity.many([e])
    assert np.all((kg.s[facts] == e) | (kg.o[facts] == e))
    assert len(facts) == int(((kg.s == e) | (kg.o == e)).sum())
    r = kg.relation_id["Make_a_visit"]
    assert np.array_equal(np.sort(kg.by_relation[r]), np.flatnonzero(kg.r == r))
    in_2010 = kg.facts_between(day_of("2010-01-01"), day_of("2010-12-31"))
    assert np.all(kg.t_start[in_2010] >= day_of("2010-01-01"))
    assert len(in_2010) == int(
        ((kg.t_start >= day_of("2010-01-01")) & (kg.t_start <= day_of("2010-12-31"))).sum()
    )


def test_questions_shared_sample(questions):
    assert len(questions) == 954
    counts = {}
    for q in questions:
        counts[q.qtype] = counts.get(q.qtype, 0) + 1
    assert counts == {
        "equal": 315,
        "first_last": 192,
        "before_after": 185,
        "before_last": 107,
        "after_first": 96,
        "equal_multi": 59,
    }
    assert sum(q.answer_type == "entity" for q in questions) == 673
    assert questions[0].quid == 3000000 and questions[0].answers == ("Jack Straw",)


def test_every_entity_answer_is_a_kg_entity(kg, questions):
    for q in questions:
        if q.answer_type == "entity":
            assert all(a in kg.label_to_entity for a in q.answers), q


def test_malformed_kg_names_file_and_line(tmp_path):
    bad = tmp_path / "full.txt"
    bad.write_text("A\tvisit\tB\t2005-01-01\r\nA\tvisit\tB\r\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        multitq.parse_kg_file(bad)
    assert "full.txt line 2" in str(err.value) and "expected 4 tab-separated fields, got 3" in str(err.value)


def test_bad_date_in_gzip_kg(tmp_path):
    bad = tmp_path / "full.txt.gz"
    with gzip.open(bad, "wt", encoding="utf-8", newline="") as f:
        f.write("A\tvisit\tB\t2005-01-01\r\nA\tvisit\tB\t2005-13-01\r\n")
    with pytest.raises(DataFormatError, match=r"line 2: bad date '2005-13-01'"):
        multitq.parse_kg_file(bad)


def test_unknown_entity_against_id_map(tmp_path):
    bad = tmp_path / "full.txt"
    bad.write_text("A\tvisit\tZ\t2005-01-01\r\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="line 1: entity 'Z' is not in the entity2id map"):
        multitq.parse_kg_file(bad, entities=["A", "B"], relations=["visit"])


def test_malformed_questions(tmp_path):
    bad = tmp_path / "q.json"
    bad.write_text('[{"quid": 1, "question": "x?"}]', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"record 0 lacks field"):
        multitq.load_questions(questions_file=bad)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n{"quid": 1,\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"broken.json line \d+: invalid JSON"):
        multitq.load_questions(questions_file=broken)


def test_missing_dataset_says_how_to_fix(tmp_path):
    with pytest.raises(MissingDataError, match="TEMPORAG_DATA"):
        multitq.load_kg(tmp_path)
