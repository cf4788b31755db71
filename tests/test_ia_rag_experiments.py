"""IA-RAG's notebook steps in ``experiments``: the data a run loads, Table 2 from the reader's scores,
the recorded metric keys and values, and the verdict at equal tokens."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from temporag.methods.ia_rag import (
    ablations,
    build_tables,
    experiments,
    reader_tables,
    record,
    retrieval_tables,
    setups,
)
from temporag.notebook.results import Results


def _metrics(results: Results) -> dict:
    return json.loads((results.dir / "results.json").read_text())["metrics"]


def _scores(accuracy, recall, failed, prompt_tokens=(100.0, 200.0, 300.0)) -> dict:
    return {
        "records": [],
        "accuracy": np.array(accuracy, dtype=float),
        "recall": np.array(recall, dtype=float),
        "failed": np.array(failed, dtype=bool),
        "prompt_tokens": np.array(prompt_tokens, dtype=float),
    }


def test_smoke_data_keeps_the_sampled_questions_documents_plus_distractors(shared_data):
    loaded, files = experiments.load_datasets(["ComplexTR"], None, 4, np.random.default_rng(0), smoke_extra=2)
    docs, selected, total = loaded["ComplexTR"]
    again, _ = experiments.load_datasets(["ComplexTR"], None, 4, np.random.default_rng(0), smoke_extra=2)
    assert [q.quid for q in selected] == [q.quid for q in again["ComplexTR"][1]]  # seeded
    assert len(selected) == 4 and total > 4 and files
    gold = {i for q in selected for i in q.gold_docs}
    assert gold <= {d.doc_id for d in docs}
    assert len(docs) == len(setups.documents_for(selected, docs, 0, np.random.default_rng(0))) + 2
    table = experiments.data_table(loaded)
    assert table.to_dict("records") == [
        {"dataset": "ComplexTR", "documents": len(docs), "questions (selected)": 4, "questions (all)": total}
    ]


def test_table2_rows_come_vanilla_first_and_leave_failed_calls_out(results):
    reads = {
        "ComplexTR": {
            "IA-RAG": _scores([1, 0, 0], [1, 0.5, 0], [False, False, True]),
            "Vanilla RAG (chunks, top-2)": _scores([0, 0, 1], [0, 0, 1], [False, False, False]),
        }
    }
    table = record.table2(results, reader_tables.reader_means(reads), "tiny-reader")
    assert list(table.metric) == [
        "table2/ComplexTR/Vanilla RAG/accuracy",
        "table2/ComplexTR/Vanilla RAG/recall",
        "table2/ComplexTR/IA-RAG/accuracy",
        "table2/ComplexTR/IA-RAG/recall",
    ]
    assert table.kit.tolist() == pytest.approx([1 / 3, 1 / 3, 0.5, 0.75])  # the failed call is not a 0
    assert table.failed.tolist() == [0, 0, 1, 1]
    ia_rag = _metrics(results)["table2/ComplexTR/IA-RAG/accuracy"]
    assert ia_rag["paper"] == pytest.approx(0.6595) and ia_rag["reader"] == "tiny-reader"
    points = reader_tables.accuracy_tokens(reads)
    assert points.to_dict("records")[0] == {
        "dataset": "ComplexTR",
        "method": "IA-RAG",
        "accuracy": 0.5,
        "tokens": 150.0,
        "n": 3,
        "failed": 1,
    }
    assert points.method.tolist() == ["IA-RAG", "Vanilla RAG"]


def test_recorded_keys_name_the_columns_they_read(results):
    budget = f"recall @{ablations.ABLATION_BUDGET}"
    ablation = pd.DataFrame(
        [
            {
                "dataset": "TimeQA",
                "variant": "w/o IA",
                budget: 0.25,
                "union recall": 0.5,
                "union tokens": 640.0,
                "union units": 12.0,
            }
        ]
    )
    coverage = pd.DataFrame(
        [
            {
                "dataset": "TimeQA",
                "questions with a gold document": 8,
                "answer in the gold text": 1.0,
                "unit coverage before": 0.906,
                "unit coverage": 0.875,
            }
        ]
    )
    record.ablations(results, ablation, "ablation")
    record.sensitivity(results, ablation.assign(variant="MEU=5"))
    record.coverage(results, coverage)
    record.types(results, retrieval_tables.type_counts({"TimeQA": ["T1", "T4", "T1"]}))
    metrics = _metrics(results)
    assert metrics["ablation/TimeQA/w/o IA"] == {"value": 0.25, "union_recall": 0.5, "union_tokens": 640.0}
    assert metrics["sensitivity/TimeQA/MEU=5"] == {"value": 0.25, "union_recall": 0.5}
    assert metrics["coverage/TimeQA"] == {"value": 0.875, "before": 0.906}
    assert (metrics["types/TimeQA/T1"], metrics["types/TimeQA/T4"]) == (2, 1)


def test_tightening_example_is_the_first_narrowing_with_evidence():
    units = [SimpleNamespace(line=lambda i=i: f"unit {i}") for i in range(6)]
    changes = [
        {"unit": 0, "old": [1, 9], "new": [2, 9], "evidence": []},
        {"unit": 1, "old": [10, 90], "new": [20, 30], "evidence": [2, 3, 4, 5]},
    ]
    build = SimpleNamespace(changes=changes, index=SimpleNamespace(graph=SimpleNamespace(units=units)))
    by_dataset = {
        "TimeQA": SimpleNamespace(build=SimpleNamespace(changes=[])),
        "ComplexTR": SimpleNamespace(build=build),
    }
    assert build_tables.tightening_example(by_dataset) == [
        "narrowed: unit 1 ",
        "  days before: [10, 90] after: [20, 30]",
        "  evidence: unit 2",
        "  evidence: unit 3",
        "  evidence: unit 4",
    ]
    assert build_tables.tightening_example({"TimeQA": by_dataset["TimeQA"]}) == []


def test_tightening_row_counts_intervals_wider_than_extracted():
    def unit(key, start, end):
        return SimpleNamespace(key=key, t_start=start, t_end=end)

    raw = [unit("a", 10, 20), unit("b", None, 50), unit("c", 5, None), unit("d", 1, 2), unit("f", None, 9)]
    tightened = [
        unit("a", 12, 18),  # narrowed
        unit("b", 30, 50),  # an open start closed: narrower
        unit("f", 3, 9),  # the same
        unit("c", 4, None),  # starts a day earlier: wider
        unit("d", None, 2),  # start forgotten: wider
        unit("merged", 0, 99),  # not an extracted unit: not compared
    ]
    stats = {
        "graph_before_tightening": {"fuzzy_ieus": 3},
        "tightened": 2,
        "flags_cleared": 1,
        "graph": {"fuzzy_ieus": 2},
    }
    build = SimpleNamespace(
        raw_units=raw, stats=stats, index=SimpleNamespace(graph=SimpleNamespace(units=tightened))
    )
    assert build_tables.tightening_row("TimeQA", "calibrated", build) == {
        "dataset": "TimeQA",
        "build": "calibrated",
        "fuzzy before": 3,
        "narrowed": 2,
        "flags cleared": 1,
        "fuzzy after": 2,
        "widened (must be 0)": 2,
    }


def test_reasoning_groups_split_complextr_recall_by_group():
    recall = {"recall": np.array([1.0, 0.0, 0.5, 1.0])}
    scores = {"ComplexTR": {"IA-RAG": recall, "Vanilla RAG (chunks, top-2)": recall}, "TimeQA": {}}
    labels = {"ComplexTR": ["T1", "T2", "T3", "T5"]}  # no Relative question
    table = retrieval_tables.reasoning_groups(scores, labels, ["Vanilla RAG (chunks, top-2)", "IA-RAG"])
    assert list(table.columns) == [
        "method",
        "Explicit",
        "Relative",
        "Compositional",
        "Overall",
        "paper row (accuracy)",
    ]
    assert table.Explicit.tolist() == [0.5, 0.5] and table.Compositional.tolist() == [0.75, 0.75]
    assert table.Relative.isna().all() and table.Overall.tolist() == [0.625, 0.625]
    assert table["paper row (accuracy)"].tolist() == ["Vanilla RAG", "IA-RAG"]  # TimeQA has no row
