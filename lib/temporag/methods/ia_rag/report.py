"""IA-RAG's tables and figures: the kit's numbers beside the paper's (``temporag.reported``), drawn and
formatted from what the step modules computed (:mod:`.setups`, :mod:`.build_tables`,
:mod:`.retrieval_tables`, :mod:`.ablations`, :mod:`.reader_tables`).

Fig. 4 (Allen-relation distributions, inverse pairs merged), Fig. 5 (one thematic tree), Fig. 3
(accuracy vs. input tokens), the token-budget curves and Tables 3/4/7/8 as effects and settings.
Plots use the house style; nothing here runs a model.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from temporag.methods import plots
from temporag.methods.ia_rag.build_tables import MERGED
from temporag.methods.ia_rag.forest import Forest
from temporag.methods.ia_rag.graph import EventGraph
from temporag.reported import paper_value


def paper(source: str, row: str, column: str, dataset: str | None) -> float | None:
    return paper_value("ia_rag", source, row, column, dataset)


def fig_allen(frame: pd.DataFrame, note: str = ""):
    """Fig. 4: share of each merged relation per data set (grouped bars)."""
    shown = frame[frame.relation != "(unbounded interval)"]
    cats = [label for label, _ in MERGED]
    series = {
        ds: [float(shown[(shown.dataset == ds) & (shown.relation == c)].share.iloc[0]) for c in cats]
        for ds in shown.dataset.unique()
    }
    return plots.grouped_bars(
        cats,
        series,
        title="Fig. 4 · Allen relations on event-graph edges (inverse pairs merged)",
        ylabel="share of edges",
        note=note,
    )


def pick_tree(forest: Forest, max_leaves: int = 14) -> int | None:
    """A root MEU that shows the hierarchy: deepest first, then largest with at most ``max_leaves`` IEUs."""
    roots = [forest.meus[r] for r in forest.roots() if len(forest.meus[r].members) <= max_leaves]
    if not roots:
        return None
    return max(roots, key=lambda m: (m.level, len(m.members))).meu_id


def fig_tree(graph: EventGraph, forest: Forest, meu_id: int, width: int = 46):
    """Fig. 5: one thematic tree — MEUs (levels) over IEUs (leaves), laid out top-down."""
    import matplotlib.pyplot as plt

    plots.use_house_style()
    n = len(graph.units)
    levels: dict[int, list[int]] = {}
    edges = []

    def walk(node: int, depth: int) -> None:
        levels.setdefault(depth, []).append(node)
        if node >= n:
            for c in forest.meus[node - n].children:
                edges.append((node, c))
                walk(c, depth + 1)

    walk(n + meu_id, 0)
    depth = max(levels)
    pos = {}
    for d, nodes in levels.items():
        for i, node in enumerate(nodes):
            pos[node] = ((i + 0.5) / len(nodes), depth - d)
    leaves = max(len(v) for v in levels.values())
    fig, ax = plt.subplots(figsize=(max(8, 1.9 * leaves), 1.9 * (depth + 1)))
    ax.axis("off")
    for a, b in edges:
        ax.plot([pos[a][0], pos[b][0]], [pos[a][1], pos[b][1]], color="#999999", lw=0.8, zorder=1)
    for node, (x, y) in pos.items():
        if node >= n:
            m = forest.meus[node - n]
            label = f"MEU L{m.level} ({len(m.members)} IEUs)\n{m.span()}"
            color = plots.PALETTE[1]
        else:
            u = graph.units[node]
            body = textwrap.shorten(u.sentence, width=width * 2, placeholder=" …")
            label = f"{u.span()}{' ~' if u.fuzzy else ''}\n" + textwrap.fill(body, width // 2)
            color = plots.PALETTE[0]
        ax.text(
            x,
            y,
            label,
            ha="center",
            va="center",
            fontsize=6,
            zorder=2,
            bbox={"boxstyle": "round", "fc": "white", "ec": color, "lw": 1.2},
        )
    ax.set_ylim(-0.6, depth + 0.6)
    ax.set_title("Fig. 5 · One tree of the thematic forest (MEUs over IEUs)")
    fig.tight_layout()
    return fig


def fig_accuracy_tokens(points: pd.DataFrame, note: str = ""):
    """Fig. 3: accuracy against mean input tokens per question, one marker per method and data set."""
    import matplotlib.pyplot as plt

    plots.use_house_style()
    fig, ax = plt.subplots()
    markers = dict(zip(points.dataset.unique(), "osD^"))
    colors = {m: plots.PALETTE[i % len(plots.PALETTE)] for i, m in enumerate(points.method.unique())}
    for _, r in points.iterrows():
        ax.scatter(r.tokens, r.accuracy, marker=markers[r.dataset], color=colors[r.method], s=40)
        ax.annotate(
            f"{r.method}\n{r.dataset}",
            (r.tokens, r.accuracy),
            fontsize=6,
            xytext=(4, 2),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.set_xlabel("reader prompt tokens per question")
    return plots._finish(fig, ax, "Fig. 3 · Accuracy vs. input tokens", "accuracy", note, legend=None)


def effect_table(source: str, kit: pd.DataFrame, value: str, base: str = "IA-RAG") -> pd.DataFrame:
    """Tables 3/4/7/8 as *effects*: each variant's change against ``base``, the kit's (LLM-free retrieval
    recall, column ``value``) and the paper's (reader Recall) in separate columns — the two measure
    different things, so only the direction and size of an effect are compared, never the levels."""
    rows = []
    for variant in dict.fromkeys(kit.variant):
        row = {"variant": variant}
        for ds in dict.fromkeys(kit.dataset):
            mine = kit[(kit.dataset == ds) & (kit.variant == variant)][value]
            ref = kit[(kit.dataset == ds) & (kit.variant == base)][value]
            row[f"{ds} kit Δ retrieval recall"] = (
                float(mine.iloc[0] - ref.iloc[0]) if len(mine) and len(ref) else np.nan
            )
            p, p0 = paper(source, variant, "Recall", ds), paper(source, base, "Recall", ds)
            row[f"{ds} paper Δ reader Recall"] = p - p0 if p is not None and p0 is not None else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def fig_token_curves(curves: pd.DataFrame, dataset: str, note: str = ""):
    """Recall against the context's token budget, one line per retriever (one data set)."""
    shown = curves[curves.dataset == dataset]
    budgets = sorted(shown.budget.unique())
    series = {
        m: [float(shown[(shown.method == m) & (shown.budget == b)].recall.iloc[0]) for b in budgets]
        for m in dict.fromkeys(shown.method)
    }
    return plots.curves(
        budgets,
        series,
        title=f"{dataset} · retrieval recall at equal context tokens",
        xlabel="context budget (cl100k tokens)",
        ylabel="retrieval recall",
        note=note,
        logx=True,
        highlight="IA-RAG (calibrated)",
    )


def setting_table(source: str, kit: pd.DataFrame, value: str) -> pd.DataFrame:
    """Tables 7/8 (one setting per row): the kit's retrieval recall and, in its own column, the rank of
    the same setting in the paper's reader Recall (1 = the paper's best) — which setting wins is
    comparable, the levels are not."""
    rows = []
    for variant in dict.fromkeys(kit.variant):
        row = {"variant": variant}
        for ds in dict.fromkeys(kit.dataset):
            mine = kit[(kit.dataset == ds) & (kit.variant == variant)][value]
            row[f"{ds} kit retrieval recall"] = float(mine.iloc[0]) if len(mine) else np.nan
            reported = {v: paper(source, v, "Recall", ds) for v in dict.fromkeys(kit.variant)}
            known = sorted((x for x in reported.values() if x is not None), reverse=True)
            mine_paper = reported[variant]
            row[f"{ds} paper rank (reader Recall)"] = (
                known.index(mine_paper) + 1 if mine_paper is not None else np.nan
            )
        rows.append(row)
    return pd.DataFrame(rows)
