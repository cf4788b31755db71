"""TECQA's tables and figures (§5.3–5.7, appendices D–E) drawn and formatted from what
:mod:`.experiments` and the step modules (:mod:`.analysis`, :mod:`.beyond`) computed: the parse table,
Fig. 2's bars, Fig. 4's sensitivity curves, Fig. 5's integrity bars, Tables 1–2 beside the paper's rows,
the failure table and examples, a worked case as text and the headline of what a run recorded.

The paper's numbers are :class:`~temporag.reported.PaperRef` from :mod:`.tables` (None where the paper
prints none).  Nothing here runs a model or computes a score, and nothing writes into the run's results:
:mod:`.record` does, from these frames.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from temporag.answer.evaluate import answer_fact_mask
from temporag.methods import plots
from temporag.methods.tecqa.chain import EvidenceChain, fact_days
from temporag.methods.tecqa.tables import (
    CASES,
    CHAIN_LENGTH,
    SEMANTIC_AT_20,
    TABLE1_COLUMNS,
    TECQA_AT_20,
    VARIANTS,
    paper,
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


def table1_frame(scores: Mapping, reader: str):
    """Table 1's MultiTQ columns: the kit's Hits@1 under both rules beside the paper's TECQA row."""
    rows = [
        {"model": f"TECQA — kit, {reader}", "rule": rule, **scores[rule]} for rule in ("strict", "lenient")
    ]
    rows.append(
        {
            "model": "TECQA — paper, Qwen3-8B (thinking)",
            "rule": "strict (MultiTQ Hits@1)",
            **{c: paper("Table 1", "TECQA", c).value() for c in TABLE1_COLUMNS},
        }
    )
    frame = pd.DataFrame(rows)[["model", "rule", *TABLE1_COLUMNS]]
    frame["n"] = pd.array([scores["n"]["Overall"]] * 2 + [None], dtype="Int64")
    frame["failed"] = pd.array([scores["failed"]["Overall"]] * 2 + [None], dtype="Int64")  # left out
    return frame


def table2_frame(scores: Mapping, shown_recall: Mapping[str, np.ndarray]):
    """Table 2's ablations: Hits@1 (strict beside the paper, lenient) and the LLM-free answer recall of the
    facts each variant shows the reader (:func:`.record.table2_ablations` records them)."""
    rows = []
    for name in VARIANTS:
        row = {"variant": name}
        for column in ("Overall", "Multiple", "Single"):
            row[f"{column} (kit strict)"] = scores[name]["strict"][column]
            row[f"{column} (paper)"] = paper("Table 2", name, column).value()
        row["Overall (kit lenient)"] = scores[name]["lenient"]["Overall"]
        row["failed"] = scores[name]["failed"]["Overall"]  # reader calls left out of the kit's numbers
        row["shown-context answer recall (all questions)"] = float(shown_recall[name].mean())
        rows.append(row)
    return pd.DataFrame(rows)


FAILURE_COLUMNS = (
    "questions",
    "empty_subgraph",
    "empty_subgraph_rate",
    "empty_from_wrong_main_entity",
    "first_last_questions",
    "first_last_truncated",
    "first_last_truncated_rate",
)


def failure_table(modes: Mapping[str, dict]):
    """The failure modes of each parse (label → :func:`failure_modes`) beside the paper's §5.7 counts
    (:func:`.record.failure_modes` records the first parse's and the names-only parse's rates)."""

    def p(row: str, column: str = "Queries"):
        return paper("§5.7 text", row, column).value()

    rows = [{"parse": label, **{k: m[k] for k in FAILURE_COLUMNS}} for label, m in modes.items()]
    rows.append(
        {
            "parse": "paper: LLM parser, full MultiTQ test set",
            "questions": p("MultiTQ test set"),
            "empty_subgraph": p("Empty subgraph"),
            "empty_subgraph_rate": p("Empty subgraph", "Share"),
            "empty_from_wrong_main_entity": p("Empty subgraph from wrong main entity"),
        }
    )
    frame = pd.DataFrame(rows)
    counts = [c for c in FAILURE_COLUMNS if not c.endswith("_rate")]
    frame[counts] = frame[counts].astype("Int64")
    return frame


def failure_examples(kg, questions: Sequence, modes: Sequence[tuple[dict, Sequence[EvidenceChain]]]) -> str:
    """Appendix E's two modes, one rendered case each: the first empty subgraph (from a wrong main entity
    first) over the given (failure modes, chains) pairs in order, and the first truncated first/last."""
    out = []
    empty = [(i, chains) for m, chains in modes for i in (m["wrong_main_idx"] or m["empty_idx"])[:1]]
    if empty:
        i, chains = empty[0]
        out.append("Failure mode 1 (empty subgraph):\n" + render_case(kg, questions[i], chains[i], lines=3))
    else:
        out.append("Failure mode 1: no empty subgraph in this question set.")
    truncated, chains = modes[0][0]["truncated_idx"], modes[0][1]
    if truncated:
        i = truncated[0]
        out.append(
            "Failure mode 2 (first/last truncated):\n" + render_case(kg, questions[i], chains[i], lines=5)
        )
    else:
        out.append("Failure mode 2: no truncated first/last question in this set.")
    return "\n\n".join(out)


def headline_table(results, reader: str, reader_questions: int, k: int, n: int):
    """The headline numbers already recorded in ``results``, kit beside paper, in one table."""
    metrics = results.data["metrics"]

    def kit_paper(key: str) -> tuple:
        value = metrics[key]
        return (value["value"], value.get("paper")) if isinstance(value, dict) else (value, None)

    near_20 = metrics["fig4/recall_at_about_20_facts"]
    rows = [
        ("subgraph answer recall", "subgraph/answer_recall"),
        (f"chain answer recall (K={k}, N={n})", "chain/answer_recall"),
        (f"chain avg facts (K={k}, N={n})", "chain/avg_facts"),
        (
            f"chain answer recall at ~{CHAIN_LENGTH.value()} facts (K={near_20['K']}, N={near_20['N']})",
            "fig4/recall_at_about_20_facts",
        ),
        ("semantic answer recall@20 (Fig. 2)", "fig2/semantic_recall@20"),
        ("TECQA answer recall@20 (Fig. 2)", "fig2/tecqa_recall@20"),
        (f"Hits@1 strict, reader {reader}, n={reader_questions}", "table1/strict/Overall"),
        ("empty-subgraph rate", "failures/empty_subgraph_rate"),
    ]
    frame = [{"number": label, "kit": kit_paper(key)[0], "paper": kit_paper(key)[1]} for label, key in rows]
    frame.append({"number": "retrieval p50 (ms)", "kit": kit_paper("latency/tecqa_p50_ms")[0], "paper": None})
    return pd.DataFrame(frame)


def render_case(kg, question, chain: EvidenceChain, lines: int = 8) -> str:
    """A Table 5-style walk-through: extraction, subgraph size, anchors, the chain's first lines."""
    c = chain.constraints
    desc = c.describe(kg)
    answer_mask = answer_fact_mask(kg, chain.facts, question.answers, question.answer_type)
    anchor_set = set(chain.anchor_facts.tolist())
    span = ""
    if len(chain.subgraph):
        days = fact_days(kg, chain.subgraph)
        first, last = (str(np.datetime64(int(d), "D")) for d in (days.min(), days.max()))
        span = f"; context spans {first} to {last}"
    out = [
        f"Question: {question.question}   (gold: {', '.join(question.answers[:6])})",
        "Step 1  Structure-guided subgraph construction",
        f"  Extraction: entities {desc['entities']}; relation {desc['relation']}; "
        f"main entity {desc['main']!r}",
        f"  Retrieval: {len(chain.subgraph):,} facts retrieved{span}",
        "Step 2  Temporal evidence chain construction",
        f"  Explicit anchors: {[a.iso for a in chain.explicit] or 'none'}; "
        f"implicit anchors (top-N similar facts): {[a.iso for a in chain.implicit] or 'none'}",
        f"  K-nearest pruning & proximity serialisation: {len(chain.facts)} facts kept",
    ]
    for f, d, is_answer in list(zip(chain.facts.tolist(), chain.delta.tolist(), answer_mask.tolist()))[
        :lines
    ]:
        tags = [t for t, on in (("Anchor", f in anchor_set), ("Answer", is_answer)) if on]
        tag = f"[{', '.join(tags)}, δ={d}]" if tags else f"δ={d}"
        s, r, o, day = kg.as_quadruples([f])[0]
        out.append(f"    {tag:<22} {s} → {r} → {o} ({day})")
    if len(chain.facts) > lines:
        out.append("    ... (context ordered by proximity to the anchors) ...")
    return "\n".join(out)
