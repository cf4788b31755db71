"""The numbers behind STAR-RAG's step-by-step sections, computed from what a cell already has: how the
labelling knobs size the rule graph, its candidate edges and MDL under other null windows, the
statistics a run records, one question's anchors (Alg. 1 line 8), and answer recall, retrieval
statistics and Fig. 5's recall grid on every selected question (LLM-free).

The reader's tables (Tables 2–4, Figs. 3 and 5 with the reader) are computed in :mod:`.paper_tables`, the
released code taken apart in :mod:`.code_tables`; :mod:`.report` draws and formats them all and
:mod:`.record` writes the numbers into the run's results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods.base import Retrieval
from temporag.methods.star_rag.graph import RuleGraph
from temporag.methods.star_rag.labels import (
    EntityLabels,
    frequent_relation_subsets,
    label_entities,
    relation_sets,
)
from temporag.methods.star_rag.mdl import mdl_select
from temporag.methods.star_rag.nodes_spans import RuleNodes, rule_nodes

#: the component in which a candidate edge's two rule nodes differ
KIND_NAMES = {0: "subject label differs", 1: "relation differs", 2: "object label differs"}
#: (null window W in days, None: the KG's period; ΔL(M) in ΔL) for :func:`null_window_table`
NULL_WINDOWS = ((1.0, True), (30.0, True), (365.0, True), (None, True), (None, False))

#: rule-graph statistics recorded as ``rule_graph/<key>`` metrics
GRAPH_METRICS = (
    "labels_in_use",
    "rule_nodes",
    "hamming1_pairs",
    "candidate_edges_with_spans",
    "selected_edges",
    "nodes_with_edges",
    "max_degree",
    "mdl_passes",
)


def labelling_grid(
    kg, supports: Sequence[float], k_types: Sequence[int], max_length: int = 3, order: str = "specific"
) -> pd.DataFrame:
    """Labels and rule nodes for each (support threshold, K_type): how both knobs size the rule graph."""
    relsets = relation_sets(kg)
    rows = []
    for support in supports:
        mined = (relsets, frequent_relation_subsets(relsets, support, max_length))
        for k_type in k_types:
            labels = label_entities(kg, support, k_type, max_length, order, mined=mined)
            summary = labels.summary()
            rows.append(
                {
                    "min_support": support,
                    "K_type": k_type,
                    "frequent subsets": summary["frequent_subsets"],
                    "labels in use": summary["labels_in_use"],
                    "fallback labels": summary["fallback_labels"],
                    "entities with fallback": summary["entities_with_fallback"],
                    "labels per entity": summary["mean_labels_per_entity"],
                    "rule nodes": len(rule_nodes(kg, labels)),
                }
            )
    return pd.DataFrame(rows)


def candidate_edge_kinds(graph: RuleGraph) -> pd.DataFrame:
    """Candidate edges (|T_uv| > 0) by the component that differs, with their event pairs and spans."""
    cand = graph.candidates
    return pd.DataFrame(
        {
            "differs in": [KIND_NAMES[k] for k in (0, 1, 2)],
            "candidate edges (|T_uv| > 0)": [int((cand.kind == k).sum()) for k in (0, 1, 2)],
            "event pairs Σ|T_uv|": [int(cand.n_spans[cand.kind == k].sum()) for k in (0, 1, 2)],
            "median mean span (days)": [float(np.median(cand.mean_span[cand.kind == k])) for k in (0, 1, 2)],
        }
    )


def null_window_table(kg, graph: RuleGraph, settings=NULL_WINDOWS) -> pd.DataFrame:
    """MDL selection for each (null window W in days — None: the KG's period —, ΔL(M) in ΔL)."""
    rows = []
    for window, model_cost in settings:
        res = mdl_select(kg, graph.labels, graph.nodes, graph.candidates, window, model_cost=model_cost)
        rows.append(
            {
                "null window W (days)": res.null_window_days,
                "ΔL(M) in ΔL": model_cost,
                "selected edges": res.n_selected,
                "L before (bits)": res.L_before,
                "L after (bits)": res.L_after,
                "used here": window is None and model_cost,
            }
        )
    return pd.DataFrame(rows)


def graph_metrics(graph: RuleGraph) -> dict[str, float]:
    """The rule-graph statistics recorded as ``rule_graph/<key>`` metrics."""
    stats = graph.stats()
    return {f"rule_graph/{key}": stats[key] for key in GRAPH_METRICS}


def anchors_table(star, trace, q_vec: np.ndarray, question: str) -> pd.DataFrame:
    """Alg. 1 line 8: the anchors, their scores and how many rule nodes each belongs to."""
    scores = star.query(q_vec, question).of(trace.anchors)
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(trace.anchors) + 1),
            "anchor event": star.kg.verbalise_many(trace.anchors),
            "score": np.round(scores, 3),
            "rule nodes": [len(star.graph.nodes.of_fact[int(f)]) for f in trace.anchors],
        }
    )


def recall_metrics(recall: Mapping[str, np.ndarray], k: int, seed: int) -> dict[str, tuple]:
    """``answer_recall@k/<method>`` → (mean, context with the bootstrap CI and n)."""
    out = {}
    for name, values in recall.items():
        low, high = evaluate.bootstrap_ci(values, seed=seed)
        out[f"answer_recall@{k}/{name}"] = (float(values.mean()), {"ci95": [low, high], "n": len(values)})
    return out


def retrieval_metrics(retrievals: Mapping[str, Retrieval]) -> dict[str, tuple]:
    """What the rule graph changed (anchors swapped, candidates, PPR iterations) and the latencies."""
    traces = retrievals["STAR-RAG"].traces
    swapped = np.array([t["swapped_anchors"] for t in traces])
    out = {
        "retrieval/swapped_anchors_per_question": (float(swapped.mean()), {}),
        "retrieval/share_identical_to_no_rule": (float(np.mean(swapped == 0)), {}),
        "retrieval/candidates_median": (float(np.median([t["candidates"] for t in traces])), {}),
        "retrieval/ppr_iterations_median": (float(np.median([t["ppr_iterations"] for t in traces])), {}),
    }
    for name in ("STAR-RAG", "STAR-RAG-no-rule"):
        latency = evaluate.latency_summary(retrievals[name].latency_s)
        note = "embedding excluded; batched cosine"
        out[f"retrieval/{name}/p50_ms"] = (latency["p50_ms"], {"p95_ms": latency["p95_ms"], "note": note})
    return out


def recall_grid(kg, sweep: Mapping[tuple[int, int], list], questions: Sequence, grid: Sequence[int]):
    """Fig. 5 without a reader: answer recall of the K1 returned events for every (K1, K2)."""
    return np.array(
        [
            [evaluate.answer_recall_at_k(kg, sweep[(k1, k2)], questions, [k1])[k1].mean() for k2 in grid]
            for k1 in grid
        ]
    )


# -- the rule graph and one question through Alg. 1, as frames (report.py formats the rest) ------------


def entity_labels(kg, labels: EntityLabels, entity: str) -> pd.DataFrame:
    """One entity's labels (TypeIDs with their relation subsets), e.g. the paper's Oman."""
    e = kg.entity_id[entity]
    names = [labels.name(int(t), kg) for t in labels.of(e)]
    return pd.DataFrame({f"labels of {entity} ({len(relation_sets(kg)[e])} relations)": names})


def rule_node_sizes(kg, labels: EntityLabels, nodes: RuleNodes, top: int = 5) -> tuple[str, pd.DataFrame]:
    """A one-line summary of |supp(u)| and the ``top`` largest rule nodes."""
    sizes = nodes.sizes
    line = (
        f"{len(nodes):,} rule nodes; |supp(u)|: median {np.median(sizes):.0f}, mean {sizes.mean():.1f}, "
        f"max {sizes.max():,}; {nodes.of_fact.offsets[-1] / len(kg):.2f} rule nodes per event"
    )
    biggest = np.argsort(-sizes)[:top]
    names = [nodes.name(int(u), kg, labels) for u in biggest]
    return line, pd.DataFrame({"rule node": names, "|supp(u)|": sizes[biggest]})


def statistics_table(graph: RuleGraph) -> pd.DataFrame:
    return pd.DataFrame([{"statistic": k, "value": v} for k, v in graph.stats().items()])


def seeds_table(star, trace, pi: np.ndarray) -> pd.DataFrame:
    """Alg. 1 line 9: the seed rule nodes with |supp(u)|, γ_u and the PPR mass π_u they end with."""
    nodes, kg = star.graph.nodes, star.kg
    return pd.DataFrame(
        {
            "seed rule node": [nodes.name(int(u), kg, star.graph.labels) for u in trace.seeds],
            "|supp(u)|": nodes.sizes[trace.seeds],
            "γ_u": np.round(trace.gamma, 4),
            "π_u": np.round(pi[trace.seeds], 4),
        }
    ).sort_values("γ_u", ascending=False)


def top_rules_table(star, trace) -> pd.DataFrame:
    """Alg. 1 line 14: the top-K2 rule nodes by π and whether each was a seed."""
    nodes, kg = star.graph.nodes, star.kg
    return pd.DataFrame(
        {
            "top-K2 rule node": [nodes.name(int(u), kg, star.graph.labels) for u in trace.rules],
            "π": np.round(trace.rule_mass, 4),
            "seed": np.isin(trace.rules, trace.seeds),
            "|supp(u)|": nodes.sizes[trace.rules],
        }
    )


def returned_events_table(kg, trace, question) -> pd.DataFrame:
    """Alg. 1 line 16: the returned events, which were anchors, which carry a gold answer."""
    carries = evaluate.answer_fact_mask(kg, trace.facts, question.answers, question.answer_type)
    return pd.DataFrame(
        {
            "returned event": kg.verbalise_many(trace.facts),
            "was an anchor": np.isin(trace.facts, trace.anchors),
            "carries a gold answer": carries,
        }
    )
