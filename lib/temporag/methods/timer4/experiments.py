"""The numbers behind TimeR4's tables and figures, computed from what a cell already has (rankings,
rewrites, training runs, timings), so each cell reads like the paper's method section.  Nothing here
writes into the run's results: :mod:`.record` stores what these return."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.methods.timer4 import candidate_triples
from temporag.methods.timer4.runs import READER_TOP_K
from temporag.methods.timer4.store import KnowledgeStore

#: the numbers of facts n that Fig. 3 plots
FIG3_NS = (5, 10, 15, 20, 30)
DISCRIMINATION_CAPTION = (
    "Held-out template questions (train period): share where the positive fact beats each negative kind "
    "(cosine of Eq. 7)."
)
DISCRIMINATION_WITH_CODE_CAPTION = "Held-out template questions: positive beats each negative kind."


# ----------------------------------------------------------------------------------------------------
# retrieval


def facts_frame(method, ids: Sequence[int], sims: Sequence[float]) -> pd.DataFrame:
    """A question's retrieved facts with their cosines."""
    return pd.DataFrame({"fact": method.evidence_lines(ids), "cosine": np.round(sims, 4)})


def rewritten(rewrites: Sequence) -> tuple[np.ndarray, float]:
    """Which questions the offline rule rewrote, and their share (recorded as ``rewrite/changed_share``)."""
    changed = np.array([r.changed for r in rewrites])
    return changed, float(changed.mean())


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


def training_summary(trained, pairwise) -> str:
    """One line: training's size, time and loss, and the pairwise ablation's time."""
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


# ----------------------------------------------------------------------------------------------------
# reader tables, Fig. 3, speed


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


def median_ms(**seconds: Sequence[float]) -> dict[str, float]:
    """The median of each named list of per-question seconds, in milliseconds."""
    return {name: float(np.median(values) * 1e3) for name, values in seconds.items()}


def final_predictions(questions: Sequence, traces: Sequence[dict], ranked: Sequence) -> list[dict]:
    """TimeR4's per-question record: its trace (rewrite, time constraint) and the evidence it shows."""
    return [
        {"quid": q.quid, "qtype": q.qtype, **trace, "evidence": list(np.asarray(ids).tolist())}
        for q, trace, ids in zip(questions, traces, ranked)
    ]
