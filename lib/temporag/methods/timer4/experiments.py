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


# ----------------------------------------------------------------------------------------------------
# claims


def _change(frame, before: str, after: str, category: str = "all") -> str:
    x, y = report.recall_change(frame, before, after, category)
    return f"{x:.3f} → {y:.3f} ({y - x:+.3f})"


def _coverage(sets: dict) -> tuple[float, int, int]:
    """(share of A also in B, answers only B brings, answers only A brings) over every question type."""
    a = sum(len(v[0]) for v in sets.values())
    b = sum(len(v[1]) for v in sets.values())
    both = sum(len(v[0] & v[1]) for v in sets.values())
    return both / max(a, 1), b - both, a - both


def _paper5(name: str) -> float:
    return PaperRef("timer4", "Table 5", name, "Hit@1").value()


ABLATED = [
    ("w/o rewrite", "rewriting the question"),
    ("w/o rerank", "the time rerank"),
    ("w/o fact retrieval", "fact retrieval for the rewrite"),
    ("w/o temporal retrieval", "the time-aware retriever"),
]


def claims_table(
    recall: pd.DataFrame,
    loss_ablation: pd.DataFrame,
    coverage: dict,
    coverage_old: dict,
    recall15: dict,
    scores3: dict,
    scores5: dict,
    reader: str,
    n_reader: int,
) -> pd.DataFrame:
    """The paper's claims: the kit's measurement under the paper's protocol and under a fair one, verdict
    and cause (see :func:`report.claim_row`)."""
    b_all, s_all = report.recall_change(recall, "base model (before)", "fine-tuned (after)")
    worst, drop = report.worst_qtype_drop(recall, "base model (before)", "fine-tuned (after)")
    old_cov, new_cov = _coverage(coverage_old), _coverage(coverage)
    t5 = {name: float(v.mean()) for name, v in recall15.items()}
    whole = {name: sc["whole"]["Overall"] for name, sc in scores5.items()}
    claims = [
        report.claim_row(
            "Contrastive time-aware fine-tuning (three hard negatives) improves the second retrieval over "
            "the off-the-shelf retriever",
            f"w/o temporal retrieval {_paper5('w/o temporal retrieval'):.4f} vs {_paper5('TimeR4'):.4f} "
            "Hits@1 (Table 5)",
            f"pairwise Eq. 8: recall@15 {_change(loss_ablation, 'base model', 'pairwise loss (old)')} "
            "(subset, exact)",
            f"softmax loss: {_change(recall, 'base model (before)', 'fine-tuned (after)')}; worst qtype "
            f"{worst} {drop:+.3f}; original q "
            f"{_change(recall, 'base model, original q', 'fine-tuned, original q')}",
            s_all > b_all,
            "Eq. 8 read pair by pair is not normalised over the candidates: the negatives that nearly "
            "outrank the positive get ~1/29 of its weight; a softmax over in-batch positives and the hard "
            "negatives (same data, optimiser, store) learns the task",
        ),
        report.claim_row(
            "The time-aware retriever covers most answers the fact retriever covers, and many it misses "
            "(Fig. 4)",
            "Venn diagrams, no numbers",
            f"pairwise: A∩B/A {old_cov[0]:.2f}; B only {old_cov[1]}, A only {old_cov[2]}",
            f"softmax: A∩B/A {new_cov[0]:.2f}; B only {new_cov[1]}, A only {new_cov[2]}",
            new_cov[0] >= 0.8 and new_cov[1] > new_cov[2],
            "A: base model, original question, top 15; B: TimeR4's reranked top 15 (gold answers of all "
            "selected questions)",
        ),
    ]
    for name, what in ABLATED:
        claims.append(
            report.claim_row(
                f"Removing {what} lowers Hits@1 (Table 5)",
                f"{_paper5(name):.4f} vs {_paper5('TimeR4'):.4f}",
                f"Hits@1 whole rule {whole[name]:.3f} vs {whole['TimeR4']:.3f} ({reader}, "
                f"n={scores5[name]['answered']['Overall']})",
                f"recall@15 {t5[name]:.3f} vs {t5['TimeR4']:.3f}",
                t5["TimeR4"] > t5[name],
                "the reader is a small model not fine-tuned, so the fair test is whether the facts it is "
                "shown hold the answer",
            )
        )
    claims.append(
        report.claim_row(
            "TimeR4's Hits@1 on MultiTQ (Table 3)",
            f"{PaperRef('timer4', 'Table 3', 'TimeR4', 'Overall').value():.4f}",
            f"{scores3['whole']['Overall']:.3f} whole rule ({reader}, n={n_reader})",
            "—",
            None,
            "the paper's reader is LLaMA2-7B fine-tuned on MultiTQ's training questions; out of scope on "
            "a CPU",
        )
    )
    return pd.DataFrame(claims)


def record_claims(results, claims: pd.DataFrame) -> None:
    results.table(
        "claims",
        claims,
        "The paper's claims: the kit's measurement under the paper's protocol and a fair one.",
    )
    for row in claims.to_dict(orient="records"):
        results.metric(f"claims/{row['claim'][:60]}", row["verdict"])
