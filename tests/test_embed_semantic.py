"""Real MiniLM embeddings (cached, resumable) and the semantic baseline on real KG slices."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import fake_llm
from reference import cosine_top_k
from slices import iraq_visits, kg_slice

from temporag.methods.semantic import (
    SemanticRetriever,
    TripleScores,
    event_scores,
    time_bonus,
    top_events,
    top_of,
)
from temporag.retrieval.embed import Encoder, VectorIndex
from temporag.retrieval.topk import top_k_stable
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


@pytest.mark.parametrize("seed", range(4))
def test_top_events_equals_ranking_every_event_on_the_full_kg(kg, seed):
    # triple scores with many exact ties and near-ties (rounded), so the pruning bound and the tie order
    # (earlier fact first) are both exercised; with and without a named period, at several k
    rng = np.random.default_rng(seed)
    row = np.round(rng.random(kg.n_triples, dtype=np.float32) * 0.6, 3 if seed % 2 else 2).astype(np.float32)
    every = np.arange(len(kg))
    assert kg.by_triple.ids_of(np.array([3, 0, 3])).tolist() == sorted(
        kg.by_triple[3].tolist() * 2 + kg.by_triple[0].tolist()
    )
    scores = TripleScores(row)
    for times in ([], [parse_time("2012-06")], [parse_time("2008"), parse_time("2015-02")]):
        for weight in (0.1, 0.0):
            full = event_scores(kg, scores, every, times, weight)
            for k in (1, 5, 20, 50, 200):
                fast = top_events(kg, scores, times, k, weight)
                assert fast.tolist() == top_k_stable(full, k).tolist(), (times, weight, k)


@pytest.mark.parametrize("seed", range(3))
def test_coarse_cosines_rank_like_the_exact_ones(kg, seed):
    # one question's cosines from a float16 copy are off by up to `error`; the rankings must still equal
    # ranking every event by its exact score. Vectors with entries in {-1, 0, 1} give many exact ties, and
    # the coarse cosines are pushed to the edge of the error bound on purpose.
    import torch

    rng = np.random.default_rng(seed)
    vecs = rng.integers(-1, 2, size=(kg.n_triples, 6)).astype(np.float32)
    vecs[np.abs(vecs).sum(1) == 0, 0] = 1
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    q = vecs[rng.integers(kg.n_triples)] + 0.1 * rng.standard_normal(6).astype(np.float32)
    q /= np.linalg.norm(q)
    every = np.arange(len(kg))
    some = np.sort(rng.choice(len(kg), size=5000, replace=False))
    for times in ([], [parse_time("2012-06")]):
        for k in (1, 10, 50):
            [scores] = TripleScores.for_questions(vecs, q, torch.from_numpy(vecs).to(torch.float16))
            assert scores.error > 0 and np.abs(scores.coarse - vecs @ q).max() <= scores.error
            noise = rng.uniform(-0.99, 0.99, kg.n_triples).astype(np.float32)
            scores.coarse = scores.coarse + noise * scores.error
            fast, fast_some = top_events(kg, scores, times, k), top_of(kg, scores, some, times, k)
            assert np.isnan(scores._exact).mean() > 0.5  # most triples were never scored exactly
            exact = TripleScores(scores.exact(np.arange(kg.n_triples)))  # the same values, all of them
            assert fast.tolist() == top_k_stable(event_scores(kg, exact, every, times, 0.1), k).tolist()
            expected_some = some[top_k_stable(event_scores(kg, exact, some, times, 0.1), k)]
            assert fast_some.tolist() == expected_some.tolist()


def test_time_bonus_marks_facts_in_named_period(kg):
    facts = np.arange(5)
    bonus = time_bonus(kg, facts, [parse_time("2005-01")], weight=0.1)
    assert bonus.tolist() == pytest.approx([0.1] * 5)  # the first facts are on 2005-01-01
    assert time_bonus(kg, facts, [parse_time("2006")]).sum() == 0


def test_semantic_retriever_on_a_real_slice(kg, tmp_cache):
    # the facts of one entity pair: small enough to embed here, real text
    iraq, iran = kg.entity_id["Iraq"], kg.entity_id["Iran"]
    sub = kg_slice(kg, np.flatnonzero((kg.s == iraq) & (kg.o == iran)))
    retriever = SemanticRetriever(sub)
    assert retriever.triple_vectors.shape == (sub.n_triples, 384)
    retrieval = retriever.retrieve(["Who did Iraq host a visit from in 2008?"], k=5, progress=False)
    top = retrieval.ids[0]
    assert len(top) == 5 and retrieval.evidence == "kg_fact" and retrieval.latency_s.shape == (1,)
    # brute force: the best triple's cosine plus the date bonus, ties in file order
    q_vec = retriever.embed_questions(["Who did Iraq host a visit from in 2008?"])[0]
    in_2008 = np.array([sub.date(i).startswith("2008") for i in range(len(sub))])
    scores = (retriever.triple_vectors @ q_vec)[sub.triple_of_fact] + 0.1 * in_2008
    assert top.tolist() == sorted(range(len(sub)), key=lambda i: (-scores[i], i))[:5]
    assert sub.relation_labels[int(sub.r[top[0]])] == "Host a visit"
    assert sub.date(int(top[0])).startswith(
        "2008"
    )  # the date bonus puts the 2008 facts of the best triple first


def test_semantic_pipeline_on_real_questions_with_a_fake_reader(kg, questions, tmp_cache):
    sub = iraq_visits(kg)
    picked = [q for q in questions if q.quid in (3000029, 3000030)]
    retriever = SemanticRetriever(sub)
    llm = fake_llm("['Congress (United States)']")
    records = retriever.pipeline(picked, llm, k=3, progress=False)
    assert [r.quid for r in records] == [3000029, 3000030]
    june = records[0]  # "Who paid a visit to Iraq in June 2011?": the bonus favours June 2011 facts
    assert [sub.date(i)[:7] for i in june.evidence_ids] == ["2011-06"] * 3
    yilmaz = records[1]  # "... Ismet Yilmaz visit Iraq for the first time?": his three visits, in file order
    assert [sub.verbalise(i) for i in yilmaz.evidence_ids] == [
        "Ismet Yilmaz Make a visit Iraq on 2015-03-04",
        "Ismet Yilmaz Make a visit Iraq on 2015-03-06",
        "Ismet Yilmaz Make a visit Iraq on 2015-03-11",
    ]
    assert all(r.answers == ["Congress (United States)"] and r.llm_calls == 1 for r in records)
    assert records[0].prompt_tokens == 100 and llm.backend.calls == 2
    prompt = llm.backend.seen[1][0][-1]["content"]
    assert "Ismet Yilmaz Make a visit Iraq on 2015-03-04" in prompt
