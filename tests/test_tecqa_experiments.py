"""What the TECQA notebook's steps compute (:mod:`temporag.methods.tecqa.experiments`) and record
(:mod:`temporag.methods.tecqa.record`): each table under its key with the metrics beside it, on real
MultiTQ questions and small hand-made frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from temporag.answer.readers import ReaderResult
from temporag.methods.tecqa import experiments, record, report, tables


def _read(question, answers=(), error=None) -> ReaderResult:
    return ReaderResult(question=question.question, answers=list(answers), error=error)


def test_fig4_records_the_setting_nearest_the_papers_length_at_the_runs_n(results):
    grid = pd.DataFrame(
        {
            "K": [5, 10, 20, 40] * 2,
            "N": [1] * 4 + [2] * 4,
            "answer_recall": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9],
            "avg_context_facts": [5.0, 10.0, 20.0, 40.0, 8.0, 15.0, 22.0, 60.0],
        }
    )
    near_20 = experiments.closest_to_paper_length(grid, n=2)
    record.fig4_sensitivity(results, grid, near_20)
    assert (near_20.K, near_20.N) == (20, 2)  # 22 facts; N=1's exact 20 is another N
    metric = results.data["metrics"]["fig4/recall_at_about_20_facts"]
    assert (metric["value"], metric["K"], metric["N"], metric["avg_facts"]) == (0.7, 20, 2, 22.0)
    assert metric["paper"] == tables.CHAIN_RECALL.value() == pytest.approx(0.9412)
    assert len(results.data["tables"]["fig4_sensitivity"]["records"]) == 8


def test_reader_scores_leave_failed_calls_out_of_hits(questions):
    picked = [q for q in questions if q.answer_type == "entity"][:3]
    reads = {
        "TECQA": [
            _read(picked[0], [picked[0].answers[0]]),
            _read(picked[1], ["nobody"]),
            _read(picked[2], error="timeout"),
        ],
        "w/o SG": [_read(q, [q.answers[0]]) for q in picked],
    }
    scores = experiments.reader_scores(picked, reads)
    assert scores["TECQA"]["strict"]["Overall"] == 0.5  # one of the two answered, not one of three
    assert (scores["TECQA"]["n"]["Overall"], scores["TECQA"]["failed"]["Overall"]) == (3, 1)
    assert scores["w/o SG"]["strict"]["Overall"] == 1.0 and scores["w/o SG"]["failed"]["Overall"] == 0


def test_table2_caption_counts_the_reader_sample_and_every_selected_question(questions, results):
    picked = [q for q in questions if q.answer_type == "entity"][:3]
    reads = {name: [_read(q, [q.answers[0]]) for q in picked] for name in tables.VARIANTS}
    scores = experiments.reader_scores(picked, reads)
    shown_recall = {name: np.array([1.0, 0.0, 1.0, 1.0, 0.0]) for name in tables.VARIANTS}
    table = report.table2_frame(scores, shown_recall)
    record.table2_ablations(results, table, scores, shown_recall, "fake-model", 3, 20)
    assert table["shown-context answer recall (all questions)"].tolist() == [0.6] * 4
    caption = results.data["tables"]["table2_ablations"]["caption"]
    assert "by reader fake-model on 3 seeded questions" in caption
    assert "LLM-free on all 5 questions for the first 20 facts" in caption
    assert results.data["metrics"]["table2/w/o PS/shown_answer_recall"] == {"value": 0.6, "n": 5}


def test_latency_records_both_p50s_and_the_20_ms_target(results):
    table = experiments.latency(np.array([0.001, 0.002, 0.003]), np.array([0.1, 0.2, 0.3]))
    record.latency(results, table)
    assert table.retriever.tolist() == [
        "TECQA (subgraph + anchors + KNTN + serialisation)",
        "global semantic (all 461,329 facts)",
    ]
    tecqa = results.data["metrics"]["latency/tecqa_p50_ms"]
    assert (tecqa["value"], tecqa["target_ms"]) == (pytest.approx(2.0), 20)
    assert results.data["metrics"]["latency/semantic_p50_ms"] == pytest.approx(200.0)
    assert "latency" in results.data["tables"]


def test_integrity_records_its_table_and_each_recall_on_its_own_n(results):
    table = pd.DataFrame(
        [
            {"method": "TECQA", "group": "Multiple", "answer_recall": 0.9, "anchor_recall": 0.8,
             "chain_recall": 0.7, "avg_facts": 20.0, "n": 10, "n_with_anchor": 6},
        ]
    )  # fmt: skip
    record.integrity(results, table)
    metrics = results.data["metrics"]
    assert metrics["fig5/TECQA/Multiple/answer_recall"] == {"value": 0.9, "n": 10}
    assert metrics["fig5/TECQA/Multiple/chain_recall"] == {"value": 0.7, "n": 6}  # questions with an anchor
    assert results.data["tables"]["fig5_integrity"]["records"][0]["n_with_anchor"] == 6
