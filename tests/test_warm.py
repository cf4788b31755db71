"""`temporag warm`: the vectors every MultiTQ notebook shares are built up front, then only loaded."""

from __future__ import annotations

import numpy as np
from slices import kg_slice

from temporag import cli
from temporag.retrieval.embed import Encoder, kg_name_vectors, kg_triple_vectors


def test_warm_builds_the_shared_vectors_once(kg, tmp_cache, monkeypatch, capsys):
    iraq = kg.entity_id["Iraq"]
    sub = kg_slice(kg, np.flatnonzero(kg.s == iraq)[:300])
    monkeypatch.setattr("temporag.data.multitq.load_kg", lambda *a, **k: sub)

    assert cli.main(["warm"]) == 0
    assert "fact_vectors" in capsys.readouterr().out
    files = sorted((tmp_cache / "embeddings").glob("*.npy"))
    assert len(files) == 3  # the facts, the entity names, the relation names (one chunk each)

    # what a notebook asks for afterwards comes from those entries: nothing new is written
    enc = Encoder()
    enc.encode = None  # any embedding now would fail
    assert kg_triple_vectors(sub, enc).shape == (sub.n_triples, 384)
    entities, relations = kg_name_vectors(sub, enc)
    assert entities.shape == (len(sub.entity_labels), 384) and relations.shape[0] == len(sub.relation_labels)
    assert sorted((tmp_cache / "embeddings").glob("*.npy")) == files
