"""TimeR4's tables and figures: Fig. 4 (Venn grid), Table 3, Table 5, Fig. 3, retriever recall before and
after fine-tuning (the paper-vs-released-code table lives in ``released``).

Every function takes what the notebook computed (rankings, reader results) and returns a frame or a
figure; nothing here retrieves or calls an LLM.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from temporag.answer import evaluate
from temporag.answer.evaluate import LENIENT, STRICT
from temporag.methods import plots
from temporag.methods.timer4.rerank import phi_t
from temporag.methods.timer4.store import date_text, fact_text
from temporag.reported import PaperRef

QTYPE_ORDER = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")
WHOLE = "lenient over the whole output (TimeR4's predict_answer.py: a gold is a substring of the reply)"
RULE_NAMES = {"strict": STRICT, "lenient": LENIENT, "whole": WHOLE}
COLUMNS = evaluate.TABLE1_GROUPS
VENN_LABELS = ("A: Fact Retriever", "B: Time-aware Retriever", "C: Ground truth")
VENN_NOTE = (
    "Elements are (question, gold answer) pairs of one question type. C: every gold answer. A: the gold "
    "answers that the fact retriever's top-{k} facts contain (an entity as subject or object, a time as "
    "a fact date inside the answer's day, month or year). B: the same for the time-aware retriever "
    "(rewritten question, fine-tuned model, rerank). A and B lie inside C; C alone = answers neither "
    "retriever brings."
)


# ----------------------------------------------------------------------------------------------------
# Figure 4


def venn_counts(a: set, b: set, c: set) -> dict[str, int]:
    """The seven region sizes in matplotlib-venn's order (100, 010, 110, 001, 101, 011, 111)."""
    return {
        "100": len(a - b - c),
        "010": len(b - a - c),
        "110": len((a & b) - c),
        "001": len(c - a - b),
        "101": len((a & c) - b),
        "011": len((b & c) - a),
        "111": len(a & b & c),
    }


VENN_COLORS = ("#1f77b4", "#ff7f0e", "#bbbbbb")


def venn_grid(sets: dict[str, tuple[set, set, set]], k: int = 15, note: str = ""):
    """Figure 4: three-set Venns (A fact retriever, B time-aware retriever, C ground truth) in a 2 × 3
    grid, one per MultiTQ question type, with the set definitions written under the figure.  The
    circles are area-proportional (matplotlib-venn); the set names go in one legend, not on each
    circle, so empty or coinciding sets do not stack labels."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib_venn import venn3, venn3_circles, venn3_unweighted

    plots.use_house_style()
    fig, axes = plt.subplots(2, 3, figsize=(12, 7.8))
    for ax, qtype in zip(axes.flat, QTYPE_ORDER):
        ax.grid(False)
        if qtype not in sets:
            ax.set_axis_off()
            ax.set_title(f"{qtype} (no questions)")
            continue
        a, b, c = sets[qtype]
        counts = venn_counts(a, b, c)
        subsets = tuple(counts[key] for key in ("100", "010", "110", "001", "101", "011", "111"))
        labels = ("", "", "")
        with warnings.catch_warnings():  # an empty set is a zero-area circle: expected, not a problem
            warnings.simplefilter("ignore", UserWarning)
            try:
                venn3(subsets=subsets, set_labels=labels, ax=ax, set_colors=VENN_COLORS, alpha=0.45)
                venn3_circles(subsets=subsets, ax=ax, linewidth=0.6, color="#555555")
            except Exception:  # noqa: BLE001 - degenerate sizes: equal areas instead, numbers stay exact
                venn3_unweighted(
                    subsets=subsets, set_labels=labels, ax=ax, set_colors=VENN_COLORS, alpha=0.45
                )
        ax.set_title(
            f"{qtype}\n{len(c)} gold answers · A {len(a)} · B {len(b)} · A∩B {len(a & b)}", fontsize=9
        )
    handles = [Patch(facecolor=col, alpha=0.45, label=lab) for col, lab in zip(VENN_COLORS, VENN_LABELS)]
    fig.legend(handles=handles, loc="upper center", ncols=3, bbox_to_anchor=(0.5, 0.955), frameon=False)
    fig.suptitle(
        "Fig. 4 · Answer coverage of the fact retriever, the time-aware retriever and the ground truth "
        f"(top {k})"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 0.93))
    fig.text(
        0.01,
        0.01,
        _wrap(VENN_NOTE.format(k=k) + (" " + note if note else ""), 190),
        fontsize=7.5,
        color="#333333",
        ha="left",
        va="bottom",
    )
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def venn_table(sets: dict[str, tuple[set, set, set]]):
    """The Venn regions as numbers: gold answers, covered by A, by B, by both, by only one, by neither."""
    import pandas as pd

    rows = []
    for qtype in QTYPE_ORDER:
        if qtype not in sets:
            continue
        a, b, c = sets[qtype]
        rows.append(
            {
                "qtype": qtype,
                "gold answers": len(c),
                "A (fact retriever)": len(a),
                "B (time-aware)": len(b),
                "A∩B": len(a & b),
                "A only": len(a - b),
                "B only": len(b - a),
                "neither": len(c - a - b),
            }
        )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------
# reader scores (Table 3, Table 5, Fig. 3)


def table3_rows(scores: dict, reader: str, paper_row: dict) -> list[dict]:
    """Rows of Table 3: the kit under the three rules beside the paper (which used the whole-output rule)."""
    rows = [
        {
            "model": f"TimeR4 — kit, reader {reader}",
            "rule": rule,
            **{c: scores[rule][c] for c in COLUMNS},
            "answers listed (mean)": scores["listed"],
            "answered": scores["answered"]["Overall"],
            "failed": scores["failed"]["Overall"],
        }
        for rule in ("strict", "lenient", "whole")
    ]
    rows.append(
        {
            "model": "TimeR4 — paper, LLaMA2-Chat-7B fine-tuned",
            "rule": "whole",
            **paper_row,
            "answers listed (mean)": None,
            "answered": None,
            "failed": None,
        }
    )
    return rows


def table3(scores: dict, reader: str):
    """Table 3 as a frame: the kit under every rule beside the paper's row (computed with the whole-output
    rule); :func:`.record.table3` records the same cells."""
    import pandas as pd

    return pd.DataFrame(table3_rows(scores, reader, {c: table3_ref(c).value() for c in COLUMNS}))


def table3_ref(column: str) -> PaperRef:
    """Where Table 3 prints TimeR4's Hits@1 of a column."""
    return PaperRef("timer4", "Table 3", "TimeR4", column)


def table5_ref(variant: str) -> PaperRef:
    """Where Table 5 prints a variant's Hit@1."""
    return PaperRef("timer4", "Table 5", variant, "Hit@1")


def table5(scores: dict, recall15: dict):
    """Table 5: reader Hits@1 (three rules) beside the paper's and answer recall@15 per variant
    (:func:`.record.table5` records them)."""
    import pandas as pd

    rows = []
    for name, sc in scores.items():
        rows.append(
            {
                "variant": name,
                **{f"Hits@1 {r}": sc[r]["Overall"] for r in ("strict", "lenient", "whole")},
                "paper Hit@1": table5_ref(name).value(),
                "answer recall@15 (all questions)": float(recall15[name].mean()),
                "answered": sc["answered"]["Overall"],
                "failed": sc["failed"]["Overall"],
            }
        )
    return pd.DataFrame(rows)


def fig3(ns: Sequence[int], recall_n: dict, hits_n: dict, n_recall: int, n_hits: int, reader: str):
    """Fig. 3: LLM-free answer recall@n beside the reader's Hits@1 over the number of facts shown."""
    peak = PaperRef("timer4", "Figure 3", "TimeR4", "Best number of retrieved facts").value()
    return plots.curves(
        ns,
        {
            "answer recall@n (LLM-free)": [recall_n[n] for n in ns],
            f"Hits@1, whole rule ({reader})": [hits_n[n] for n in ns],
        },
        title="Fig. 3 · Hits@1 and answer recall over the number of facts",
        xlabel="facts shown (n)",
        ylabel="share of questions",
        note=f"recall: {n_recall} questions; Hits@1: {n_hits} questions; the paper's curve peaks at "
        f"n = {peak:.0f}.",
    )


def rescored_table(rescored: dict):
    """Released TimeR4 outputs rescored by the kit (:func:`.released.rescore`), one row per file; None
    when none was given."""
    import pandas as pd

    return pd.DataFrame([{"file": k, **v} for k, v in rescored.items()]) if rescored else None


def headline(
    overall, trained, table3: dict, table5: dict, effects: dict, tks_latency, reader: str, n_reader: int
):
    """The closing table: each kit number with the paper's where the paper prints one."""
    import pandas as pd

    def paper(source, row, column):
        value = PaperRef("timer4", source, row, column).value()
        return "—" if value is None else f"{value:.4f}"

    rows = [
        (
            "retriever answer recall@15: base → fine-tuned (→ with rerank)",
            f"{overall['base model (before)']:.3f} → {overall['fine-tuned (after)']:.3f} "
            f"(→ {overall['fine-tuned + rerank']:.3f})",
            "—",
        ),
        (
            "time-aware retriever training: pairs / seconds",
            f"{trained.pairs:,} / {trained.seconds:.0f}",
            "MultiTQ train (~100k questions), 10 epochs, GPU",
        ),
    ]
    for rule in ("whole", "strict", "lenient"):
        rows.append(
            (
                f"Table 3 Overall Hits@1, {rule} rule ({reader}, n={n_reader})",
                f"{table3[rule]['Overall']:.3f}",
                paper("Table 3", "TimeR4", "Overall") if rule == "whole" else "—",
            )
        )
    for name, sc in table5.items():
        rows.append(
            (
                f"Table 5 {name}, whole rule (n={sc['answered']['Overall']})",
                f"{sc['whole']['Overall']:.3f}",
                paper("Table 5", name, "Hit@1"),
            )
        )
    for switch, text in effects.items():
        rows.append((f"released-code switch '{switch}': answer recall@15", text, "—"))
    rows.append(("time-aware retrieval p50 (ms)", f"{np.median(tks_latency) * 1e3:.1f}", "—"))
    return pd.DataFrame(rows, columns=["number", "kit", "paper"])


# ----------------------------------------------------------------------------------------------------
# retrieval recall


def recall_bars(frame, methods: Sequence[str], title: str, note: str = ""):
    rows = frame[frame.group != "qlabel"]
    return plots.grouped_bars(
        rows.category.tolist(),
        {m: rows[m].tolist() for m in methods},
        title=title,
        ylabel="answer recall@15",
        note=note,
    )


# ----------------------------------------------------------------------------------------------------
# worked examples


def examples_frame(kg, examples, n: int = 6):
    """Training examples as a table: the question, its positive and the three negatives."""
    import pandas as pd

    rows = []
    for e in examples[:n]:
        row = {"qtype": e.qtype, "question": e.question}
        for (f, _), kind in zip(
            e.facts(), ("positive", "time incorrect", "content incorrect", "both incorrect")
        ):
            row[kind] = f"{kg.triple_text(f.s, f.r, f.o)} {date_text(f.day)}"
        rows.append(row)
    return pd.DataFrame(rows)


def rerank_frame(kg, pool: np.ndarray, sims: np.ndarray, constraint, mu: float, rows: int = 10):
    """One question's candidates before and after Eq. 10: similarity, φ_t, final score, rank change."""
    import pandas as pd

    phi = phi_t(kg.t_start[pool], constraint)
    final = mu * np.asarray(sims, dtype=float) + (1 - mu) * phi
    new_rank = np.empty(len(pool), dtype=int)
    new_rank[np.lexsort((np.arange(len(final)), -final))] = np.arange(len(final))
    frame = pd.DataFrame(
        {
            "fact": [fact_text(kg, f) for f in pool],
            "similarity rank": np.arange(len(pool)) + 1,
            "φ_TKS": np.round(sims, 4),
            "φ_t (Eq. 9)": np.round(phi, 3),
            "φ (Eq. 10)": np.round(final, 4),
            "rank after rerank": new_rank + 1,
        }
    )
    return frame.sort_values("rank after rerank").head(rows).reset_index(drop=True)


def rewrite_frame(kg, rewrites, rows: int = 8):
    """Rewritten questions with the reference that was replaced and the fact the date came from."""
    import pandas as pd

    shown = [r for r in rewrites if r.changed][:rows]
    return pd.DataFrame(
        [
            {
                "question": r.question,
                "rewritten": r.rewritten,
                "reference": r.reference,
                "date from": fact_text(kg, r.source_fact) if r.source_fact is not None else "",
            }
            for r in shown
        ]
    )
