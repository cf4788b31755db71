"""The numbers behind SAR's tables and figures: Table 1 and 2 rows (the kit's and the paper's), Fig. 3's
K sweep and Fig. 4's N curves, recall by qtype, the cost of each method per question and SEARCH's worked
example, so each cell reads like a step of the paper.

Each function returns a frame or the numbers a table shows; :mod:`.report` draws and formats them and
:mod:`.record` writes them into the run's ``Results`` under the names the committed runs use.  Only
:func:`k_sweep` (the offline agent and the LLM reader at each K), :func:`recall_by_qtype` (the semantic
retriever) and :func:`search_example` (one SEARCH) run a model; the rest read records already computed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer.evaluate import (
    answer_recall_at_k,
    answered_hits,
    answered_mean,
    hits_by_category,
    latency_summary,
    pivot_by_category,
    recall_by_category,
)
from temporag.methods.base import Retrieval
from temporag.methods.sar import report
from temporag.methods.sar.agent import answers_at, failed_at
from temporag.methods.sar.search import parse_filter_time
from temporag.reported import PaperRef, paper_value

OFFLINE_HOW = "offline policy + template reader (no LLM)"  # Table 2's offline rows
BACKBONES = ("Llama3", "GPT-3.5", "GPT-4.1")
K_GRID = (5, 10, 15, 20, 30)  # Fig. 3
N_GRID = (0, 1, 2, 3, 4)  # Fig. 4


def protocol_table(question_sets: Mapping[str, Sequence]) -> pd.DataFrame:
    """The protocol table: each question set's size and its questions per label (Single / Multiple),
    beside the paper's 560-question sample."""
    return pd.DataFrame(
        [
            {"set": name, "questions": len(qs), **pd.Series([q.qlabel for q in qs]).value_counts().to_dict()}
            for name, qs in question_sets.items()
        ]
    )


def pivot_facts(kg, templates: Sequence) -> list:
    """Every fact of each template's parsed main entity (none without one): the template reader's ceiling
    context, the best any retrieval could give it with this parse."""
    return [kg.by_entity[t.pivot] if t.pivot is not None else [] for t in templates]


def offline_measures(
    kg, questions: Sequence, templates: Sequence, records: Sequence, ceiling: Sequence
) -> pd.Series:
    """The offline agent's LLM-free measures (template accuracy, evidence recall and size, Hits@1 and the
    template reader's ceiling) as one column named after the number of questions."""
    evidence = [r.evidence_ids for r in records]
    recall = answer_recall_at_k(kg, evidence, questions, [10**6])[10**6]
    measures = {
        "offline/template_accuracy": np.mean([t.template == q.qtype for t, q in zip(templates, questions)]),
        "offline/evidence_answer_recall": recall.mean(),
        "offline/evidence_facts_mean": np.mean([len(e) for e in evidence]),
        "offline/hits@1": answered_hits(answers_of(records), questions)[1].mean(),
        "template_reader/ceiling_hits@1": answered_hits([r.answers for r in ceiling], questions)[1].mean(),
    }
    return pd.Series(measures, name=f"n={len(questions)}")


def llm_agent_measures(questions: Sequence, records: Sequence, n: int) -> dict:
    """The LLM agent's strict Hits@1 at verification budget ``n`` (failed calls left out and counted,
    never 0), how its attempts ended and its LLM calls per question."""
    return {
        "hits@1": reader_hits(questions, records, n),
        "outcomes": outcomes(records),
        "calls_per_question": float(np.mean([r.llm_calls for r in records])),
    }


def ablation_rows(
    variants: Mapping[str, tuple[Sequence, Sequence, int | None]],
    questions: Sequence,
    agent_questions: Sequence,
    llm_how: str,
) -> list[dict]:
    """Table 2's kit rows: every variant's offline row on ``questions``, then its LLM row on
    ``agent_questions``; ``variants`` maps a name to (offline records, LLM records, N)."""
    offline = [
        record_row(name, OFFLINE_HOW, questions, offline_records, n)
        for name, (offline_records, _, n) in variants.items()
    ]
    llm = [
        record_row(name, llm_how, agent_questions, llm_records, n)
        for name, (_, llm_records, n) in variants.items()
    ]
    return offline + llm


def paper_k_points() -> dict[int, float]:
    """The two values of Fig. 3 the paper's text quotes (K = 5 and K = 15), where the register has them."""
    points = {k: PaperRef("sar", "Figure 3", "SAR", f"K={k}").value() for k in (5, 15)}
    return {k: v for k, v in points.items() if v is not None}


def n_sweep_frame(
    questions: Sequence,
    offline_records: Sequence,
    agent_questions: Sequence,
    llm_records: Sequence,
    n_max_llm: int,
    model: str,
) -> pd.DataFrame:
    """Fig. 4's curves over :data:`.N_GRID`: the offline policy's Hits@1 (records of one run at the
    largest N) and the LLM agent's up to ``n_max_llm``, with its failed calls in a column of their own."""
    offline_n = hits_over_n(questions, offline_records).set_index("N")
    llm_ns = range(n_max_llm + 1)
    llm_n = hits_over_n(agent_questions, llm_records, llm_ns).set_index("N").reindex(N_GRID)
    llm_curve = f"LLM policy + LLM verifier, {model} (n={len(agent_questions)})"
    return pd.DataFrame(
        {
            "N": list(N_GRID),
            f"offline policy + rule verifier (n={len(questions)})": offline_n["hits@1"].tolist(),
            llm_curve: llm_n["hits@1"].tolist(),
            llm_curve + report.FAILED_SUFFIX: llm_n["failed"].tolist(),  # left out of the curve
        }
    )


def search_seconds(records: Sequence) -> list[float]:
    """The time of every SEARCH the agent issued, in seconds, read from the records' traces."""
    return [
        step["search"]["latency_ms"] / 1e3
        for record in records
        for attempt in record.trace["attempts"]
        for step in attempt["steps"]
        if "search" in step
    ]


def latency_table(records: Sequence, semantic_seconds: Sequence[float], k: int) -> pd.DataFrame:
    """One SAR SEARCH's latency (from the agent's traces) beside the semantic retriever's per question
    (``evaluate.latency_summary``: p50 / p95 / mean ms and n)."""
    return pd.DataFrame(
        [
            {"retrieval": "one SAR SEARCH (structure-aligned)", **latency_summary(search_seconds(records))},
            {
                "retrieval": f"semantic top-{k} over all facts (per question)",
                **latency_summary(semantic_seconds),
            },
        ]
    )


def compact_predictions(records: Sequence) -> list[dict]:
    """Each record's answers, evidence ids and outcome, without its trace: every question's prediction."""
    return [
        dict(quid=r.quid, answers=r.answers, evidence_ids=r.evidence_ids, outcome=r.trace["outcome"])
        for r in records
    ]


def method_predictions(methods: Mapping[str, Sequence]) -> list[dict]:
    """Every record of each method, full trace included, tagged with the method's name."""
    return [dict(method=name, **r.to_dict()) for name, records in methods.items() for r in records]


def answers_of(records: Sequence, n: int | None = None) -> list[list[str]]:
    """Each record's answers, or (``n`` given) the answers with at most ``n`` verification iterations."""
    return [list(r.answers) if n is None else answers_at(r.trace, n) for r in records]


def failed_of(records: Sequence, n: int | None = None) -> list[bool]:
    """Whether each record's answer (at most ``n`` verification iterations when given) is a failed call."""
    if n is None:
        return [r.error is not None for r in records]
    return [failed_at(r.trace, n) if r.trace else r.error is not None for r in records]


def reader_hits(questions: Sequence, records: Sequence, n: int | None = None) -> dict:
    """Strict Hits@1 of pipeline records over the questions answered, with n, answered and failed: a
    failed LLM call is never a wrong answer (``evaluate.hits_by_category``'s rule)."""
    failed = failed_of(records, n)
    return answered_mean(answered_hits(answers_of(records, n), questions, failed)[1], failed)


def score_row(
    method: str, how: str, questions: Sequence, answers: Sequence[Sequence[str]], failed=None, note: str = ""
) -> dict:
    """A Table 1 / 2 row: strict Hits@1 by column, with n and failed calls (left out of the means).

    ``how`` names the policy and reader ("LLM policy, SmolLM2-135M", "offline policy + template reader")."""
    scores = hits_by_category(list(questions), [list(a) for a in answers], failed)
    row = {"method": method, "how": how, **{c: scores["strict"][c] for c in report.COLUMNS}}
    row.update(n=scores["n"]["Overall"], failed=scores["failed"]["Overall"], note=note)
    return row


def record_row(method: str, how: str, questions: Sequence, records: Sequence, n: int | None = None) -> dict:
    """:func:`score_row` of pipeline records (failed calls: the answer at ``n`` is a failed call)."""
    return score_row(method, how, questions, answers_of(records, n), failed_of(records, n))


def paper_row(source: str, row: str, how: str) -> dict:
    """The paper's printed row (MultiTQ columns), None where it prints none."""
    values = {c: paper_value("sar", source, row, c, "MultiTQ") for c in report.COLUMNS}
    n = paper_value("sar", "§Experiment Settings text", "Test sample", "Questions", "MultiTQ")
    n = int(n) if n is not None else None
    return {"method": f"paper: {row}", "how": how, **values, "n": n, "failed": None, "note": ""}


def table1_paper_rows() -> list[dict]:
    """The paper's Naive RAG, ReAct RAG and SAR rows for each backbone."""
    return [
        paper_row("Table 1", f"{method} ({backbone})", f"paper, {backbone}")
        for method in ("Naive RAG", "ReAct RAG", "SAR")
        for backbone in BACKBONES
    ]


def table2_paper_rows() -> list[dict]:
    """The paper's Table 2 (GPT-4.1)."""
    return [paper_row("Table 2", row, "paper, GPT-4.1") for row in ("SAR", "w/o Decompose", "w/o Validation")]


def hits_over_n(questions: Sequence, records: Sequence, ns: Sequence[int] = N_GRID) -> pd.DataFrame:
    """Hits@1 with at most N verification iterations, read from traces of one run at the largest N: one
    row per N with the questions answered and failed at that N (a failed call is left out, never 0)."""
    rows = []
    for n in ns:
        score = reader_hits(questions, records, n)
        rows.append(
            {"N": n, "hits@1": score["value"], "answered": score["answered"], "failed": score["failed"]}
        )
    return pd.DataFrame(rows, columns=["N", "hits@1", "answered", "failed"])


def outcomes(records: Sequence) -> dict[str, int]:
    """How the final REASONING attempts ended (finish, malformed_action, repeated_search, ...)."""
    return dict(Counter(r.trace["outcome"] for r in records if r.trace))


def cost_table(methods: dict[str, Sequence]) -> pd.DataFrame:
    """LLM calls, tokens and seconds per question for each method (means over its records)."""
    rows = []
    for name, records in methods.items():
        n = len(records)
        if not n:
            continue
        searches = [r.trace.get("searches", 0) if r.trace else 1 for r in records]
        rows.append(
            {
                "method": name,
                "questions": n,
                "LLM calls / q": np.mean([r.llm_calls for r in records]),
                "prompt tokens / q": np.mean([r.prompt_tokens for r in records]),
                "completion tokens / q": np.mean([r.completion_tokens for r in records]),
                "LLM seconds / q": np.mean([r.reader_s for r in records]),
                "searches / q": float(np.mean(searches)),
                "retrieval ms / q": 1e3 * np.mean([r.retrieval_s for r in records]),
                "failed calls": sum(r.error is not None for r in records),
                "outcomes": ", ".join(f"{k} {v}" for k, v in sorted(outcomes(records).items())) or "—",
            }
        )
    return pd.DataFrame(rows)


def k_sweep(
    method,
    questions: Sequence,
    sweep_questions: Sequence,
    llm,
    ks: Sequence[int] = K_GRID,
    *,
    reuse: dict | None = None,
    progress: bool = False,
    per_question: dict | None = None,
) -> pd.DataFrame:
    """Fig. 3's points: for each K the offline agent on every question (answer recall of its SEARCH evidence,
    template-reader Hits@1) and, with ``llm``, the reader's Hits@1 on SAR's evidence for ``sweep_questions``.

    ``reuse`` maps a K to offline records already computed at it (the main run); ``per_question`` (when
    given) receives ``("template", K)`` and ``("reader", K)`` → per-question Hits@1 (the claims' outcomes)."""
    kg = method.kg
    position = {q.quid: i for i, q in enumerate(questions)}
    rows = []
    for k in ks:
        records = (reuse or {}).get(k) or method.pipeline(questions, policy="offline", k=k, progress=progress)
        evidence = [r.evidence_ids for r in records]
        recall = answer_recall_at_k(kg, evidence, questions, [10**6])[10**6]
        template_hits = answered_hits(answers_of(records), questions)[1]
        if per_question is not None:
            per_question[("template", k)] = template_hits
        row = {
            "K": k,
            "search_recall": float(recall.mean()),
            "template_hits": float(template_hits.mean()),
            "evidence_facts": float(np.mean([len(e) for e in evidence])),
            "reader_hits": np.nan,
            "reader_n": len(sweep_questions),
            "reader_failed": 0,
        }
        if llm is not None and sweep_questions:
            ids = [evidence[position[q.quid]] for q in sweep_questions]
            retrieval = Retrieval(ids, np.zeros(len(ids)))
            read = method.read(llm, sweep_questions, retrieval, progress=progress)
            failed = [r.error is not None for r in read]
            read_hits = answered_hits([r.answers for r in read], sweep_questions, failed)[1]
            if per_question is not None:
                per_question[("reader", k)] = read_hits
            score = answered_mean(read_hits)
            row.update(reader_hits=score["value"], reader_failed=score["failed"])
        rows.append(row)
    return pd.DataFrame(rows)


def recall_by_qtype(
    kg, questions: Sequence, records: Sequence, semantic, k: int, per_question: dict | None = None
) -> pd.DataFrame:
    """Answer recall of SAR's SEARCH evidence (offline agent) by qtype and Single/Multiple, beside the
    semantic retriever at K and at the same number of facts as SAR gathered for each question; fills
    ``per_question`` with each list's per-question recall when given (the claims' outcomes)."""
    evidence = [np.asarray(r.evidence_ids, dtype=np.int64) for r in records]
    widest = max([k, *[len(e) for e in evidence]])
    ranked = semantic.retrieve(questions, widest, progress=False).ids
    names = (f"SAR SEARCH evidence (K={k} per SEARCH)", f"semantic top-{k}", "semantic, as many facts as SAR")
    lists = {
        names[0]: evidence,
        names[1]: [r[:k] for r in ranked],
        names[2]: [r[: max(1, len(e))] for r, e in zip(ranked, evidence)],
    }
    values, table = recall_by_category(kg, questions, lists, k=widest)
    if per_question is not None:
        per_question.update(values)
    return pivot_by_category(table, list(names))


def search_example(tool, sub_query: str, kind: str = "ANYTIME", time: str | None = None) -> pd.DataFrame:
    """One SEARCH with its Eq. 1 components per returned fact: S(h, h'), S(r, r'), S(t, t') and the sum."""
    workspace, kg = tool.workspace, tool.workspace.kg
    found = tool(sub_query, kind, time)
    triple, _ = tool.decomposer(sub_query)
    head, rel, tail = tool.vectors(triple)
    rows = []
    for rank, f in enumerate(found.facts, 1):
        s, r, o = int(kg.s[f]), int(kg.r[f]), int(kg.o[f])
        part = {
            "S(h,h')": float(workspace.entity_vectors[s] @ head) if head is not None else 0.0,
            "S(r,r')": float(workspace.relation_vectors[r] @ rel) if rel is not None else 0.0,
            "S(t,t')": float(workspace.entity_vectors[o] @ tail) if tail is not None else 0.0,
        }
        rows.append(
            {
                "rank": rank,
                "subject": kg.entity_labels[s],
                "relation": kg.relation_labels[r],
                "object": kg.entity_labels[o],
                "date": kg.date(int(f)),
                **part,
                "Eq. 1": sum(part.values()),
            }
        )
    frame = pd.DataFrame(rows)
    frame.attrs["search"] = found.describe()
    return frame


def filter_sizes(index, when: str) -> pd.DataFrame:
    """How many facts FILTER keeps for each type at one time (granularity as written)."""
    period = parse_filter_time(when)
    rows = []
    for kind in ("ANYTIME", "BEFORE", "IN", "AFTER"):
        lo, hi, mask = index.filter(kind, period)
        kept = int(hi - lo if mask is None else mask.sum())
        rows.append(
            {
                "type": kind,
                "time": when if kind != "ANYTIME" else "—",
                "facts kept": kept,
                "first day": period.first_day if kind != "ANYTIME" else None,
            }
        )
    frame = pd.DataFrame(rows)
    frame["first day"] = [
        str(np.datetime64(int(d), "D")) if d == d and d is not None else "—" for d in frame["first day"]
    ]
    return frame.rename(columns={"first day": "period starts"})
