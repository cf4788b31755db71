"""The numbers behind STAR-RAG's reader tables beside the paper's (Tables 2–4, Figs. 3 and 5, the
summary): the reader on its sample, its scores and token use, the other data sets' runs, Fig. 5's Hit@1
grid and the per-question records.  :mod:`.report` draws and formats them; the released code's
tables are in :mod:`.code_tables`.

Nothing here writes into the run's results: :mod:`.record` records every number that has a counterpart
in the paper through ``Results.compare`` (kit value, paper value or None, n, reader, scoring rule), and
the compared rows are the tables of Tables 2 and 3 (:func:`comparison_frame`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.config import repo_relative
from temporag.llm import usage_summary
from temporag.methods.base import Retrieval
from temporag.methods.star_rag import build, table2_inputs
from temporag.methods.star_rag.reader import prompt_tokens
from temporag.reported import PaperRef

BACKBONES = ("STAR-RAG+Llama-3-8B-Instruct", "STAR-RAG+GPT-4o-mini")
FIG3_METHODS = ("STAR-RAG", "STAR-RAG-no-rule")
STRICT = "strict"


def paper_ref(source: str, row: str, column: str, dataset: str | None = "MultiTQ") -> PaperRef:
    """Where the STAR-RAG paper prints a number (:mod:`.record` compares the kit's with it)."""
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
        name: evaluate.answered_hits([r.answers for r in res], questions, evaluate.failed_calls(res), ks)
        for name, res in reads.items()
    }


def hit_rate(values) -> dict:
    """A Hit@k over the answered questions, with n, answered and failed (``evaluate.answered_mean``)."""
    return evaluate.answered_mean(values)


def hit_rates(hits: Mapping[str, Mapping[int, np.ndarray]]) -> dict[str, dict[int, dict]]:
    """Every method's Hit@k (:func:`reader_scores`) over the answered questions (:func:`hit_rate`)."""
    return {name: {k: hit_rate(values) for k, values in by_k.items()} for name, by_k in hits.items()}


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


def not_run_status(exc: FileNotFoundError) -> str:
    """Why a data set did not run, naming the missing file relative to the checkout (as results.json
    names the data folder), so the table reads the same on any machine and in the notebook's display."""
    reason = str(exc).split(". Set TEMPORAG_DATA")[0]
    path = getattr(exc, "path", None)
    if not path or not Path(path).is_absolute():  # a data-set-relative name reads the same everywhere
        return f"not run — {reason}"
    return f"not run — {reason.replace(path, repo_relative(path))}"


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
    failed = evaluate.failed_calls(records)
    hits = evaluate.answered_hits([r.answers for r in records], sample, failed, tuple(refs))
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


def table3_scores(reads: Mapping, questions: Sequence) -> dict[str, dict]:
    """Table 3's numbers: strict Hit@1 on single- vs multiple-event questions of STAR-RAG and its no-rule
    ablation (``evaluate.hits_by_category``; a failed call is left out, not scored wrong)."""
    return {
        name: evaluate.hits_by_category(
            questions, [r.answers for r in reads[name]], [r.error is not None for r in reads[name]]
        )
        for name in ("STAR-RAG-no-rule", "STAR-RAG")
    }


def table4_numbers(rates: Mapping, retrievals: Mapping, usage: Mapping) -> dict[str, dict]:
    """Table 4's numbers for the ablations: Hit@1 (:func:`hit_rates`) and time per question (retrieval +
    reading, :func:`seconds_per_question`)."""
    return {
        name: {"hits@1": rates[name][1], "seconds": seconds_per_question(retrievals[name], usage[name])}
        for name in ("STAR-RAG-no-rule", "STAR-RAG-uniform", "STAR-RAG")
    }


def table4_backbones(numbers: Mapping[str, dict], reader: str, n: int, served: bool) -> list[dict]:
    """Table 4's backbone rows: with a served model it fills the STAR-RAG+⟨model⟩ row from STAR-RAG's
    numbers (:func:`table4_numbers`); without one each backbone is named, not run."""
    rows = []
    for backbone in BACKBONES[:1] if served else BACKBONES:
        acc_ref, time_ref = (
            paper_ref("Table 4", backbone, "Acc.").value(),
            paper_ref("Table 4", backbone, "Tim.").value(),
        )
        if served:
            star = numbers["STAR-RAG"]
            row = table4_row(
                f"STAR-RAG+{reader}", reader, n, star["hits@1"]["value"], acc_ref, star["seconds"], time_ref
            ) | {"failed": star["hits@1"]["failed"]}
        else:
            row = table4_row(backbone, "not run: no endpoint configured", 0, None, acc_ref, None, time_ref)
            row["failed"] = None
        rows.append(row)
    return rows


def table4_row(method, reader, n, accuracy, paper_accuracy, seconds, paper_seconds) -> dict:
    """One row of Table 4: a method's Hit@1 and time per question beside the paper's."""
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


def fig3_numbers(
    methods: Mapping, questions: Sequence, retrievals: Mapping, usage: Mapping
) -> dict[str, dict]:
    """Fig. 3's numbers for STAR-RAG and its no-rule ablation.  LLM-free: the prompt each method would
    send, counted with cl100k_base on every selected question; measured: the reader's own tokens per
    question on the read sample, and seconds per question (retrieval + reading)."""
    numbers = {}
    for name in FIG3_METHODS:
        prompts = [methods[name].prompt(q, ids) for q, ids in zip(questions, retrievals[name].ids)]
        numbers[name] = {
            "prompt_tokens_cl100k": float(np.mean([prompt_tokens(p) for p in prompts])),
            "questions": len(questions),
            "tokens": usage[name]["mean_prompt_tokens"] + usage[name]["mean_completion_tokens"],
            "token_source": usage[name]["token_source"],
            "seconds": seconds_per_question(retrievals[name], usage[name]),
            "retrieval_seconds": float(np.mean(retrievals[name].latency_s)),
            "reader_seconds": usage[name]["mean_latency_s"],
        }
    return numbers


def fig3_tokens_ref(name: str) -> PaperRef | None:
    """Where the paper prints a method's tokens per question (Fig. 3 has STAR-RAG's only)."""
    return paper_ref("Figure 3", "STAR-RAG", "Tokens/question") if name == "STAR-RAG" else None


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
            cell = evaluate.answered_hits([r.answers for r in reads], sample, evaluate.failed_calls(reads))[1]
            score = hit_rate(cell)
            if per_question is not None:
                per_question[(k1, k2)] = {q.quid: float(v) for q, v in zip(sample, cell)}
            matrix[i, j], failed[i, j] = score["value"], score["failed"]
    return matrix, len(sample), failed


# ---------------------------------------------------------------------------------------------------
# the summary and the per-question records


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
