"""What STAR-RAG's notebook keeps: the rule graph's numbers, tables and figures, the reader tables and the
released-code decomposition, under the names the committed runs use; every number that sits beside the
paper's goes through ``Results.compare`` (kit value, paper value or None, n, reader, scoring rule).

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments` computed and records it;
it computes nothing itself (figures come drawn, by :mod:`.report`).  Tables 2–4 are made of the rows
``compare`` returns, so their record functions record and return them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.claims import Measured, record_outcomes
from temporag.methods.star_rag.paper_tables import (
    FIG3_METHODS,
    STRICT,
    comparison_frame,
    fig3_tokens_ref,
    paper_ref,
    table4_backbones,
    table4_row,
)

# -- the rule graph (Alg. 2, MDL, Fig. 2) -----------------------------------------------------------------


def labels(results, summary: Mapping[str, object]) -> None:
    """Alg. 2's labelling summary (``EntityLabels.summary()``) as ``labels/<key>``."""
    for key, value in summary.items():
        results.metric(f"labels/{key}", value)


def labelling_grid(results, grid: pd.DataFrame, figure, min_support: float, k_type: int) -> None:
    """The labelling grid over support thresholds and K_type (:func:`.experiments.labelling_grid`) and its
    figure; the caption names the setting the run uses."""
    caption = (
        "Alg. 2 on MultiTQ: labels and rule nodes for each Apriori support threshold and K_type "
        f"(subsets of at most 3 relations; used here: min_support={min_support}, K_type={k_type})."
    )
    results.table("labelling_grid", grid, caption)
    results.figure("labelling_grid", figure)


def mdl(results, selection, figure) -> None:
    """The description length before and after MDL selection (``graph.mdl``) and its trace figure."""
    results.metric("rule_graph/L_before_bits", selection.L_before)
    results.metric("rule_graph/L_after_bits", selection.L_after)
    results.figure("mdl_trace", figure)


def null_window(results, windows: pd.DataFrame) -> None:
    """MDL selection against the window of the uniform span code (:func:`.experiments.null_window_table`)."""
    results.table(
        "mdl_null_window",
        windows,
        "MDL selection vs the window W of the uniform code for unexplained spans, and with ΔL(M) "
        "left out (Eq. 7 read literally). The kit uses W = the KG's period, with L(M).",
    )


def rule_graph(
    results, metrics: Mapping[str, object], timings: Mapping[str, float], statistics: pd.DataFrame, figure
) -> None:
    """The rule graph's numbers (:func:`.experiments.graph_metrics`), its build time (``graph.timings``: the
    total, and whether it was loaded from the cache), its statistics table and its anatomy figure."""
    for key, value in metrics.items():
        results.metric(key, value)
    cached = bool(timings.get("loaded_from_cache"))
    results.metric("rule_graph/build_seconds", timings.get("total"), loaded_from_cache=cached)
    caption = "Rule-graph statistics on the full MultiTQ KG (the paper prints none)."
    results.table("rule_graph_statistics", statistics, caption)
    results.figure("rule_graph_anatomy", figure)


def neighbourhood(results, figure) -> None:
    """The Fig. 2-style neighbourhood of the heaviest seed (:func:`.report.draw_neighbourhood`)."""
    results.figure("rule_graph_neighbourhood", figure)


# -- LLM-free retrieval, Fig. 5 ---------------------------------------------------------------------------


def recall_by_qtype(results, table: pd.DataFrame, k: int, n: int) -> None:
    """Answer recall of the top-``k`` events by question type (``evaluate.pivot_by_category``)."""
    results.table(
        "answer_recall_by_qtype",
        table,
        f"Answer recall of the top-{k} retrieved events by question type (LLM-free, "
        f"{n} questions). The paper reports no retrieval recall.",
    )


def retrieval(results, metrics: Mapping[str, tuple], figure) -> None:
    """The LLM-free retrieval numbers (``key: (value, context)``: :func:`.experiments.recall_metrics` and
    :func:`.experiments.retrieval_metrics`) and the recall figure."""
    for key, (value, context) in metrics.items():
        results.metric(key, value, **context)
    results.figure("answer_recall_by_qtype", figure)


def fig5_recall(results, recall_grid: np.ndarray, grid: Sequence[int], n: int, figure) -> None:
    """Fig. 5 LLM-free: answer recall of the top-K1 events over the K1 × K2 ``grid``, and its heatmap."""
    results.metric("fig5/answer_recall_grid", recall_grid.tolist(), rows_K1=grid, cols_K2=grid, n=n)
    results.figure("fig5_k1_k2_recall", figure)


def fig5_hits(
    results, hits_grid: np.ndarray, grid: Sequence[int], n: int, failed: np.ndarray, reader: str, figure
) -> None:
    """Fig. 5 with a reader: Hit@1 over the grid on ``n`` questions a cell (failed calls per cell apart),
    and its heatmap."""
    results.metric(
        "fig5/hits@1_grid", hits_grid.tolist(), rows_K1=grid, cols_K2=grid, n=n, failed=failed.tolist(),
        reader=reader,
    )
    results.figure("fig5_k1_k2_hits1", figure)


# -- the reader tables (Tables 2-4, Fig. 3) ---------------------------------------------------------------


def table2_multitq(results, rates: Mapping, reader: str, n: int) -> pd.DataFrame:
    """Table 2, MultiTQ column: strict Hits@1/5/10 (:func:`.paper_tables.hit_rates`) beside the paper's,
    as ``table2/MultiTQ/<method>/hits@<k>``, and the table of the compared rows, which it returns.  Table 2
    has no semantic row; its paper Hit@1 is Table 4's STAR-RAG-no-rule."""
    rows = []
    for name, label in (("STAR-RAG-no-rule", "semantic (= STAR-RAG-no-rule)"), ("STAR-RAG", "STAR-RAG")):
        for k in (1, 5, 10):
            if name == "STAR-RAG":
                ref = paper_ref("Table 2", "STAR-RAG", f"Hit@{k}")
            else:
                ref = paper_ref("Table 4", "STAR-RAG-no-rule", "Acc.") if k == 1 else None
            key = f"table2/MultiTQ/{name}/hits@{k}"
            score = rates[name][k]
            row = results.compare(
                key, score["value"], ref, n=n, reader=reader, rule=STRICT, failed=score["failed"]
            )
            rows.append({"method": label, "k": k, **row})
    table = comparison_frame(rows)
    results.table(
        "table2_multitq",
        table,
        f"Table 2, MultiTQ column (strict Hits@k, reader {reader}, {n} "
        "questions). Paper: Llama-3.3-70B reader, 1,000 questions, mean of 5 runs. Table 2 has no "
        "semantic row; its paper Hit@1 is Table 4's STAR-RAG-no-rule.",
    )
    return table


def table2_other(results, table: pd.DataFrame) -> None:
    """Table 2's CronQuestion and Forecast columns (:func:`.paper_tables.table2_other_datasets`)."""
    results.table("table2_other_datasets", table, "Table 2, CronQuestion and Forecast columns (STAR-RAG).")


def table3(results, scores: Mapping, recall_table: pd.DataFrame, reader: str, k: int) -> pd.DataFrame:
    """Table 3: strict Hit@1 on single- vs multiple-event questions (:func:`.paper_tables.table3_scores`)
    beside the paper's, as ``table3/<method>/<label>/hits@1``, with the LLM-free answer recall@k of every
    selected question (``recall_table``) for context; records and returns the table of those rows."""
    rows = []
    for name, by_category in scores.items():
        for label, column in (("Single", "Single-event"), ("Multiple", "Multiple-event")):
            n = by_category["n"][label]
            if n == 0:
                continue
            ref = paper_ref("Table 3", "STAR-RAG", column) if name == "STAR-RAG" else None
            hit = by_category[STRICT][label]
            row = results.compare(f"table3/{name}/{label}/hits@1", hit, ref, n=n, reader=reader, rule=STRICT)
            recall = recall_table.loc[
                (recall_table.group == "qlabel") & (recall_table.category == label), name
            ]
            rows.append(
                {
                    "method": name,
                    "questions": column,
                    **row,
                    f"answer recall@{k} (all)": float(recall.iloc[0]),
                }
            )
    table = comparison_frame(rows)
    results.table(
        "table3_single_multiple",
        table,
        f"Table 3: Hit@1 on single- vs multiple-event questions (reader {reader}), with the "
        "LLM-free answer recall on every selected question for context.",
    )
    return table


def table4(results, numbers: Mapping[str, dict], reader: str, n: int, served: bool) -> pd.DataFrame:
    """Table 4: the ablations' accuracy (Hit@1) and time per question (retrieval + reading), from
    :func:`.paper_tables.table4_numbers`, beside the paper's (``table4/<method>/...``); records and returns
    them as rows with the backbone rows (:func:`.paper_tables.table4_backbones`: a served model fills the
    STAR-RAG+⟨model⟩ row)."""
    rows = []
    for name, got in numbers.items():
        score = got["hits@1"]
        accuracy = results.compare(
            f"table4/{name}/hits@1",
            score["value"],
            paper_ref("Table 4", name, "Acc."),
            n=n,
            reader=reader,
            rule=STRICT,
            failed=score["failed"],
        )
        seconds = results.compare(
            f"table4/{name}/seconds",
            got["seconds"],
            paper_ref("Table 4", name, "Tim."),
            reader=reader,
            note="retrieval (embedding excluded) + reading",
        )
        rows.append(
            table4_row(name, reader, n, accuracy["kit"], accuracy["paper"], seconds["kit"], seconds["paper"])
            | {"failed": score["failed"]}
        )
    rows += table4_backbones(numbers, reader, n, served)
    table = pd.DataFrame(rows)
    results.table(
        "table4_ablations",
        table,
        f"Table 4 (MultiTQ): ablations. Kit reader {reader} on {n} "
        "questions; time = retrieval (embedding excluded) + the reader's mean call time. "
        "Paper: Llama-3.3-70B.",
    )
    return table


def fig3(
    results, numbers: Mapping[str, dict], reader: str, n: int, table: pd.DataFrame | None = None, figure=None
) -> None:
    """Fig. 3's numbers (:func:`.paper_tables.fig3_numbers`): the cl100k prompt tokens on every selected
    question, and tokens and seconds per question on the ``n`` read beside the paper's; then its table and
    figure (:func:`.report.fig3`) when given."""
    for name in FIG3_METHODS:
        got = numbers[name]
        results.metric(
            f"fig3/{name}/prompt_tokens_cl100k_all_questions", got["prompt_tokens_cl100k"], n=got["questions"]
        )
        note = f"token source: {got['token_source']}"
        results.compare(
            f"fig3/{name}/tokens_per_question",
            got["tokens"],
            fig3_tokens_ref(name),
            n=n,
            reader=reader,
            note=note,
        )
        results.compare(
            f"fig3/{name}/seconds_per_question",
            got["seconds"],
            paper_ref("Table 4", name, "Tim."),
            reader=reader,
        )
    if table is not None:
        caption = f"Fig. 3 (MultiTQ): tokens and time per question. Reader {reader}."
        results.table("fig3_tokens_time", table, caption)
    if figure is not None:
        results.figure("fig3_tokens_time", figure)


# -- paper, released code, kit ----------------------------------------------------------------------------


def paper_vs_code(results, table: pd.DataFrame, source: str) -> None:
    """The paper, the released code (``source``, read by file:line) and the kit
    (:func:`.code_tables.paper_vs_code`)."""
    results.table(
        "paper_vs_released_code",
        table,
        f"The paper, the released code ({source}; our reading, cited by file:line) and "
        "what the kit runs.",
    )


def decomposition(results, numbers: dict) -> None:
    """The released-code decomposition's numbers (:func:`.code_tables.decomposition`):
    ``decomposition/<row>/answer_recall`` (with every category), ``.../prompt_tokens_cl100k`` and, where
    the reader read, ``.../hits@1``; the released code's traces as the ``released_code`` predictions."""
    n = numbers["questions"]
    for name, row in numbers["rows"].items():
        results.metric(f"decomposition/{name}/answer_recall", row["answer_recall"], n=n, by=row["recall_by"])
        results.metric(f"decomposition/{name}/prompt_tokens_cl100k", row["prompt_tokens"], n=n)
        if "hits@1_by" in row:
            results.metric(
                f"decomposition/{name}/hits@1",
                row["hits@1_by"]["Overall"],
                n=numbers["n_read"],
                reader=numbers["reader"],
                rule=evaluate.STRICT,
                by=row["hits@1_by"],
            )
    if "released_code" in numbers:
        results.predictions("released_code", numbers["released_code"])


def paper_released_kit(results, numbers: dict, table: pd.DataFrame, reader: str, n_read: int) -> None:
    """The decomposition's numbers (:func:`decomposition`) and its table, whose caption names the
    ``reader`` and the ``n_read`` seeded questions it read per row."""
    decomposition(results, numbers)
    results.table(
        "paper_released_kit",
        table,
        f"Paper, released code, kit ({numbers['questions']} questions): answer recall of what "
        f"the reader is shown (LLM-free) and its prompt tokens (cl100k); strict Hit@1 of "
        f"{reader} on {n_read} seeded reader questions per row (0: not read).",
    )


def decomposition_figure(results, figure) -> None:
    """The decomposition's figure (:func:`.report.decomposition_figure`)."""
    results.figure("paper_released_kit", figure)


def summary(
    results, predictions: Mapping[str, list], table: pd.DataFrame, runtime: float, profile: str
) -> None:
    """The per-question predictions (:func:`.paper_tables.predictions`: key → records), the run's time and
    the headline ``summary`` table (:func:`.report.summary_table`)."""
    for key, records in predictions.items():
        results.predictions(key, records)
    results.metric("runtime_s", runtime, profile=profile)
    results.table("summary", table, f"Headline numbers ({profile} profile, {runtime:.0f} s).")


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
