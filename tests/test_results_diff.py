"""`temporag results diff`: every metric and table value compared, timings excepted, exit 1 on a change."""

from __future__ import annotations

import copy
import json

import pytest

from temporag.cli import main
from temporag.run.results_diff import compared_paths, diff

RUN = {
    "created": "2026-01-01T00:00:00+00:00",
    "parameters": {"profile": "smoke"},
    "metrics": {
        "chain/answer_recall": {"value": 0.9433962264150944, "paper": 0.9412, "n": 954, "ci95": [0.93, 0.96]},
        "subgraph/size_median": 131.0,
        "latency/tecqa_p50_ms": {"value": 2.4, "target_ms": 20},
        "semantic_reader/usage": {"value": {"calls": 6, "cached": 0, "prompt_tokens": 4400, "wall_s": 9.1}},
        "fig5/TECQA/Single/anchor_recall": {"value": float("nan"), "n": 0},
    },
    "tables": {
        "headline": {
            "caption": "Headline (smoke)",
            "records": [
                {"number": "recall", "kit": 0.5, "paper": None},
                {"number": "retrieval p50 (ms)", "kit": 2.4, "paper": None},
                {"number": "one SEARCH p50 (ms, target 20)", "kit": 2.9, "paper": None},
            ],
        },
        "latency": {"caption": "", "records": [{"retriever": "TECQA", "p50_ms": 2.4}]},
        "tokens_time": {
            "caption": "",
            "records": [
                {"method": "STAR-RAG", "tokens": 517, "retrieval s/question": 0.05, "retrieval ms / q": 1.1}
            ],
        },
        "statistics": {"caption": "", "records": [{"statistic": "seconds_load", "value": 0.17}]},
    },
    "predictions": {"tecqa": [{"quid": 1, "retrieval_s": 0.01}]},
}


def _changed(**edits) -> dict:
    run = copy.deepcopy(RUN)
    for path, value in edits.items():
        *parents, leaf = path.split(".")
        node = run
        for key in parents:
            node = node[key]
        node[leaf] = value
    return run


def test_identical_runs_and_timings_do_not_differ():
    timing_only = _changed(
        **{"created": "2027-01-01", "metrics.latency/tecqa_p50_ms": {"value": 9.9, "target_ms": 20}}
    )
    timing_only["metrics"]["semantic_reader/usage"]["value"].update(cached=6, wall_s=0.2)
    timing_only["tables"]["latency"]["records"][0]["p50_ms"] = 7.0
    timing_only["tables"]["headline"]["records"][1]["kit"] = 3.1  # a row that names a timing
    timing_only["tables"]["headline"]["records"][2]["kit"] = 4.9  # ... with a note after the unit
    timing_only["tables"]["tokens_time"]["records"][0]["retrieval ms / q"] = 5.2  # "ms / q" splits at "/"
    timing_only["tables"]["tokens_time"]["records"][0]["retrieval s/question"] = 0.07  # a timing column
    timing_only["tables"]["statistics"]["records"][0]["value"] = 0.03
    timing_only["tables"]["headline"]["caption"] = "Headline (smoke, re-run)"
    timing_only["metrics"]["subgraph/size_median"] = 131.0 + 1e-13  # float noise
    assert diff(RUN, timing_only) == []
    # compared: recall value, paper, n, CI (one list); the median; the NaN value and its n; calls and
    # tokens; the headline row's three cells; the method and tokens of the tokens-time row — nothing of
    # the latency metric or table, the seconds column or the load-time row
    assert compared_paths(RUN) == 14


def test_every_kind_of_difference_is_listed():
    new = _changed(**{"metrics.subgraph/size_median": 132.0})
    new["metrics"]["chain/answer_recall"]["ci95"] = [0.93, 0.97]
    new["metrics"]["fig5/TECQA/Single/anchor_recall"]["value"] = 0.5  # NaN → a number is a change
    new["tables"]["headline"]["records"][0]["paper"] = 0.68
    del new["metrics"]["semantic_reader/usage"]
    new["metrics"]["chain/answer_recall"]["rule"] = "strict"
    found = {d.path: d for d in diff(RUN, new)}
    assert set(found) == {
        "metrics/subgraph/size_median",
        "metrics/chain/answer_recall/ci95",
        "metrics/fig5/TECQA/Single/anchor_recall/value",
        "tables/headline/records/0/paper",
        "metrics/semantic_reader/usage/value/calls",
        "metrics/semantic_reader/usage/value/prompt_tokens",
        "metrics/chain/answer_recall/rule",
    }
    assert found["metrics/subgraph/size_median"].kind == "changed"
    assert found["metrics/semantic_reader/usage/value/calls"].kind == "only in old"
    assert found["metrics/chain/answer_recall/rule"].kind == "only in new"
    assert "metrics/chain/answer_recall/rule" not in {d.path for d in diff(RUN, new, ignore_added=True)}
    assert {
        d.path for d in diff(RUN, new, ignore=("^tables/", "usage", "ci95", "anchor_recall", "rule"))
    } == {"metrics/subgraph/size_median"}


def test_cli_exit_codes_and_listing(tmp_path, capsys):
    old, same, moved = tmp_path / "old.json", tmp_path / "same.json", tmp_path / "moved.json"
    old.write_text(json.dumps(RUN))
    same.write_text(json.dumps(_changed(created="later")))
    moved.write_text(json.dumps(_changed(**{"metrics.subgraph/size_median": 140.0})))
    assert main(["results", "diff", str(old), str(same)]) == 0
    assert "no differences in 14 compared values" in capsys.readouterr().out
    assert main(["results", "diff", str(old), str(moved)]) == 1
    out = capsys.readouterr().out
    assert "~ metrics/subgraph/size_median: 131.0 → 140.0" in out and "1 difference(s)" in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"metrics": {\n  "x": }')
    assert main(["results", "diff", str(old), str(bad)]) == 2
    assert "bad.json line 2: not valid JSON" in capsys.readouterr().err
    assert main(["results", "diff", str(old), str(tmp_path / "missing.json")]) == 2


@pytest.mark.parametrize("tolerance, differs", [(1e-9, True), (1e-2, False)])
def test_tolerance_is_relative(tolerance, differs):
    new = _changed(**{"metrics.subgraph/size_median": 131.1})
    assert bool(diff(RUN, new, rel_tol=tolerance)) is differs


def test_default_tolerance_accepts_float32_noise_and_flags_one_question():
    noise = _changed(**{"metrics.chain/answer_recall.value": 0.9433962264150944 * (1 + 8e-8)})
    assert diff(RUN, noise) == []  # a cosine's 8th digit under other BLAS threads
    one_more = _changed(**{"metrics.chain/answer_recall.value": (900 + 1) / 954})
    assert [d.path for d in diff(RUN, one_more)] == ["metrics/chain/answer_recall/value"]


def test_a_run_folder_stands_for_its_results_json(tmp_path):
    for name, value in (("old", 0.5), ("new", 0.75)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"metrics": {"recall": value}}))
    found = diff(tmp_path / "old", tmp_path / "new")
    assert [(d.path, d.old, d.new) for d in found] == [("metrics/recall", 0.5, 0.75)]
