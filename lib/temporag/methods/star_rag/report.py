"""STAR-RAG's tables and figures: every artifact the notebook shows, drawn or formatted from what
:mod:`.experiments`, :mod:`.paper_tables` and :mod:`.code_tables` computed.

Tables are pandas frames, paper values from :mod:`temporag.reported` (``None`` where the paper prints
none); figures in the house style (:mod:`temporag.methods.plots`): the rule graph's anatomy and MDL
trace (§3.2), a Fig. 2-style neighbourhood, the labelling grid, answer recall, Fig. 3 (tokens and time
per question), Fig. 5's grid and the released code's decomposition.  Nothing here runs a model;
:mod:`.record` writes what a run keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import pandas as pd

from temporag.methods import plots
from temporag.methods.star_rag.code_tables import ALG1, RELEASED, SEMANTIC
from temporag.methods.star_rag.experiments import KIND_NAMES
from temporag.methods.star_rag.graph import RuleGraph
from temporag.methods.star_rag.paper_tables import FIG3_METHODS, fig3_tokens_ref, hit_rate, paper_ref

METHODS = ("STAR-RAG", "STAR-RAG-no-rule", "STAR-RAG-uniform")


# ---------------------------------------------------------------------------------------------------
# the rule graph (§3.2)






def build_note(graph: RuleGraph, wall_s: float) -> str:
    """How many Hamming-1 pairs and spans there are, and how the graph was obtained (cold or cache)."""
    cand, timings = graph.candidates, graph.timings
    how = "loaded from cache" if timings.get("loaded_from_cache") else "cold"
    return (
        f"|W| = {cand.n_hamming1:,} Hamming-1 node pairs; {len(cand):,} of them have overlapping events "
        f"({cand.n_spans.sum():,} event pairs); built in {timings.get('total', float('nan')):.1f} s "
        f"({how}, this call {wall_s:.1f} s)"
    )


def description_length(graph: RuleGraph) -> tuple[str, pd.DataFrame]:
    """The MDL outcome in one line, and L(G, M) part by part after selection (bits)."""
    mdl = graph.mdl
    line = (
        f"{mdl.n_selected:,} of {len(graph.candidates):,} candidate edges selected in {mdl.passes} passes; "
        f"L(G, M): {mdl.L_before:,.0f} bits (empty model) → {mdl.L_after:,.0f} bits"
    )
    return line, pd.DataFrame([{"part": k, "bits": v} for k, v in mdl.parts_after.items()])










# ---------------------------------------------------------------------------------------------------
# retrieval on every selected question (LLM-free)


def recall_headline(recall: Mapping[str, np.ndarray], metrics: Mapping[str, tuple], k: int) -> str:
    """The section's result in one sentence (markdown)."""
    swapped = metrics["retrieval/swapped_anchors_per_question"][0]
    star_ms, plain_ms = (metrics[f"retrieval/{m}/p50_ms"][0] for m in ("STAR-RAG", "STAR-RAG-no-rule"))
    return (
        f"**answer recall@{k}: STAR-RAG {recall['STAR-RAG'].mean():.3f} vs no-rule "
        f"{recall['STAR-RAG-no-rule'].mean():.3f}** (uniform γ: {recall['STAR-RAG-uniform'].mean():.3f}); "
        f"{swapped:.2f} anchors swapped per question; "
        f"retrieval p50 {star_ms:.1f} ms (no-rule {plain_ms:.1f} ms)."
    )


def grid_heatmap(matrix: np.ndarray, grid: Sequence[int], title: str, fmt: str, note: str):
    """Fig. 5's K1 × K2 grid as the house heatmap (:func:`temporag.methods.plots.heatmap`)."""
    return plots.heatmap(
        matrix,
        grid,
        grid,
        title=title,
        xlabel="K2 (rule nodes)",
        ylabel="K1 (anchors = returned events)",
        fmt=fmt,
        note=note,
    )


def grid_frame(matrix: np.ndarray, grid: Sequence[int]) -> pd.DataFrame:
    return pd.DataFrame(matrix, index=pd.Index(grid, name="K1"), columns=pd.Index(grid, name="K2"))


def fig3(numbers: Mapping[str, dict], reader: str, n: int):
    """Fig. 3: tokens and time per question (:func:`fig3_numbers`) beside the paper's, as a table and a
    figure."""
    names = list(FIG3_METHODS)
    tokens = {m: float(numbers[m]["tokens"]) for m in names}
    seconds = {m: float(numbers[m]["seconds"]) for m in names}
    paper_tokens = {m: ref.value() if (ref := fig3_tokens_ref(m)) is not None else None for m in names}
    paper_seconds = {m: paper_ref("Table 4", m, "Tim.").value() for m in names}
    rows = [
        {
            "method": name,
            "prompt tokens, cl100k (all questions)": numbers[name]["prompt_tokens_cl100k"],
            f"tokens/question, {reader} (read sample)": numbers[name]["tokens"],
            "retrieval s/question": numbers[name]["retrieval_seconds"],
            "reader s/question": numbers[name]["reader_seconds"],
            "paper tokens/question": paper_tokens[name],
            "paper s/question (Table 4)": paper_seconds[name],
        }
        for name in names
    ]
    paper_tokens["MedicalGraphRAG"] = paper_ref("Figure 3", "MedicalGraphRAG", "Tokens/question").value()
    figure = fig3_tokens_time(
        names,
        [tokens[m] for m in names],
        [seconds[m] for m in names],
        paper_tokens,
        paper_seconds,
        note=f"kit: reader {reader} ({numbers['STAR-RAG']['token_source']}), {n} questions; "
        "paper: Llama-3.3-70B, §4.4 and Table 4.",
    )
    return pd.DataFrame(rows), figure


def summary_table(graph, recall: Mapping, hits: Mapping, usage: Mapping, reader: str, n: int, k: int):
    """The headline numbers, the kit's beside the paper's."""
    stats = graph.stats()
    measured = usage["STAR-RAG"]["mean_prompt_tokens"] + usage["STAR-RAG"]["mean_completion_tokens"]
    rows = [
        (
            "rule graph: labels / rule nodes / selected edges",
            f"{stats['labels_in_use']} / {stats['rule_nodes']:,} / {stats['selected_edges']:,}",
            "not reported",
        ),
        (
            f"answer recall@{k}: STAR-RAG vs no-rule",
            f"{recall['STAR-RAG'].mean():.3f} vs {recall['STAR-RAG-no-rule'].mean():.3f}",
            "not reported",
        ),
        (
            f"Hit@1 STAR-RAG ({reader}, n={n})",
            _shown(hit_rate(hits["STAR-RAG"][1])),
            f"{paper_ref('Table 2', 'STAR-RAG', 'Hit@1').value():.3f}",
        ),
        (
            "Hit@1 no-rule",
            _shown(hit_rate(hits["STAR-RAG-no-rule"][1])),
            f"{paper_ref('Table 4', 'STAR-RAG-no-rule', 'Acc.').value():.3f}",
        ),
        (
            "tokens/question STAR-RAG",
            f"{measured:.0f}",
            f"{paper_ref('Figure 3', 'STAR-RAG', 'Tokens/question').value():.0f}",
        ),
    ]
    return pd.DataFrame(rows, columns=["quantity", "kit", "paper"])


def _shown(score: dict) -> str:
    """A Hit@1 as the summary prints it, with the failed calls left out named beside it."""
    failed = f" ({score['failed']} failed calls left out)" if score["failed"] else ""
    return f"{score['value']:.3f}{failed}"


def decomposition_figure(table: pd.DataFrame, note: str = ""):
    """Answer recall of what the reader is shown, all / Single / Multiple, one group per retriever
    (its prompt tokens under its name)."""
    names = [r.replace("released code, ", "code: ") for r in table["retrieval"]]
    labels = [f"{r}\n{t:,.0f} tokens" for r, t in zip(names, table["prompt tokens (cl100k)"])]
    series = {
        "all questions": table["answer recall"].tolist(),
        "Single": table["recall Single"].tolist(),
        "Multiple": table["recall Multiple"].tolist(),
    }
    return plots.grouped_bars(
        labels,
        series,
        title="Answer recall of what the reader is shown",
        ylabel="answer recall",
        note=note,
        ylim=(0, 1.15),  # room for the legend above the bars
    )


_SWITCHED_OFF = {
    "PPR": "released code, no PPR (rule graph off)",
    "temporal filters": "released code, no temporal filters",
    "time-nearest neighbours": "released code, no time-nearest neighbours",
    "grouping": "released code, no grouping",
}


_ANCHORS_ONLY = "released code, anchors only (no PPR, neighbours, grouping)"


def decomposition_summary(table: pd.DataFrame) -> str:
    """What the decomposition table shows, in three sentences of its own numbers (markdown)."""
    row = table.set_index("retrieval")

    def pct(name: str, column: str = "answer recall") -> str:
        return f"{row.loc[name, column]:.0%}"

    released = row.loc[RELEASED]
    anchor_tokens = row.loc[_ANCHORS_ONLY, "prompt tokens (cl100k)"]
    moves = ", ".join(
        f"{step} {100 * (row.loc[label, 'recall Multiple'] - released['recall Multiple']):+.0f}"
        for step, label in _SWITCHED_OFF.items()
    )
    text = (
        f"What the reader is shown holds a gold answer for {pct(SEMANTIC)} of the questions with semantic "
        f"top-10 ({pct(SEMANTIC, 'recall Multiple')} of the Multiple ones), {pct(ALG1)} with Alg. 1 "
        f"({pct(ALG1, 'recall Multiple')}) and {pct(RELEASED)} with the released code "
        f"({pct(RELEASED, 'recall Multiple')}), at {released['prompt tokens (cl100k)']:.0f} prompt tokens "
        f"against {row.loc[ALG1, 'prompt tokens (cl100k)']:.0f}. "
        f"Switching one of its steps off moves the Multiple recall by (points): {moves}; its anchors alone "
        f"reach {pct(_ANCHORS_ONLY, 'recall Multiple')} at {anchor_tokens:.0f} tokens."
    )
    if "Hit@1" in row:
        text += (
            f" Reader Hit@1 ({released['reader']}, {released['n read']:.0f} questions): semantic top-10 "
            f"{row.loc[SEMANTIC, 'Hit@1']:.3f}, Alg. 1 {row.loc[ALG1, 'Hit@1']:.3f}, released code "
            f"{released['Hit@1']:.3f}."
        )
    return text


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
