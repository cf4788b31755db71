"""Caches that heal: a cut, garbled or zeroed entry is logged with its path, removed and rebuilt.

Real entries are corrupted: an embedding chunk of real MultiTQ relation names, and the STAR-RAG rule
graph of a real MultiTQ slice (through ``load_or_build``, which goes through ``cache.load_pickle``).
"""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import pytest

from temporag.cache import CacheEntryError, load_pickle, save_npy, sidecar_path
from temporag.data.tkg import TemporalKG


@pytest.fixture()
def encoder(tmp_cache):
    from temporag.embed import Encoder

    return Encoder()


def _chunk(tmp_cache):
    files = sorted((tmp_cache / "embeddings").glob("*.npy"))
    assert len(files) == 1, files
    return files[0]


def _cut(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garble(path):
    data = bytearray(path.read_bytes())
    data[-64:] = b"\x7f" * 64  # same size, same header, different floats
    path.write_bytes(bytes(data))


def _garbage(path):
    path.write_bytes(b"this is not an array")


def _zeros_legacy(path):
    # an all-zeros chunk of the right shape written before hashes were kept: only its norms betray it
    arr = np.load(path)
    sidecar_path(path).unlink()
    with open(path, "wb") as f:
        np.save(f, np.zeros_like(arr))


def _zeros_hashed(path):
    save_npy(path, np.zeros_like(np.load(path)))  # hash matches, the content does not


@pytest.mark.parametrize("corrupt", [_cut, _garble, _garbage, _zeros_legacy, _zeros_hashed])
def test_embedding_chunk_heals(kg, encoder, tmp_cache, caplog, corrupt):
    texts = kg.relation_labels[:40]
    first = encoder.encode_cached(texts)
    path = _chunk(tmp_cache)
    corrupt(path)
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        again = encoder.encode_cached(texts)
    assert np.allclose(again, first, atol=1e-5)
    assert f"cache entry {path} is invalid" in caplog.text and "rebuilt" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):  # the rebuilt entry is trusted again
        assert np.allclose(encoder.encode_cached(texts), first, atol=1e-5)
    assert caplog.text == ""
    assert sidecar_path(path).exists()


def test_legacy_embedding_chunk_is_adopted_without_re_embedding(kg, encoder, tmp_cache, monkeypatch):
    texts = kg.relation_labels[:40]
    first = encoder.encode_cached(texts)
    path = _chunk(tmp_cache)
    sidecar_path(path).unlink()  # as written by the kit before sidecars existed

    def no_encoding(*args, **kwargs):
        raise AssertionError("a valid legacy chunk must be loaded, not re-embedded")

    monkeypatch.setattr(encoder, "encode", no_encoding)
    assert np.array_equal(encoder.encode_cached(texts), first)
    assert sidecar_path(path).read_text().strip() == hashlib.sha256(path.read_bytes()).hexdigest()


# -- the STAR-RAG rule graph (a pickle) ----------------------------------------------------------------


@pytest.fixture()
def slice_kg(kg) -> TemporalKG:
    ents = [kg.entity_id[e] for e in ("Iran", "Iraq", "Oman", "Qatar", "China")]
    pick = np.flatnonzero(np.isin(kg.s, ents) & np.isin(kg.o, ents))[:400]
    return TemporalKG(
        kg.s[pick], kg.r[pick], kg.o[pick], kg.t_start[pick], kg.t_end[pick], kg.entities, kg.relations
    )


def _graph(slice_kg):
    from temporag.methods.star_rag import GraphParams, load_or_build

    return load_or_build(slice_kg, GraphParams(min_support=0.6, k_type=2))


def _pickle(tmp_cache):
    files = sorted((tmp_cache / "star_rag").glob("*.pkl"))
    assert len(files) == 1, files
    return files[0]


@pytest.mark.parametrize("corrupt", [_cut, _garble, _garbage])
def test_rule_graph_pickle_heals(slice_kg, tmp_cache, caplog, corrupt):
    first = _graph(slice_kg)
    path = _pickle(tmp_cache)
    corrupt(path)
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        rebuilt = _graph(slice_kg)
    assert rebuilt.timings["loaded_from_cache"] == 0.0  # rebuilt, not a crash
    assert np.array_equal(rebuilt.mdl.selected, first.mdl.selected)
    assert f"cache entry {path} is invalid" in caplog.text
    assert _graph(slice_kg).timings["loaded_from_cache"] == 1.0


def test_legacy_rule_graph_pickle_garbled_inside_is_removed_with_a_clear_error(slice_kg, tmp_cache):
    first = _graph(slice_kg)
    path = _pickle(tmp_cache)
    sidecar_path(path).unlink()
    data = bytearray(path.read_bytes())
    data[2:200] = b"\x00" * 198  # framing intact (PROTO first, STOP last), content garbled
    path.write_bytes(bytes(data))
    with pytest.raises(CacheEntryError, match="run again to rebuild it") as info:
        load_pickle(path)
    assert str(path) in str(info.value) and not path.exists()
    assert np.array_equal(_graph(slice_kg).mdl.selected, first.mdl.selected)


def test_legacy_rule_graph_pickle_is_adopted(slice_kg, tmp_cache):
    _graph(slice_kg)
    path = _pickle(tmp_cache)
    sidecar_path(path).unlink()
    assert _graph(slice_kg).timings["loaded_from_cache"] == 1.0
    assert sidecar_path(path).exists()
