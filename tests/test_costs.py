"""`temporag costs`: LLM calls, tokens and seconds per run from results.json (every call counted by the
client, cached ones with their original cost), older runs read from what they recorded, and the
projection for a served model reading every question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import fake_llm

from temporag.cli import main
from temporag.config import Settings
from temporag.llm import LLM, ResponseCache, costs
from temporag.notebook.results import Results

REPO = Path(__file__).resolve().parents[1]


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_results_json_counts_tokens_and_model_seconds_of_every_call(tmp_path):
    from fakes import ScriptedBackend

    settings = Settings(device="cpu", cache_dir=tmp_path / "cache")
    before = fake_llm()  # a call before the run starts is not the run's
    before.chat([{"role": "user", "content": "warm-up"}])
    r = Results("cost_check", {"seed": 0, "reader_sample": 2}, out_dir=tmp_path / "out", settings=settings)
    backend = ScriptedBackend("['Iraq']", prompt_tokens=700, completion_tokens=20)
    llm = LLM(settings, backend=backend, cache=ResponseCache(tmp_path / "llm.sqlite"))
    for prompt in ("first", "second", "first"):  # the third is a cache hit: same cost, no request
        llm.chat([{"role": "user", "content": prompt}])
    r.save()
    saved = json.loads((r.dir / "results.json").read_text())
    calls = saved["llm_calls"]
    assert (calls["calls"], calls["cached"], calls["failed"]) == (3, 1, 0) and backend.calls == 2
    assert (calls["prompt_tokens"], calls["completion_tokens"]) == (2100, 60)
    assert calls["model_seconds"] >= 0 and saved["elapsed_s"] >= 0
    run = costs.read_run(r.dir / "results.json")
    assert run.source == costs.SOURCE_FULL and (run.calls, run.tokens, run.read) == (3, 2160, 2)
    assert run.tokens_per_call == 720 and run.calls_per_question == 1.5


def test_failed_calls_count_as_calls_but_not_in_the_rates(tmp_path):
    """A starved server timed out 24 of TECQA's 30 smoke calls: the projection must still plan for 30."""
    recorded = {
        "calls": 30,
        "failed": 24,
        "prompt_tokens": 4489,
        "completion_tokens": 73,
        "model_seconds": 204.7,
    }
    path = write(
        tmp_path / "tecqa.json",
        {"parameters": {"reader_sample": 6, "sample_size": 40}, "llm_calls": recorded},
    )
    run = costs.read_run(path)
    assert (run.calls, run.failed, run.answered) == (30, 24, 6)
    assert run.tokens_per_call == pytest.approx(4562 / 6) and run.seconds_per_call == pytest.approx(204.7 / 6)
    served = run.projected()
    assert served["calls"] == pytest.approx(200) and served["tokens"] == pytest.approx(200 * 4562 / 6)


def test_old_runs_are_read_from_their_usage_metric(tmp_path):
    usage = {"calls": 200, "cached": 1, "errors": 0, "prompt_tokens": 148541, "completion_tokens": 13714}
    path = write(
        tmp_path / "tour" / "results.json",
        {
            "notebook": "tour",
            "parameters": {"profile": "paper", "sample_size": None, "reader_sample": 200, "llm_model": None},
            "metrics": {
                "semantic_reader/usage": {"value": {**usage, "mean_latency_s": 45.0}},
                "semantic_reader/hits@1_strict": {"value": 0.075, "reader": "SmolLM2-135M-Instruct.Q4_1"},
            },
            "predictions": {"semantic": [{"quid": i} for i in range(954)], "semantic_reader": []},
        },
    )
    run = costs.read_run(path)
    assert run.source == costs.SOURCE_USAGE and run.reader == "SmolLM2-135M-Instruct.Q4_1"
    assert (run.calls, run.tokens, run.questions, run.read) == (200, 162255, 954, 200)
    assert run.seconds_per_call == pytest.approx(45.0)
    served = run.projected()
    assert served["calls"] == pytest.approx(954) and served["tokens"] == pytest.approx(162255 * 954 / 200)
    assert served["llm_hours"] == pytest.approx(954 * 45.0 / 3600)
    assert run.projected(questions=100, seconds_per_call=0.5)["llm_hours"] == pytest.approx(50 / 3600)
    # requests in flight divide the wall time, not the model's time
    at_32 = run.projected(concurrency=32)
    assert at_32["llm_hours"] == served["llm_hours"]
    assert at_32["wall_hours"] == pytest.approx(954 * 45 / 3600 / 32)


def test_old_runs_are_read_from_per_question_and_reader_records(tmp_path):
    agent = {"llm_calls": 3, "prompt_tokens": 600, "completion_tokens": 30, "reader_s": 9.0}
    sar = write(
        tmp_path / "sar.json",
        {"parameters": {"agent_sample": 2, "reader_sample": 20, "sample_size": 954},
         "predictions": {"llm_agents": [agent, {**agent, "llm_calls": 1}]}},
    )  # fmt: skip
    run = costs.read_run(sar)
    assert run.source == costs.SOURCE_RECORDS and (run.calls, run.tokens, run.read) == (4, 1260, 2)
    star = write(
        tmp_path / "star.json",
        {"parameters": {"reader_sample": 2, "sample_size": 954},
         "metrics": {"fig3/A/tokens_per_question": {"value": 500.0}, "fig3/B/tokens_per_question": 520.0},
         "predictions": {"reader": [{"error": None}] * 3 + [{"error": "timeout"}]}},
    )  # fmt: skip
    run = costs.read_run(star)
    assert run.source == costs.SOURCE_READER and (run.calls, run.failed, run.tokens) == (4, 1, 1530)
    assert run.tokens_per_call == 510 and run.projected(questions=4)["tokens"] == pytest.approx(8 * 510)
    assert run.seconds_per_call is None and run.projected()["llm_hours"] is None


def test_reader_sample_counts_per_data_set(tmp_path):
    path = write(tmp_path / "ia.json", {"parameters": {"reader_sample": 2, "datasets": ["a", "b", "c"]}})
    assert costs.read_run(path).read == 6


def test_every_committed_run_has_calls_and_a_projection():
    runs = [costs.read_run(p) for p in costs.default_paths(REPO / "figures")]
    assert runs, "no committed figures/*/results.json"
    for run in runs:
        assert run.calls and run.read and run.questions, run
        assert run.projected()["calls"] >= run.calls


def test_cli_prints_the_table_and_refuses_a_bad_file(tmp_path, capsys):
    path = write(
        tmp_path / "run" / "results.json",
        {"notebook": "x", "parameters": {"profile": "smoke", "reader_sample": 6, "sample_size": 40},
         "llm_calls": {"calls": 12, "failed": 0, "prompt_tokens": 9000, "completion_tokens": 600,
                       "model_seconds": 24.0}},
    )  # fmt: skip
    assert main(["costs", str(path), "--questions", "1800", "--seconds-per-call", "2"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| x "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # questions read, calls, calls/question, tokens/call, s/call ... served questions, calls, tokens, hours
    assert cells[3:9] == ["6", "12", "0", "2.00", "800", "2.00"]
    assert cells[-5:] == ["1,800", "3,600", "2,880,000", "2.00", "0.12"]  # wall h: 2.00 h / 16 in flight
    assert "LLM hours at 2 s per call" in out and "served: wall h at 16" in out
    flags = ["--questions", "1800", "--seconds-per-call", "2", "--concurrency", "4"]
    assert main(["costs", str(path), *flags]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| x "))
    assert "served: wall h at 4" in out and row.strip("|").split("|")[-1].strip() == "0.50"
    bad = write(tmp_path / "bad" / "results.json", {"metrics": {}})
    assert main(["costs", str(bad)]) == 2
    assert f"{bad}: no 'parameters'" in capsys.readouterr().err
