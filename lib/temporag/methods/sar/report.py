"""SAR's figures and formatted views: Table 1's bars, Fig. 3 (K) and Fig. 4 (N), recall by qtype, the
headline rows and the trace viewer.

Every function takes what :mod:`.experiments` computed (frames, per-question records) and returns a
figure, a frame or text; nothing here runs a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from temporag.methods import plots

COLUMNS = ("Overall", "Single", "Multiple", "Entity", "Time")

#: The headline rows: label → metric key ({model} is the reader's name).
HEADLINE = {
    "SAR Hits@1 — offline policy + template reader (no LLM)": "table1/SAR/offline/Overall",
    "SAR Hits@1 — LLM policy, {model}": "table1/SAR/llm/Overall",
    "ReAct RAG Hits@1 — offline policy": "table1/ReAct RAG/offline/Overall",
    "ReAct RAG Hits@1 — LLM policy, {model}": "table1/ReAct RAG/llm/Overall",
    "Naive RAG Hits@1 — template reader": "table1/Naive RAG/offline/Overall",
    "Naive RAG Hits@1 — reader {model}": "table1/Naive RAG/llm/Overall",
    "w/o Decompose — offline": "table2/w/o Decompose/offline/Overall",
    "w/o Validation — offline": "table2/w/o Validation/offline/Overall",
    "SEARCH evidence answer recall (offline)": "offline/evidence_answer_recall",
    "template reader ceiling (all facts of the main entity)": "template_reader/ceiling_hits@1",
    "Hits@1 at K=5 (offline; the paper quotes about 0.74)": "fig3/K=5/template_hits@1",
    "Hits@1 at K=15 (offline; the paper quotes about 0.78)": "fig3/K=15/template_hits@1",
    "one SEARCH p50 (ms, target 20)": "latency/search_p50_ms",
}


def headline(results, rows: dict[str, str] | None = None, model: str = "") -> pd.DataFrame:
    """Headline rows from metrics already recorded: {label: metric key} → kit, paper, n, failed, reader.
    ``failed``: the number's LLM calls that failed (left out of ``kit``), so an LLM row's 0.0 over a few
    answered questions is never read as a 0.0 over all ``n`` (blank where no count was recorded)."""
    out = []
    for label, key in (rows or HEADLINE).items():
        label = label.format(model=model)
        entry = results.data["metrics"].get(key)
        if entry is None:
            continue
        if not isinstance(entry, dict):
            entry = {"value": entry}
        out.append(
            {
                "number": label,
                "kit": entry.get("value"),
                "paper": entry.get("paper"),
                "n": entry.get("n"),
                "failed": entry.get("failed"),
                "reader / policy": entry.get("reader") or entry.get("note") or "",
            }
        )
    frame = pd.DataFrame(out, columns=["number", "kit", "paper", "n", "failed", "reader / policy"])
    for count in ("n", "failed"):  # whole counts: "5", never "5.0" beside a row without one (blank)
        values = ["" if row.get(count) is None else int(row[count]) for row in out]
        frame[count] = pd.Series(values, index=frame.index, dtype=object)
    return frame


# -- SEARCH, step by step --------------------------------------------------------------------------------


# -- the trace viewer --------------------------------------------------------------------------------


def render_trace(kg, trace: dict, max_facts: int = 4, question=None) -> str:
    """One question's thought / action / observation / verdict chain as plain text."""
    lines = [f"Question: {trace['question']}"]
    if question is not None:
        lines.append(f"Gold: {list(question.answers)[:5]}  ({question.qtype}, {question.qlabel})")
    for i, attempt in enumerate(trace["attempts"], 1):
        lines.append(
            f"── attempt {i}"
            + (f" (feedback: {' | '.join(attempt['feedback_in'])})" if attempt["feedback_in"] else "")
        )
        for step in attempt["steps"]:
            lines.append(f"  Thought: {step['thought'][:300]}")
            lines.append(f"  Action:  {step['action'][:300]}")
            if "search" in step:
                info = step["search"]
                lines.append(
                    f"    (h, r, t) = {tuple(info['triple'])} by {info['decomposer']}; "
                    f"{info['filtered']:,} facts after FILTER; {info['latency_ms']:.1f} ms"
                    + ("; chronological" if info["reordered"] else "")
                )
                facts = step["observation"]
                for f in facts[:max_facts]:
                    lines.append(f"    · {kg.verbalise(f)}")
                if len(facts) > max_facts:
                    lines.append(f"    · … {len(facts) - max_facts} more")
            if step.get("note"):
                lines.append(f"    note: {step['note']}")
        verdict = attempt.get("verdict")
        shown = (
            ("VALID" if verdict["valid"] else f"INVALID: {verdict['feedback']}") if verdict else "not checked"
        )
        lines.append(
            f"  → {attempt['outcome']}; answers {attempt['answers'][:3]}; verdict {shown}"
            + (f" ({verdict['source']})" if verdict else "")
        )
    return "\n".join(lines)


# -- figures ------------------------------------------------------------------------------------------


def short_label(method: str, how: str) -> str:
    """A bar label: "SAR · offline", "ReAct RAG · LLM", "paper SAR · GPT-4.1"."""
    if method.startswith("paper: "):
        return f"paper {method[7:]}"
    return f"{method} · {'offline' if 'no LLM' in how else 'LLM'}"


def fig_table1(table: pd.DataFrame, title: str = "Table 1 · MultiTQ Hits@1 (strict)"):
    """Overall / Single / Multiple Hits@1 of the kit's rows and the paper's GPT-4.1 rows."""
    rows = [
        r for r in table.to_dict("records") if not r["method"].startswith("paper") or "GPT-4.1" in r["how"]
    ]
    labels = [short_label(r["method"], r["how"]) for r in rows]
    series = {c: [np.nan if r[c] is None else float(r[c]) for r in rows] for c in COLUMNS[:3]}
    return plots.grouped_bars(
        labels,
        series,
        title=title,
        ylabel="Hits@1",
        note="kit LLM rows: the configured reader on the agent sample; offline rows: no LLM, every selected "
        "question; paper rows: GPT-4.1 on its 560-question sample",
    )


def recall_methods(frame: pd.DataFrame) -> list[str]:
    """The retrievals :func:`recall_by_qtype`'s frame compares (its value columns)."""
    return [c for c in frame.columns if c not in ("group", "category", "n")]


def fig_recall(frame: pd.DataFrame, methods: Sequence[str] | None = None):
    """SEARCH vs semantic answer recall by question category (grouped bars), for ``methods`` (default
    every retrieval of the frame)."""
    methods = recall_methods(frame) if methods is None else methods
    labels = [c if g != "overall" else "overall" for g, c in zip(frame.group, frame.category)]
    series = {m: frame[m].tolist() for m in methods}
    return plots.grouped_bars(
        labels,
        series,
        title="Answer recall of the retrieved evidence by question type",
        ylabel="answer recall",
        ylim=(0, 1.2),
        note="LLM-free; SAR: offline policy's SEARCHes",
    )


def fig_k(frame: pd.DataFrame, paper_points: dict[int, float]):
    """Fig. 3: Hits@1 and SEARCH answer recall over K, the paper's two quoted points as crosses."""
    plots.use_house_style()
    fig, ax = plt.subplots()
    ks = frame["K"].tolist()
    styles = {
        "SEARCH answer recall (offline policy, all questions)": ("search_recall", "-", "o"),
        "Hits@1, offline policy + template reader (all questions)": ("template_hits", "-", "s"),
        "Hits@1, LLM reader on SEARCH evidence (sample)": ("reader_hits", "--", "^"),
    }
    for label, (col, ls, marker) in styles.items():
        if col in frame and frame[col].notna().any():
            if col == "reader_hits":
                label += f" n={int(frame['reader_n'].iloc[0])}"
                failed = int(frame["reader_failed"].sum()) if "reader_failed" in frame else 0
                if failed:  # left out of the points, never plotted as 0
                    label += f", {failed} failed calls left out"
            ax.plot(ks, frame[col], ls=ls, marker=marker, label=label)
    if paper_points:
        ax.plot(
            list(paper_points),
            list(paper_points.values()),
            "x",
            ms=9,
            color="black",
            label="paper (GPT-4.1, quoted in text)",
        )
    ax.set_xticks(ks)
    ax.set_xlabel("K (facts per SEARCH)")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("Hits@1 / answer recall")
    ax.set_title("Fig. 3 · Sensitivity to K")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


#: a Fig. 4 column ``<curve> failed`` counts the failed calls left out of ``<curve>`` at each N
FAILED_SUFFIX = " failed"


def fig_n(frame: pd.DataFrame):
    """Fig. 4: Hits@1 over the verification budget N for each policy (one run per policy at the largest N)."""
    plots.use_house_style()
    fig, ax = plt.subplots()
    for col in [c for c in frame.columns if c != "N" and not str(c).endswith(FAILED_SUFFIX)]:
        label, failed = col, frame.get(f"{col}{FAILED_SUFFIX}")
        if failed is not None and failed.sum():  # left out of the points, never plotted as 0
            counts = [f"N={n} {int(k)}" for n, k in zip(frame["N"], failed) if k > 0]
            label += f"; failed calls left out: {', '.join(counts)}"
        ax.plot(frame["N"], frame[col], marker="o", label=label)
    ax.axvline(2, ls=":", color="grey")
    ax.text(2.05, 0.02, "paper's default N = 2", fontsize=7, color="grey")
    ax.set_xticks(frame["N"].tolist())
    ax.set_xlabel("N (verification iterations)")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("Hits@1 (strict)")
    ax.set_title("Fig. 4 · Sensitivity to N")
    ax.legend(loc="center right")
    plots.footnote(
        fig, "the paper's Fig. 4 prints no values; each curve is read from one run at its largest N"
    )
    fig.tight_layout()
    return fig
