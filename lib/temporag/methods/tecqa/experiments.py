"""The numbers behind the TECQA notebook's tables, computed from what a cell already has, one call per
table or figure.

The notebook reads like the paper's method section; what a table or its metrics hold is computed here
and in :mod:`.analysis`, :mod:`.census`, :mod:`.beyond` and :mod:`.tables`, and :mod:`.record` writes
it into the run's results (the table under its key with its caption, the metrics beside the paper's
numbers).  Some are re-exported by :mod:`temporag.methods.tecqa.report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods.tecqa.analysis import parser_accuracy
from temporag.methods.tecqa.beyond import (  # noqa: F401 (re-exported: the notebook's held-out checks)
    main_alternatives_check,
    relation_union_check,
)
from temporag.methods.tecqa.census import census_counts, error_census
from temporag.methods.tecqa.chain import EvidenceChain
from temporag.methods.tecqa.tables import CHAIN_LENGTH, latency_table
from temporag.question.parsing import Constraints

# -- parser accuracy (§4.2.1) ---------------------------------------------------------------------------

PARSER_LABELS = {
    "offline": "offline (KG-attested relation)",
    "offline_names_only": "offline (relation over all 251 names)",
    "llm": "LLM, 3 prompts ({reader})",
}


def parser_accuracy_table(
    kg,
    questions: Sequence,
    parses: Mapping[str, Sequence[Constraints]],
    sample_questions: Sequence = (),
    sample_parses: Mapping[str, Sequence[Constraints]] | None = None,
    reader: str = "",
):
    """Parser accuracy of each parse (key in :data:`PARSER_LABELS` → constraints) on the selected set,
    then of each parse of the smaller LLM-parse sample (recorded by :func:`.record.parser_accuracy` as
    ``parser/<key>/...``, ``parser/<key>_parse_sample/...`` for the sample)."""
    runs = [(key, "selected set", questions, c) for key, c in parses.items()]
    if len(sample_questions):
        runs += [(key, "parse sample", sample_questions, c) for key, c in (sample_parses or {}).items()]
    rows = []
    for key, question_set, qs, constraints in runs:
        row = {"parser": PARSER_LABELS[key].format(reader=reader), "questions": question_set}
        row.update(parser_accuracy(kg, qs, constraints))
        rows.append(row)
    return pd.DataFrame(rows)


def parser_error_census(
    kg, questions: Sequence, constraints: Sequence[Constraints], linker
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every wrong main entity and relation of the run's questions, classed (:mod:`.census`): one row
    per question, and the questions per class."""
    census = error_census(kg, linker, questions, constraints)
    return census, census_counts(census, len(questions))


# -- subgraph and chain (§4.2.2–4.3), Figures 2 and 4 ---------------------------------------------------


def _ci(values: np.ndarray, seed: int) -> list[float]:
    return list(evaluate.bootstrap_ci(values, seed=seed))


def subgraph_numbers(chains: Sequence[EvidenceChain], recall: np.ndarray, seed: int = 0) -> dict:
    """The subgraph's answer recall (with its bootstrap interval), its empty rate and size summary."""
    sizes = np.array([len(c.subgraph) for c in chains])
    return {
        "answer_recall": recall.mean(),
        "n": len(recall),
        "ci95": _ci(recall, seed),
        "empty_rate": float((sizes == 0).mean()),
        "chains": len(sizes),
        "size_median": float(np.median(sizes)),
        "size_mean": float(sizes.mean()),
    }


def chain_numbers(chains: Sequence[EvidenceChain], recall: np.ndarray, seed: int = 0) -> dict:
    """The chain's answer recall (with its bootstrap interval) and its mean length in facts."""
    lengths = np.array([len(c) for c in chains])
    return {
        "answer_recall": recall.mean(),
        "n": len(recall),
        "ci95": _ci(recall, seed),
        "avg_facts": lengths.mean(),
        "chains": len(lengths),
    }


def chain_answer_recall(questions: Sequence, recall: np.ndarray, seed: int = 0) -> pd.DataFrame:
    """The chain's answer recall by question label and type, so a loss shows where it happens."""
    return evaluate.breakdown(questions, recall, by=["qlabel", "qtype"], seed=seed)


def closest_to_paper_length(grid, n: int):
    """The grid row at the run's N whose average chain length is nearest the paper's ~20 facts."""
    at_n = grid[grid.N == n]
    target = CHAIN_LENGTH.value() or 20
    return at_n.iloc[(at_n.avg_context_facts - target).abs().argsort()[:1]].iloc[0]


# -- reasoning: Tables 1 and 2 (§4.4, §5.3, §5.5) ------------------------------------------------------


def reader_scores(questions: Sequence, answers: Mapping[str, Sequence]) -> dict[str, dict]:
    """Hits@1 by Table-1 column of each variant's reads; a failed call is left out, not counted wrong."""
    return {
        name: evaluate.hits_by_category(
            questions,
            [read.answers for read in reads],
            failed=[read.error is not None for read in reads],
        )
        for name, reads in answers.items()
    }


def shown_answer_recall(
    kg, questions: Sequence, chains: Mapping[str, Sequence[EvidenceChain]], facts_shown: int | None
) -> dict[str, np.ndarray]:
    """Per variant and question: does the part of the chain the reader is shown hold a gold answer."""
    return {
        name: evaluate.answer_recall(kg, [chain.facts for chain in variant], questions, k=facts_shown)
        for name, variant in chains.items()
    }


# -- speed (appendix E) -----------------------------------------------------------------------------------


def latency(tecqa_seconds: np.ndarray, semantic_seconds: np.ndarray) -> pd.DataFrame:
    """Retrieval latency per question of TECQA and of the global semantic baseline (p50 / p95 / mean ms)."""
    return latency_table(
        {
            "TECQA (subgraph + anchors + KNTN + serialisation)": tecqa_seconds,
            "global semantic (all 461,329 facts)": semantic_seconds,
        }
    )
