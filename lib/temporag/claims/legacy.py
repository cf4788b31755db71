"""Outcomes rebuilt from the per-question records a run kept before the claims layer existed.

Why: the committed paper-profile runs predate ``Results.outcomes`` but many kept per-question records
(retrieved fact ids, reader answers); rescoring those with the kit's own metrics gives the same
outcomes a re-run would record for those measures, without re-running the methods.  A paper's
``claims.from_records(data)`` returns ``(outcomes, skipped)``; measures it cannot rebuild are skipped
with the reason, so their claims read "not run here", never a guessed verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

import numpy as np

from temporag.answer import evaluate

NOT_KEPT = "this run kept no per-question record of it (recorded before the claims layer): re-run it"


@cache
def multitq_kg():
    from temporag.data import multitq  # lazy: only a rebuild needs the KG

    return multitq.load_kg()


def multitq_questions(data: dict) -> dict[str, object]:
    """The run's MultiTQ questions by quid (its split or question file, as recorded)."""
    from temporag.data import multitq  # lazy: only a rebuild reads questions

    params = data.get("parameters", {})
    questions = multitq.load_questions(params.get("split", "test_sample_shared"),
                                       questions_file=params.get("questions_file"))
    return {str(q.quid): q for q in questions}


def strict_hits(questions: dict, records: Iterable[dict]) -> dict[str, float]:
    """Strict Hits@1 per quid of reader records ({quid, answers, error}); NaN where the call failed."""
    out = {}
    for r in records:
        q = questions[str(r["quid"])]
        hit = evaluate.hits_at_k([list(r.get("answers") or [])], [q], (1,))[1][0]
        out[str(r["quid"])] = float("nan") if r.get("error") else float(hit)
    return out


def answer_recall(questions: dict, records: Iterable[dict], field: str, k: int | None = None) -> dict:
    """Answer recall per quid of the first ``k`` fact ids in ``field`` of each record."""
    kg, out = multitq_kg(), {}
    for r in records:
        q = questions[str(r["quid"])]
        facts = np.asarray(r.get(field) or [], dtype=np.int64)[:k]
        out[str(r["quid"])] = float(evaluate.answer_recalled(kg, facts, q.answers, q.answer_type))
    return out


def skipped(measures: Sequence[str], why: str = NOT_KEPT) -> dict[str, str]:
    return {m: why for m in measures}
