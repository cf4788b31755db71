"""Metrics: answer accuracy (strict MultiTQ rule and lenient TimeR4 rule), retrieval recall, CIs.

Both answer rules are kept and always labelled, because the papers mix them: MultiTQ's official
``eval_multi`` is exact-match Hits@k with time predictions cut to the gold granularity; TimeR4's
reported "Hit" counts a gold answer appearing anywhere in the normalised output.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

from temporag.timeutil import try_parse_time

STRICT = "strict (MultiTQ eval_multi: exact match, time cut to gold granularity)"
LENIENT = "lenient (TimeR4: normalised gold is a substring of the output)"


def normalise_answer(text: str) -> str:
    """The kit's one answer normaliser: NFKC, '_'→' ', quotes trimmed, spaces collapsed, casefolded."""
    text = unicodedata.normalize("NFKC", str(text)).replace("_", " ").replace("\u00a0", " ")
    text = re.sub(r"\s+", " ", text).strip()
    previous = None
    while previous != text:  # trailing full stops and wrapping quotes, in any order
        previous = text
        text = text.rstrip(".").strip().strip("'\"`").strip()
    return text.casefold()


def _cut_time(pred: str, gold: str) -> str:
    """MultiTQ: a 4-char gold compares pred[:4], a 7-char gold compares pred[:7]."""
    return pred[: len(gold)] if len(gold) in (4, 7) else pred


def strict_hit(
    predictions: Sequence[str], golds: Iterable[str], k: int = 1, answer_type: str | None = None
) -> bool:
    """Hits@k under MultiTQ's rule: some gold equals one of the top-k (time cut to gold granularity)."""
    top = [normalise_answer(p) for p in list(predictions)[:k]]
    for gold in golds:
        g = normalise_answer(gold)
        is_time = answer_type == "time" or (answer_type is None and try_parse_time(g) is not None)
        for p in top:
            if (_cut_time(p, g) if is_time else p) == g:
                return True
    return False


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def lenient_normalise(text: str) -> str:
    """TimeR4's normalisation: lowercase, drop punctuation, articles and <pad>, collapse spaces."""
    text = str(text).replace("<pad>", " ").lower().replace("_", " ")
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def lenient_hit(output: str | Sequence[str], golds: Iterable[str]) -> bool:
    """TimeR4's Hit: some normalised gold is a substring of the normalised output.

    A list of ranked predictions is judged on its first item (Hits@1); a string as it is."""
    if not isinstance(output, str):
        output = output[0] if len(output) else ""
    out = lenient_normalise(output)
    return any((g := lenient_normalise(gold)) and g in out for gold in golds)


# -- retrieval metrics over KG facts -------------------------------------------------------------


def gold_entity_ids(kg, answers: Iterable[str]) -> np.ndarray:
    """KG ids of the entity answers (answers use spaced labels)."""
    ids = []
    lookup = kg.label_to_entity
    for a in answers:
        i = lookup.get(a)
        if i is None:
            i = lookup.get(a.replace("_", " "))
        if i is not None:
            ids.append(i)
    return np.asarray(ids, dtype=np.int32)


def answer_fact_mask(kg, fact_ids: np.ndarray, answers: Sequence[str], answer_type: str) -> np.ndarray:
    """Which of the given facts carry a gold answer (as subject/object, or as their date)."""
    fact_ids = np.asarray(fact_ids, dtype=np.int64)
    return answer_tuple_mask(
        kg, kg.s[fact_ids], kg.o[fact_ids], kg.t_start[fact_ids], kg.t_end[fact_ids], answers, answer_type
    )


def answer_tuple_mask(
    kg, subjects, objects, starts, ends, answers: Sequence[str], answer_type: str
) -> np.ndarray:
    """Which (subject, object, first day, last day) tuples carry a gold answer: ``answer_fact_mask`` for
    what a reader is shown when that is not one fact per line (e.g. objects and dates grouped per
    subject, paired as a method pairs them)."""
    subjects, objects = np.asarray(subjects, dtype=np.int64), np.asarray(objects, dtype=np.int64)
    if len(subjects) == 0:
        return np.zeros(0, dtype=bool)
    if answer_type == "time":
        starts, ends = np.asarray(starts), np.asarray(ends)
        mask = np.zeros(len(subjects), dtype=bool)
        for a in answers:
            value = try_parse_time(a)
            if value is not None:
                mask |= (starts <= value.last_day) & (ends >= value.first_day)
        return mask
    ents = gold_entity_ids(kg, answers)
    return np.isin(subjects, ents) | np.isin(objects, ents)


def answer_recalled(kg, fact_ids, answers: Sequence[str], answer_type: str) -> bool:
    """TECQA's Answer Recall for one question: the retrieved context contains a gold answer."""
    return bool(answer_fact_mask(kg, fact_ids, answers, answer_type).any())


def answer_recall(
    kg, ranked: Sequence[Sequence[int]], questions: Sequence, k: int | None = None
) -> np.ndarray:
    """Per-question 0/1 answer recall of the (first ``k``, default all) retrieved facts: TECQA's Answer
    Recall (appendix D) — the context contains a gold answer."""
    if len(ranked) != len(questions):
        raise ValueError(f"{len(ranked)} rankings but {len(questions)} questions")
    return np.array(
        [
            float(answer_recalled(kg, np.asarray(facts)[:k], q.answers, q.answer_type))
            for facts, q in zip(ranked, questions)
        ],
        dtype=float,
    )


def answer_recall_at_k(
    kg, ranked: Sequence[np.ndarray], questions: Sequence, ks: Sequence[int]
) -> dict[int, np.ndarray]:
    """Per-question 0/1 answer recall of the top-k retrieved facts, for each k (one pass: the rank of the
    first fact that carries a gold answer decides every k)."""
    out = {k: np.zeros(len(questions), dtype=float) for k in ks}
    for i, (facts, q) in enumerate(zip(ranked, questions)):
        facts = np.asarray(facts)[: max(ks)]
        mask = answer_fact_mask(kg, facts, q.answers, q.answer_type)
        first = int(np.argmax(mask)) if mask.any() else None
        for k in ks:
            out[k][i] = float(first is not None and first < k)
    return out


def anchor_recall(anchor_masks: Sequence[np.ndarray | None]) -> np.ndarray:
    """TECQA's Anchor Recall per question: 1 when some context fact holds the question's reference anchor,
    0 when none does, NaN when the question has no anchor (``None`` mask; left out of means).  Which facts
    hold the anchor is the method's definition (``tecqa.analysis.reference_anchor_mask``)."""
    return np.array([np.nan if m is None else float(np.asarray(m).any()) for m in anchor_masks], dtype=float)


def chain_recall(answer_hits: np.ndarray, anchor_hits: np.ndarray) -> np.ndarray:
    """TECQA's Evidence Chain Recall: both the anchor and the answer are in the context (NaN where the
    question has no anchor)."""
    answer_hits, anchor_hits = np.asarray(answer_hits, dtype=float), np.asarray(anchor_hits, dtype=float)
    both = np.logical_and(answer_hits.astype(bool), np.nan_to_num(anchor_hits).astype(bool)).astype(float)
    return np.where(np.isnan(anchor_hits), np.nan, both)


# -- aggregation ----------------------------------------------------------------------------------


def bootstrap_ci(
    values: Sequence[float], n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


BREAKDOWNS = ("qtype", "qlabel", "answer_type", "time_level")


def breakdown(
    questions: Sequence,
    values: Sequence[float],
    by: Sequence[str] = BREAKDOWNS,
    seed: int = 0,
    ci: bool = True,
):
    """Mean (with n and bootstrap CI) overall and per category of each field in ``by``.

    Returns a DataFrame with columns group, category, n, mean, ci_low, ci_high."""
    import pandas as pd

    values = np.asarray(values, dtype=float)
    rows = []

    def add(group: str, category: str, idx: np.ndarray) -> None:
        vals = values[idx]
        lo, hi = bootstrap_ci(vals, seed=seed) if ci else (np.nan, np.nan)
        rows.append(
            {
                "group": group,
                "category": category,
                "n": int(len(vals)),
                "mean": float(vals.mean()) if len(vals) else np.nan,
                "ci_low": lo,
                "ci_high": hi,
            }
        )

    add("overall", "all", np.arange(len(values)))
    for field in by:
        cats = np.asarray([getattr(q, field) for q in questions])
        for cat in sorted(set(cats.tolist())):
            add(field, cat, np.flatnonzero(cats == cat))
    return pd.DataFrame(rows)


# -- reader scores and per-method tables --------------------------------------------------------------

RULES = {"strict": STRICT, "lenient": LENIENT}


def hits_at_k(
    answers: Sequence[Sequence[str]], questions: Sequence, ks: Sequence[int] = (1,), rule: str = "strict"
) -> dict[int, np.ndarray]:
    """Per-question 0/1 Hits@k of ranked answer lists under ``rule`` ("strict" or "lenient").

    The lenient rule (TimeR4's) judges the first answer only, so it is defined for k = 1 alone."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {sorted(RULES)}, got {rule!r}")
    if len(answers) != len(questions):
        raise ValueError(f"{len(answers)} answer lists but {len(questions)} questions")
    out = {}
    for k in ks:
        if rule == "lenient" and k != 1:
            raise ValueError("the lenient rule scores the first answer only: use k=1")
        if rule == "strict":
            vals = [
                strict_hit(a, q.answers, k=k, answer_type=q.answer_type) for a, q in zip(answers, questions)
            ]
        else:
            vals = [lenient_hit(list(a), q.answers) for a, q in zip(answers, questions)]
        out[k] = np.asarray(vals, dtype=float)
    return out


def failed_calls(reads: Sequence) -> np.ndarray:
    """Which reads (``ReaderResult`` or ``QuestionRecord``) carry an error: a failed model call."""
    return np.array([r.error is not None for r in reads], dtype=bool)


def answered_hits(
    answers: Sequence[Sequence[str]],
    questions: Sequence,
    failed: Sequence[bool] | None = None,
    ks: Sequence[int] = (1,),
    rule: str = "strict",
) -> dict[int, np.ndarray]:
    """Per-question Hits@k (:func:`hits_at_k`), NaN where ``failed`` marks a failed model call.

    Why NaN: a failed call gave no answer to score, so it is not a wrong one; :func:`answered_mean` leaves
    it out of the mean and counts it, and a claim's paired comparison drops the question."""
    out = hits_at_k(answers, questions, ks, rule)
    if failed is not None:
        mask = np.asarray(failed, dtype=bool)
        for values in out.values():
            values[mask] = np.nan
    return out


#: the MultiTQ Table-1 columns every paper's reader table uses, in printed order
TABLE1_GROUPS = ("Overall", "Single", "Multiple", "Entity", "Time")


def table1_masks(questions: Sequence) -> dict[str, np.ndarray]:
    """Overall / Single / Multiple / Entity / Time question masks (MultiTQ Table-1 columns)."""
    return {
        "Overall": np.ones(len(questions), dtype=bool),
        "Single": np.array([q.qlabel == "Single" for q in questions], dtype=bool),
        "Multiple": np.array([q.qlabel == "Multiple" for q in questions], dtype=bool),
        "Entity": np.array([q.answer_type == "entity" for q in questions], dtype=bool),
        "Time": np.array([q.answer_type == "time" for q in questions], dtype=bool),
    }


def hits_by_category(
    questions: Sequence, answers: Sequence[Sequence[str]], failed: Sequence[bool] | None = None
) -> dict[str, dict[str, float]]:
    """Hits@1 under both rules by Table-1 column, with n, n answered and n failed per column.

    A failed reader call is not a wrong answer: it is counted in ``failed`` and left out of the means
    (a column whose calls all failed is NaN, never 0)."""
    failed_mask = np.zeros(len(questions), dtype=bool) if failed is None else np.asarray(failed, dtype=bool)
    answered = ~failed_mask
    out: dict[str, dict[str, float]] = {}
    for rule in RULES:
        vals = hits_at_k(answers, questions, (1,), rule)[1]
        out[rule] = {
            g: (float(vals[m & answered].mean()) if (m & answered).any() else float("nan"))
            for g, m in table1_masks(questions).items()
        }
    masks = table1_masks(questions)
    out["n"] = {g: int(m.sum()) for g, m in masks.items()}
    out["answered"] = {g: int((m & answered).sum()) for g, m in masks.items()}
    out["failed"] = {g: int((m & failed_mask).sum()) for g, m in masks.items()}
    return out


def answered_mean(values: Sequence[float], failed: Sequence[bool] | None = None) -> dict[str, float | int]:
    """One reader number by :func:`hits_by_category`'s rule: the mean over the answered questions
    (``value``, NaN when none was answered, never 0), with ``n``, ``answered`` and ``failed`` beside it.

    ``failed`` marks the questions whose reader call failed; a NaN in ``values`` counts as failed too."""
    vals = np.asarray(values, dtype=float)
    bad = np.isnan(vals) if failed is None else (np.asarray(failed, dtype=bool) | np.isnan(vals))
    ok = ~bad
    return {
        "value": float(vals[ok].mean()) if ok.any() else float("nan"),
        "n": int(len(vals)),
        "answered": int(ok.sum()),
        "failed": int(bad.sum()),
    }


def recall_by_category(
    kg, questions: Sequence, ranked: dict[str, Sequence[np.ndarray]], k: int, seed: int = 0
):
    """Answer recall@k of several methods' rankings: overall, per qtype and per qlabel, with CIs.

    Returns (per-question values per method, long DataFrame: method, group, category, n, mean, CI)."""
    import pandas as pd

    values, frames = {}, []
    for name, lists in ranked.items():
        values[name] = answer_recall_at_k(kg, lists, questions, [k])[k]
        frame = breakdown(questions, values[name], by=["qtype", "qlabel"], seed=seed)
        frame.insert(0, "method", name)
        frames.append(frame)
    return values, pd.concat(frames, ignore_index=True)


def category_rows(table):
    """(group, category, rows of ``table``) in reading order — overall, Single, Multiple, then each qtype —
    skipping categories the table lacks; every per-category pivot walks the table this way."""
    order = [("overall", "all"), ("qlabel", "Single"), ("qlabel", "Multiple")]
    order += [("qtype", c) for c in sorted(table[table.group == "qtype"].category.unique())]
    for group, cat in order:
        sub = table[(table.group == group) & (table.category == cat)]
        if not sub.empty:
            yield group, cat, sub


def pivot_by_category(table, methods: Sequence[str]):
    """A ``recall_by_category`` table as rows overall / Single / Multiple / each qtype, one column per
    method (the mean) plus n."""
    import pandas as pd

    rows = []
    for group, cat, sub in category_rows(table):
        row = {"group": group, "category": cat, "n": int(sub.n.iloc[0])}
        for m in methods:
            hit = sub[sub.method == m]
            row[m] = float(hit["mean"].iloc[0]) if len(hit) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean in milliseconds, and n (the bench and leaderboard latency columns)."""
    ms = np.asarray(seconds, dtype=float) * 1000.0
    if len(ms) == 0:
        return {"n": 0, "p50_ms": float("nan"), "p95_ms": float("nan"), "mean_ms": float("nan")}
    return {
        "n": int(len(ms)),
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "mean_ms": float(ms.mean()),
    }


# -- DyG-RAG's token-level accuracy and recall (IA-RAG's Tables 2-8) ------------------------------------

TOKEN_LEVEL = (
    "token-level (DyG-RAG graphrag/evaluate.py, after Zhou et al. 2025): SQuAD normalisation; accuracy = "
    "every gold is contained in the response; recall = share of gold tokens in the response (one gold) or "
    "share of golds contained (several)"
)


def squad_normalise(text: str) -> str:
    """DyG-RAG's normaliser: lowercase, punctuation removed, articles removed, spaces collapsed."""
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def split_gold(answer: str) -> list[str]:
    """DyG-RAG's reading of a gold string: '|'-separated, else CSV with quotes, else comma-separated."""
    answer = str(answer).strip()
    if "|" in answer:
        return [a.strip() for a in answer.split("|")]
    if '"' in answer:
        import csv
        import io

        try:
            return [a.strip() for a in next(csv.reader(io.StringIO(answer))) if a.strip()]
        except (csv.Error, StopIteration):
            pass
    if "," in answer:
        return [a.strip() for a in answer.split(",")]
    return [answer]


def token_scores(response: str, golds: Sequence[str]) -> tuple[float, float]:
    """(accuracy, recall) of one response against its gold answers, exactly as DyG-RAG scores them.

    Golds are read with :func:`split_gold` (a list is flattened first).  One gold: accuracy = the
    normalised gold is a substring of the normalised response; recall = |gold ∩ response tokens| / |gold
    tokens|.  Several golds: accuracy = all are contained; recall = the share that is contained."""
    from collections import Counter

    flat = [g for gold in golds for g in split_gold(gold)]
    text = " ".join(str(response or "").replace("|", "\n").split("\n"))
    text = text.replace("Yes", "yes").replace("No", "no")
    pred = squad_normalise(text)
    if len(flat) == 1:
        gold = squad_normalise(flat[0].replace("Yes", "yes").replace("No", "no"))
        acc = float(gold in pred)
        pt, gt = pred.split(), gold.split()
        if not pt or not gt:
            return acc, 0.0
        common = sum((Counter(pt) & Counter(gt)).values())
        return acc, common / len(gt)
    present = [squad_normalise(g.replace("Yes", "yes").replace("No", "no")) for g in flat if g.strip()]
    covered = sum(g in pred for g in present)
    if not present:
        return 0.0, 0.0
    return float(covered == len(present)), covered / len(present)


def token_accuracy_recall(
    responses: Sequence[str], golds: Sequence[Sequence[str]]
) -> tuple[np.ndarray, np.ndarray]:
    """Per-question DyG-RAG accuracy and recall (0..1) of responses against their gold lists."""
    if len(responses) != len(golds):
        raise ValueError(f"{len(responses)} responses but {len(golds)} gold lists")
    scores = [token_scores(r, g) for r, g in zip(responses, golds)]
    return np.array([s[0] for s in scores], dtype=float), np.array([s[1] for s in scores], dtype=float)


def evidence_recall(evidence_texts: Sequence[str], golds: Sequence[Sequence[str]]) -> np.ndarray:
    """Retrieval recall for document methods: 1 when every gold answer is contained in the normalised
    retrieved text (DyG-RAG's accuracy rule applied to the evidence instead of a response; LLM-free)."""
    return token_accuracy_recall(evidence_texts, golds)[0]
