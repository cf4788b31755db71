"""STAR-RAG's reader tables: the kit's number and the paper's come from one ``Results.compare`` call in
``record`` (table row and results.json entry alike), Table 3 leaves failed calls out, Table 4 times
retrieval + reading, and the per-question records keep every trace.  Written into tmp_path only."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from temporag.answer.readers import ReaderResult
from temporag.methods.base import Retrieval
from temporag.methods.star_rag import paper_tables, record, report


def saved(results, key):
    return json.loads((results.dir / "results.json").read_text())["metrics"][key]


def test_table2_rows_and_results_json_come_from_one_call(results):
    hits = {
        "STAR-RAG": {1: np.array([1.0, 0, 0, 0]), 5: np.array([1.0, 1, 0, 0]), 10: np.array([1.0, 1, 1, 0])},
        "STAR-RAG-no-rule": {1: np.array([0.0, 0, 0, 1]), 5: np.array([0.0, 0, 0, 1]), 10: np.ones(4)},
    }
    table = record.table2_multitq(results, paper_tables.hit_rates(hits), "fake-model", 4)
    assert len(table) == 6 and "note" not in table  # no row has a note
    assert table.paper_source.tolist()[1:3] == ["", ""]  # no-rule Hit@5 and Hit@10: the paper prints none
    star5 = table[(table.method == "STAR-RAG") & (table.k == 5)].iloc[0]
    assert (star5.kit, star5.paper, star5.n, star5.reader, star5.rule) == (
        0.5,
        0.415,
        4,
        "fake-model",
        "strict",
    )
    entry = saved(results, "table2/MultiTQ/STAR-RAG/hits@5")
    assert entry["value"] == 0.5 and entry["paper"] == 0.415 and entry["paper_source"] == star5.paper_source
    # Table 2 prints no semantic row: its Hit@1 is Table 4's no-rule accuracy, Hit@5/10 have none
    assert saved(results, "table2/MultiTQ/STAR-RAG-no-rule/hits@1")["paper"] == 0.183
    assert saved(results, "table2/MultiTQ/STAR-RAG-no-rule/hits@10") == {
        "value": 1.0,
        "paper": None,
        "n": 4,
        "reader": "fake-model",
        "rule": "strict",
        "paper_source": None,
        "note": "",
        "failed": 0,
    }


def test_reader_tables_leave_failed_calls_out_and_count_them(results):
    """A STAR-RAG read whose call failed is left out of each Hit@k in Tables 2 and 4 and the summary, and
    counted beside it (never scored 0)."""
    questions = [SimpleNamespace(answers=(a,), answer_type="entity", qlabel="Single") for a in "ABCD"]
    right = [_read(["A"]), _read(["B"]), _read(["C"]), _read(["D"])]
    half_failed = [_read(["A"]), _read([], error="timeout"), _read(["C"]), _read([], error="HTTP 500")]
    reads = {"STAR-RAG": half_failed, "STAR-RAG-no-rule": right, "STAR-RAG-uniform": right}
    hits = paper_tables.reader_scores(reads, questions)
    assert np.isnan(hits["STAR-RAG"][1]).tolist() == [False, True, False, True]
    rates = paper_tables.hit_rates(hits)
    table2 = record.table2_multitq(results, rates, "fake-model", 4)
    star1 = table2[(table2.method == "STAR-RAG") & (table2.k == 1)].iloc[0]
    assert (star1.kit, star1.n, star1.failed) == (1.0, 4, 2)  # not 0.5: the failures are not wrong
    assert saved(results, "table2/MultiTQ/STAR-RAG/hits@1")["failed"] == 2
    retrievals = {name: Retrieval([[1]] * 4, [0.0] * 4) for name in report.METHODS}
    usage = {name: {"mean_latency_s": 1.0} for name in report.METHODS}
    numbers = paper_tables.table4_numbers(rates, retrievals, usage)
    table4 = record.table4(results, numbers, "fake-model", 4, served=True).set_index("method")
    assert table4.loc["STAR-RAG", "Acc. (Hit@1)"] == 1.0 and table4.loc["STAR-RAG", "failed"] == 2
    assert table4.loc["STAR-RAG+fake-model", "failed"] == 2
    graph = SimpleNamespace(stats=lambda: {"labels_in_use": 1, "rule_nodes": 1, "selected_edges": 1})
    recall = {name: np.ones(4) for name in report.METHODS}
    usage = {"STAR-RAG": {"mean_prompt_tokens": 10, "mean_completion_tokens": 1}}
    summary = report.summary_table(graph, recall, hits, usage, "fake-model", 4, 10).set_index("quantity")
    assert summary.loc["Hit@1 STAR-RAG (fake-model, n=4)", "kit"] == "1.000 (2 failed calls left out)"


def _read(answers, error=None):
    return ReaderResult(question="q", answers=answers, error=error)


def test_table3_by_event_count_leaves_failed_calls_out(results):
    questions = [
        SimpleNamespace(answers=("Iran",), answer_type="entity", qlabel="Single"),
        SimpleNamespace(answers=("Iraq",), answer_type="entity", qlabel="Single"),
        SimpleNamespace(answers=("2010",), answer_type="time", qlabel="Multiple"),
        SimpleNamespace(answers=("Oman",), answer_type="entity", qlabel="Multiple"),
    ]
    reads = {
        "STAR-RAG": [_read(["Iran"]), _read(["Oman"]), _read(["2010-05-01"]), _read([], error="timeout")],
        "STAR-RAG-no-rule": [_read(["Iraq"]), _read(["Iraq"]), _read(["2011"]), _read(["Oman"])],
    }
    recall_table = pd.DataFrame(
        {
            "group": ["qlabel", "qlabel"],
            "category": ["Single", "Multiple"],
            "n": [30, 10],
            "STAR-RAG": [0.9, 0.6],
            "STAR-RAG-no-rule": [0.8, 0.5],
        }
    )
    scores = paper_tables.table3_scores(reads, questions)
    table = record.table3(results, scores, recall_table, "fake-model", 10)
    rows = {(r.method, r.questions): r for r in table.itertuples()}
    assert rows[("STAR-RAG", "Single-event")].kit == 0.5
    assert (
        rows[("STAR-RAG", "Multiple-event")].kit == 1.0
    )  # the time answer cut to the year; the failure left out
    assert rows[("STAR-RAG", "Multiple-event")].paper == 0.444
    assert (
        rows[("STAR-RAG-no-rule", "Single-event")].kit == 0.5
        and rows[("STAR-RAG-no-rule", "Multiple-event")].kit == 0.5
    )
    assert rows[("STAR-RAG", "Single-event")][-1] == 0.9  # answer recall@10 of the qlabel row
    assert saved(results, "table3/STAR-RAG/Single/hits@1")["paper"] == 0.258


def test_table4_times_retrieval_plus_reading_and_names_unserved_backbones(results):
    hits = {name: {1: np.array([1.0, 0.0])} for name in report.METHODS}
    retrievals = {name: Retrieval([[1], [2]], [0.01, 0.03]) for name in report.METHODS}
    usage = {name: {"mean_latency_s": 2.0} for name in report.METHODS}
    numbers = paper_tables.table4_numbers(paper_tables.hit_rates(hits), retrievals, usage)
    table = record.table4(results, numbers, "fake-model", 2, served=False)
    star = table[table.method == "STAR-RAG"].iloc[0]
    assert star["Tim. (s/question)"] == pytest.approx(2.02) and star["paper Tim."] == 20.6
    assert star["Acc. (Hit@1)"] == 0.5 and star["paper Acc."] == 0.305
    backbones = table[table.method.str.startswith("STAR-RAG+")]
    assert len(backbones) == 2 and backbones["Acc. (Hit@1)"].isna().all()
    assert saved(results, "table4/STAR-RAG-uniform/seconds")["paper"] == 19.2
    served = record.table4(results, numbers, "big-model", 2, served=True)
    assert served.method.tolist()[-1] == "STAR-RAG+big-model"


def test_predictions_keep_every_trace_and_answer():
    questions = [SimpleNamespace(quid=7), SimpleNamespace(quid=9)]
    traces = [{"facts": [3, 1], "anchors": [3, 2]}, {"facts": [5], "anchors": [5]}]
    retrievals = {
        "STAR-RAG": Retrieval([[3, 1], [5]], [0.1, 0.2], traces),
        "STAR-RAG-no-rule": Retrieval([[3, 2], [5]], [0.1, 0.2], [{"facts": [3, 2]}, {"facts": [5]}]),
    }
    reads = {"STAR-RAG": [_read(["Iran"])]}
    records = paper_tables.predictions(questions, retrievals, questions[:1], reads)
    assert list(records) == ["star_rag", "no_rule", "reader"]
    assert records["star_rag"][0] == {"quid": 7, "facts": [3, 1], "anchors": [3, 2]}
    assert records["reader"] == [
        {"quid": 7, "method": "STAR-RAG", "answers": ["Iran"], "raw": "", "error": None}
    ]
    assert paper_tables.positions_in(questions, questions[1:]) == [1]


def test_fig3_reads_like_the_paper():
    # tokens written as the paper writes them (20,453), plain log-axis ticks, and room below the
    # smallest bar so a 2.5 s bar is not a sliver on a log axis
    fig = report.fig3_tokens_time(
        ["STAR-RAG", "STAR-RAG-no-rule"],
        [516.7, 517.2],
        [2.49, 2.51],
        {"STAR-RAG": 601.0, "MedicalGraphRAG": 20453.0},
        {"STAR-RAG": 20.6, "STAR-RAG-no-rule": 10.5},
    )
    fig.canvas.draw()
    tokens_ax, time_ax = fig.axes
    assert {"517", "601", "20,453"} <= {t.get_text() for t in tokens_ax.texts}
    assert {"2.49", "20.6", "10.5"} <= {t.get_text() for t in time_ax.texts}
    ticks = [t.get_text() for t in tokens_ax.get_yticklabels() if t.get_text()]
    assert "1,000" in ticks and not any("e+" in t or "^" in t for t in ticks), ticks
    assert time_ax.get_ylim()[0] == pytest.approx(2.49 / 2)


def test_a_missing_data_set_is_named_relative_to_the_checkout(tmp_path, monkeypatch):
    from temporag.config import REPO_ROOT
    from temporag.data.errors import MissingDataError
    from temporag.methods.star_rag.paper_tables import not_run_status

    missing = REPO_ROOT.parent / "shared" / "data" / "cronquestions" / "kg" / "full.txt.gz"
    status = not_run_status(MissingDataError(missing, "cronquestions"))
    assert status == "not run — cronquestions: missing file ../shared/data/cronquestions/kg/full.txt.gz"
    assert not_run_status(FileNotFoundError("no such folder")) == "not run — no such folder"
    # a name inside the data set (no folder of this machine) stays as written, whatever the working folder
    monkeypatch.chdir(REPO_ROOT / "notebooks")  # where a notebook's kernel runs
    named = MissingDataError("forecasttkgquestions/questions", "forecasttkgquestions")
    expected = "not run — forecasttkgquestions: missing file forecasttkgquestions/questions"
    assert not_run_status(named) == expected
