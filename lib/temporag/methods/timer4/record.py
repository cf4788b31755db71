"""What TimeR4's notebook keeps: every metric and table it writes into the run's results, under the names
the committed runs use.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what a
run stores is read in one place.  Each function takes what :mod:`.experiments` and
:mod:`.report` computed (numbers, frames, reader scores) and records it; it computes nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from temporag.claims import Measured, record_outcomes
from temporag.methods.timer4.experiments import DISCRIMINATION_CAPTION, DISCRIMINATION_WITH_CODE_CAPTION
from temporag.methods.timer4.released import PAPER_VS_CODE_CAPTION
from temporag.methods.timer4.report import COLUMNS, RULE_NAMES, WHOLE, table3_ref, table5_ref
from temporag.reported import PaperRef

# ----------------------------------------------------------------------------------------------------
# retrieval and training


def agreement(results, name: str, value: float, n: int) -> float:
    """The share of the exact top-k a store's indexed search returns (``KnowledgeStore.agreement``, over
    ``n`` questions); returns it."""
    return results.metric(name, value, n=n)


def before_after(results, agreement_at_15: float, n: int, table: pd.DataFrame, caption: str) -> None:
    """The TKS's IVF agreement with its exact top-15 over the ``n`` rewritten questions
    (:func:`agreement`) and the recall@15 before / after table (:func:`.experiments.recall_by_qtype`)."""
    agreement(results, "tks/ivf_agreement@15", agreement_at_15, n)
    results.table("recall15_before_after", table, caption)


def venn(results, figure, regions: pd.DataFrame) -> None:
    """Fig. 4: the Venn diagrams (:func:`.report.venn_grid`) and their regions as numbers of gold answers
    (:func:`.report.venn_table`), as a table and as the ``fig4/venn_regions`` records."""
    results.figure("fig4_venn", figure)
    results.table("fig4_venn_regions", regions, "The Venn regions of Fig. 4 as numbers of gold answers.")
    results.metric("fig4/venn_regions", regions.to_dict(orient="records"))


def recall_bars(results, figure) -> None:
    """Answer recall@15 before and after fine-tuning, as bars (:func:`.report.recall_bars`)."""
    results.figure("recall15_before_after", figure)


def rewrite_share(results, share: float, n: int) -> None:
    """``rewrite/changed_share``: the share of the ``n`` questions the offline rule rewrote."""
    results.metric("rewrite/changed_share", share, n=n, method="offline")


def recall15(results, overall, names: Sequence[str], n: int, tks_index: str) -> None:
    """``recall15/<ranking>``: each ranking's answer recall@15 over every question (``overall``: the
    recall table's "all" row)."""
    for name in names:
        results.metric(f"recall15/{name}", float(overall[name]), n=n, index=tks_index, search="exact")


def training(results, trained, pairwise, threads: int) -> None:
    """Training's size, time and loss, and the pairwise ablation's time (``training/...``)."""
    results.metric("training/pairs", trained.pairs, examples=trained.examples)
    results.metric(
        "training/seconds",
        round(trained.seconds, 1),
        cached=trained.cached,
        threads=threads,
        device=trained.device,
        loss=trained.config.loss,
    )
    results.metric(
        "training/pairwise_seconds",
        round(pairwise.seconds, 1),
        cached=pairwise.cached,
        device=pairwise.device,
    )
    results.metric(
        "training/loss_first_last", [trained.losses[0], trained.losses[-1]], steps=len(trained.losses)
    )


def loss_ablation(results, frame: pd.DataFrame, ranked_names: Sequence[str], n: int, triples: int) -> None:
    """The ``recall15_loss_ablation`` table and ``loss_ablation/<ranking>`` (its "all" row)."""
    results.table(
        "recall15_loss_ablation",
        frame,
        f"Answer recall@15 by loss on the {triples:,}-triple candidate subset (exact search, rewritten "
        "questions); same training data and optimiser.",
    )
    overall = frame[frame.category == "all"]
    for name in ranked_names:
        results.metric(f"loss_ablation/{name}", float(overall[name].iloc[0]), n=n, triples=triples)


def discrimination(results, frame: pd.DataFrame, n: int) -> None:
    """The ``held_out_discrimination`` table and each retriever's share against time-incorrect
    negatives."""
    results.table("held_out_discrimination", frame, DISCRIMINATION_CAPTION)
    for row in frame.to_dict(orient="records"):
        results.metric(
            f"held_out/{row['retriever']}/beats_time_incorrect", row["positive beats time-incorrect"], n=n
        )


def code_loss(results, trained, frame: pd.DataFrame) -> None:
    """The released code's loss: its training time (``train.train_retriever``'s result) and the
    discrimination table with its row added."""
    results.metric("training/code_loss_seconds", round(trained.seconds, 1), cached=trained.cached)
    results.table("held_out_discrimination", frame, DISCRIMINATION_WITH_CODE_CAPTION)


# ----------------------------------------------------------------------------------------------------
# reader tables, Fig. 3, released outputs, speed


def table3(results, scores: dict, reader: str) -> None:
    """Table 3: every cell under every rule (``table3/<rule>/<column>``), the paper's number beside the
    whole-output rule it was computed with, and the mean number of answers listed."""
    for rule in ("strict", "lenient", "whole"):
        for c in COLUMNS:
            results.compare(
                f"table3/{rule}/{c}",
                scores[rule][c],
                table3_ref(c) if rule == "whole" else None,
                n=scores["answered"][c],
                reader=reader,
                rule=RULE_NAMES[rule],
                failed=scores["failed"][c],  # failed calls: left out of n and the mean, counted
            )
    results.metric(
        "table3/answers_listed_mean", scores["listed"], reader=reader, n=scores["answered"]["Overall"]
    )


def table3_multitq(results, scores: dict, reader: str, table: pd.DataFrame, caption: str) -> None:
    """Table 3's numbers (:func:`table3`) and the table (:func:`.report.table3`)."""
    table3(results, scores, reader)
    results.table("table3_multitq", table, caption)


def table5(results, table: pd.DataFrame, scores: dict, reader: str, n_questions: int) -> None:
    """Table 5 (:func:`.report.table5`): each variant's whole-rule Hits@1 beside the paper's, its strict
    Hits@1 and its answer recall@15 over the ``n_questions`` selected questions."""
    recall = dict(zip(table["variant"], table["answer recall@15 (all questions)"], strict=True))
    for name, sc in scores.items():
        results.compare(
            f"table5/{name}/hits@1_whole",
            sc["whole"]["Overall"],
            table5_ref(name),
            n=sc["answered"]["Overall"],
            reader=reader,
            rule=WHOLE,
            failed=sc["failed"]["Overall"],
        )
        results.metric(f"table5/{name}/hits@1_strict", sc["strict"]["Overall"], reader=reader)
        results.metric(f"table5/{name}/recall@15", float(recall[name]), n=n_questions)


def table5_ablations(
    results,
    table: pd.DataFrame,
    scores: dict,
    reader: str,
    n_questions: int,
    caption: str,
    predictions: list[dict],
) -> None:
    """Table 5's numbers (:func:`table5`), the table, and the reader's per-question ``predictions``
    (:func:`.experiments.reader_predictions`)."""
    table5(results, table, scores, reader, n_questions)
    results.table("table5_ablations", table, caption)
    results.predictions("reader", predictions)


def fig3(
    results,
    ns: Sequence[int],
    recall_n: dict,
    hits_n: dict,
    figure,
    n_recall: int,
    n_hits: int,
    reader: str,
) -> None:
    """Fig. 3's numbers: answer recall@n (LLM-free) and the reader's whole-rule Hits@1 at each n, and the
    figure (:func:`.report.fig3`)."""
    for n in ns:
        results.metric(f"fig3/recall@{n}", recall_n[n], n=n_recall)
        results.metric(f"fig3/hits@1_whole/{n}_facts", hits_n[n], n=n_hits, reader=reader)
    results.figure("fig3_number_of_facts", figure)


def code_effects(results, effects: Mapping[str, str], table: pd.DataFrame, n: int) -> None:
    """``code_variants/<switch>``: what each released-code switch does to the kit's numbers, and the
    paper-vs-released-code table (:func:`.released.paper_vs_code`)."""
    for switch, text in effects.items():
        results.metric(f"code_variants/{switch}", text, n=n)
    results.table("paper_vs_released_code", table, PAPER_VS_CODE_CAPTION)


def rescored(results, rescored: Mapping[str, dict]) -> None:
    """Released TimeR4 outputs rescored by the kit, each beside the paper's number it claims
    (``rescored``: "source|row|data set" → :func:`.released.rescore`)."""
    for key, got in rescored.items():
        source, row, dataset = key.split("|")
        results.compare(
            f"released/{row}/whole",
            got["whole"],
            PaperRef("timer4", source, row, "Overall", dataset),
            n=got["n"],
            rule=WHOLE,
            note=f"strict {got['strict']:.3f}, lenient first answer {got['lenient']:.3f}",
        )


def latency(results, frame: pd.DataFrame, medians: Mapping[str, float], tks_index: str) -> None:
    """The ``latency`` table and the TKS's and FKS's median milliseconds (:func:`.experiments.median_ms`:
    "tks", "fks"), the TKS's beside the kit's 20 ms target."""
    results.table(
        "latency",
        frame,
        "Retrieval milliseconds per question on this machine (embedding, parsing, LLM excluded).",
    )
    results.metric("latency/tks_p50_ms", medians["tks"], target_ms=20, index=tks_index)
    results.metric("latency/fks_p50_ms", medians["fks"])


def headline(
    results, table: pd.DataFrame, predictions: list[dict], profile: str, n: int, n_read: int
) -> None:
    """The headline numbers (:func:`.report.headline`) of a run on ``n`` questions with ``n_read`` read,
    and the final ranking's per-question predictions (:func:`.experiments.final_predictions`)."""
    caption = f"Headline numbers ({profile} profile, {n} questions; reader sample {n_read})."
    results.table("headline", table, caption)
    results.predictions("timer4", predictions)


def outcomes(results, measured: Measured) -> None:
    """The per-question outcomes :data:`.claims.CLAIMS` reads (:func:`.claims.outcomes`)."""
    record_outcomes(results, measured)
