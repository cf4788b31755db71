"""STAR-RAG's reader tables beside the paper's (Tables 2–4, Figs. 3 and 5, the summary); :mod:`report`
re-exports them (the released code's tables are in :mod:`code_tables`).

Every number that has a counterpart in the paper goes through ``Results.compare``: one call records the
``results.json`` metric (kit value, paper value or None, n, reader, scoring rule) and returns the row
the table is made of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.llm import usage_summary
from temporag.methods.base import Retrieval
from temporag.methods.star_rag import build, table2_inputs
from temporag.methods.star_rag.figures import fig3_tokens_time
from temporag.methods.star_rag.reader import prompt_tokens
from temporag.notebook.results import repo_relative
from temporag.reported import PaperRef

BACKBONES = ("STAR-RAG+Llama-3-8B-Instruct", "STAR-RAG+GPT-4o-mini")
STRICT = "strict"


def paper_ref(source: str, row: str, column: str, dataset: str | None = "MultiTQ") -> PaperRef:
    """Where the STAR-RAG paper prints a number (looked up by ``Results.compare``)."""
    return PaperRef("star_rag", source, row, column, dataset)


# ---------------------------------------------------------------------------------------------------
# reading the sample


def read_sample(llm, methods: Mapping, retrievals: Mapping[str, Retrieval], questions, reader_questions):
    """Each method's reader answers on the reader sample (a subset of ``questions``), from the events
    that method retrieved for those questions."""
    rows = positions_in(questions, reader_questions)
    return {
        name: methods[name].read(llm, reader_questions, retrievals[name].select(rows)) for name in retrievals
    }


def positions_in(questions: Sequence, subset: Sequence) -> list[int]:
    """Where each question of ``subset`` sits in ``questions`` (matched by quid)."""
    position = {q.quid: i for i, q in enumerate(questions)}
    return [position[q.quid] for q in subset]


def reader_scores(reads: Mapping[str, list], questions: Sequence, ks=(1, 5, 10)) -> dict[str, dict]:
    """Strict Hits@k (MultiTQ's rule) per method, per question; NaN where the reader call failed (no
    answer to score: :func:`hit_rate` leaves it out of the mean and counts it, never a wrong answer)."""
    return {
        name: failed_as_nan(evaluate.hits_at_k([r.answers for r in res], questions, ks), res)
        for name, res in reads.items()
    }


def failed_as_nan(hits: dict, reads: Sequence) -> dict:
    """Per-question Hits@k with NaN where the read (a ReaderResult or a record) carries an error."""
    failed = np.array([r.error is not None for r in reads], dtype=bool)
    for values in hits.values():
        values[failed] = np.nan
    return hits


def hit_rate(values) -> dict:
    """A Hit@k over the answered questions, with n, answered and failed (``evaluate.answered_mean``)."""
    return evaluate.answered_mean(values)


def reader_usage(reads: Mapping[str, list]) -> dict[str, dict]:
    """Calls, tokens and latency per method (``llm.usage_summary``)."""
    return {
        name: usage_summary([r.response for r in res if r.response is not None])
        for name, res in reads.items()
    }


def seconds_per_question(retrieval: Retrieval, usage: Mapping) -> float:
    """Table 4's time: mean retrieval (embedding excluded) + the reader's mean call time."""
    return float(np.mean(retrieval.latency_s) + usage["mean_latency_s"])


# ---------------------------------------------------------------------------------------------------
# Tables 2–4


def comparison_frame(rows: list[dict]) -> pd.DataFrame:
    """``Results.compare`` rows as a table: an empty source where the paper prints nothing, and no note
    column when no row has a note."""
    frame = pd.DataFrame(rows)
    frame["paper_source"] = frame["paper_source"].astype(object).where(frame["paper_source"].notna(), "")
    if not frame["note"].astype(bool).any():
        frame = frame.drop(columns="note")
    return frame


def table2_multitq(results, hits: Mapping, reader: str, n: int) -> pd.DataFrame:
    """Table 2, MultiTQ column: strict Hits@1/5/10.  Table 2 has no semantic row; its paper Hit@1 is
    Table 4's STAR-RAG-no-rule."""
    rows = []
    for name, label in (("STAR-RAG-no-rule", "semantic (= STAR-RAG-no-rule)"), ("STAR-RAG", "STAR-RAG")):
        for k in (1, 5, 10):
            if name == "STAR-RAG":
                ref = paper_ref("Table 2", "STAR-RAG", f"Hit@{k}")
            else:
                ref = paper_ref("Table 4", "STAR-RAG-no-rule", "Acc.") if k == 1 else None
            key = f"table2/MultiTQ/{name}/hits@{k}"
            score = hit_rate(hits[name][k])
            row = results.compare(
                key, score["value"], ref, n=n, reader=reader, rule=STRICT, failed=score["failed"]
            )
            rows.append({"method": label, "k": k, **row})
    return comparison_frame(rows)


def not_run_status(exc: FileNotFoundError) -> str:
    """Why a data set did not run, naming the missing file relative to the checkout (as results.json
    names the data folder), so the table reads the same on any machine and in the notebook's display."""
    reason = str(exc).split(". Set TEMPORAG_DATA")[0]
    path = getattr(exc, "path", None)
    return f"not run — {reason.replace(path, repo_relative(path)) if path else reason}"


def _other_dataset_row(dataset: str, params, reader_style: str, llm, n: int, reader: str) -> dict:
    refs = {k: paper_ref("Table 2", "STAR-RAG", f"Hit@{k}", dataset=dataset).value() for k in (1, 5, 10)}
    row = {"data set": dataset, "reader": reader}
    try:
        kg, questions = table2_inputs(dataset)
    except FileNotFoundError as exc:
        status = not_run_status(exc)
        return {
            **row,
            "status": status,
            "failed": None,
            **{f"Hit@{k}": None for k in refs},
            **{f"paper Hit@{k}": refs[k] for k in refs},
        }
    sample = questions[:n]
    records = build(kg, params, reader_style=reader_style).pipeline(sample, llm, progress=False)
    hits = failed_as_nan(evaluate.hits_at_k([r.answers for r in records], sample, tuple(refs)), records)
    return {
        **row,
        "status": f"ran on {len(sample)} questions",
        "failed": hit_rate(hits[1])["failed"],
        **{f"Hit@{k}": hit_rate(hits[k])["value"] for k in refs},
        **{f"paper Hit@{k}": refs[k] for k in refs},
    }


def table2_other_datasets(params, reader_style: str, llm, n: int, reader: str) -> pd.DataFrame:
    """Table 2's CronQuestion and Forecast columns: the same pipeline on their KG and questions when the
    data is staged, else a row saying which files are missing."""
    columns = [
        "data set",
        "status",
        "reader",
        "failed",
        "Hit@1",
        "Hit@5",
        "Hit@10",
        "paper Hit@1",
        "paper Hit@5",
        "paper Hit@10",
    ]
    rows = [
        _other_dataset_row(d, params, reader_style, llm, n, reader) for d in ("CronQuestions", "Forecast")
    ]
    return pd.DataFrame(rows)[columns]


def table3(results, reads: Mapping, questions: Sequence, recall_table: pd.DataFrame, reader: str, k: int):
    """Table 3: strict Hit@1 on single- vs multiple-event questions (``evaluate.hits_by_category``; a
    failed call is left out, not scored wrong), with the LLM-free answer recall of every selected
    question for context."""
    rows = []
    for name in ("STAR-RAG-no-rule", "STAR-RAG"):
        answers = [r.answers for r in reads[name]]
        by_category = evaluate.hits_by_category(
            questions, answers, [r.error is not None for r in reads[name]]
        )
        for label, column in (("Single", "Single-event"), ("Multiple", "Multiple-event")):
            n = by_category["n"][label]
            if n == 0:
                continue
            ref = paper_ref("Table 3", "STAR-RAG", column) if name == "STAR-RAG" else None
            hit = by_category[STRICT][label]
            row = results.compare(f"table3/{name}/{label}/hits@1", hit, ref, n=n, reader=reader, rule=STRICT)
            recall = recall_table.loc[
                (recall_table.group == "qlabel") & (recall_table.category == label), name
            ]
            rows.append(
                {
                    "method": name,
                    "questions": column,
                    **row,
                    f"answer recall@{k} (all)": float(recall.iloc[0]),
                }
            )
    return comparison_frame(rows)


def table4(results, hits: Mapping, retrievals: Mapping, usage: Mapping, reader: str, n: int, served: bool):
    """Table 4: the ablations' accuracy (Hit@1) and time per question (retrieval + reading).  The
    backbone rows need a served model; with one, it fills the STAR-RAG+⟨model⟩ row."""
    rows = []
    for name in ("STAR-RAG-no-rule", "STAR-RAG-uniform", "STAR-RAG"):
        score = hit_rate(hits[name][1])
        accuracy = results.compare(
            f"table4/{name}/hits@1",
            score["value"],
            paper_ref("Table 4", name, "Acc."),
            n=n,
            reader=reader,
            rule=STRICT,
            failed=score["failed"],
        )
        seconds = results.compare(
            f"table4/{name}/seconds",
            seconds_per_question(retrievals[name], usage[name]),
            paper_ref("Table 4", name, "Tim."),
            reader=reader,
            note="retrieval (embedding excluded) + reading",
        )
        rows.append(
            _table4_row(name, reader, n, accuracy["kit"], accuracy["paper"], seconds["kit"], seconds["paper"])
            | {"failed": score["failed"]}
        )
    for backbone in BACKBONES[:1] if served else BACKBONES:
        acc_ref, time_ref = (
            paper_ref("Table 4", backbone, "Acc.").value(),
            paper_ref("Table 4", backbone, "Tim.").value(),
        )
        if served:
            kit_time = seconds_per_question(retrievals["STAR-RAG"], usage["STAR-RAG"])
            score = hit_rate(hits["STAR-RAG"][1])
            row = _table4_row(
                f"STAR-RAG+{reader}", reader, n, score["value"], acc_ref, kit_time, time_ref
            ) | {"failed": score["failed"]}
        else:
            row = _table4_row(backbone, "not run: no endpoint configured", 0, None, acc_ref, None, time_ref)
            row["failed"] = None
        rows.append(row)
    return pd.DataFrame(rows)


def _table4_row(method, reader, n, accuracy, paper_accuracy, seconds, paper_seconds) -> dict:
    return {
        "method": method,
        "reader": reader,
        "n read": n,
        "Acc. (Hit@1)": accuracy,
        "paper Acc.": paper_accuracy,
        "Tim. (s/question)": seconds,
        "paper Tim.": paper_seconds,
    }


# ---------------------------------------------------------------------------------------------------
# Fig. 3 and Fig. 5


def fig3(
    results, methods: Mapping, questions: Sequence, retrievals: Mapping, usage: Mapping, reader: str, n: int
):
    """Fig. 3: tokens and time per question.  LLM-free: the prompt each method would send, counted with
    cl100k_base on every selected question; measured: the reader's own counts on the read sample."""
    names = ["STAR-RAG", "STAR-RAG-no-rule"]
    rows, tokens, seconds = [], {}, {}
    for name in names:
        prompts = [methods[name].prompt(q, ids) for q, ids in zip(questions, retrievals[name].ids)]
        cl100k = float(np.mean([prompt_tokens(p) for p in prompts]))
        results.metric(f"fig3/{name}/prompt_tokens_cl100k_all_questions", cl100k, n=len(questions))
        measured = usage[name]["mean_prompt_tokens"] + usage[name]["mean_completion_tokens"]
        ref = paper_ref("Figure 3", "STAR-RAG", "Tokens/question") if name == "STAR-RAG" else None
        note = f"token source: {usage[name]['token_source']}"
        tokens[name] = results.compare(
            f"fig3/{name}/tokens_per_question", measured, ref, n=n, reader=reader, note=note
        )
        timing = seconds_per_question(retrievals[name], usage[name])
        seconds[name] = results.compare(
            f"fig3/{name}/seconds_per_question", timing, paper_ref("Table 4", name, "Tim."), reader=reader
        )
        rows.append(
            {
                "method": name,
                "prompt tokens, cl100k (all questions)": cl100k,
                f"tokens/question, {reader} (read sample)": measured,
                "retrieval s/question": float(np.mean(retrievals[name].latency_s)),
                "reader s/question": usage[name]["mean_latency_s"],
                "paper tokens/question": tokens[name]["paper"],
                "paper s/question (Table 4)": seconds[name]["paper"],
            }
        )
    paper_tokens = {m: tokens[m]["paper"] for m in names}
    paper_tokens["MedicalGraphRAG"] = paper_ref("Figure 3", "MedicalGraphRAG", "Tokens/question").value()
    figure = fig3_tokens_time(
        names,
        [tokens[m]["kit"] for m in names],
        [seconds[m]["kit"] for m in names],
        paper_tokens,
        {m: seconds[m]["paper"] for m in names},
        note=f"kit: reader {reader} ({usage['STAR-RAG']['token_source']}), {n} questions; "
        "paper: Llama-3.3-70B, §4.4 and Table 4.",
    )
    return pd.DataFrame(rows), figure


def hits_grid(
    llm, star, sweep: Mapping, questions: Sequence, reader_questions: Sequence, grid, n: int, seed: int,
    per_question: dict | None = None,
):
    """Fig. 5 with the reader: strict Hit@1 of a seeded sample of ``n`` reader questions for every
    (K1, K2) of ``sweep`` (swept over ``questions``), and the failed calls of each cell (left out of its
    Hit@1; a cell whose calls all failed is NaN, never 0).  Returns (Hit@1 grid, n, failed grid); fills
    ``per_question[(K1, K2)]`` with {quid: Hit@1 or NaN} when given (the claims' outcomes)."""
    positions = positions_in(questions, reader_questions)
    rng = np.random.default_rng(seed + 2)
    chosen = sorted(rng.choice(len(positions), size=min(n, len(positions)), replace=False).tolist())
    sample = [reader_questions[i] for i in chosen]
    rows = [positions[i] for i in chosen]
    matrix = np.zeros((len(grid), len(grid)))
    failed = np.zeros((len(grid), len(grid)), dtype=int)
    for i, k1 in enumerate(grid):
        for j, k2 in enumerate(grid):
            retrieval = Retrieval([sweep[(k1, k2)][p] for p in rows], np.zeros(len(rows)))
            reads = star.read(llm, sample, retrieval, progress=False, desc=f"reader K1={k1} K2={k2}")
            cell = failed_as_nan(evaluate.hits_at_k([r.answers for r in reads], sample, (1,)), reads)[1]
            score = hit_rate(cell)
            if per_question is not None:
                per_question[(k1, k2)] = {q.quid: float(v) for q, v in zip(sample, cell)}
            matrix[i, j], failed[i, j] = score["value"], score["failed"]
    return matrix, len(sample), failed


# ---------------------------------------------------------------------------------------------------
# the summary and the per-question records


def summary_table(graph, recall: Mapping, hits: Mapping, usage: Mapping, reader: str, n: int, k: int):
    """The headline numbers, the kit's beside the paper's."""
    stats = graph.stats()
    measured = usage["STAR-RAG"]["mean_prompt_tokens"] + usage["STAR-RAG"]["mean_completion_tokens"]
    rows = [
        (
            "rule graph: labels / rule nodes / selected edges",
            f"{stats['labels_in_use']} / {stats['rule_nodes']:,} / {stats['selected_edges']:,}",
            "not reported",
        ),
        (
            f"answer recall@{k}: STAR-RAG vs no-rule",
            f"{recall['STAR-RAG'].mean():.3f} vs {recall['STAR-RAG-no-rule'].mean():.3f}",
            "not reported",
        ),
        (
            f"Hit@1 STAR-RAG ({reader}, n={n})",
            _shown(hit_rate(hits["STAR-RAG"][1])),
            f"{paper_ref('Table 2', 'STAR-RAG', 'Hit@1').value():.3f}",
        ),
        (
            "Hit@1 no-rule",
            _shown(hit_rate(hits["STAR-RAG-no-rule"][1])),
            f"{paper_ref('Table 4', 'STAR-RAG-no-rule', 'Acc.').value():.3f}",
        ),
        (
            "tokens/question STAR-RAG",
            f"{measured:.0f}",
            f"{paper_ref('Figure 3', 'STAR-RAG', 'Tokens/question').value():.0f}",
        ),
    ]
    return pd.DataFrame(rows, columns=["quantity", "kit", "paper"])


def _shown(score: dict) -> str:
    """A Hit@1 as the summary prints it, with the failed calls left out named beside it."""
    failed = f" ({score['failed']} failed calls left out)" if score["failed"] else ""
    return f"{score['value']:.3f}{failed}"


PREDICTION_KEYS = {"STAR-RAG": "star_rag", "STAR-RAG-no-rule": "no_rule", "STAR-RAG-uniform": "uniform"}


def predictions(questions, retrievals: Mapping[str, Retrieval], reader_questions, reads: Mapping):
    """Per-question records for ``results.json``: each method's trace (events, anchors, rules, time) and
    every reader answer with its raw reply."""
    out = {
        PREDICTION_KEYS[name]: [{"quid": q.quid, **trace} for q, trace in zip(questions, retrieval.traces)]
        for name, retrieval in retrievals.items()
    }
    out["reader"] = [
        {"quid": q.quid, "method": name, "answers": r.answers, "raw": r.raw_text, "error": r.error}
        for name, res in reads.items()
        for q, r in zip(reader_questions, res)
    ]
    return out
