"""STAR-RAG query side: sparse PPR vs a dense solve, the Appendix C personalisation, Alg. 1 retrieval
(batched = one at a time, lazy top-k = full scan), the uniform variant, and the Appendix E reader."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from test_star_rag_graph import random_kg

from temporag.methods import star_rag as S
from temporag.methods import star_rag_graph as G
from temporag.methods.semantic import top_k_stable
from temporag.ppr import (
    pagerank_dense,
    pagerank_plain,
    personalized_pagerank,
    personalized_pagerank_many,
    transition_matrix,
)

# -- PPR -----------------------------------------------------------------------------------------------


def _random_graph(seed: int, n: int = 30, m: int = 45):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n - 6, m)  # the last six nodes stay isolated
    v = rng.integers(0, n - 6, m)
    keep = u != v
    return n, u[keep], v[keep], rng.uniform(0.5, 2.0, keep.sum())


@pytest.mark.parametrize("symmetric", [True, False])
def test_ppr_matches_dense_solve_and_sums_to_one(symmetric):
    n, u, v, w = _random_graph(0)
    trans = transition_matrix(n, u, v, w, symmetric=symmetric)
    assert trans.isolated[-6:].all()
    gamma = np.zeros(n)
    gamma[[0, 3, n - 1]] = [0.5, 0.3, 0.2]  # one seed is an isolated node
    pi, iters = personalized_pagerank(trans, gamma, alpha=0.2, tol=1e-12)
    exact = pagerank_dense(trans, gamma, alpha=0.2)
    assert np.allclose(pi, exact, atol=1e-10)
    assert pi.sum() == pytest.approx(1.0, abs=1e-10)
    assert (pi >= 0).all() and iters > 5
    plain, plain_iters = pagerank_plain(trans, gamma, alpha=0.2, tol=1e-5)
    fast, fast_iters = personalized_pagerank(trans, gamma, alpha=0.2, tol=1e-5)
    assert fast_iters == plain_iters  # the isolated-node shortcut gives the same iterates
    assert np.allclose(fast, plain, atol=1e-12)


def test_ppr_batch_equals_single_and_networkx():
    import networkx as nx

    n, u, v, w = _random_graph(1)
    trans = transition_matrix(n, u, v, w, symmetric=True)
    rng = np.random.default_rng(2)
    gammas = np.zeros((n, 5))
    for j in range(5):
        gammas[rng.choice(n, 3, replace=False), j] = rng.uniform(0.1, 1.0, 3)
    batch, iters = personalized_pagerank_many(trans, gammas, tol=1e-9)
    for j in range(5):
        single, it = personalized_pagerank(trans, gammas[:, j], tol=1e-9)
        assert np.allclose(batch[:, j], single, atol=1e-14) and iters[j] == it
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for a, b, x in zip(u, v, w):
        g.add_edge(int(a), int(b), weight=g.get_edge_data(int(a), int(b), {"weight": 0})["weight"] + x)
    pers = {i: gammas[i, 0] for i in range(n)}
    # networkx's alpha is the damping factor: restart 0.2 = damping 0.8; dangling mass follows γ
    ref = nx.pagerank(g, alpha=0.8, personalization=pers, dangling=pers, tol=1e-12, max_iter=1000)
    assert np.allclose(batch[:, 0], [ref[i] for i in range(n)], atol=1e-6)


def test_ppr_float32_stays_within_tolerance():
    n, u, v, w = _random_graph(3)
    trans = transition_matrix(n, u, v, w)
    gamma = np.zeros(n)
    gamma[[1, 2]] = 1
    p64, _ = personalized_pagerank(trans, gamma)
    p32, _ = personalized_pagerank(trans, gamma, dtype=np.float32)
    assert np.abs(p64 - p32).sum() < 1e-5


# -- personalisation (Appendix C) --------------------------------------------------------------------


def test_seed_personalisation_by_hand():
    # nodes 0, 1, 2 with supports of size 4, 2, 1; anchors f0 (rank 1) in nodes 0 and 1, f1 in node 2
    nodes = SimpleNamespace(
        of_fact={0: np.array([0, 1]), 1: np.array([2])},
        sizes=np.array([4, 2, 1]),
    )
    nodes.of_fact = _Index(nodes.of_fact)
    seeds, gamma = S.seed_personalisation(nodes, [0, 1], theta=0.6, beta=0.7)
    assert seeds.tolist() == [0, 1, 2]
    c = np.array([4, 2, 1]) / 7
    p = np.array([1, 1, 0.7]) / 2.7
    s = 0.4 * c + 0.6 * p
    expected = (s + 1 / 3) / (s + 1 / 3).sum()
    assert np.allclose(gamma, expected)
    _, uni = S.seed_personalisation(nodes, [0, 1], mode="uniform")
    assert np.allclose(uni, 1 / 3) and not np.allclose(uni, gamma)
    with pytest.raises(ValueError):
        S.seed_personalisation(nodes, [0], mode="bogus")


class _Index:
    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        return self.d[k]


# -- retrieval (Alg. 1) on a small KG with stub vectors ------------------------------------------------


@pytest.fixture(scope="module")
def toy_star(tmp_path_factory):
    kg = random_kg(11, n_ent=12, n_rel=5, n_facts=400, days=365)
    kg.name = "toy-star"
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(kg.n_triples, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    semantic = SimpleNamespace(triple_vectors=vecs, time_weight=0.1, embed_questions=None)
    params = G.GraphParams(min_support=0.2, k_type=2)
    graph = G.build_rule_graph(kg, params)
    assert graph.mdl.n_selected > 0
    star = S.StarRAG(kg, graph, semantic, k1=5, k2=4, batch_size=3)
    q = rng.normal(size=(7, 16)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    questions = [f"question {i}" + (" in 1970" if i % 2 else "") for i in range(7)]
    return star, q, questions


def test_lazy_top_k_equals_full_scan(toy_star):
    star, q, questions = toy_star
    for vec, text in zip(q, questions):
        sc = star.query(vec, text)
        for k in (1, 5, 17):
            assert sc.top(k).tolist() == top_k_stable(sc.all(), k).tolist()


def test_retrieval_follows_algorithm_1(toy_star):
    star, q, questions = toy_star
    ranked, latency, traces = star.retrieve(questions, q, progress=False)
    assert len(ranked) == 7 and (latency > 0).all()
    for vec, text, tr in zip(q, questions, traces):
        sc = star.query(vec, text)
        anchors = top_k_stable(sc.all(), 5)
        assert tr.anchors.tolist() == anchors.tolist()
        seeds, gamma = star.personalise(anchors)
        pi, _ = star.propagate(seeds, gamma)
        reached = np.flatnonzero(pi > 0)
        rules = reached[top_k_stable(pi[reached], 4)]
        assert tr.rules.tolist() == rules.tolist()
        cands = np.unique(np.concatenate([star.graph.nodes.support[int(r)] for r in rules]))
        assert tr.n_candidates == len(cands)
        allsc = sc.all()
        assert tr.facts.tolist() == cands[top_k_stable(allsc[cands], 5)].tolist()
        one = star.retrieve_one(vec, text)
        assert one.facts.tolist() == tr.facts.tolist()  # batched == one at a time


def test_large_k2_returns_the_anchors(toy_star):
    # when every seed rule is among the top-K2, the re-ranking returns the semantic top-K1 itself
    star, q, questions = toy_star
    _, _, traces = star.retrieve(questions, q, k2=10_000, progress=False)
    for tr in traces:
        assert tr.facts.tolist() == tr.anchors.tolist() and tr.swapped_anchors == 0
    no_rule, _ = star.retrieve_no_rule(questions, q, progress=False)
    assert [r.tolist() for r in no_rule] == [t.anchors.tolist() for t in traces]


def test_uniform_variant_changes_personalisation(toy_star):
    star, q, questions = toy_star
    uni = star.variant(personalisation="uniform")
    _, _, paper = star.retrieve(questions, q, k2=2, progress=False)
    _, _, flat = uni.retrieve(questions, q, k2=2, progress=False)
    assert any(not np.allclose(a.gamma, b.gamma) for a, b in zip(paper, flat))
    for t in flat:
        assert np.allclose(t.gamma, 1 / len(t.seeds))
    assert star.personalisation == "paper"  # the variant is a copy
    sweep = star.sweep(questions, q, [2, 5], [1, 4])
    assert [f.tolist() for f in sweep[(5, 4)]] == [t.facts.tolist() for t in star.retrieve(questions, q)[2]]


def test_retrieval_on_real_multitq(kg, questions):
    """The full rule graph (cached) with real MiniLM vectors: Alg. 1 on a few shared questions."""
    from temporag.methods.semantic import SemanticRetriever

    star = S.build(kg)
    assert star.graph.params == G.GraphParams()
    qs = questions[:12]
    q_vecs = star.semantic.embed_questions([x.question for x in qs])
    ranked, latency, traces = star.retrieve([x.question for x in qs], q_vecs, progress=False)
    sem = SemanticRetriever.retrieve(
        star.semantic, [x.question for x in qs], k=10, q_vecs=q_vecs, progress=False
    ).ids
    for r, t, s in zip(ranked, traces, sem):
        assert len(r) == 10 and t.anchors.tolist() == s.tolist()
        assert t.iterations > 0 and t.n_candidates >= 10


# -- reader (Appendix E's task) ------------------------------------------------------------------------


class FakeBackend:
    model_name = "fake"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.seen = []

    def complete(self, messages, params):
        self.seen.append((messages, params))
        return {
            "choices": [{"message": {"content": self.reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10},
        }


def test_reader_prompt_and_parsing(kg, questions):
    from temporag.llm import LLM

    prompt = S.build_star_prompt("Who visited Iraq?", ["a Make a visit Iraq on 2006-01-05"], "entity")
    user = prompt[1]["content"]
    assert "1. a Make a visit Iraq on 2006-01-05" in user and "Question: Who visited Iraq?" in user
    assert "up to 10" in user and "Thought" not in user
    assert "Example" not in user
    appendix_e = S.build_star_prompt("q", ["e"], one_shot=True, thought=True)[1]["content"]
    assert "Example" in appendix_e and "Thought:" in appendix_e
    assert S.prompt_tokens(prompt) > 50
    backend = FakeBackend("Answer: ['Jack Straw', 'Iraq']")
    llm = LLM(backend=backend, cache=False)
    q = questions[0]
    results = S.read(llm, kg, [q], [np.arange(3)], progress=False)
    assert results[0].answers == ["Jack Straw", "Iraq"]
    assert backend.seen[0][1]["max_tokens"] == S.reader_budget(10)
    h = S.hits(results, [q])
    assert S.clean_candidate("Armed Gang (Thailand) on 2005-01-20", "entity") == "Armed Gang (Thailand)"
    assert S.clean_candidate("2005-01-20", "time") == "2005-01-20"
    assert h[1][0] == float(q.answers[0] == "Jack Straw") and h[10][0] >= h[1][0]


def test_table2_inputs_report_missing_data(shared_data):
    from temporag.data.errors import MissingDataError

    for name in ("CronQuestions", "Forecast"):
        with pytest.raises(MissingDataError):
            S.table2_inputs(name, shared_data)


def test_fig3_reads_like_the_paper():
    # tokens written as the paper writes them (20,453), plain log-axis ticks, and room below the
    # smallest bar so a 2.5 s bar is not a sliver on a log axis
    import matplotlib

    matplotlib.use("Agg")
    from temporag.methods import star_rag_report as R

    fig = R.fig3_tokens_time(
        ["STAR-RAG", "STAR-RAG-no-rule"],
        [516.7, 517.2],
        [2.49, 2.51],
        {"STAR-RAG": 601.0, "MedicalGraphRAG": 20453.0},
        {"STAR-RAG": 20.6, "STAR-RAG-no-rule": 10.5},
    )
    fig.canvas.draw()
    tokens_ax, time_ax = fig.axes
    assert {"517", "601", "20,453"} <= {t.get_text() for t in tokens_ax.texts}
    assert {"2.49", "20.6", "10.5"} <= {t.get_text() for t in time_ax.texts}
    ticks = [t.get_text() for t in tokens_ax.get_yticklabels() if t.get_text()]
    assert "1,000" in ticks and not any("e+" in t or "^" in t for t in ticks), ticks
    assert time_ax.get_ylim()[0] == pytest.approx(2.49 / 2)
