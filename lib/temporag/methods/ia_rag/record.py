"""What IA-RAG's notebook keeps: every metric, table and figure it writes into the run's results, under the
names the committed runs use.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments` (the builds, the tables
of :mod:`.build_tables`, :mod:`.retrieval_tables`, :mod:`.ablations` and :mod:`.reader_tables`) computed
and records it; it computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from temporag.answer import evaluate
from temporag.cache import data_checksums
from temporag.claims import Measured, record_outcomes
from temporag.methods.ia_rag.ablations import ABLATION_BUDGET
from temporag.methods.ia_rag.reader_tables import paper_row
from temporag.methods.ia_rag.setups import Setup
from temporag.reported import PaperRef

# ----------------------------------------------------------------------------------------------------
# what each build made


def data_files(results, files: Sequence[str | Path]) -> None:
    """The checksums of the data files the run read (:func:`.experiments.load_datasets`), in place of
    the ones the run started with."""
    results.data["data_checksums"] = data_checksums(files)


def extraction(results, table: pd.DataFrame) -> None:
    """IEUs per data set (:func:`.build_tables.extraction_table`)."""
    results.table(
        "ieu_extraction",
        table,
        "IEUs per data set (offline extractor unless set otherwise); rule columns count the "
        "conversion-table rows (A day, B month, C year, D interval, E until, F fuzzy, G relative).",
    )


def unit_coverage(results, coverage_table: pd.DataFrame) -> None:
    """The unit-coverage table and each data set's coverage (:func:`coverage`)."""
    results.table(
        "unit_coverage",
        coverage_table,
        "Unit coverage: gold answers present in the gold page's units "
        "(before: the previous extractor on the shared questions).",
    )
    coverage(results, coverage_table)


def extractor_units(results, llm_units: int, offline_units: int, reader: str) -> None:
    """How many IEUs the LLM extractor (with ``reader``) and the offline one find in the first chunk."""
    results.metric("extractor/llm_ieus_first_chunk", llm_units, reader=reader)
    results.metric("extractor/offline_ieus_first_chunk", offline_units)


def coverage(results, coverage: pd.DataFrame) -> None:
    """``coverage/<data set>``: the unit coverage, with the previous extractor's as ``before``."""
    for row in coverage.to_dict("records"):
        before = float(row["unit coverage before"])
        results.metric(f"coverage/{row['dataset']}", float(row["unit coverage"]), before=before)


def graphs(results, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]) -> None:
    """``graph/<data set>/...``: edges and units of the paper-τ graph, the calibrated τ and its edges."""
    for dataset, setup in paper.items():
        calibrated_stats = tuned[dataset].build.stats
        results.metric(f"graph/{dataset}/edges", setup.build.stats["graph"]["edges"])
        results.metric(f"graph/{dataset}/ieus", setup.build.stats["graph"]["ieus"])
        results.metric(f"graph/{dataset}/calibrated_tau", calibrated_stats["tau"])
        results.metric(f"graph/{dataset}/calibrated_edges", calibrated_stats["graph"]["edges"])


def event_graph(
    results, table: pd.DataFrame, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]
) -> None:
    """The event-graph table (:func:`.build_tables.graph_table`) and its numbers (:func:`graphs`)."""
    results.table(
        "event_graph",
        table,
        "Interval-aware event graph before tightening: the paper's tau and the calibrated one (25th "
        "percentile of nearest-neighbour cosines), K=50.",
    )
    graphs(results, paper, tuned)


def fig4_allen(results, table: pd.DataFrame, figure) -> None:
    """Fig. 4: edges per Allen relation as a table, as metrics (:func:`allen`) and as a figure
    (:func:`.report.fig_allen`)."""
    results.table(
        "fig4_allen",
        table,
        "Fig. 4: edges per Allen relation (inverse pairs merged), share of related edges, calibrated graphs.",
    )
    allen(results, table)
    results.figure("fig4_allen", figure)


def allen(results, allen: pd.DataFrame) -> None:
    """``fig4/<data set>/<relation>``: edges per merged Allen relation
    (:func:`.build_tables.allen_distribution`)."""
    for row in allen.to_dict("records"):
        results.metric(f"fig4/{row['dataset']}/{row['relation']}", int(row["edges"]))


def tightening(results, tightening: pd.DataFrame) -> None:
    """``tightening/<data set>/<build>/narrowed`` with the widened count (which must be 0), and the table
    (:func:`.build_tables.tightening_table`)."""
    for row in tightening.to_dict("records"):
        results.metric(
            f"tightening/{row['dataset']}/{row['build']}/narrowed",
            row["narrowed"],
            widened=row["widened (must be 0)"],
        )
    results.table(
        "tightening",
        tightening,
        "Sub-graph time tightening (offline operator unless set otherwise), paper-tau and calibrated builds.",
    )


def forest_levels(
    results, table: pd.DataFrame, max_levels: int, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]
) -> None:
    """The forest-per-level table (:func:`.build_tables.forest_table`) and the MEU counts
    (:func:`forests`)."""
    caption = f"Thematic forest per level (MAX_LEVELS={max_levels}), paper-tau and calibrated builds."
    results.table("forest_levels", table, caption)
    forests(results, paper, tuned)


def tree(results, figure) -> None:
    """Fig. 5: one thematic tree (:func:`.report.fig_tree`)."""
    results.figure("fig5_tree", figure)


def forests(results, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]) -> None:
    """``forest/<data set>/meus`` and ``.../calibrated_meus``: MEUs of the paper-τ and calibrated forests."""
    for dataset, setup in paper.items():
        results.metric(f"forest/{dataset}/meus", setup.build.stats["meus"])
        results.metric(f"forest/{dataset}/calibrated_meus", tuned[dataset].build.stats["meus"])


# ----------------------------------------------------------------------------------------------------
# LLM-free retrieval recall


def retrieval_recall(results, recall: pd.DataFrame) -> None:
    """:func:`.retrieval_tables.operating_points`' table, and ``retrieval_recall/<data set>/<method>``
    with n and tokens."""
    results.table(
        "retrieval_recall",
        recall,
        "The paper's protocol: LLM-free retrieval recall (all gold answers in the retrieved text) at each "
        "method's own context size, every selected question.",
    )
    for row in recall.to_dict("records"):
        results.metric(
            f"retrieval_recall/{row['dataset']}/{row['method']}",
            float(row["retrieval recall"]),
            n=int(row["n"]),
            tokens=float(row["tokens / question"]),
        )


def token_curves(results, curves: pd.DataFrame, figures: Mapping[str, object]) -> None:
    """The curves' table, ``tokens_recall/<data set>/<method>/<budget>`` (each retriever's recall at each
    budget) and one figure per data set (``figures``: data set → :func:`.report.fig_token_curves`)."""
    results.table(
        "tokens_recall",
        curves,
        "Retrieval recall at equal context tokens (cl100k), every selected question; 'tokens shown' < "
        "budget when a method's ranked list is shorter.",
    )
    for row in curves.to_dict("records"):
        results.metric(f"tokens_recall/{row['dataset']}/{row['method']}/{row['budget']}", row["recall"])
    for dataset, figure in figures.items():
        results.figure(f"tokens_recall_{dataset}", figure)


def types(results, counts: Mapping[str, Mapping[str, int]]) -> None:
    """``types/<data set>/<T1..T5>``: questions per reasoning type (:func:`.retrieval_tables.type_counts`,
    most frequent first)."""
    for dataset, by_label in counts.items():
        for label, count in by_label.items():
            results.metric(f"types/{dataset}/{label}", count)


def type_tables(
    results,
    table9: pd.DataFrame,
    table10: pd.DataFrame,
    classifier: str,
    counts: Mapping[str, Mapping[str, int]],
) -> None:
    """Tables 9 and 10 (:func:`.retrieval_tables.type_distribution`) and the counts per type
    (:func:`types`)."""
    caption = f"Table 9: T1-T5 counts ({classifier} classifier) vs the paper's."
    results.table("table9_types", table9, caption)
    caption = "Table 10: Explicit / Relative / Compositional counts vs the paper's."
    results.table("table10_groups", table10, caption)
    types(results, counts)


def table5(results, table: pd.DataFrame) -> None:
    """Table 5 (ComplexTR) by reasoning group (:func:`.retrieval_tables.reasoning_groups`)."""
    results.table(
        "table5_types",
        table,
        "Table 5 (ComplexTR): kit = retrieval recall by reasoning group (LLM-free, the paper's protocol); "
        "the paper prints reader accuracy.",
    )


def ablation_tables(
    results, ablation: pd.DataFrame, paper_tau: pd.DataFrame, table3: pd.DataFrame, table4: pd.DataFrame
) -> None:
    """The ablations on the calibrated graph and at the paper's tau (:func:`.ablations.ablations`), and
    Tables 3 and 4 as effects (:func:`.report.effect_table`)."""
    results.table(
        "ablations",
        ablation,
        "Ablations on the calibrated graph: recall at equal tokens and of the whole union (LLM-free, "
        "every selected question).",
    )
    results.table(
        "ablations_paper_tau", paper_tau, "The same ablations at the paper's tau (MEU lines, seeds first)."
    )
    results.table(
        "table3_ablations",
        table3,
        "Table 3 as effects: kit = change in retrieval recall at equal tokens (calibrated graph); paper = "
        "change in reader Recall. Not the same measure.",
    )
    results.table("table4_traversal", table4, "Table 4 as effects, same reading as Table 3.")


def ablations(results, ablation: pd.DataFrame, prefix: str) -> None:
    """``<prefix>/<data set>/<variant>``: recall at :data:`.ablations.ABLATION_BUDGET` tokens, with the
    whole union's recall and tokens."""
    for row in ablation.to_dict("records"):
        results.metric(
            f"{prefix}/{row['dataset']}/{row['variant']}",
            float(row[f"recall @{ABLATION_BUDGET}"]),
            union_recall=float(row["union recall"]),
            union_tokens=float(row["union tokens"]),
        )


def sensitivity_tables(
    results, sensitivity: pd.DataFrame, table7: pd.DataFrame, table8: pd.DataFrame
) -> None:
    """Tables 7 and 8 on the calibrated graph (:func:`.ablations.depth_and_meus`) and each read as the
    paper's (:func:`.report.setting_table`)."""
    results.table(
        "sensitivity",
        sensitivity,
        "Tables 7 and 8 on the calibrated graph: recall at equal tokens and of the whole union by "
        "MAX_LEVELS and by K1.",
    )
    results.table(
        "table7_depth",
        table7,
        "Table 7: kit = retrieval recall at equal tokens by MAX_LEVELS; paper = that setting's rank in "
        "reader Recall (compare the best setting, not levels).",
    )
    results.table(
        "table8_meus",
        table8,
        "Table 8: kit = retrieval recall at equal tokens by K1; paper = that setting's rank in reader "
        "Recall.",
    )


def sensitivity_paper_tau(results, sensitivity: pd.DataFrame) -> None:
    """Tables 7 and 8 at the paper's τ_sem and retrieval (:func:`.ablations.depth_and_meus` on the paper
    setups): the ``sensitivity_paper_tau`` table and ``sensitivity_paper_tau/<data set>/<setting>``."""
    results.table(
        "sensitivity_paper_tau",
        sensitivity,
        "Tables 7 and 8 at the paper's τ_sem = 0.8 and retrieval (MEU lines, seeds first): recall at equal "
        "tokens and of the whole union by MAX_LEVELS and by K1.",
    )
    for row in sensitivity.to_dict("records"):
        results.metric(
            f"sensitivity_paper_tau/{row['dataset']}/{row['variant']}",
            float(row[f"recall @{ABLATION_BUDGET}"]),
            union_recall=float(row["union recall"]),
        )


def sensitivity(results, sensitivity: pd.DataFrame) -> None:
    """``sensitivity/<data set>/<setting>``: recall at :data:`.ablations.ABLATION_BUDGET` tokens and of
    the union."""
    for row in sensitivity.to_dict("records"):
        results.metric(
            f"sensitivity/{row['dataset']}/{row['variant']}",
            float(row[f"recall @{ABLATION_BUDGET}"]),
            union_recall=float(row["union recall"]),
        )


# ----------------------------------------------------------------------------------------------------
# the reader


def table2(results, means: Mapping[str, Mapping[str, dict]], reader: str) -> pd.DataFrame:
    """Table 2: each row's reader accuracy and recall per data set (:func:`.reader_tables.reader_means`)
    beside the paper's, recorded as ``table2/<data set>/<row>/<metric>``; records and returns the compared
    rows as a table."""
    records = []
    for row in ("Vanilla RAG", "IA-RAG"):
        for dataset, by_method in means.items():
            for method, by_metric in by_method.items():
                if paper_row(method) != row:
                    continue
                for metric, column in (("accuracy", "Acc."), ("recall", "Recall")):
                    mean = by_metric[metric]
                    paper = PaperRef("ia_rag", "Table 2", row, column, dataset)
                    records.append(
                        results.compare(
                            f"table2/{dataset}/{row}/{metric}",
                            mean["value"],
                            paper,
                            n=mean["n"],
                            failed=mean["failed"],
                            reader=reader,
                            rule="DyG-RAG token-level",
                        )
                    )
    table = pd.DataFrame(records)
    caption = f"Table 2, reader {reader} on a seeded sample per data set; {evaluate.TOKEN_LEVEL}."
    results.table("table2", table, caption)
    return table


def fig3(results, points: pd.DataFrame, figure, reader: str) -> None:
    """Fig. 3's points (:func:`.reader_tables.accuracy_tokens`) and its figure."""
    caption = f"Fig. 3 points: reader {reader} accuracy vs its prompt tokens."
    results.table("fig3_accuracy_tokens", points, caption)
    results.figure("fig3_accuracy_tokens", figure)


def build_times(results, speed: pd.DataFrame, retrieval: list[dict], reader: list[dict]) -> None:
    """The index build times (:func:`.build_tables.build_times`) and the per-question ``retrieval`` and
    ``reader`` predictions (:func:`.retrieval_tables.retrieval_predictions`, ``.reader_predictions``)."""
    results.table(
        "build_times",
        speed,
        "Index build seconds on this machine (a cached build loads instead; times are of the first build).",
    )
    results.predictions("ia_rag", retrieval)
    results.predictions("reader", reader)


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
