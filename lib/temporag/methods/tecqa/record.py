"""What the TECQA notebook keeps: every table and metric it writes into the run's results, under the
names the committed runs use, one call per notebook step.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments`, :mod:`.report` and
:mod:`.tables` computed (frames, numbers, reader scores) and records it — the table under its key with
its caption, the metrics beside the paper's numbers; it computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.claims import Measured, record_outcomes
from temporag.methods.tecqa import tables
from temporag.methods.tecqa.chain import EvidenceChain
from temporag.methods.tecqa.experiments import PARSER_LABELS

# -- parser accuracy (§4.2.1) ---------------------------------------------------------------------------


def parser_accuracy(results, table: pd.DataFrame, reader: str) -> None:
    """Parser accuracy against the data-derived gold (the paper reports none): ``parser/<key>/...``
    metrics (``parser/<key>_parse_sample/...`` for the LLM-parse sample) and the ``parser_accuracy``
    table (:func:`.experiments.parser_accuracy_table`, made with the same ``reader``)."""
    keys = {label.format(reader=reader): key for key, label in PARSER_LABELS.items()}
    for row in table.to_dict("records"):
        suffix = "" if row["questions"] == "selected set" else "_parse_sample"
        for metric in ("main_entity_acc", "relation_acc"):
            results.metric(f"parser/{keys[row['parser']]}{suffix}/{metric}", row[metric], n=row["n"])
    results.table(
        "parser_accuracy",
        table,
        "Parser accuracy against data-derived gold (main entity joined to a gold answer by some KG fact; "
        "relation: F_main holds a gold answer). The paper reports no parser accuracy.",
    )


def error_census(results, census: pd.DataFrame, counts: pd.DataFrame, n: int) -> None:
    """The ``parser_error_census`` table (one row per question), the ``parser_error_classes`` counts and a
    ``parser/census/<class>`` metric per class (:func:`.experiments.parser_error_census` over ``n``
    questions)."""
    results.table(
        "parser_error_census",
        census,
        "Every question whose offline parse has a wrong main entity or relation (data-derived gold), "
        "classed.",
    )
    results.table(
        "parser_error_classes",
        counts,
        "Offline parser errors by class: date word, role phrase, ambiguous name, partial name (wrong main "
        "entity); relation neighbour (main entity right, relation wrong).",
    )
    for row in counts.to_dict("records"):
        results.metric(f"parser/census/{row['class']}", int(row["questions"]), n=n)


def linker_crossval(results, table: pd.DataFrame) -> None:
    """The linker's k-fold cross-validation (:func:`.analysis.parser_crossval`): the ``linker_crossval``
    table (one row per fold: the degree weight chosen on the other folds, main-entity and relation
    accuracy on the held-out fold; then mean / std / min) and ``parser/crossval/<fold>/<measure>``
    metrics, so each fold's numbers live in the run, not in a note."""
    results.table(
        "linker_crossval",
        table,
        "The offline parser's linker, k-fold cross-validated on the selected questions: the degree weight is "
        "chosen on the other folds (highest main-entity + relation accuracy), scored on the held-out fold.",
    )
    for row in table.to_dict("records"):
        for measure in ("main_entity_acc", "relation_acc"):
            results.metric(f"parser/crossval/{row['fold']}/{measure}", float(row[measure]), n=int(row["n"]))
        if row.get("degree_weight") == row.get("degree_weight") and row.get("degree_weight") is not None:
            results.metric(f"parser/crossval/{row['fold']}/degree_weight", float(row["degree_weight"]))


# -- subgraph and chain (§4.2.2–4.3), Figures 2, 4 and 5 --------------------------------------------------


def subgraph(results, numbers: dict, figure=None) -> dict:
    """Subgraph answer recall beside the paper's 99.33%, the empty rate and the size summary
    (:func:`.experiments.subgraph_numbers`), and the sizes' ``figure`` when drawn
    (:func:`.report.subgraph_size_figure`); returns the recall's table row."""
    row = results.compare(
        "subgraph/answer_recall",
        numbers["answer_recall"],
        tables.SUBGRAPH_RECALL,
        n=numbers["n"],
        ci95=numbers["ci95"],
    )
    results.metric("subgraph/empty_rate", numbers["empty_rate"], n=numbers["chains"])
    results.metric("subgraph/size_median", numbers["size_median"])
    results.metric("subgraph/size_mean", numbers["size_mean"])
    if figure is not None:
        results.figure("subgraph_sizes", figure)
    return row


def chain(results, numbers: dict, k: int, n: int) -> tuple[dict, dict]:
    """Chain answer recall and length (:func:`.experiments.chain_numbers`) beside the paper's 94.12% at
    ~20 facts; returns both table rows."""
    recall_row = results.compare(
        "chain/answer_recall",
        numbers["answer_recall"],
        tables.CHAIN_RECALL,
        n=numbers["n"],
        K=k,
        N=n,
        ci95=numbers["ci95"],
    )
    length_row = results.compare(
        "chain/avg_facts", numbers["avg_facts"], tables.CHAIN_LENGTH, n=numbers["chains"], K=k, N=n
    )
    return recall_row, length_row


def chain_answer_recall(results, by_type: pd.DataFrame, k: int, n: int) -> None:
    """The ``chain_answer_recall`` table (:func:`.experiments.chain_answer_recall`)."""
    caption = f"Answer recall of the pruned, serialised chain (K={k}, N={n}) by category."
    results.table("chain_answer_recall", by_type, caption)


def fig2_recall_at_20(results, table: pd.DataFrame, n: int, figure=None) -> None:
    """Fig. 2's table and its overall row beside the plateaus the paper's caption gives, then the figure
    when drawn (:func:`.report.recall_at_20_figure`)."""
    results.table(
        "fig2_recall_at_20",
        table,
        "Answer recall@20 by question type: semantic retrieval (MiniLM) vs TECQA chain.",
    )
    overall = table.iloc[-1]
    results.compare("fig2/semantic_recall@20", overall["semantic@20"], tables.SEMANTIC_AT_20, n=n)
    results.compare("fig2/tecqa_recall@20", overall["TECQA@20"], tables.TECQA_AT_20, n=n)
    if figure is not None:
        results.figure("fig2_recall_at_20", figure)


def integrity(results, table: pd.DataFrame, figure=None) -> None:
    """The ``fig5_integrity`` table and ``fig5/<method>/<group>/<metric>`` with the n each was computed on,
    then the figure when drawn (:func:`.report.integrity_figure`)."""
    caption = "Evidence-chain integrity (appendix D metrics; the paper prints no values for Fig. 5)."
    results.table("fig5_integrity", table, caption)
    for row in table.to_dict(orient="records"):
        for metric in ("answer_recall", "anchor_recall", "chain_recall"):
            n = row["n"] if metric == "answer_recall" else row["n_with_anchor"]
            results.metric(f"fig5/{row['method']}/{row['group']}/{metric}", float(row[metric]), n=n)
    if figure is not None:
        results.figure("fig5_integrity", figure)


def fig4_sensitivity(results, grid: pd.DataFrame, near_20: pd.Series, figure=None) -> None:
    """Fig. 4's K × N grid, and the chain recall of the setting nearest the paper's ~20 facts
    (:func:`.experiments.closest_to_paper_length`) beside the paper's 94.12%, then the figure when drawn
    (:func:`.report.sensitivity_figure`)."""
    caption = "Chain answer recall and average context length over the K × N grid."
    results.table("fig4_sensitivity", grid, caption)
    results.compare(
        "fig4/recall_at_about_20_facts",
        near_20.answer_recall,
        tables.CHAIN_RECALL,
        K=int(near_20.K),
        N=int(near_20.N),
        avg_facts=float(near_20.avg_context_facts),
    )
    if figure is not None:
        results.figure("fig4_sensitivity", figure)


# -- reasoning: Tables 1 and 2 (§4.4, §5.3, §5.5) ------------------------------------------------------


def table1_multitq(
    results, table: pd.DataFrame, scores: Mapping, reader: str, questions_read: int, facts_shown: int | None
) -> None:
    """Table 1's MultiTQ columns: ``table1/<rule>/<column>`` (strict beside the paper's Table 1, lenient
    with no paper value) and the table (:func:`.report.table1_frame`), its caption naming the reader, the
    sample and the facts it was shown."""
    for rule in ("strict", "lenient"):
        for column in tables.TABLE1_COLUMNS:
            ref = tables.paper("Table 1", "TECQA", column) if rule == "strict" else None
            results.compare(
                f"table1/{rule}/{column}",
                scores[rule][column],
                ref,
                n=scores["n"][column],
                reader=reader,
                rule=rule,
                failed=scores["failed"][column],  # failed calls: left out of the mean, counted
            )
    results.table(
        "table1_multitq",
        table,
        f"Table 1 (MultiTQ columns): Hits@1. Kit: reader {reader} on a seeded "
        f"sample of {questions_read} questions (per-column n: {scores['n']}), first "
        f"{facts_shown or 'all'} chain facts; rules: {evaluate.STRICT} / {evaluate.LENIENT}. "
        "Paper: full test set.",
    )


def table2_ablations(
    results,
    table: pd.DataFrame,
    scores: Mapping,
    shown_recall: Mapping[str, np.ndarray],
    reader: str,
    questions_read: int,
    facts_shown: int | None,
    predictions: list[dict] | None = None,
) -> None:
    """Table 2's ablations (:func:`.report.table2_frame`): ``table2/<variant>/hits@1_strict`` beside the
    paper, the shown-context recall of each variant over every selected question (``shown_recall``:
    :func:`.experiments.shown_answer_recall`), the table, and the reader's per-question ``predictions``
    (:func:`.experiments.reader_predictions`) when given."""
    shown = dict(zip(table["variant"], table["shown-context answer recall (all questions)"], strict=True))
    for name in tables.VARIANTS:
        results.compare(
            f"table2/{name}/hits@1_strict",
            scores[name]["strict"]["Overall"],
            tables.paper("Table 2", name, "Overall"),
            n=questions_read,
            reader=reader,
            rule="strict",
            failed=scores[name]["failed"]["Overall"],
        )
        results.metric(f"table2/{name}/shown_answer_recall", shown[name], n=len(shown_recall[name]))
    selected = len(next(iter(shown_recall.values())))
    results.table(
        "table2_ablations",
        table,
        f"Table 2 (MultiTQ): ablations. Hits@1 by reader {reader} on "
        f"{questions_read} seeded questions (strict = {evaluate.STRICT}); the last column is LLM-free "
        f"on all {selected} questions for the first {facts_shown or 'all'} facts each variant shows the "
        "reader.",
    )
    if predictions is not None:
        results.predictions("reader", predictions)


# -- failures, worked examples, speed (§5.7, appendix E, Tables 5-6) -------------------------------------


def failure_modes(results, table: pd.DataFrame, modes: Mapping[str, dict]) -> None:
    """Appendix E's failure modes beside the paper's §5.7 counts: the first parse's rates as
    ``failures/...``, the names-only parse's (the second) as ``..._names_only``, and the table
    (:func:`.report.failure_table` of the same ``modes``)."""
    used, names_only = list(modes.values())[:2]
    results.compare("failures/empty_subgraph_rate", used["empty_subgraph_rate"], tables.EMPTY_SHARE)
    results.compare(
        "failures/empty_subgraph_rate_names_only", names_only["empty_subgraph_rate"], tables.EMPTY_SHARE
    )
    results.metric(
        "failures/empty_from_wrong_main_entity_names_only", names_only["empty_from_wrong_main_entity"]
    )
    results.metric(
        "failures/first_last_truncated", used["first_last_truncated"], of=used["first_last_questions"]
    )
    results.table(
        "failure_modes",
        table,
        "Appendix E failure modes: empty subgraphs (mode 1) and first/last truncation (mode 2).",
    )


def case(results, table: str, question, chain: EvidenceChain) -> None:
    """A worked example (``table``: "Table 5" / "Table 6"): its subgraph size beside the paper's count,
    and its anchors."""
    results.compare(
        f"worked_example/{table}/subgraph_size",
        len(chain.subgraph),
        tables.paper(table, tables.CASES[table][0], "Retrieved facts"),
        question=question.question,
    )
    results.metric(
        f"worked_example/{table}/anchors", [a.iso for a in chain.anchors], question=question.question
    )


def cases(
    results, cases: Sequence[tuple[str, object]], chains: Sequence[EvidenceChain], worked: list[dict]
) -> None:
    """Every worked example (``cases``: (table, question) pairs, :func:`.experiments.case_questions`, with
    their ``chains``) through :func:`case`, then the ``worked`` examples as the ``worked_examples``
    predictions."""
    for (table, question), chain in zip(cases, chains, strict=True):
        case(results, table, question, chain)
    results.predictions("worked_examples", worked)


def headline(
    results, table: pd.DataFrame, predictions: list[dict], profile: str, n: int, parser: str
) -> None:
    """The ``headline`` table (:func:`.report.headline_table`) of a run on ``n`` questions and the chains'
    per-question ``predictions`` (:func:`.experiments.chain_predictions`) as ``tecqa``."""
    caption = f"Headline numbers ({profile} profile, {n} questions, {parser} parser)."
    results.table("headline", table, caption, float_format="{:.4f}")
    results.predictions("tecqa", predictions)


def latency(results, table: pd.DataFrame) -> None:
    """The latency table (:func:`.experiments.latency`: TECQA first, the semantic baseline second), with
    TECQA's p50 against the kit's 20 ms target."""
    results.table(
        "latency",
        table,
        "Retrieval latency per question (parsing and question embedding excluded), this machine.",
    )
    results.metric("latency/tecqa_p50_ms", float(table.p50_ms[0]), target_ms=20)
    results.metric("latency/semantic_p50_ms", float(table.p50_ms[1]))


# -- beyond the paper, without an LLM ---------------------------------------------------------------------

BEYOND_COLUMNS = (
    "main_entity_acc",
    "relation_acc",
    "subgraph_recall",
    "subgraph_size_mean",
    "chain_recall",
    "chain_facts",
)


def beyond_comparison(results, table: pd.DataFrame, names: Mapping[str, str]) -> None:
    """The LLM-free comparison (:func:`.beyond.comparison_table`) as ``beyond/<short name>/<column>``
    metrics (``names``: row label → short name; other rows are not recorded) and the table."""
    for row in table.to_dict("records"):
        short = names.get(row["variant"])
        if short is None:
            continue
        for col in BEYOND_COLUMNS:
            results.metric(f"beyond/{short}/{col}", float(row[col]), n=int(row["n"]))
    caption = "LLM-free: the paper's numbers, the paper-faithful variant and the improved one."
    results.table("beyond_comparison", table, caption)


def relation_union_check(results, grid: pd.DataFrame, check: pd.DataFrame) -> None:
    """The relation-union grid and its held-out choice (:func:`.beyond.relation_union_check`)."""
    caption = "Subgraph recall and size over the relation-union grid."
    results.table("beyond_relation_union_grid", grid, caption)
    results.table("beyond_relation_union_check", check, "5-fold and leave-one-type-out choice of the union.")


def alternatives_check(results, grid: pd.DataFrame, check: pd.DataFrame) -> None:
    """The main-entity-alternatives grid and its held-out choice (:func:`.beyond.main_alternatives_check`)."""
    results.table(
        "beyond_alternatives_grid", grid, "Subgraph recall and size over the main-alternatives grid."
    )
    results.table(
        "beyond_alternatives_check",
        check,
        "5-fold and leave-one-type-out choice of the main alternatives.",
    )


def beyond_failures(results, per_type: pd.DataFrame, classes: pd.DataFrame) -> None:
    """The LLM-free variants per question type (:func:`.beyond.by_qtype_table`) and their failure classes
    (:func:`.beyond.failure_class_table`)."""
    results.table("beyond_by_qtype", per_type, "LLM-free variants per question type.")
    results.table("beyond_failure_classes", classes, "Failure classes (questions) before and after.")


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
