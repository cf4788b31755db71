"""What STAR-RAG's notebook keeps of its reader tables and the released-code decomposition: every
number that sits beside the paper's goes through ``Results.compare`` (kit value, paper value or None, n,
reader, scoring rule), under the names the committed runs use.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments` computed and records it;
it computes nothing itself.  Tables 2–4 are made of the rows ``compare`` returns, so their record
functions return them.
"""

from __future__ import annotations

from collections.abc import Mapping

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


def table2_multitq(results, rates: Mapping, reader: str, n: int) -> pd.DataFrame:
    """Table 2, MultiTQ column: strict Hits@1/5/10 (:func:`.paper_tables.hit_rates`) beside the paper's,
    as ``table2/MultiTQ/<method>/hits@<k>``; returns the compared rows.  Table 2 has no semantic row; its
    paper Hit@1 is Table 4's STAR-RAG-no-rule."""
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
    return comparison_frame(rows)


def table3(results, scores: Mapping, recall_table: pd.DataFrame, reader: str, k: int) -> pd.DataFrame:
    """Table 3: strict Hit@1 on single- vs multiple-event questions (:func:`.paper_tables.table3_scores`)
    beside the paper's, as ``table3/<method>/<label>/hits@1``, with the LLM-free answer recall@k of every
    selected question (``recall_table``) for context; returns the compared rows."""
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
    return comparison_frame(rows)


def table4(results, numbers: Mapping[str, dict], reader: str, n: int, served: bool) -> pd.DataFrame:
    """Table 4: the ablations' accuracy (Hit@1) and time per question (retrieval + reading), from
    :func:`.paper_tables.table4_numbers`, beside the paper's (``table4/<method>/...``); returns them as
    rows with the backbone rows (:func:`.paper_tables.table4_backbones`: a served model fills the
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
    return pd.DataFrame(rows)


def fig3(results, numbers: Mapping[str, dict], reader: str, n: int) -> None:
    """Fig. 3's numbers (:func:`.paper_tables.fig3_numbers`): the cl100k prompt tokens on every selected
    question, and tokens and seconds per question on the ``n`` read beside the paper's."""
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


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
