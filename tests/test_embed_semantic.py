"""Real MiniLM embeddings (cached, resumable) and the semantic baseline on real KG slices."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.data.tkg import TemporalKG
from temporag.embed import Encoder, VectorIndex, cosine_top_k
from temporag.methods.semantic import SemanticRetriever, time_bonus, top_k_stable
from temporag.timeutil import parse_time


def test_encoder_real_model_and_cache(tmp_cache):
    enc = Encoder()
    texts = ["Iraq Make a visit Jordan", "Iraq Host a visit Jordan", "Kenya Praise Uganda"]
    first = enc.encode_cached(texts)
    assert first.shape == (3, 384)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    sims = first @ first.T
    assert sims[0, 1] > sims[0, 2]  # paraphrases are closer than unrelated facts
    files = list((tmp_cache / "embeddings").glob("*.npy"))
    assert len(files) == 1
    again = Encoder().encode_cached(texts)  # served from the cache
    assert np.array_equal(first, again)


def test_faiss_matches_numpy():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(500, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = vecs[:7] + 0.01
    scores, ids = VectorIndex(vecs).search(queries, k=5, batch=3)
    for q, row in zip(queries, ids):
        top, _ = cosine_top_k(q, vecs, 5)
        assert row.tolist() == top.tolist()
    assert ids[:, 0].tolist() == list(range(7))


def test_top_k_stable_breaks_ties_by_position():
    scores = np.array([0.5, 0.9, 0.9, 0.1, 0.9])
    assert top_k_stable(scores, 2).tolist() == [1, 2]
    assert top_k_stable(scores, 4).tolist() == [1, 2, 4, 0]


def test_time_bonus_marks_facts_in_named_period(kg):
    facts = np.arange(5)
    bonus = time_bonus(kg, facts, [parse_time("2005-01")], weight=0.1)
    assert bonus.tolist() == pytest.approx([0.1] * 5)  # the first facts are on 2005-01-01
    assert time_bonus(kg, facts, [parse_time("2006")]).sum() == 0


def test_semantic_retriever_on_a_real_slice(kg, tmp_cache):
    # the facts of one entity pair: small enough to embed here, real text
    iraq, iran = kg.entity_id["Iraq"], kg.entity_id["Iran"]
    pick = np.flatnonzero((kg.s == iraq) & (kg.o == iran))
    sub = TemporalKG(
        kg.s[pick], kg.r[pick], kg.o[pick], kg.t_start[pick], kg.t_end[pick], kg.entities, kg.relations
    )
    retriever = SemanticRetriever(sub)
    assert retriever.triple_vectors.shape == (sub.n_triples, 384)
    ranked, latency = retriever.retrieve(["Who did Iraq host a visit from in 2008?"], k=5)
    top = ranked[0]
    assert len(top) == 5 and (latency >= 0).all()
    assert sub.relation_labels[int(sub.r[top[0]])] == "Host a visit"
    # the date bonus puts the 2008 facts of the best triple first
    assert sub.date(int(top[0])).startswith("2008")
