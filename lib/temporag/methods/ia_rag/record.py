"""What IA-RAG's notebook keeps: every metric it writes into the run's results, under the names the
committed runs use.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments` (the builds, the tables
of :mod:`.build_tables`, :mod:`.retrieval_tables`, :mod:`.ablations` and :mod:`.reader_tables`) computed
and records it; it computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from temporag.claims import Measured, record_outcomes
from temporag.methods.ia_rag.ablations import ABLATION_BUDGET
from temporag.methods.ia_rag.reader_tables import paper_row
from temporag.methods.ia_rag.setups import Setup
from temporag.reported import PaperRef

# ----------------------------------------------------------------------------------------------------
# what each build made


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


def allen(results, allen: pd.DataFrame) -> None:
    """``fig4/<data set>/<relation>``: edges per merged Allen relation
    (:func:`.report.allen_distribution`)."""
    for row in allen.to_dict("records"):
        results.metric(f"fig4/{row['dataset']}/{row['relation']}", int(row["edges"]))


def tightening(results, tightening: pd.DataFrame) -> None:
    """``tightening/<data set>/<build>/narrowed`` with the widened count (which must be 0)."""
    for row in tightening.to_dict("records"):
        results.metric(
            f"tightening/{row['dataset']}/{row['build']}/narrowed",
            row["narrowed"],
            widened=row["widened (must be 0)"],
        )


def forests(results, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]) -> None:
    """``forest/<data set>/meus`` and ``.../calibrated_meus``: MEUs of the paper-τ and calibrated forests."""
    for dataset, setup in paper.items():
        results.metric(f"forest/{dataset}/meus", setup.build.stats["meus"])
        results.metric(f"forest/{dataset}/calibrated_meus", tuned[dataset].build.stats["meus"])


# ----------------------------------------------------------------------------------------------------
# LLM-free retrieval recall


def retrieval_recall(results, recall: pd.DataFrame) -> None:
    """``retrieval_recall/<data set>/<method>`` of :func:`.retrieval_tables.operating_points`' table, with
    n and tokens."""
    for row in recall.to_dict("records"):
        results.metric(
            f"retrieval_recall/{row['dataset']}/{row['method']}",
            float(row["retrieval recall"]),
            n=int(row["n"]),
            tokens=float(row["tokens / question"]),
        )


def token_curves(results, curves: pd.DataFrame) -> None:
    """``tokens_recall/<data set>/<method>/<budget>``: each retriever's recall at each budget."""
    for row in curves.to_dict("records"):
        results.metric(f"tokens_recall/{row['dataset']}/{row['method']}/{row['budget']}", row["recall"])


def types(results, counts: Mapping[str, Mapping[str, int]]) -> None:
    """``types/<data set>/<T1..T5>``: questions per reasoning type (:func:`.retrieval_tables.type_counts`,
    most frequent first)."""
    for dataset, by_label in counts.items():
        for label, count in by_label.items():
            results.metric(f"types/{dataset}/{label}", count)


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
    beside the paper's, recorded as ``table2/<data set>/<row>/<metric>``; returns the compared rows as a
    table."""
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
    return pd.DataFrame(records)


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
