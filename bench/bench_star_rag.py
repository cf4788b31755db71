"""STAR-RAG benchmarks: cold rule-graph build on the full MultiTQ KG (time, peak RSS), cached load,
retrieval latency per question (embedding excluded), and sparse PPR vs networkx.pagerank.

Targets: cold build ≤ 10 min and ≤ 8 GB peak RSS; retrieval p50 ≤ 20 ms per question.
The build is measured first, in a fresh process, so the peak RSS it reports is the KG plus the build.
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np

from temporag.cache import save_tree
from temporag.data import multitq
from temporag.methods import star_rag
from temporag.methods.star_rag.graph import GRAPH_TYPES

BUILD_BUDGET_S = 600
RSS_BUDGET_MB = 8 * 1024
LATENCY_P50_MS = 20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    kg = multitq.load_kg()
    params = star_rag.GraphParams()
    print(f"parameters: {params.to_dict()}")
    t0 = time.perf_counter()
    graph = star_rag.build_rule_graph(kg, params)
    cold = time.perf_counter() - t0
    rss_build = peak_rss_mb()
    st = graph.stats()
    print(
        f"rule graph, cold build on {len(kg):,} facts: {cold:.1f} s "
        f"(labels {graph.timings['labels']:.1f} s, nodes {graph.timings['nodes']:.1f} s, "
        f"candidate edges + spans {graph.timings['candidate_edges']:.1f} s, "
        f"MDL {graph.timings['mdl']:.1f} s); "
        f"peak RSS {rss_build:.0f} MB"
    )
    print(
        f"  {st['labels_in_use']} labels, {st['rule_nodes']:,} rule nodes, "
        f"{st['hamming1_pairs']:,} Hamming-1 pairs, {st['candidate_edges_with_spans']:,} with spans, "
        f"{st['selected_edges']:,} selected by MDL"
    )
    # so the load below (and the notebook) reuse it
    save_tree(star_rag.graph_cache_path(kg, params), graph, GRAPH_TYPES)
    t0 = time.perf_counter()
    cached = star_rag.load_or_build(kg, params)
    print(f"rule graph, cached load: {time.perf_counter() - t0:.2f} s")
    assert np.array_equal(cached.mdl.selected, graph.mdl.selected)
    del graph

    star = star_rag.build(kg, params)
    questions = multitq.load_questions()
    texts = [q.question for q in questions]
    q_vecs = star.semantic.embed_questions(texts)
    star.retrieve(texts[:64], q_vecs=q_vecs[:64], progress=False)  # warm-up
    retrieval = star.retrieve(texts, q_vecs=q_vecs, progress=False)
    latency, traces = retrieval.latency_s, retrieval.traces
    no_rule = star.variant(use_rules=False).retrieve(texts, q_vecs=q_vecs, progress=False).latency_s
    p50, p95 = np.median(latency) * 1e3, np.percentile(latency, 95) * 1e3
    print(
        f"STAR-RAG retrieval per question ({len(texts)} questions, batches of {star.batch_size}, "
        f"embedding excluded): p50 {p50:.1f} ms, p95 {p95:.1f} ms; "
        f"PPR iterations median {np.median([t['ppr_iterations'] for t in traces]):.0f}, "
        f"candidates median {np.median([t['candidates'] for t in traces]):,.0f}"
    )
    print(
        f"no-rule (semantic) retrieval per question, same scoring: p50 {np.median(no_rule) * 1e3:.1f} ms, "
        f"p95 {np.percentile(no_rule, 95) * 1e3:.1f} ms"
    )
    single = star.variant(batch_size=1)
    one = single.retrieve(texts[:100], q_vecs=q_vecs[:100], progress=False).latency_s
    print(
        f"STAR-RAG one question at a time (100 questions): p50 {np.median(one) * 1e3:.1f} ms, "
        f"p95 {np.percentile(one, 95) * 1e3:.1f} ms"
    )

    import networkx as nx

    u, v = star.graph.edges
    w = star.graph.edge_weights(star.edge_weight)
    g = nx.Graph()
    g.add_nodes_from(range(len(star.graph.nodes)))
    g.add_weighted_edges_from(zip(u.tolist(), v.tolist(), w.tolist()))
    ours, theirs = [], []
    for text, vec in zip(texts[:5], q_vecs[:5]):
        walk = star.trace_one(vec, text)
        t0 = time.perf_counter()
        star.propagate(walk.seeds, walk.gamma)
        ours.append(time.perf_counter() - t0)
        pers = dict(zip(walk.seeds.tolist(), walk.gamma.tolist()))
        t0 = time.perf_counter()
        nx.pagerank(g, alpha=1 - star.alpha, personalization=pers, dangling=pers, tol=1e-5 / len(g))
        theirs.append(time.perf_counter() - t0)
    print(
        f"one PPR on the rule graph: scipy.sparse {np.median(ours) * 1e3:.1f} ms vs networkx.pagerank "
        f"{np.median(theirs) * 1e3:.0f} ms ({np.median(theirs) / np.median(ours):.0f}× faster)"
    )
    print(f"peak RSS (whole benchmark): {peak_rss_mb():.0f} MB")
    ok_build = cold <= BUILD_BUDGET_S and rss_build <= RSS_BUDGET_MB
    print(
        f"targets: build ≤ {BUILD_BUDGET_S} s and ≤ {RSS_BUDGET_MB} MB: {'met' if ok_build else 'MISSED'}; "
        f"retrieval p50 ≤ {LATENCY_P50_MS} ms batched: {'met' if p50 <= LATENCY_P50_MS else 'MISSED'}, "
        f"one question at a time: {'met' if np.median(one) * 1e3 <= LATENCY_P50_MS else 'MISSED'} "
        "(absolute times: meaningful on an idle machine only)"
    )
    return 0 if ok_build else 1


if __name__ == "__main__":
    sys.exit(main())
