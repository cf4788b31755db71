"""TECQA's reader tables (Tables 1–2), the failure analysis (§5.7, appendix E), the worked examples
(Tables 5–6), speed and the headline — and where the paper prints the numbers they sit beside.

Frames only: :mod:`.record` writes their numbers into the run's results.  Re-exported by
:mod:`temporag.methods.tecqa.report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods.base import Retrieval
from temporag.methods.tecqa.analysis import render_case
from temporag.methods.tecqa.chain import EvidenceChain
from temporag.reported import PaperRef

TABLE1_COLUMNS = ("Overall", "Single", "Multiple", "Entity", "Time")
VARIANTS = ("TECQA", "w/o SG", "w/o KNTN", "w/o PS")  # Table 2's rows
CASES = {  # the paper's worked examples: table → (row in reported, question)
    "Table 5": (
        "Case 1 (implicit constraint)",
        "After the Danish Ministry of Defence and Security, who was the first to visit Iraq?",
    ),
    "Table 6": ("Case 2 (explicit constraint)", "Who signed an agreement with China in April 2005?"),
}


def paper(source: str, row: str, column: str) -> PaperRef:
    """Where TECQA prints a MultiTQ number (``.value()`` is None where it prints none)."""
    return PaperRef("tecqa", source, row, column)


SUBGRAPH_RECALL = paper("§1 text", "Structure-guided subgraph", "Answer Recall")
CHAIN_RECALL = paper("§1 text", "TECQA (after k-NN temporal pruning)", "Answer Recall")
CHAIN_LENGTH = paper("§1 text", "TECQA (after k-NN temporal pruning)", "Avg. facts in context")
SEMANTIC_AT_20 = paper("Figure 2", "Semantic retriever (bge-base-en-v1.5)", "Answer Recall@20")
TECQA_AT_20 = paper("Figure 2", "TECQA", "Answer Recall@20")
EMPTY_SHARE = paper("§5.7 text", "Empty subgraph", "Share")


# -- Tables 1 and 2: the reader over each variant's context ---------------------------------------------


def reader_contexts(
    chains: Mapping[str, Sequence[EvidenceChain]], index: Sequence[int], facts: int | None, seed: int = 0
) -> dict[str, Retrieval]:
    """What the reader sees for Table 2's variants: the first ``facts`` facts of each chain of the reader
    questions (``index``); w/o PS is TECQA's shown facts in a seeded random order (appendix C).

    ``chains`` maps "TECQA", "w/o SG" and "w/o KNTN" to every question's chains."""
    rng = np.random.default_rng(seed)
    zero = np.zeros(len(index))

    def shown(chain: EvidenceChain) -> np.ndarray:
        return chain.facts[:facts] if facts else chain.facts

    out = {name: Retrieval([shown(chains[name][i]) for i in index], zero) for name in VARIANTS[:3]}
    out["w/o PS"] = Retrieval([rng.permutation(shown(chains["TECQA"][i])) for i in index], zero)
    return out


def table1_frame(scores: Mapping, reader: str):
    """Table 1's MultiTQ columns: the kit's Hits@1 under both rules beside the paper's TECQA row."""
    rows = [
        {"model": f"TECQA — kit, {reader}", "rule": rule, **scores[rule]} for rule in ("strict", "lenient")
    ]
    rows.append(
        {
            "model": "TECQA — paper, Qwen3-8B (thinking)",
            "rule": "strict (MultiTQ Hits@1)",
            **{c: paper("Table 1", "TECQA", c).value() for c in TABLE1_COLUMNS},
        }
    )
    frame = pd.DataFrame(rows)[["model", "rule", *TABLE1_COLUMNS]]
    frame["n"] = pd.array([scores["n"]["Overall"]] * 2 + [None], dtype="Int64")
    frame["failed"] = pd.array([scores["failed"]["Overall"]] * 2 + [None], dtype="Int64")  # left out
    return frame


def table2_frame(scores: Mapping, shown_recall: Mapping[str, np.ndarray]):
    """Table 2's ablations: Hits@1 (strict beside the paper, lenient) and the LLM-free answer recall of the
    facts each variant shows the reader (:func:`.record.table2_ablations` records them)."""
    rows = []
    for name in VARIANTS:
        row = {"variant": name}
        for column in ("Overall", "Multiple", "Single"):
            row[f"{column} (kit strict)"] = scores[name]["strict"][column]
            row[f"{column} (paper)"] = paper("Table 2", name, column).value()
        row["Overall (kit lenient)"] = scores[name]["lenient"]["Overall"]
        row["failed"] = scores[name]["failed"]["Overall"]  # reader calls left out of the kit's numbers
        row["shown-context answer recall (all questions)"] = float(shown_recall[name].mean())
        rows.append(row)
    return pd.DataFrame(rows)


# -- failure analysis (§5.7, appendix E) -----------------------------------------------------------------

FAILURE_COLUMNS = (
    "questions",
    "empty_subgraph",
    "empty_subgraph_rate",
    "empty_from_wrong_main_entity",
    "first_last_questions",
    "first_last_truncated",
    "first_last_truncated_rate",
)


def failure_table(modes: Mapping[str, dict]):
    """The failure modes of each parse (label → :func:`failure_modes`) beside the paper's §5.7 counts
    (:func:`.record.failure_modes` records the first parse's and the names-only parse's rates)."""

    def p(row: str, column: str = "Queries"):
        return paper("§5.7 text", row, column).value()

    rows = [{"parse": label, **{k: m[k] for k in FAILURE_COLUMNS}} for label, m in modes.items()]
    rows.append(
        {
            "parse": "paper: LLM parser, full MultiTQ test set",
            "questions": p("MultiTQ test set"),
            "empty_subgraph": p("Empty subgraph"),
            "empty_subgraph_rate": p("Empty subgraph", "Share"),
            "empty_from_wrong_main_entity": p("Empty subgraph from wrong main entity"),
        }
    )
    frame = pd.DataFrame(rows)
    counts = [c for c in FAILURE_COLUMNS if not c.endswith("_rate")]
    frame[counts] = frame[counts].astype("Int64")
    return frame


def failure_examples(kg, questions: Sequence, modes: Sequence[tuple[dict, Sequence[EvidenceChain]]]) -> str:
    """Appendix E's two modes, one rendered case each: the first empty subgraph (from a wrong main entity
    first) over the given (failure modes, chains) pairs in order, and the first truncated first/last."""
    out = []
    empty = [(i, chains) for m, chains in modes for i in (m["wrong_main_idx"] or m["empty_idx"])[:1]]
    if empty:
        i, chains = empty[0]
        out.append("Failure mode 1 (empty subgraph):\n" + render_case(kg, questions[i], chains[i], lines=3))
    else:
        out.append("Failure mode 1: no empty subgraph in this question set.")
    truncated, chains = modes[0][0]["truncated_idx"], modes[0][1]
    if truncated:
        i = truncated[0]
        out.append(
            "Failure mode 2 (first/last truncated):\n" + render_case(kg, questions[i], chains[i], lines=5)
        )
    else:
        out.append("Failure mode 2: no truncated first/last question in this set.")
    return "\n\n".join(out)


# -- worked example (Tables 5-6) ----------------------------------------------------------------------


def case_questions(questions: Sequence, fallback: Sequence) -> list[tuple[str, object]]:
    """(table, question record) for the paper's worked examples found in ``questions``; the first of
    ``fallback`` (as "Table 5") when neither is there."""
    found = [(table, q) for table, (_, text) in CASES.items() for q in questions if q.question == text]
    return found or [("Table 5", fallback[0])]


def case_prediction(question, chain: EvidenceChain) -> dict:
    """A worked example's prediction row: the question and its chain's record (:func:`.record.case`
    records its subgraph size beside the paper's and its anchors)."""
    return {"quid": question.quid, "question": question.question, **chain.record()}


# -- speed and headline -----------------------------------------------------------------------------------


def latency_table(latencies: Mapping[str, np.ndarray]):
    """Retrieval latency per question of each retriever (evaluate.latency_summary, milliseconds)."""
    return pd.DataFrame([{"retriever": name, **evaluate.latency_summary(s)} for name, s in latencies.items()])


def headline_table(results, reader: str, reader_questions: int, k: int, n: int):
    """The headline numbers already recorded in ``results``, kit beside paper, in one table."""
    metrics = results.data["metrics"]

    def kit_paper(key: str) -> tuple:
        value = metrics[key]
        return (value["value"], value.get("paper")) if isinstance(value, dict) else (value, None)

    near_20 = metrics["fig4/recall_at_about_20_facts"]
    rows = [
        ("subgraph answer recall", "subgraph/answer_recall"),
        (f"chain answer recall (K={k}, N={n})", "chain/answer_recall"),
        (f"chain avg facts (K={k}, N={n})", "chain/avg_facts"),
        (
            f"chain answer recall at ~{CHAIN_LENGTH.value()} facts (K={near_20['K']}, N={near_20['N']})",
            "fig4/recall_at_about_20_facts",
        ),
        ("semantic answer recall@20 (Fig. 2)", "fig2/semantic_recall@20"),
        ("TECQA answer recall@20 (Fig. 2)", "fig2/tecqa_recall@20"),
        (f"Hits@1 strict, reader {reader}, n={reader_questions}", "table1/strict/Overall"),
        ("empty-subgraph rate", "failures/empty_subgraph_rate"),
    ]
    frame = [{"number": label, "kit": kit_paper(key)[0], "paper": kit_paper(key)[1]} for label, key in rows]
    frame.append({"number": "retrieval p50 (ms)", "kit": kit_paper("latency/tecqa_p50_ms")[0], "paper": None})
    return pd.DataFrame(frame)


def chain_predictions(
    kg, questions: Sequence, chains: Sequence[EvidenceChain], recalls: Mapping, latency, semantic_ids, k: int
):
    """Per question for ``results.json``: the parse, anchors and chain ids, subgraph / chain recall,
    retrieval seconds and the semantic baseline's top ``k`` (``recalls``: "subgraph", "chain")."""
    return [
        {
            "quid": q.quid,
            "qtype": q.qtype,
            **c.constraints.describe(kg),
            **c.record(),
            "subgraph_recall": float(recalls["subgraph"][i]),
            "chain_recall": float(recalls["chain"][i]),
            "retrieval_s": float(latency[i]),
            "semantic_top": np.asarray(semantic_ids[i][:k]).tolist(),
        }
        for i, (q, c) in enumerate(zip(questions, chains))
    ]


def reader_predictions(
    questions: Sequence, answers: Mapping[str, Sequence], contexts: Mapping[str, Retrieval]
):
    """Per variant and question: the reader's answers, raw reply, error and the facts it was shown."""
    return [
        {
            "quid": q.quid,
            "variant": name,
            "answers": r.answers,
            "raw": r.raw_text,
            "error": r.error,
            "facts": ids.tolist(),
        }
        for name, results in answers.items()
        for q, r, ids in zip(questions, results, contexts[name].ids)
    ]
