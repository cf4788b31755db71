"""SAR's tables and figures: Table 1 and 2 rows with the paper's beside them, Fig. 3 (K) and Fig. 4 (N),
the trace viewer, the cost of each method per question, SEARCH's worked example and recall by qtype.

Every function takes what the notebook already computed (questions, per-question records) and returns a
DataFrame, a figure or text; nothing here runs a model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from temporag.answer.evaluate import (
    answer_recall_at_k,
    answered_hits,
    answered_mean,
    hits_by_category,
    pivot_by_category,
    recall_by_category,
)
from temporag.methods import plots
from temporag.methods.base import Retrieval
from temporag.methods.sar.agent import answers_at, failed_at
from temporag.methods.sar.search import parse_filter_time
from temporag.reported import paper_value

COLUMNS = ("Overall", "Single", "Multiple", "Entity", "Time")
BACKBONES = ("Llama3", "GPT-3.5", "GPT-4.1")
K_GRID = (5, 10, 15, 20, 30)  # Fig. 3
N_GRID = (0, 1, 2, 3, 4)  # Fig. 4

# -- scores --------------------------------------------------------------------------------------------


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
    row = {"method": method, "how": how, **{c: scores["strict"][c] for c in COLUMNS}}
    row.update(n=scores["n"]["Overall"], failed=scores["failed"]["Overall"], note=note)
    return row


def record_row(method: str, how: str, questions: Sequence, records: Sequence, n: int | None = None) -> dict:
    """:func:`score_row` of pipeline records (failed calls: the answer at ``n`` is a failed call)."""
    return score_row(method, how, questions, answers_of(records, n), failed_of(records, n))


def paper_row(source: str, row: str, how: str) -> dict:
    """The paper's printed row (MultiTQ columns), None where it prints none."""
    values = {c: paper_value("sar", source, row, c, "MultiTQ") for c in COLUMNS}
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


#: The headline rows: label → metric key ({model} is the reader's name).
HEADLINE = {
    "SAR Hits@1 — offline policy + template reader (no LLM)": "table1/SAR/offline/Overall",
    "SAR Hits@1 — LLM policy, {model}": "table1/SAR/llm/Overall",
    "ReAct RAG Hits@1 — offline policy": "table1/ReAct RAG/offline/Overall",
    "ReAct RAG Hits@1 — LLM policy, {model}": "table1/ReAct RAG/llm/Overall",
    "Naive RAG Hits@1 — template reader": "table1/Naive RAG/offline/Overall",
    "Naive RAG Hits@1 — reader {model}": "table1/Naive RAG/llm/Overall",
    "w/o Decompose — offline": "table2/w/o Decompose/offline/Overall",
    "w/o Validation — offline": "table2/w/o Validation/offline/Overall",
    "SEARCH evidence answer recall (offline)": "offline/evidence_answer_recall",
    "template reader ceiling (all facts of the main entity)": "template_reader/ceiling_hits@1",
    "Hits@1 at K=5 (offline; the paper quotes about 0.74)": "fig3/K=5/template_hits@1",
    "Hits@1 at K=15 (offline; the paper quotes about 0.78)": "fig3/K=15/template_hits@1",
    "one SEARCH p50 (ms, target 20)": "latency/search_p50_ms",
}


def headline(results, rows: dict[str, str] | None = None, model: str = "") -> pd.DataFrame:
    """Headline rows from metrics already recorded: {label: metric key} → kit, paper, n, failed, reader.
    ``failed``: the number's LLM calls that failed (left out of ``kit``), so an LLM row's 0.0 over a few
    answered questions is never read as a 0.0 over all ``n`` (blank where no count was recorded)."""
    out = []
    for label, key in (rows or HEADLINE).items():
        label = label.format(model=model)
        entry = results.data["metrics"].get(key)
        if entry is None:
            continue
        if not isinstance(entry, dict):
            entry = {"value": entry}
        out.append(
            {
                "number": label,
                "kit": entry.get("value"),
                "paper": entry.get("paper"),
                "n": entry.get("n"),
                "failed": entry.get("failed"),
                "reader / policy": entry.get("reader") or entry.get("note") or "",
            }
        )
    frame = pd.DataFrame(out, columns=["number", "kit", "paper", "n", "failed", "reader / policy"])
    for count in ("n", "failed"):  # whole counts: "5", never "5.0" beside a row without one (blank)
        values = ["" if row.get(count) is None else int(row[count]) for row in out]
        frame[count] = pd.Series(values, index=frame.index, dtype=object)
    return frame


# -- SEARCH, step by step --------------------------------------------------------------------------------


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


# -- the trace viewer --------------------------------------------------------------------------------


def render_trace(kg, trace: dict, max_facts: int = 4, question=None) -> str:
    """One question's thought / action / observation / verdict chain as plain text."""
    lines = [f"Question: {trace['question']}"]
    if question is not None:
        lines.append(f"Gold: {list(question.answers)[:5]}  ({question.qtype}, {question.qlabel})")
    for i, attempt in enumerate(trace["attempts"], 1):
        lines.append(
            f"── attempt {i}"
            + (f" (feedback: {' | '.join(attempt['feedback_in'])})" if attempt["feedback_in"] else "")
        )
        for step in attempt["steps"]:
            lines.append(f"  Thought: {step['thought'][:300]}")
            lines.append(f"  Action:  {step['action'][:300]}")
            if "search" in step:
                info = step["search"]
                lines.append(
                    f"    (h, r, t) = {tuple(info['triple'])} by {info['decomposer']}; "
                    f"{info['filtered']:,} facts after FILTER; {info['latency_ms']:.1f} ms"
                    + ("; chronological" if info["reordered"] else "")
                )
                facts = step["observation"]
                for f in facts[:max_facts]:
                    lines.append(f"    · {kg.verbalise(f)}")
                if len(facts) > max_facts:
                    lines.append(f"    · … {len(facts) - max_facts} more")
            if step.get("note"):
                lines.append(f"    note: {step['note']}")
        verdict = attempt.get("verdict")
        shown = (
            ("VALID" if verdict["valid"] else f"INVALID: {verdict['feedback']}") if verdict else "not checked"
        )
        lines.append(
            f"  → {attempt['outcome']}; answers {attempt['answers'][:3]}; verdict {shown}"
            + (f" ({verdict['source']})" if verdict else "")
        )
    return "\n".join(lines)


# -- figures ------------------------------------------------------------------------------------------


def short_label(method: str, how: str) -> str:
    """A bar label: "SAR · offline", "ReAct RAG · LLM", "paper SAR · GPT-4.1"."""
    if method.startswith("paper: "):
        return f"paper {method[7:]}"
    return f"{method} · {'offline' if 'no LLM' in how else 'LLM'}"


def fig_table1(table: pd.DataFrame, title: str = "Table 1 · MultiTQ Hits@1 (strict)"):
    """Overall / Single / Multiple Hits@1 of the kit's rows and the paper's GPT-4.1 rows."""
    rows = [
        r for r in table.to_dict("records") if not r["method"].startswith("paper") or "GPT-4.1" in r["how"]
    ]
    labels = [short_label(r["method"], r["how"]) for r in rows]
    series = {c: [np.nan if r[c] is None else float(r[c]) for r in rows] for c in COLUMNS[:3]}
    return plots.grouped_bars(
        labels,
        series,
        title=title,
        ylabel="Hits@1",
        note="kit LLM rows: the configured reader on the agent sample; offline rows: no LLM, every selected "
        "question; paper rows: GPT-4.1 on its 560-question sample",
    )


def recall_methods(frame: pd.DataFrame) -> list[str]:
    """The retrievals :func:`recall_by_qtype`'s frame compares (its value columns)."""
    return [c for c in frame.columns if c not in ("group", "category", "n")]


def fig_recall(frame: pd.DataFrame, methods: Sequence[str] | None = None):
    """SEARCH vs semantic answer recall by question category (grouped bars), for ``methods`` (default
    every retrieval of the frame)."""
    methods = recall_methods(frame) if methods is None else methods
    labels = [c if g != "overall" else "overall" for g, c in zip(frame.group, frame.category)]
    series = {m: frame[m].tolist() for m in methods}
    return plots.grouped_bars(
        labels,
        series,
        title="Answer recall of the retrieved evidence by question type",
        ylabel="answer recall",
        ylim=(0, 1.2),
        note="LLM-free; SAR: offline policy's SEARCHes",
    )


def fig_k(frame: pd.DataFrame, paper_points: dict[int, float]):
    """Fig. 3: Hits@1 and SEARCH answer recall over K, the paper's two quoted points as crosses."""
    plots.use_house_style()
    fig, ax = plt.subplots()
    ks = frame["K"].tolist()
    styles = {
        "SEARCH answer recall (offline policy, all questions)": ("search_recall", "-", "o"),
        "Hits@1, offline policy + template reader (all questions)": ("template_hits", "-", "s"),
        "Hits@1, LLM reader on SEARCH evidence (sample)": ("reader_hits", "--", "^"),
    }
    for label, (col, ls, marker) in styles.items():
        if col in frame and frame[col].notna().any():
            if col == "reader_hits":
                label += f" n={int(frame['reader_n'].iloc[0])}"
                failed = int(frame["reader_failed"].sum()) if "reader_failed" in frame else 0
                if failed:  # left out of the points, never plotted as 0
                    label += f", {failed} failed calls left out"
            ax.plot(ks, frame[col], ls=ls, marker=marker, label=label)
    if paper_points:
        ax.plot(
            list(paper_points),
            list(paper_points.values()),
            "x",
            ms=9,
            color="black",
            label="paper (GPT-4.1, quoted in text)",
        )
    ax.set_xticks(ks)
    ax.set_xlabel("K (facts per SEARCH)")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("Hits@1 / answer recall")
    ax.set_title("Fig. 3 · Sensitivity to K")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


#: a Fig. 4 column ``<curve> failed`` counts the failed calls left out of ``<curve>`` at each N
FAILED_SUFFIX = " failed"


def fig_n(frame: pd.DataFrame):
    """Fig. 4: Hits@1 over the verification budget N for each policy (one run per policy at the largest N)."""
    plots.use_house_style()
    fig, ax = plt.subplots()
    for col in [c for c in frame.columns if c != "N" and not str(c).endswith(FAILED_SUFFIX)]:
        label, failed = col, frame.get(f"{col}{FAILED_SUFFIX}")
        if failed is not None and failed.sum():  # left out of the points, never plotted as 0
            counts = [f"N={n} {int(k)}" for n, k in zip(frame["N"], failed) if k > 0]
            label += f"; failed calls left out: {', '.join(counts)}"
        ax.plot(frame["N"], frame[col], marker="o", label=label)
    ax.axvline(2, ls=":", color="grey")
    ax.text(2.05, 0.02, "paper's default N = 2", fontsize=7, color="grey")
    ax.set_xticks(frame["N"].tolist())
    ax.set_xlabel("N (verification iterations)")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("Hits@1 (strict)")
    ax.set_title("Fig. 4 · Sensitivity to N")
    ax.legend(loc="center right")
    plots.footnote(
        fig, "the paper's Fig. 4 prints no values; each curve is read from one run at its largest N"
    )
    fig.tight_layout()
    return fig
