"""STAR-RAG's figures in the house style (:mod:`temporag.methods.plots`); :mod:`report` re-exports them.

Rule-graph anatomy and the greedy MDL trace (§3.2), a Fig. 2-style neighbourhood drawing, the
labelling-grid and answer-recall charts, and Fig. 3 (tokens and time per question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np

from temporag.methods import plots
from temporag.methods.star_rag.graph import RuleGraph

KIND_NAMES = {0: "subject label differs", 1: "relation differs", 2: "object label differs"}


# ---------------------------------------------------------------------------------------------------
# rule-graph figures


def anatomy_figure(graph: RuleGraph, title: str = ""):
    """Four panels: labels per entity, |supp(u)|, candidate vs selected edges by kind, description length."""
    plots.use_house_style()
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.4))
    counts = graph.labels.counts
    ks = np.arange(1, max(1, int(counts.max())) + 1)
    axes[0, 0].bar(ks, [int((counts == k).sum()) for k in ks], color=plots.KIT)
    axes[0, 0].set(xlabel="labels per entity", ylabel="entities", title="(a) Alg. 2: labels per entity")
    axes[0, 0].set_xticks(ks)
    sizes = graph.nodes.sizes
    bins = np.logspace(0, np.log10(max(2, sizes.max())), 30)
    axes[0, 1].hist(sizes, bins=bins, color=plots.KIT)
    axes[0, 1].set(xscale="log", yscale="log", xlabel="|supp(u)| (events)", ylabel="rule nodes")
    axes[0, 1].set_title(f"(b) Eq. 1: {len(graph.nodes):,} rule nodes")
    kinds = [0, 1, 2]
    cand = [int((graph.candidates.kind == k).sum()) for k in kinds]
    sel = [int((graph.candidates.kind[graph.mdl.selected] == k).sum()) for k in kinds]
    x = np.arange(3)
    axes[1, 0].bar(x - 0.2, cand, 0.4, label="candidate (|T_uv| > 0)", color=plots.PAPER)
    axes[1, 0].bar(x + 0.2, sel, 0.4, label="MDL-selected", color=plots.KIT)
    axes[1, 0].set_xticks(x, [KIND_NAMES[k] for k in kinds], rotation=10)
    axes[1, 0].set(yscale="log", ylabel="edges", title="(c) Eq. 2 candidates vs MDL selection")
    axes[1, 0].legend()
    names = ["L(M)", "L_cov", "L_time", "L_null", "total"]
    before, after = graph.mdl.parts_before, graph.mdl.parts_after
    x = np.arange(len(names))
    axes[1, 1].bar(x - 0.2, [before[n] for n in names], 0.4, label="empty model", color=plots.PAPER)
    axes[1, 1].bar(x + 0.2, [after[n] for n in names], 0.4, label="after greedy MDL", color=plots.KIT)
    axes[1, 1].set_yscale("symlog", linthresh=1.0)
    axes[1, 1].set_xticks(x, names)
    axes[1, 1].set(ylabel="bits (symlog)", title="(d) description length L(G, M)")
    axes[1, 1].legend()
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def mdl_trace_figure(graph: RuleGraph):
    """L(G, M) after each accepted edge of the greedy search (Alg. 1 lines 5–6)."""
    plots.use_house_style()
    fig, ax = plt.subplots()
    trace = graph.mdl.trace
    ax.plot(np.arange(1, len(trace) + 1), trace, color=plots.KIT)
    ax.axhline(graph.mdl.L_before, color=plots.PAPER, linestyle="--", label="empty model")
    ax.legend()
    ax.set(
        xscale="log",
        xlabel="edges accepted",
        ylabel="L(G, M) (bits)",
        title=f"Greedy MDL: {graph.mdl.n_selected:,} of {len(graph.candidates):,} candidate edges kept",
    )
    plots.footnote(
        fig,
        f"{graph.mdl.passes} passes over candidates in a fixed order (most negative own data cost first); "
        f"unexplained spans coded uniformly over {graph.mdl.null_window_days:,.0f} days.",
    )
    fig.tight_layout()
    return fig


def node_label(graph: RuleGraph, kg, u: int) -> str:
    """Two-line label of a rule node for drawings: relation, then 'T<c_s> → T<c_o>'."""
    rel = kg.relation_labels[int(graph.nodes.r[u])]
    rel = rel if len(rel) <= 22 else rel[:21] + "…"
    return f"{rel}\nT{int(graph.nodes.a_s[u])} → T{int(graph.nodes.a_o[u])}"


def draw_neighbourhood(
    graph: RuleGraph,
    kg,
    center: int,
    pi: np.ndarray | None = None,
    seeds: Sequence[int] = (),
    max_neighbours: int = 8,
    title: str = "",
):
    """Fig. 2-style drawing: a rule node and its MDL-selected neighbours (the ones PPR ranks highest,
    else the closest in time); edge labels say which component differs and the mean span."""
    plots.use_house_style()
    u, v = graph.edges
    sel = np.flatnonzero(graph.mdl.selected)
    touch = (u == center) | (v == center)
    nbrs = np.where(u[touch] == center, v[touch], u[touch])
    edge_ids = sel[touch]
    if pi is not None:
        order = np.lexsort((nbrs, -pi[nbrs]))
    else:
        order = np.lexsort((nbrs, graph.candidates.mean_span[edge_ids]))
    keep = order[:max_neighbours]
    nbrs, edge_ids = nbrs[keep], edge_ids[keep]
    g = nx.Graph()
    g.add_node(int(center))
    shown = {int(center), *nbrs.tolist()}
    for n_, e in zip(nbrs.tolist(), edge_ids.tolist()):
        g.add_edge(int(center), n_, kind=int(graph.candidates.kind[e]), span=graph.candidates.mean_span[e])
    for a, b, e in zip(u.tolist(), v.tolist(), sel.tolist()):  # edges among the shown neighbours
        if a in shown and b in shown and a != center and b != center:
            g.add_edge(a, b, kind=int(graph.candidates.kind[e]), span=graph.candidates.mean_span[e])
    pos = nx.shell_layout(g, [[int(center)], nbrs.tolist()]) if len(nbrs) else {int(center): (0, 0)}
    fig, ax = plt.subplots(figsize=(8.5, 7))
    ax.grid(False)
    ax.axis("off")
    values = (
        np.array([pi[n] for n in g.nodes])
        if pi is not None
        else np.array([graph.nodes.sizes[n] for n in g.nodes])
    )
    colours = np.log10(np.maximum(values, 1e-9))
    seed_set = {int(s) for s in seeds}
    widths = [1.0 + 2.0 * (d["kind"] == 1) for _, _, d in g.edges(data=True)]
    nx.draw_networkx_edges(g, pos, ax=ax, width=widths, edge_color="#999999")
    short = {0: "c_s", 1: "r", 2: "c_o"}
    nx.draw_networkx_edge_labels(  # only the centre's edges are labelled, to keep the drawing readable
        g,
        pos,
        ax=ax,
        font_size=6.5,
        edge_labels={
            (a, b): f"{short[d['kind']]} · {d['span']:.0f} d"
            for a, b, d in g.edges(data=True)
            if center in (a, b)
        },
    )
    nodes = list(g.nodes)
    coll = nx.draw_networkx_nodes(
        g,
        pos,
        ax=ax,
        nodelist=nodes,
        node_color=colours,
        cmap="viridis",
        node_size=[900 if n == center else 500 for n in nodes],
        edgecolors=["#d62728" if n in seed_set else "#333333" for n in nodes],
        linewidths=[2.5 if n in seed_set else 0.8 for n in nodes],
    )
    for n in nodes:
        x, y = pos[n]
        ax.annotate(
            f"{node_label(graph, kg, n)}\n|supp|={int(graph.nodes.sizes[n])}",
            (x, y),
            xytext=(0, -22),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=6.5,
        )
    cb = fig.colorbar(coll, ax=ax, shrink=0.6)
    cb.set_label("log10 π (PPR mass)" if pi is not None else "log10 |supp(u)|")
    labels_used = sorted({int(graph.nodes.a_s[n]) for n in nodes} | {int(graph.nodes.a_o[n]) for n in nodes})
    legend = "\n".join(graph.labels.name(t, kg, short=True) for t in labels_used[:10])
    if len(labels_used) > 10:
        legend += f"\n… and {len(labels_used) - 10} more labels"
    plots.footnote(
        fig,
        "red ring = seed rule node; edge label = differing component (c_s subject label, r relation, "
        "c_o object label) · mean span of T_uv;\nthick edge = relation differs; grey edges among neighbours "
        f"are MDL-selected too.\n\nLabels (TypeID{{relation subset}}, * = fallback):\n{legend}",
    )
    ax.set_title(title or f"Rule-graph neighbourhood of node {center}")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------
# comparison figures


def fig3_tokens_time(
    methods: Sequence[str],
    tokens: Sequence[float],
    seconds: Sequence[float],
    paper_tokens: Mapping[str, float | None],
    paper_seconds: Mapping[str, float | None],
    note: str = "",
):
    """Fig. 3: tokens and time per question, the kit's bars beside the paper's where it prints them."""
    plots.use_house_style()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    names = list(methods) + [m for m in paper_tokens if m not in methods]
    x = np.arange(len(names))
    for ax, kit, ref, ylabel in (
        (axes[0], tokens, paper_tokens, "tokens per question"),
        (axes[1], seconds, paper_seconds, "seconds per question"),
    ):
        kit_vals = [kit[list(methods).index(n)] if n in methods else np.nan for n in names]
        ref_vals = [np.nan if ref.get(n) is None else ref[n] for n in names]
        kit_bars = ax.bar(x - 0.2, kit_vals, 0.4, color=plots.KIT, label="kit (measured)")
        paper_bars = ax.bar(x + 0.2, ref_vals, 0.4, label="paper", **plots.PAPER_BAR)
        for bars in (kit_bars, paper_bars):
            ax.bar_label(bars, fmt=plots.bar_value, fontsize=7)
        ax.set_xticks(x, names, rotation=15, ha="right")
        ax.set_ylabel(ylabel)
        plots.plain_log_yaxis(ax, [*kit_vals, *ref_vals])
    axes[0].set_title("Fig. 3 (left): tokens per question")
    axes[1].set_title("Fig. 3 (right): time per question")
    axes[0].legend()
    if note:
        plots.footnote(fig, note)
    fig.tight_layout()
    return fig


def labelling_grid_figure(grid):
    """Distinct labels and rule nodes against K_type, one line per Apriori support threshold."""
    plots.use_house_style()
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    for support, rows in grid.groupby("min_support"):
        axes[0].plot(rows["K_type"], rows["labels in use"], marker="o", label=f"support {support:g}")
        axes[1].plot(rows["K_type"], rows["rule nodes"], marker="o", label=f"support {support:g}")
    axes[0].set(xlabel="K_type", ylabel="distinct labels in use", title="distinct labels |A|")
    axes[1].set(xlabel="K_type", ylabel="rule nodes |U|", title="rule nodes")
    axes[0].legend()
    fig.tight_layout()
    return fig


def recall_figure(recall_table, methods: Sequence[str], k: int, note: str):
    """Answer recall of the top-k events per question category, one bar per method."""
    return plots.grouped_bars(
        recall_table["category"].tolist(),
        {m: recall_table[m].tolist() for m in methods},
        title=f"Answer recall of the top-{k} events",
        ylabel="answer recall",
        note=note,
    )
