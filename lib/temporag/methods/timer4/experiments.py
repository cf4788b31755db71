"""The steps of TimeR4's notebook that record numbers: each takes what a cell computed, records it in the
run's results under the names the committed runs use, and returns what the cell shows.  Kept out of the
notebook so each cell reads like the paper's method section."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.methods.timer4 import candidate_triples, report
from temporag.methods.timer4.runs import READER_TOP_K
from temporag.methods.timer4.store import KnowledgeStore
from temporag.notebook import plots
from temporag.reported import PaperRef

#: the numbers of facts n that Fig. 3 plots
FIG3_NS = (5, 10, 15, 20, 30)
DISCRIMINATION_CAPTION = (
    "Held-out template questions (train period): share where the positive fact beats each negative kind "
    "(cosine of Eq. 7)."
)
DISCRIMINATION_WITH_CODE_CAPTION = "Held-out template questions: positive beats each negative kind."


# ----------------------------------------------------------------------------------------------------
# retrieval


def record_agreement(results, name: str, store: KnowledgeStore, q_vecs: np.ndarray, k: int = 15) -> float:
    """The share of the exact top-k a store's indexed search returns (1.0 for an exact store)."""
    return results.metric(name, store.agreement(q_vecs, k), n=len(q_vecs))


def facts_frame(method, ids: Sequence[int], sims: Sequence[float]) -> pd.DataFrame:
    """A question's retrieved facts with their cosines."""
    return pd.DataFrame({"fact": method.evidence_lines(ids), "cosine": np.round(sims, 4)})


def record_rewrite_share(results, rewrites: Sequence) -> np.ndarray:
    """Which questions the offline rule rewrote; the share is recorded."""
    changed = np.array([r.changed for r in rewrites])
    results.metric("rewrite/changed_share", float(changed.mean()), n=len(rewrites), method="offline")
    return changed


def rewrite_comparison(
    questions: Sequence[str], offline: Sequence, llm: Sequence, model: str
) -> pd.DataFrame:
    """The offline rule's and the LLM's rewrites of the same questions side by side."""
    return pd.DataFrame(
        {
            "question": list(questions),
            "offline rule": [r.rewritten for r in offline],
            f"LLM ({model})": [r.rewritten for r in llm],
        }
    )


def rewritten_share_by_qtype(questions: Sequence, changed: np.ndarray) -> pd.DataFrame:
    return (
        pd.DataFrame({"qtype": [q.qtype for q in questions], "share rewritten (offline)": changed})
        .groupby("qtype")
        .mean()
    )


def candidate_union(method, store: KnowledgeStore, question_sets: Sequence[Sequence[str]], per_question: int):
    """Every triple among each question's ``per_question`` best (base model) for any of the phrasings."""
    pools = [
        candidate_triples(store, method.question_vectors(store, texts), per_question)
        for texts in question_sets
    ]
    out = pools[0]
    for pool in pools[1:]:
        out = np.union1d(out, pool)
    return out


def before_after_rankings(before, method, questions: Sequence) -> dict[str, list]:
    """The second retrieval's rankings: base vs fine-tuned, with and without the rerank and the rewrite."""
    return {
        "base model (before)": before.retrieve(questions).ids,
        "fine-tuned (after)": method.variant(rerank="off").retrieve(questions).ids,
        "fine-tuned + rerank": method.retrieve(questions).ids,
        "base model, original q": before.variant(rewrite="none").retrieve(questions).ids,
        "fine-tuned, original q": method.variant(rerank="off", rewrite="none").retrieve(questions).ids,
    }


def before_after_caption(tks_index: str) -> str:
    return (
        f"Answer recall@15 of the second retrieval by qtype, exact search; TKS: {tks_index}; rewritten "
        "questions unless 'original q'."
    )


def record_recall15(results, overall, names: Sequence[str], n: int, tks_index: str) -> None:
    for name in names:
        results.metric(f"recall15/{name}", float(overall[name]), n=n, index=tks_index, search="exact")


def fine_tuning_summary(overall, n_questions: int, trained) -> str:
    """One Markdown sentence: recall@15 before and after fine-tuning."""
    return (
        f"Fine-tuning: answer recall@15 **{overall['base model (before)']:.3f} → "
        f"{overall['fine-tuned (after)']:.3f}** (with the rerank {overall['fine-tuned + rerank']:.3f}; "
        f"original questions {overall['base model, original q']:.3f} → "
        f"{overall['fine-tuned, original q']:.3f}) on {n_questions} questions; {trained.pairs:,} pairs, "
        f"{trained.seconds:.0f} s of training."
    )


# ----------------------------------------------------------------------------------------------------
# training and the loss ablation


def record_training(results, trained, pairwise, threads: int) -> str:
    """Training's size, time and loss recorded; a one-line summary returned."""
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
    return (
        f"{trained.pairs:,} (question, fact) pairs from {trained.examples:,} questions, trained in "
        f"{trained.seconds:.0f} s ({'cached' if trained.cached else 'this run'}); softmax loss "
        f"{trained.losses[0]:.2f} → {trained.losses[-1]:.2f}; the pairwise ablation {pairwise.seconds:.0f} s"
    )


def rank_loss_variants(
    variants: dict, questions: Sequence, unranked: Sequence[str] = ("base model",)
) -> dict:
    """Each variant's ranking, and for the fine-tuned ones also with the rerank (Eq. 9)."""
    ranked = {}
    for name, method in variants.items():
        ranked[name] = method.retrieve(questions).ids
        if name not in unranked:
            ranked[f"{name} + rerank"] = method.variant(rerank="eq9").retrieve(questions).ids
    return ranked


def record_loss_ablation(
    results, frame: pd.DataFrame, ranked_names: Sequence[str], n: int, triples: int
) -> None:
    results.table(
        "recall15_loss_ablation",
        frame,
        f"Answer recall@15 by loss on the {triples:,}-triple candidate subset (exact search, rewritten "
        "questions); same training data and optimiser.",
    )
    overall = frame[frame.category == "all"]
    for name in ranked_names:
        results.metric(f"loss_ablation/{name}", float(overall[name].iloc[0]), n=n, triples=triples)


def record_discrimination(results, frame: pd.DataFrame, n: int) -> None:
    results.table("held_out_discrimination", frame, DISCRIMINATION_CAPTION)
    for row in frame.to_dict(orient="records"):
        results.metric(
            f"held_out/{row['retriever']}/beats_time_incorrect", row["positive beats time-incorrect"], n=n
        )


# ----------------------------------------------------------------------------------------------------
# reader tables, Fig. 3, released outputs, speed


def table3_caption(n_reader: int, reader: str, scores: dict, top_k: int = READER_TOP_K) -> str:
    return (
        f"Table 3 (MultiTQ) Hits@1. Kit: {n_reader} seeded questions, reader {reader} (not fine-tuned, up "
        f"to {top_k} answers); n per column {scores['n']}, failed calls {scores['failed']['Overall']}. "
        "Paper: full test set, LLaMA2-Chat-7B fine-tuned, whole-output rule."
    )


def table5_caption(n_reader: int, n_questions: int, reader: str) -> str:
    return (
        f"Table 5 (MultiTQ): Hits@1 by reader {reader} on {n_reader} seeded questions under three rules (the "
        f"paper: whole-output rule, LLaMA2-7B fine-tuned); answer recall@15 on all {n_questions} questions."
    )


def reader_predictions(reads: dict, reader_questions: Sequence, ablation_questions: Sequence) -> list[dict]:
    """Every reader output: TimeR4 read the whole reader sample, each ablation a part of it."""
    return [
        {"quid": q.quid, "variant": name, "answers": r.answers, "raw": r.raw_text, "error": r.error}
        for name, outputs in reads.items()
        for q, r in zip(reader_questions if name == "TimeR4" else ablation_questions, outputs)
    ]


def record_fig3(
    results, ns: Sequence[int], recall_n: dict, hits_n: dict, n_recall: int, n_hits: int, reader: str
):
    """Fig. 3's metrics recorded; its figure returned (LLM-free recall@n beside reader Hits@1)."""
    for n in ns:
        results.metric(f"fig3/recall@{n}", recall_n[n], n=n_recall)
        results.metric(f"fig3/hits@1_whole/{n}_facts", hits_n[n], n=n_hits, reader=reader)
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


def record_code_effects(results, effects: dict, n: int) -> None:
    for switch, text in effects.items():
        results.metric(f"code_variants/{switch}", text, n=n)


def record_rescored(results, rescored: dict) -> pd.DataFrame | None:
    """Released TimeR4 outputs rescored by the kit, each beside the paper's number it claims."""
    for key, got in rescored.items():
        source, row, dataset = key.split("|")
        results.compare(
            f"released/{row}/whole",
            got["whole"],
            PaperRef("timer4", source, row, "Overall", dataset),
            n=got["n"],
            rule=report.WHOLE,
            note=f"strict {got['strict']:.3f}, lenient first answer {got['lenient']:.3f}",
        )
    return pd.DataFrame([{"file": k, **v} for k, v in rescored.items()]) if rescored else None


def record_latency(results, frame: pd.DataFrame, tks_latency, fks_latency, tks_index: str) -> None:
    results.table(
        "latency",
        frame,
        "Retrieval milliseconds per question on this machine (embedding, parsing, LLM excluded).",
    )
    results.metric("latency/tks_p50_ms", float(np.median(tks_latency) * 1e3), target_ms=20, index=tks_index)
    results.metric("latency/fks_p50_ms", float(np.median(fks_latency) * 1e3))


def final_predictions(questions: Sequence, traces: Sequence[dict], ranked: Sequence) -> list[dict]:
    """TimeR4's per-question record: its trace (rewrite, time constraint) and the evidence it shows."""
    return [
        {"quid": q.quid, "qtype": q.qtype, **trace, "evidence": list(np.asarray(ids).tolist())}
        for q, trace, ids in zip(questions, traces, ranked)
    ]
