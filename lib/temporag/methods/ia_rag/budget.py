"""Retrieval compared at equal context tokens: recall as a function of the reader's token budget.

One operating point per method (IA-RAG's union against Vanilla RAG's two 1,200-token chunks) compares
contexts of different sizes: two chunks are ~2,400 tokens and cover most of a gold page.  Here each
method's ranked evidence is joined in rank order (one item a line, as the reader sees it) and cut at
the same cl100k budget B, the last item truncated mid-text so every method shows exactly B tokens when
it has that much; recall at B is DyG-RAG's rule (every gold answer contained).  A method whose ranked
list is shorter than B shows less, and the table says how many tokens it used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.answer.evaluate import evidence_recall
from temporag.cache import content_hash
from temporag.methods.base import Method
from temporag.methods.ia_rag.corpus import _encoding

BUDGETS = (100, 200, 400, 800, 1600, 2400)  # cl100k tokens; 2,400 = Vanilla RAG's two chunks


def recall_at_budgets(
    method: Method, questions: Sequence, budgets: Sequence[int] = BUDGETS, k: int = 500
) -> dict[int, dict[str, np.ndarray]]:
    """For each budget: per-question recall, the tokens actually shown (≤ budget) and a digest of the text
    shown (two arms with equal digests on every question handed the reader the same evidence)."""
    enc = _encoding()
    retrieval = method.retrieve(questions, k, progress=False)
    golds = [q.answers for q in questions]
    top = max(budgets)
    cut: dict[int, list[str]] = {b: [] for b in budgets}
    used: dict[int, list[int]] = {b: [] for b in budgets}
    for ids in retrieval.ids:
        lines, n = [], 0
        for i in ids:  # enough lines to fill the largest budget
            line = method.evidence_lines([int(i)])[0]
            lines.append(line)
            n += len(line) // 3
            if n > 2 * top:
                break
        tokens = enc.encode("\n".join(lines), disallowed_special=())
        for b in budgets:
            cut[b].append(enc.decode(tokens[:b]))
            used[b].append(min(b, len(tokens)))
    return {
        b: {"recall": evidence_recall(cut[b], golds), "tokens": np.asarray(used[b], dtype=float),
            "digest": [content_hash(text) for text in cut[b]]}
        for b in budgets
    }


def curve_table(
    methods: dict[str, Method],
    questions: Sequence,
    budgets: Sequence[int] = BUDGETS,
    k: int = 500,
    per_question: dict | None = None,
):
    """One row per (method, budget): mean recall and mean tokens shown; fills ``per_question[(method,
    budget)]`` with each question's recall when given (the claims' outcomes)."""
    import pandas as pd

    rows = []
    for name, method in methods.items():
        for b, v in recall_at_budgets(method, questions, budgets, k).items():
            if per_question is not None:
                per_question[(name, b)] = v["recall"]
            rows.append(
                {
                    "method": name,
                    "budget": b,
                    "recall": float(v["recall"].mean()),
                    "tokens shown": float(v["tokens"].mean()),
                    "n": len(v["recall"]),
                }
            )
    return pd.DataFrame(rows)
