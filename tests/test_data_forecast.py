"""ForecastTKGQuestions ICEWS21 as the kit's TemporalKG, its mappings, and zrLLM's files."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.data import forecast
from temporag.data.errors import DataFormatError, MissingDataError
from temporag.timeutil import iso_day


@pytest.fixture(scope="module")
def kg(shared_data):
    return forecast.load_kg(data_dir=shared_data)


@pytest.fixture(scope="module")
def zrllm(shared_data):
    return forecast.load_zrllm_kg(shared_data)


def _keys(kg, ent_map=None, rel_map=None) -> np.ndarray:
    s, r, o = kg.s, kg.r, kg.o
    if ent_map is not None:
        s, o, r = ent_map[s], ent_map[o], rel_map[r]
    return ((s.astype(np.int64) * 300 + r) * 30_000 + o) * 100_000 + kg.t_start


def test_mappings(shared_data):
    maps = forecast.load_mappings(shared_data)
    assert (len(maps.entities), len(maps.relations), len(maps.dates)) == (20_575, 253, 243)
    assert maps.entities[0] == "'Ndrangheta" and maps.relations[0] == "Abduct, hijack, or take hostage"
    assert maps.dates[0] == "2021-01-01" and maps.dates[-1] == "2021-08-31"
    assert maps.wd_entity_text["Q1"] == "10 Downing Street" == maps.entities[1]
    assert len(maps.wd_relation_text) == 253


def test_kg_splits_and_dates(kg):
    # valid.txt has 43,033 facts (its last line has no newline, so `wc -l` says 43,032)
    assert {k: b - a for k, (a, b) in kg.splits.items()} == {
        "train": 247_764,
        "valid": 43_033,
        "test": 39_836,
    }
    assert kg.stats() == {"facts": 330_633, "entities": 20_575, "relations": 253, "timestamps": 243}
    valid, test = kg.split("valid"), kg.split("test")
    assert (iso_day(kg.t_start[valid].min()), iso_day(kg.t_start[valid].max())) == (
        "2021-07-01",
        "2021-07-31",
    )
    assert (iso_day(kg.t_start[test].min()), iso_day(kg.t_start[test].max())) == ("2021-08-01", "2021-08-31")
    assert iso_day(kg.t_start[kg.split("train")].max()) == "2021-06-30"
    assert kg.verbalise(int(valid[0])).endswith("on 2021-07-01")
    assert len(np.unique(kg.r[kg.split("train")])) == 130  # the stand-in train lacks 123 relations


def test_zrllm_split(zrllm):
    assert {k: b - a for k, (a, b) in zrllm.splits.items()} == {
        "train": 247_764,
        "valid": 77_195,
        "test": 1_395,
    }
    assert (zrllm.n_entities, zrllm.n_relations) == (18_205, 253)
    seen = set(np.unique(zrllm.r[zrllm.split("train")]).tolist())
    unseen = set(np.unique(zrllm.r[zrllm.split("test")]).tolist())
    assert len(seen) == 130 and len(unseen) == 123 and not seen & unseen


def test_zrllm_facts_decode_into_forecasttkgqa(kg, zrllm):
    ent_map = np.array([kg.entity_id[name] for name in zrllm.entities])
    rel_map = np.array([kg.relation_id[name] for name in zrllm.relations])
    z_keys = _keys(zrllm, ent_map, rel_map)
    f_keys = _keys(kg)
    z_train, f_train = zrllm.split("train"), kg.split("train")
    assert np.array_equal(z_keys[z_train], f_keys[f_train])  # the derived train file is a pure re-encoding
    later = np.concatenate([zrllm.split("valid"), zrllm.split("test")])
    assert len(later) == 78_590
    assert np.isin(z_keys[later], f_keys[np.concatenate([kg.split("valid"), kg.split("test")])]).all()


def test_relation_explanations(shared_data):
    explanations = forecast.load_zrllm_relation_explanations(shared_data)
    assert len(explanations) == 253 and explanations["Threaten"].startswith("This relation signifies")


def test_bad_hour_and_out_of_range_id(tmp_path):
    path = tmp_path / "valid.txt"
    path.write_text("1\t2\t3\t48\t-1\n\n1\t2\t3\t50\t-1\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"valid.txt line 3: hour 50 is not a multiple of 24"):
        forecast.parse_facts(path, 10, 10, 10)
    path.write_text("1\t2\t3\t48\t-1\n1\t2\t99\t48\t-1\n", encoding="utf-8")
    with pytest.raises(
        DataFormatError, match=r"valid.txt line 2: object id 99 is outside the id map \(0..9\)"
    ):
        forecast.parse_facts(path, 10, 10, 10)
    path.write_text("1\t2\t3\t48\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"valid.txt line 1: expected 5 tab-separated fields, got 4"):
        forecast.parse_facts(path, 10, 10, 10)


def test_missing_train_stand_in(tmp_path, shared_data):
    for name in (
        "relation2id.txt",
        "entity2id.txt",
        "ts2id.txt",
        "wd_id2entity_text.txt",
        "wd_id2relation_text.txt",
    ):
        target = tmp_path / forecast.ROOT / "mapping" / (name + ".gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(shared_data / forecast.ROOT / "mapping" / (name + ".gz"))
    with pytest.raises(MissingDataError, match="train.forecasttkgqa_ids"):
        forecast.load_kg(data_dir=tmp_path)
