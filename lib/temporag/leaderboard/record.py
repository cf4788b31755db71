"""What the leaderboard notebook keeps: every number, table and per-question outcome it writes into the
run's results, under the names the committed runs use.

The one module of the leaderboard that writes into a :class:`~temporag.notebook.results.Results`, so what
a run stores is read in one place.  Each function takes what :mod:`.experiments`, :mod:`.scores` and
:mod:`.report` computed and records it; it computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from temporag.claims.model import LABELS, question_labels
from temporag.leaderboard.claims import TOKENS
from temporag.leaderboard.experiments import BREAKDOWNS
from temporag.leaderboard.paired import MEASURES
from temporag.leaderboard.scores import MethodScores


def ceilings(results, numbers: Mapping[str, dict], n_questions: int) -> dict[str, float]:
    """``template_reader/ceiling_<key>/hits@1`` of each ceiling (:func:`.experiments.ceiling_numbers`)
    with its context size; returns the Hits@1 by ceiling name, for the leaderboard's caption and figure."""
    for key, ceiling in numbers.items():
        results.metric(
            f"template_reader/ceiling_{key}/hits@1",
            ceiling["hits@1"],
            n=n_questions,
            rule="strict",
            context_facts=ceiling["context_facts"],
        )
    return {ceiling["name"]: ceiling["hits@1"] for ceiling in numbers.values()}


def cells(results, rows: Sequence[dict], reads: Mapping[str, dict], reader: str) -> None:
    """Every leaderboard number (:func:`.scores.summary_row` rows, the reader's sample) as a metric with
    its n, interval and rule: ``leaderboard/<method>/<column>``, one per cell."""
    for row in rows:
        key, n = f"leaderboard/{row['method']}", row["n"]
        for col in [c for c in row if c not in ("method", "n") and "CI" not in c]:
            ci = [row[f"{col} CI low"], row[f"{col} CI high"]] if f"{col} CI low" in row else None
            rule = "strict" if "strict" in col else ("lenient" if "lenient" in col else None)
            extra = {"ci95": ci} if ci else {}
            results.metric(
                f"{key}/{col}",
                row[col],
                n=n,
                rule=rule,
                reader="template reader (no LLM)" if "template" in col else None,
                **extra,
            )
        read = reads.get(row["method"])
        if read:
            for col in ("strict", "lenient", "llm_calls", "prompt_tokens", "completion_tokens"):
                results.metric(
                    f"{key}/reader/{col}", read[col], n=read["n"], failed=read["failed"], reader=reader
                )


def leaderboard(
    results,
    table: pd.DataFrame,
    n_questions: int,
    profile: str,
    reader: str,
    n_read: int,
    ceiling_hits: Mapping[str, float],
) -> None:
    """The leaderboard table, its caption naming the protocol: questions, embedder, both readers, the
    intervals and the template reader's ceilings."""
    caption = (
        f"MultiTQ, {n_questions} questions ({profile}), embedder all-MiniLM-L6-v2; "
        f"template reader = LLM-free; reader = {reader} on {n_read} seeded questions "
        f"(plumbing only). Intervals: bootstrap 95%. Template-reader ceilings: {dict(ceiling_hits)}."
    )
    results.table("leaderboard", table, caption)


def summary_figure(results, figure) -> None:
    """The summary figure (:func:`.report.summary_figure`, shown in the cell)."""
    results.figure("leaderboard_summary", figure)


def paired(
    results, method_scores: Sequence[MethodScores], questions: Sequence, table: pd.DataFrame
) -> None:
    """The per-question outcomes behind :func:`.paired.vs_baseline` (``leaderboard/<measure>/<method>``),
    each method's context tokens per question (``leaderboard/context tokens/<method>``), each question's
    labels (``labels/qlabel``, ``labels/qtype``) and its ``table`` (``paired_vs_semantic``)."""
    quids = [q.quid for q in questions]
    for measure in MEASURES:
        results.outcomes(
            f"leaderboard/{measure}", {s.name: s.per_question()[measure] for s in method_scores}, quids=quids
        )
    # the token claims read each method's context size (cl100k tokens of what a reader would be sent)
    results.outcomes(TOKENS, {s.name: s.tokens for s in method_scores}, quids=quids)
    labels = question_labels(questions)  # the multiple-event claims read them
    results.outcomes(LABELS, labels.values, quids=labels.quids)
    caption = (
        "Each method minus the semantic baseline, per question: effect, 95 % interval (Newcombe, paired), "
        f"n, MDE, exact McNemar p ({len(questions)} questions, LLM-free)."
    )
    results.table("paired_vs_semantic", table, caption)


def breakdowns(results, by_category: Mapping[str, pd.DataFrame], n_questions: int) -> None:
    """One table per breakdown of :func:`.experiments.breakdowns` (:data:`.experiments.BREAKDOWNS`)."""
    for column, key in BREAKDOWNS.items():
        caption = f"{column} by Single/Multiple and qtype ({n_questions} questions; bootstrap 95% intervals)."
        results.table(key, by_category[key], caption)


def documents(results, document_table: pd.DataFrame, reader: str, reader_sample: int) -> None:
    """Vanilla RAG vs IA-RAG on the document data sets: each row's retrieval recall (with its interval
    and context tokens) as a metric, and the table."""
    for row in document_table.to_dict("records"):
        results.metric(
            f"documents/{row['dataset']}/{row['method']}/retrieval_recall",
            row["retrieval recall"],
            n=row["n"],
            ci95=[row["CI low"], row["CI high"]],
            tokens=row["context tokens / question"],
        )
    caption = (
        f"Vanilla RAG vs IA-RAG, all-MiniLM-L6-v2; reader {reader} on "
        f"{reader_sample} seeded questions per data set (DyG-RAG token-level accuracy)."
    )
    results.table("documents", document_table, caption)


def headline(results, table: pd.DataFrame) -> None:
    """Each paper's headline three ways (:func:`.report.headline_table`)."""
    caption = "Each paper's headline: paper, kit under the paper's protocol, kit under the common one."
    results.table("headline", table, caption)


def code_table(results, table: pd.DataFrame) -> None:
    """Paper vs released code vs kit for every method (:func:`.report.code_table`)."""
    caption = (
        "Paper vs released code (our reading) vs kit, gathered from the paper packages "
        "and the committed runs."
    )
    results.table("paper_vs_code_vs_kit", table, caption)


def predictions(results, records: list[dict]) -> None:
    """Every method's per-question template-reader answers and evidence ids
    (:func:`.experiments.predictions`)."""
    results.predictions("leaderboard", records)
