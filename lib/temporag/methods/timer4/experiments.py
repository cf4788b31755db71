"""The numbers behind TimeR4's tables and figures: the runs (Table 5's variants read by the reader, recall
of many rankings, Fig. 3's sweep over n, the released code's switches) and what a cell computes from
rankings, rewrites, training runs and timings (reader scores, Fig. 4's coverage sets, recall by qtype),
so each cell reads like the paper's method section.  :mod:`.report` draws and formats what these return
and :mod:`.record` stores it; nothing here writes into the run's results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.answer.evaluate import answer_fact_mask, lenient_hit, table1_masks
from temporag.answer.readers import build_reader_prompt
from temporag.methods.timer4 import candidate_triples
from temporag.methods.timer4.negatives import NEGATIVE_KINDS
from temporag.methods.timer4.store import DATE_WEIGHT, KnowledgeStore, compose, date_text
from temporag.sampling import stratified_sample

#: the numbers of facts n that Fig. 3 plots
FIG3_NS = (5, 10, 15, 20, 30)
DISCRIMINATION_CAPTION = (
    "Held-out template questions (train period): share where the positive fact beats each negative kind "
    "(cosine of Eq. 7)."
)
DISCRIMINATION_WITH_CODE_CAPTION = "Held-out template questions: positive beats each negative kind."


# ----------------------------------------------------------------------------------------------------
# the runs: Table 5's variants read by the reader, recall of many rankings, Fig. 3's sweep over n, the
# released code's switches

#: answers the reader may list (Table 3 scores the first as Hits@1)
READER_TOP_K = 5


def ablations(method) -> dict:
    """Table 5's rows as variants of one method (they share every stage they have in common)."""
    return {
        "TimeR4": method,
        "w/o fact retrieval": method.variant(background="linking"),
        "w/o rewrite": method.variant(rewrite="none"),
        "w/o temporal retrieval": method.variant(temporal=False),
        "w/o rerank": method.variant(rerank="off"),
    }


def subsample(questions: Sequence, n: int | None, seed: int = 0) -> list:
    """A seeded subset of ``n`` questions that keeps each question type's share (the kit's sampler)."""
    return stratified_sample(list(questions), n, np.random.default_rng(seed))


def read_variants(
    variants: dict, llm, questions: Sequence, *, top_k: int = READER_TOP_K, subset: Sequence | None = None
) -> tuple[dict, dict, dict]:
    """The reader on every variant: TimeR4 reads all ``questions`` (Table 3), the other variants only
    ``subset`` (Table 5; default all).  Returns the reader results, TimeR4's scores on ``questions`` and
    every variant's scores on ``subset`` (TimeR4's taken from its own reads, no extra call)."""
    subset = list(questions) if subset is None else list(subset)
    quids = {q.quid for q in subset}
    reads = {}
    for name, m in variants.items():
        qs = list(questions) if name == "TimeR4" else subset
        reads[name] = m.read(llm, qs, m.retrieve(qs), top_k=top_k, progress=True)
    on_subset = {}
    for name, results in reads.items():
        qs = list(questions) if name == "TimeR4" else subset
        keep = [i for i, q in enumerate(qs) if q.quid in quids]
        on_subset[name] = reader_scores([qs[i] for i in keep], [results[i] for i in keep])
    return reads, reader_scores(list(questions), reads["TimeR4"]), on_subset


def recall_at(kg, variants: dict, questions: Sequence, k: int = 15) -> dict[str, np.ndarray]:
    """Per-question answer recall@k of every variant's final ranking (LLM-free)."""
    return {
        name: evaluate.answer_recall_at_k(kg, m.retrieve(questions).ids, questions, [k])[k]
        for name, m in variants.items()
    }


def number_of_facts(
    method,
    llm,
    kg,
    questions: Sequence,
    reader_questions: Sequence,
    ns: Sequence[int],
    top_k: int = READER_TOP_K,
):
    """Fig. 3: answer recall@n on ``questions``, whole-output Hits@1 with n facts on ``reader_questions``
    (the mean, and each question's 0/1 with NaN for a failed call: the Fig. 3 claim reads those)."""
    deep = method.retrieve(questions, k=max(ns)).ids  # the reranked list is prefix-consistent
    recall = {
        n: float(v.mean()) for n, v in evaluate.answer_recall_at_k(kg, deep, questions, list(ns)).items()
    }
    hits, per_question = {}, {}
    for n in ns:
        results = method.read(llm, reader_questions, method.retrieve(reader_questions, k=n), top_k=top_k)
        values = whole_output_hits(reader_questions, [r.raw_text for r in results]).astype(float)
        values[evaluate.failed_calls(results)] = np.nan
        per_question[n] = values
        hits[n] = float(np.nanmean(values)) if (~np.isnan(values)).any() else float("nan")
    return recall, hits, per_question


def code_switches(kg, method, questions: Sequence, recall15: dict, *, tks_code=None, candidates=None) -> dict:
    """Answer recall@15 of the kit → with each of the released code's switches (effect strings).

    ``recall15`` holds the per-question recall of Table 5's variants; ``tks_code`` is a TKS of the model
    trained with the code's loss over ``candidates`` (compared with the softmax model on the same pool)."""

    def mean_recall(m) -> float:
        return float(evaluate.answer_recall_at_k(kg, m.retrieve(questions).ids, questions, [15])[15].mean())

    kit = float(recall15["TimeR4"].mean())
    effects = {
        "rerank_off": effect(kit, float(recall15["w/o rerank"].mean())),
        "window": effect(kit, mean_recall(method.variant(rerank="window"))),
        "original_question": effect(kit, float(recall15["w/o rewrite"].mean())),
    }
    if tks_code is not None:
        softmax_same_pool = method.variant(tks=method.tks.restrict(candidates))
        effects["code_loss"] = effect(
            mean_recall(softmax_same_pool), mean_recall(method.variant(tks=tks_code))
        )
        released = method.variant(tks=tks_code, rewrite="none", rerank="off")
        effects["released_pipeline"] = effect(mean_recall(softmax_same_pool), mean_recall(released))
    return effects


def export_reader_sft(method, questions: Sequence, path, top_k: int = 10) -> int:
    """Write one chat-format training record per question — the kit's reader prompt over TimeR4's facts and
    the gold answers as a Python list — for fine-tuning a reader on a GPU box (runbooks/gpu-box-vllm.md).

    Use training questions only (MultiTQ's train.json), never the evaluation set.  Returns the count."""
    import json
    from pathlib import Path

    retrieval = method.retrieve(questions)
    lines = []
    for q, ids in zip(questions, retrieval.ids, strict=True):
        messages = build_reader_prompt(
            q.question,
            method.evidence_lines(ids),
            answer_type=getattr(q, "answer_type", None),
            top_k=top_k,
            instructions=method.reader_instructions,
            example=False,
        )
        messages.append({"role": "assistant", "content": repr(list(q.answers)[:top_k])})
        lines.append(json.dumps({"messages": messages}, ensure_ascii=False))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def discrimination(kg, examples, encoders: dict, date_weight: float | None = None):
    """Does a retriever learn its training task?  For held-out template questions of the train period,
    the share whose positive fact is closer to the question than each kind of negative (Eq. 7's cosine
    over the composed fact vectors), one row per encoder."""
    import pandas as pd

    lam = DATE_WEIGHT if date_weight is None else date_weight
    facts = [f for e in examples for f, _ in e.facts()]
    triples = sorted({(f.s, f.r, f.o) for f in facts})
    days = sorted({f.day for f in facts})
    t_row = {t: i for i, t in enumerate(triples)}
    d_row = {d: i for i, d in enumerate(days)}
    rows = []
    for name, enc in encoders.items():
        q = enc.encode([e.question for e in examples], progress=False)
        tv = enc.encode([kg.triple_text(*t) for t in triples], progress=False)
        dv = enc.encode([date_text(d) for d in days], progress=False)
        fv = compose(tv[[t_row[(f.s, f.r, f.o)] for f in facts]], dv[[d_row[f.day] for f in facts]], lam)
        cos = (fv.reshape(len(examples), -1, fv.shape[1]) * q[:, None, :]).sum(-1)  # positive, then negatives
        beats = {
            f"positive beats {k}-incorrect": float((cos[:, 0] > cos[:, i + 1]).mean())
            for i, k in enumerate(NEGATIVE_KINDS)
        }
        rows.append({"retriever": name, **beats, "questions": len(examples)})
    return pd.DataFrame(rows)


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


# ----------------------------------------------------------------------------------------------------
# scores: Fig. 4's coverage sets, reader Hits@1, recall by qtype, latency


def coverage_sets(
    kg, questions: Sequence, ranked_a, ranked_b, k: int = 15
) -> dict[str, tuple[set, set, set]]:
    """Per question type: (A, B, C) as sets of (quid, gold answer) — see :data:`VENN_NOTE`."""
    out: dict[str, tuple[set, set, set]] = {}
    for q, a_ids, b_ids in zip(questions, ranked_a, ranked_b, strict=True):
        a_set, b_set, c_set = out.setdefault(q.qtype, (set(), set(), set()))
        for gold in q.answers:
            c_set.add((q.quid, gold))
            if answer_fact_mask(kg, np.asarray(a_ids)[:k], [gold], q.answer_type).any():
                a_set.add((q.quid, gold))
            if answer_fact_mask(kg, np.asarray(b_ids)[:k], [gold], q.answer_type).any():
                b_set.add((q.quid, gold))
    return out


def whole_output_hits(questions: Sequence, outputs: Sequence[str]) -> np.ndarray:
    """TimeR4's Hit: some gold is a substring of the whole normalised reply (evaluate.lenient_hit)."""
    return np.array(
        [lenient_hit(str(o), q.answers) for q, o in zip(questions, outputs, strict=True)], dtype=float
    )


def reader_scores(questions: Sequence, results) -> dict:
    """Hits@1 by Table-3 column under the strict, lenient (first answer) and whole-output rules, with n,
    answered and failed (a failed call is left out of the means, never scored as wrong)."""
    answers = [r.answers for r in results]
    failed = np.array([r.error is not None for r in results], dtype=bool)
    out = evaluate.hits_by_category(questions, answers, failed)
    whole = whole_output_hits(questions, [r.raw_text for r in results])
    out["whole"] = {
        g: (float(whole[m & ~failed].mean()) if (m & ~failed).any() else float("nan"))
        for g, m in table1_masks(questions).items()
    }
    listed = [len(a) for a, bad in zip(answers, failed) if not bad]
    out["listed"] = float(np.mean(listed)) if listed else float("nan")  # the whole rule rewards long lists
    return out


def recall_by_qtype(kg, questions: Sequence, ranked: dict[str, Sequence], k: int = 15):
    """Answer recall@k of several rankings: overall, Single / Multiple and per question type."""
    _, long = evaluate.recall_by_category(kg, questions, ranked, k)
    return evaluate.pivot_by_category(long, list(ranked))


def latency_table(named: dict[str, np.ndarray]):
    """p50 / p95 / mean milliseconds per stage (evaluate.latency_summary)."""
    import pandas as pd

    return pd.DataFrame([{"stage": k, **evaluate.latency_summary(v)} for k, v in named.items()])


def effect(kit: float, switched: float) -> str:
    """'0.650 → 0.612 (−0.038)': the kit's recall, the switch's, and the change."""
    return f"{kit:.3f} → {switched:.3f} ({switched - kit:+.3f})"
