"""TECQA's tables and figures (§5.3–5.7, appendices D–E): what the notebook shows, one call per artifact.

The reader tables, failure analysis, worked examples, speed and headline are in :mod:`.tables`;
the numbers behind the other tables in :mod:`.experiments`; TECQA's own metrics (parser accuracy, the
reference anchor of evidence-chain integrity, the K × N sensitivity grid, the failure modes, the case
rendering) are in :mod:`.analysis` and re-exported here; generic ones (answer / anchor / chain recall,
Hits@1 by category, latency) come from :mod:`temporag.answer.evaluate`.  The paper's numbers are
:class:`~temporag.reported.PaperRef` looked up where the table or figure is made (None where the paper
prints none).  Nothing here writes into the run's results: :mod:`.record` does, from these frames.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods import plots
from temporag.methods.tecqa.analysis import (  # noqa: F401 (re-exported: one module for the notebook)
    KS,
    NS,
    failure_modes,
    integrity,
    main_entity_supported,
    parser_accuracy,
    reference_anchor_mask,
    relation_supported,
    render_case,
    sensitivity,
)
from temporag.methods.tecqa.beyond import (  # noqa: F401 (re-exported: one module for the notebook)
    Variant,
    by_qtype_table,
    comparison_table,
    failure_class_table,
    main_alternatives_check,
    relation_union_check,
)
from temporag.methods.tecqa.experiments import (  # noqa: F401 (re-exported: one module for the notebook)
    PARSER_LABELS,
    closest_to_paper_length,
    parser_accuracy_table,
    reader_scores,
    shown_answer_recall,
)
from temporag.methods.tecqa.tables import (  # noqa: F401 (re-exported: one module for the notebook)
    CASES,
    CHAIN_LENGTH,
    CHAIN_RECALL,
    EMPTY_SHARE,
    SEMANTIC_AT_20,
    SUBGRAPH_RECALL,
    TABLE1_COLUMNS,
    TECQA_AT_20,
    VARIANTS,
    case_prediction,
    case_questions,
    chain_predictions,
    failure_examples,
    failure_table,
    headline_table,
    latency_table,
    paper,
    reader_contexts,
    reader_predictions,
    table1_frame,
    table2_frame,
)
from temporag.question.parsing import Constraints


def parse_table(kg, constraints: Sequence[Constraints]):
    """The parses as readable labels, one row per question."""
    return pd.DataFrame([{"question": c.question, **c.describe(kg)} for c in constraints])


# -- subgraph and chain (§4.2.2–4.3) --------------------------------------------------------------------


def subgraph_size_figure(sizes: np.ndarray, parser: str):
    """Histogram of |F_q| (log10) with the sizes of the paper's two worked examples marked."""
    marks = {
        f"paper {table} case: {paper(table, row, 'Retrieved facts').value() or 0:,.0f} facts": (
            paper(table, row, "Retrieved facts").value()
        )
        for table, (row, _) in CASES.items()
    }
    return plots.distribution(
        sizes,
        marks=marks,
        log10=True,
        title="Structure-guided subgraph sizes",
        xlabel="subgraph size |F_q| (log10 facts)",
        note=f"{len(sizes)} questions, {parser} parser; median {np.median(sizes):.0f}, "
        f"mean {np.mean(sizes):.0f} facts",
    )


# -- Figure 2: answer recall@20 by category -------------------------------------------------------------


def recall_at_20_table(kg, questions: Sequence, semantic_ids, chain_ids, seed: int = 0):
    """Answer recall@20 per question type and overall: global semantic retrieval vs the TECQA chain."""
    names = {"semantic@20": semantic_ids, "TECQA@20": chain_ids}
    _, table = evaluate.recall_by_category(kg, questions, names, k=20, seed=seed)
    pivot = evaluate.pivot_by_category(table, list(names))
    by_type = pivot[pivot.group == "qtype"]
    overall = pivot[pivot.group == "overall"].assign(category="overall")
    frame = pd.concat([by_type, overall], ignore_index=True)
    return frame[["category", *names, "n"]]


def recall_at_20_figure(table, k: int, n: int):  # n: questions
    """Fig. 2's bars (kit) with the paper caption's plateaus dotted."""
    sem, tec = SEMANTIC_AT_20.value(), TECQA_AT_20.value()
    fig = plots.grouped_bars(
        table["category"].tolist(),
        {
            "semantic retrieval @20": table["semantic@20"].tolist(),
            "TECQA chain @20": table["TECQA@20"].tolist(),
        },
        title="Fig. 2 · Answer recall@20 by question category",
        ylabel="answer recall@20",
        note=f"kit: all-MiniLM-L6-v2, K={k}, N={n}, n={int(table['n'].iloc[-1])}; dotted: paper "
        f"caption (semantic {sem}, TECQA {tec}; bge-base-en-v1.5)",
    )
    for value in (sem, tec):
        if value:
            fig.axes[0].axhline(value, ls=":", color="grey")
    return fig


# -- Figure 5: evidence-chain integrity (appendix D) ------------------------------------------------------


def integrity_table(
    kg, questions: Sequence, contexts: Mapping[str, Sequence], references: Sequence[Constraints]
):
    """Fig. 5's numbers: per context and Single / Multiple group, answer recall over all questions and
    anchor / chain recall over the questions that have a reference anchor."""
    labels = np.array([q.qlabel for q in questions])
    rows = []
    for name, facts in contexts.items():
        res = integrity(kg, questions, facts, references)
        for group in ("Multiple", "Single"):
            members = labels == group
            with_anchor = members & ~np.isnan(res["anchor"])
            rows.append(
                {
                    "method": name,
                    "group": group,
                    "answer_recall": res["answer"][members].mean(),
                    "anchor_recall": np.nanmean(res["anchor"][with_anchor]) if with_anchor.any() else np.nan,
                    "chain_recall": np.nanmean(res["chain"][with_anchor]) if with_anchor.any() else np.nan,
                    "avg_facts": float(np.mean([len(f) for f, keep in zip(facts, members) if keep])),
                    "n": int(members.sum()),
                    "n_with_anchor": int(with_anchor.sum()),
                }
            )
    return pd.DataFrame(rows)


def integrity_figure(table, k: int):
    """Fig. 5: answer / anchor / chain recall of each context, Multiple and Single side by side."""
    long = table.melt(
        id_vars=["method", "group", "n"], value_vars=["answer_recall", "anchor_recall", "chain_recall"]
    )
    long["recall"] = long["variable"].str.replace("_recall", "").str.capitalize()
    plots.use_house_style()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, group in zip(axes, ("Multiple", "Single")):
        sub = long[long.group == group]
        plots.category_bars(
            sub,
            "recall",
            "value",
            "method",
            ax=ax,
            ylim=(0, 1.05),
            ylabel="recall",
            title=f"{group} questions (n={int(sub.n.iloc[0])})",
        )
    axes[1].get_legend().remove()
    fig.suptitle(f"Fig. 5 · Evidence-chain integrity (K={k})")
    plots.footnote(
        fig,
        "kit numbers; the paper's Fig. 5 prints no values. Anchor/chain recall over questions "
        "with a reference anchor.",
    )
    fig.tight_layout()
    return fig


# -- Figure 4: sensitivity to K and N -----------------------------------------------------------------


def sensitivity_figure(grid, k: int, n: int, parser: str, questions: int):
    """Fig. 4: chain answer recall (the LLM-free accuracy proxy) and context length, varying K at the
    run's N and N at the run's K, with the paper's optimum red."""
    best = {
        "K": paper("Figure 4", "Optimal setting", "K").value(),
        "N": paper("Figure 4", "Optimal setting", "N").value(),
    }
    plots.use_house_style()
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    for ax, (fixed, vary, value) in zip(axes, (("N", "K", n), ("K", "N", k))):
        sub = grid[grid[fixed] == value].sort_values(vary)
        plots.curve_with_length(
            ax,
            sub[vary].tolist(),
            sub.answer_recall.tolist(),
            sub.avg_context_facts.tolist(),
            value_label="answer recall",
            length_label="avg context facts",
            mark=best[vary],
            title=f"varying {vary} ({fixed}={value})",
        )
        ax.set_xlabel(vary)
    fig.suptitle("Fig. 4 · Sensitivity of the evidence chain to K and N")
    plots.footnote(
        fig,
        f"n={questions} questions, {parser} parser; accuracy proxy = answer recall of the chain (LLM-free)",
    )
    fig.tight_layout()
    return fig
