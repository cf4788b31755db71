"""The runs behind the notebook's tables: Table 5's variants read by the reader, recall of many rankings,
Fig. 3's sweep over n, and the released code's switches — so each notebook cell is a call or two.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.answer import evaluate
from temporag.answer.readers import build_reader_prompt
from temporag.methods.timer4 import report
from temporag.methods.timer4.negatives import NEGATIVE_KINDS
from temporag.methods.timer4.store import DATE_WEIGHT, compose, date_text
from temporag.sampling import stratified_sample

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
        on_subset[name] = report.reader_scores([qs[i] for i in keep], [results[i] for i in keep])
    return reads, report.reader_scores(list(questions), reads["TimeR4"]), on_subset


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
    """Fig. 3: answer recall@n on ``questions``, whole-output Hits@1 with n facts on ``reader_questions``."""
    deep = method.retrieve(questions, k=max(ns)).ids  # the reranked list is prefix-consistent
    recall = {
        n: float(v.mean()) for n, v in evaluate.answer_recall_at_k(kg, deep, questions, list(ns)).items()
    }
    hits = {}
    for n in ns:
        results = method.read(llm, reader_questions, method.retrieve(reader_questions, k=n), top_k=top_k)
        ok = [r.error is None for r in results]
        values = report.whole_output_hits(reader_questions, [r.raw_text for r in results])[
            np.array(ok, dtype=bool)
        ]
        hits[n] = float(values.mean()) if len(values) else float("nan")
    return recall, hits


def code_switches(kg, method, questions: Sequence, recall15: dict, *, tks_code=None, candidates=None) -> dict:
    """Answer recall@15 of the kit → with each of the released code's switches (report.effect strings).

    ``recall15`` holds the per-question recall of Table 5's variants; ``tks_code`` is a TKS of the model
    trained with the code's loss over ``candidates`` (compared with the softmax model on the same pool)."""

    def mean_recall(m) -> float:
        return float(evaluate.answer_recall_at_k(kg, m.retrieve(questions).ids, questions, [15])[15].mean())

    kit = float(recall15["TimeR4"].mean())
    effects = {
        "rerank_off": report.effect(kit, float(recall15["w/o rerank"].mean())),
        "window": report.effect(kit, mean_recall(method.variant(rerank="window"))),
        "original_question": report.effect(kit, float(recall15["w/o rewrite"].mean())),
    }
    if tks_code is not None:
        softmax_same_pool = method.variant(tks=method.tks.restrict(candidates))
        effects["code_loss"] = report.effect(
            mean_recall(softmax_same_pool), mean_recall(method.variant(tks=tks_code))
        )
        released = method.variant(tks=tks_code, rewrite="none", rerank="off")
        effects["released_pipeline"] = report.effect(mean_recall(softmax_same_pool), mean_recall(released))
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
