"""The common protocol's numbers for one method's native context, all from :mod:`temporag.answer.evaluate`.

Per question (so every mean gets a bootstrap interval and a qtype / Single-Multiple breakdown):

* answer recall@k of the ranked context (k in ``ks``; a context shorter than k is what the method gives);
* the LLM-free template reader's answers on the whole native context (:mod:`temporag.answer.template_reader`,
  the same reader SAR's offline policy answers with), scored strict and lenient — it measures whether
  the context *supports* the answer under the question's template, with no model;
* the context's size in facts and cl100k tokens (what a reader would be sent), retrieval latency.

The embedded reader's Hits@1 on a small seeded sample is :func:`read_sample`: the same model reads every
method's context through that method's own ``read`` (its prompt), which proves the plumbing only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.llm import cl100k_count
from temporag.question.parsing import subgraph

KS = (1, 5, 10, 20)


@dataclass
class MethodScores:
    """Per-question values of one method under the common protocol (arrays aligned with the questions)."""

    name: str
    recall: dict[int, np.ndarray]
    context_recall: np.ndarray
    strict: np.ndarray
    lenient: np.ndarray
    facts: np.ndarray
    tokens: np.ndarray
    latency_s: np.ndarray
    answers: list[list[str]] = field(default_factory=list)

    def per_question(self) -> dict[str, np.ndarray]:
        """The 0/1 (or size) series a breakdown is computed over, by column name."""
        out = {f"recall@{k}": v for k, v in self.recall.items()}
        return {
            **out,
            "recall (whole context)": self.context_recall,
            "template Hits@1 strict": self.strict,
            "template Hits@1 lenient": self.lenient,
        }


def context_tokens(lines_of, contexts: Sequence[Sequence[int]]) -> np.ndarray:
    """cl100k tokens of each context as its reader lines (``lines_of(ids)``), one line per item."""
    return np.array([cl100k_count("\n".join(lines_of(ids))) for ids in contexts], dtype=float)


def score_contexts(
    name: str,
    kg,
    questions: Sequence,
    contexts: Sequence[Sequence[int]],
    readings: Sequence,
    lines_of,
    latency_s: Sequence[float],
    ks: Sequence[int] = KS,
) -> MethodScores:
    """Every common-protocol value of one method; ``readings`` are the template reader's
    :class:`~temporag.answer.template_reader.Reading` of each context."""
    if not (len(questions) == len(contexts) == len(readings) == len(latency_s)):
        raise ValueError(
            f"{name}: {len(questions)} questions, {len(contexts)} contexts, "
            f"{len(readings)} readings, {len(latency_s)} latencies"
        )
    contexts = [np.asarray(c, dtype=np.int64) for c in contexts]
    answers = [list(r.answers) for r in readings]
    return MethodScores(
        name=name,
        recall=evaluate.answer_recall_at_k(kg, contexts, questions, list(ks)),
        context_recall=evaluate.answer_recall(kg, contexts, questions),
        strict=evaluate.hits_at_k(answers, questions, (1,), "strict")[1],
        lenient=evaluate.hits_at_k(answers, questions, (1,), "lenient")[1],
        facts=np.array([len(c) for c in contexts], dtype=float),
        tokens=context_tokens(lines_of, contexts),
        latency_s=np.asarray(latency_s, dtype=float),
        answers=answers,
    )


CEILINGS = {
    "main entity": "template reader ceiling: every fact of the parsed main entity",
    "subgraph": "template reader on TECQA's full structure-guided subgraph",
}


def ceilings(kg, questions: Sequence, workspace, ks: Sequence[int] = KS) -> dict[str, MethodScores]:
    """The template reader with the widest contexts the offline parse allows — every fact of the main
    entity, and TECQA's full structure-guided subgraph (F_main ∪ F_context, Eqs. 3–5) — so each method's
    Hits@1 can be read against what the reader reaches when retrieval loses nothing.  ``workspace`` is
    the :class:`~temporag.methods.workspace.KGWorkspace` (its parser, templates and reader)."""
    texts = [q.question for q in questions]
    templates = workspace.templates(texts)
    contexts = {
        "main entity": [kg.by_entity[t.pivot] if t.pivot is not None else [] for t in templates],
        "subgraph": [subgraph(kg, c) for c in workspace.parser.parse_many(texts)],
    }
    no_lines = lambda ids: []  # noqa: E731  (a ceiling is not shown to a reader: no tokens)
    zero = np.zeros(len(questions))
    return {
        key: score_contexts(
            CEILINGS[key], kg, questions, ctx, workspace.read_contexts(questions, ctx), no_lines, zero, ks
        )
        for key, ctx in contexts.items()
    }


def with_ci(values: Sequence[float], seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its percentile-bootstrap 95% interval (``evaluate.bootstrap_ci``)."""
    values = np.asarray(values, dtype=float)
    low, high = evaluate.bootstrap_ci(values, seed=seed)
    return float(values.mean()) if len(values) else float("nan"), low, high


def summary_row(scores: MethodScores, seed: int = 0) -> dict:
    """One leaderboard row: recall@k and template Hits@1 with 95% intervals, context size, latency."""
    row: dict = {"method": scores.name, "n": len(scores.strict)}
    for label, values in scores.per_question().items():
        mean, low, high = with_ci(values, seed)
        row[label], row[f"{label} CI low"], row[f"{label} CI high"] = mean, low, high
    latency = evaluate.latency_summary(scores.latency_s)
    row.update(
        {
            "facts / question": float(scores.facts.mean()),
            "context tokens / question": float(scores.tokens.mean()),
            "retrieval p50 ms": latency["p50_ms"],
            "retrieval p95 ms": latency["p95_ms"],
        }
    )
    return row


def breakdown_table(questions: Sequence, all_scores: Sequence[MethodScores], column: str, seed: int = 0):
    """One per-question series (``column`` of :meth:`MethodScores.per_question`) of every method, by
    qtype and Single / Multiple, with bootstrap intervals: a long frame (method, group, category, n,
    mean, ci_low, ci_high)."""
    frames = []
    for s in all_scores:
        frame = evaluate.breakdown(questions, s.per_question()[column], by=["qlabel", "qtype"], seed=seed)
        frame.insert(0, "method", s.name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def read_sample(
    llm, method, questions: Sequence, retrieval, sample: Sequence, *, progress: bool = False
) -> dict:
    """The embedded (or configured) reader on ``sample`` (a subset of ``questions``) over this method's
    native context, through the method's own ``read``: Hits@1 both rules, calls, tokens, failures."""
    position = {q.quid: i for i, q in enumerate(questions)}
    shown = retrieval.select([position[q.quid] for q in sample])
    results = method.read(llm, list(sample), shown, progress=progress)
    failed = [r.error is not None for r in results]
    scores = evaluate.hits_by_category(list(sample), [r.answers for r in results], failed=failed)
    ok = [r.response for r in results if r.response is not None and r.response.error is None]
    n = max(1, len(sample))
    return {
        "n": len(sample),
        "failed": int(sum(failed)),
        "strict": scores["strict"]["Overall"],
        "lenient": scores["lenient"]["Overall"],
        "llm_calls": sum(r.response is not None for r in results) / n,
        "prompt_tokens": sum(r.prompt_tokens for r in ok) / n,
        "completion_tokens": sum(r.completion_tokens for r in ok) / n,
        "answers": [list(r.answers) for r in results],
    }
