"""What SAR's notebook keeps: every metric and table it writes into the run's results, under the names the
committed runs use.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments` and :mod:`.report`
computed (frames, measures, Table 1 / 2 rows) and records it; it computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from temporag.claims import Measured, record_outcomes
from temporag.methods.sar.experiments import N_GRID, paper_k_points
from temporag.methods.sar.report import COLUMNS, recall_methods
from temporag.reported import PaperRef


def protocol(results, table: pd.DataFrame, paper_sample: dict, agent_sample: dict) -> None:
    """How the paper's 560-question sample and the LLM agent's sample were drawn (``sar.paper_sample``'s
    info: ``drawn`` and how), and the protocol table (:func:`.experiments.protocol_table`)."""
    results.metric("protocol/paper_sample", paper_sample["drawn"], **paper_sample)
    results.metric("protocol/agent_sample", agent_sample["drawn"], **agent_sample)
    results.table("protocol", table, "Question sets: the paper draws 560 (half Single, half Multiple).")


def filter_sizes(results, table: pd.DataFrame, month: str) -> None:
    """The facts FILTER keeps for each type at ``month`` (:func:`.experiments.filter_sizes`)."""
    results.table("filter_granularity", table, f"Facts kept by FILTER for each type at the month {month}.")


def search_example(results, table: pd.DataFrame, query: str) -> None:
    """One SEARCH's Eq. 1 components for ``query`` (:func:`.experiments.search_example`)."""
    results.table("search_example", table, f"SEARCH('{query}', ANYTIME): Eq. 1 components.")


def offline_measures(results, measures: pd.Series, n: int) -> None:
    """The offline agent's LLM-free measures (:func:`.experiments.offline_measures`), each a metric with
    the ``n`` questions it was measured on."""
    for key, value in measures.items():
        results.metric(key, float(value), n=n, rule="strict" if "hits" in key else None)


def llm_agent(results, measures: dict, model: str) -> dict:
    """The LLM agent's Hits@1, outcomes and calls per question under ``llm/``
    (:func:`.experiments.llm_agent_measures`); returns the Hits@1 summary."""
    score = measures["hits@1"]
    results.metric(
        "llm/hits@1",
        score["value"],
        n=score["n"],
        answered=score["answered"],
        failed=score["failed"],
        reader=model,
        rule="strict",
    )
    results.metric("llm/outcomes", measures["outcomes"], reader=model)
    results.metric("llm/calls_per_question", measures["calls_per_question"], reader=model)
    return score


def compare_rows(results, rows: Sequence[dict], source: str, prefix: str, columns=COLUMNS) -> None:
    """Each kit row beside the paper's GPT-4.1 row (``results.compare``), one metric per column:
    ``<prefix>/<method>/<offline|llm>/<column>``; a column without questions is recorded as None."""
    for row in rows:
        paper_row_name = f"{row['method']} (GPT-4.1)" if source == "Table 1" else row["method"]
        key = f"{prefix}/{row['method']}/{'offline' if 'no LLM' in row['how'] else 'llm'}"
        for column in columns:
            value = row[column] if row[column] == row[column] else None
            ref = PaperRef("sar", source, paper_row_name, column)
            results.compare(
                f"{key}/{column}",
                value,
                ref,
                n=row["n"],
                reader=row["how"],
                rule="strict",
                failed=row["failed"],
            )


def table1(results, table: pd.DataFrame, n_questions: int, n_agent: int, model: str) -> None:
    """Table 1's MultiTQ columns, kit rows and the paper's (``table1_multitq``)."""
    caption = (
        f"Table 1 (MultiTQ columns), strict Hits@1. Kit: {n_questions} questions LLM-free, "
        f"{n_agent} with reader {model}. Paper: 560-question sample, backbones as named."
    )
    results.table("table1_multitq", table, caption)


def table1_rows(results, rows: Sequence[dict], figure) -> None:
    """Each Table 1 kit row beside the paper's (:func:`compare_rows`) and the table's figure
    (:func:`.report.fig_table1`, shown in the cell)."""
    compare_rows(results, rows, "Table 1", "table1")
    results.figure("table1_multitq", figure)


TABLE2_COLUMNS = ("Overall", "Single", "Multiple")  # the columns Table 2 prints


def table2(
    results, table: pd.DataFrame, rows: Sequence[dict], n_questions: int, n_agent: int, model: str
) -> None:
    """Table 2's ablations (``table2_ablations``) and each kit row beside the paper's."""
    caption = (
        f"Table 2 (MultiTQ): ablations, strict Hits@1; offline rows on {n_questions} "
        f"questions, LLM rows on {n_agent} with {model}; paper rows GPT-4.1."
    )
    results.table("table2_ablations", table, caption)
    compare_rows(results, rows, "Table 2", "table2", columns=TABLE2_COLUMNS)


def k_sweep(results, k_frame: pd.DataFrame, n_questions: int, n_sweep: int, model: str, figure) -> None:
    """Fig. 3: the K sweep's table and its per-K recall and Hits@1 metrics (Hits@1 beside the value the
    paper's text quotes), then the figure (:func:`.report.fig_k`, shown in the cell)."""
    caption = (
        f"Fig. 3: answer recall and Hits@1 over K (offline: {n_questions} questions; "
        f"reader {model}: {n_sweep} questions per K)."
    )
    results.table("fig3_k_sweep", k_frame, caption)
    paper_k = paper_k_points()
    for row in k_frame.itertuples():
        results.metric(f"fig3/K={row.K}/search_recall", row.search_recall, n=n_questions)
        results.metric(
            f"fig3/K={row.K}/template_hits@1", row.template_hits, n=n_questions, paper=paper_k.get(row.K)
        )
    results.figure("fig3_k_sensitivity", figure)


def n_sweep(results, n_frame: pd.DataFrame, n_questions: int, figure) -> None:
    """Fig. 4: the N sweep's table, the offline curve's value at each N as a metric, and the figure
    (:func:`.report.fig_n`, shown in the cell)."""
    results.table("fig4_n_sweep", n_frame, "Fig. 4: strict Hits@1 over the verification budget N.")
    offline = n_frame.set_index("N")[f"offline policy + rule verifier (n={n_questions})"]
    for n in N_GRID:
        results.metric(f"fig4/offline/N={n}", float(offline.loc[n]), n=n_questions)
    results.figure("fig4_n_sensitivity", figure)


def recall_by_qtype(results, recall_frame: pd.DataFrame, k: int, n_questions: int, figure) -> None:
    """The answer-recall-by-qtype table, each retrieval's overall recall as a metric, and the figure
    (:func:`.report.fig_recall`, shown in the cell)."""
    caption = (
        f"Answer recall by qtype: SAR's SEARCH evidence (offline policy, K={k}) "
        "vs semantic retrieval at K and at the same number of facts."
    )
    results.table("search_recall_by_qtype", recall_frame, caption)
    overall = recall_frame.loc[recall_frame.group == "overall"]
    for method in recall_methods(recall_frame):
        results.metric(f"recall/{method}", float(overall[method].iloc[0]), n=n_questions)
    results.figure("search_recall_by_qtype", figure)


def cost(results, cost: pd.DataFrame) -> None:
    """The cost table and each method's LLM calls per question (with its prompt tokens) as a metric."""
    results.table("cost_per_question", cost, "LLM calls, tokens and seconds per question for each method.")
    for row in cost.to_dict("records"):
        results.metric(
            f"cost/{row['method']}/llm_calls_per_question",
            row["LLM calls / q"],
            tokens=row["prompt tokens / q"],
        )


def latency(results, speed: pd.DataFrame) -> None:
    """The latency table (:func:`.experiments.latency_table`) and one SEARCH's p50 beside the kit's
    20 ms target, with the number of SEARCHes timed."""
    results.table("latency", speed, "Retrieval latency on this machine (query embedding excluded).")
    results.metric("latency/search_p50_ms", speed.p50_ms.iloc[0], target_ms=20, n=int(speed.n.iloc[0]))


def headline(results, table: pd.DataFrame, profile: str) -> None:
    """The headline numbers (:func:`.report.headline`)."""
    results.table("headline", table, f"Headline numbers ({profile} profile).", float_format="{:.4f}")


def predictions(results, offline: list[dict], traces: list[dict], llm_agents: list[dict]) -> None:
    """The offline agent's per-question answers (:func:`.experiments.compact_predictions`), the first
    offline ``traces`` in full, and the LLM agents' answers (:func:`.experiments.method_predictions`)."""
    results.predictions("sar_offline", offline)
    results.predictions("sar_offline_traces", traces)
    results.predictions("llm_agents", llm_agents)


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
