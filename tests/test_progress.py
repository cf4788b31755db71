"""Feedback on long runs: inside a notebook's long cell a batch shows what the cell is
doing — done of total, rate, ETA — read from the kernel's progress bars through a side-channel file, in
this process (``--jobs 1``) and from child jobs (``--jobs N``, the Dask engine's path too)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import CountingEndpoint

from temporag import progress as bars
from temporag.run import progress

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "progress"
RATE = r"[0-9.]+ (call/s|s/call)"  # a step takes 0.6 s: about 1.6 call/s


def test_a_bar_reads_as_done_of_total_rate_and_eta():
    bar = {"desc": "reader (SmolLM2-135M)", "n": 50, "total": 200, "unit": "call", "elapsed_s": 100.0}
    assert progress.describe_bar(bar) == "reader (SmolLM2-135M): 50/200 calls · 2 s/call · ETA 5 min 00 s"
    fast = {"desc": "semantic retrieval", "n": 3_000, "total": 9_000, "unit": "it", "elapsed_s": 10.0}
    assert progress.describe_bar(fast) == "semantic retrieval: 3,000/9,000 · 300 it/s · ETA 20 s"
    open_ended = {"desc": "turns", "n": 1, "total": None, "unit": "turn", "elapsed_s": 0.0}
    assert progress.describe_bar(open_ended) == "turns: 1 turn"
    nested = {"bars": [{**fast, "n": 9_000}, bar]}
    assert progress.describe(nested).startswith("semantic retrieval: 9,000/9,000 · 900 it/s › reader")
    assert progress.describe(None) == "" and progress.describe({"bars": []}) == ""


def test_the_llm_clients_bar_reports_each_call_to_the_progress_file(tmp_path, monkeypatch, tmp_cache):
    from temporag.config import get_settings
    from temporag.llm import LLM

    path = tmp_path / "progress.json"
    monkeypatch.setenv(bars.ENV_FILE, str(path))
    monkeypatch.setattr(bars, "WRITE_EVERY_S", 0.0)
    seen: list[str] = []
    write = bars._write

    def spy(force: bool = False) -> None:
        write(force)
        seen.append(progress.describe(progress.read(path)))

    monkeypatch.setattr(bars, "_write", spy)
    with CountingEndpoint() as server:
        llm = LLM(get_settings(llm_base_url=server.url, llm_model="fake-model", llm_max_retries=0))
        chat = llm.chat

        def slow_chat(*args, **kwargs):  # a call longer than tqdm's 0.1 s between two updates
            time.sleep(0.15)
            return chat(*args, **kwargs)

        monkeypatch.setattr(llm, "chat", slow_chat)
        replies = llm.chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(3)], desc="reader")
    assert [r.text for r in replies] == ["answer to q0", "answer to q1", "answer to q2"]
    assert seen[0].startswith("reader: 0/3 calls")
    assert [s.split(" · ")[0] for s in seen[1:-1]] == [f"reader: {n}/3 calls" for n in (1, 2, 3)], seen
    assert re.fullmatch(r"reader: 2/3 calls · [0-9.]+ (call/s|s/call) · ETA \d+ s", seen[2]), seen
    assert seen[-1] == "" and progress.read(path)["bars"] == []  # closed: nothing left open


def test_without_a_batch_the_bar_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(bars.ENV_FILE, raising=False)
    monkeypatch.chdir(tmp_path)
    assert list(bars.tqdm(range(3), desc="x")) == [0, 1, 2]
    assert list(tmp_path.iterdir()) == []


def _lines(out: str, label: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(f"[{label}] in cell")]


@pytest.mark.slow
def test_a_batch_shows_progress_inside_a_long_cell(tmp_path, monkeypatch):
    """Two jobs in child processes (--jobs 2) and one in this process (run_notebook): each reports its
    loop's steps done of total, rate and ETA while the cell runs, then the cell line."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "lib"),
        "TEMPORAG_CACHE": str(tmp_path / "cache"),
        progress.ENV_EVERY: "0",
    }
    grid = tmp_path / "slow.toml"
    grid.write_text('name = "slow"\n[[run]]\nnotebooks = ["slow"]\nsteps = [8, 9]\n', encoding="utf-8")
    cmd = [sys.executable, "-m", "temporag.cli", "reproduce", "--grid", str(grid), "--jobs", "2"]
    cmd += ["--notebook-dir", str(FIXTURES), "--runs-dir", str(tmp_path / "runs")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    for i, steps in ((1, 8), (2, 9)):
        label = f"{i}/2 slow smoke steps={steps}"
        lines = _lines(done.stdout, label)
        assert lines, done.stdout
        # the injected parameters, the parameters cell and the setup ran: the loop is code cell 4 of 4
        pattern = rf"\[{label}\] in cell 4/4 · fake LLM calls: (\d+)/{steps} calls · {RATE} · ETA \d+ s"
        counts = [int(m.group(1)) for m in map(lambda ln: re.fullmatch(pattern, ln), lines) if m]
        assert counts and counts == sorted(counts) and 0 < counts[-1] <= steps, lines
        assert f"[{label}] cell 4/4" in done.stdout

    from temporag.run import runner

    texts: list[str] = []
    monkeypatch.setenv(progress.ENV_EVERY, "0")
    monkeypatch.setenv("TEMPORAG_CACHE", str(tmp_path / "cache"))
    outcome = runner.run_notebook(
        "slow",
        {"profile": "smoke", "steps": 6},
        notebook_dir=FIXTURES,
        figures_dir=tmp_path / "figures",
        runs_dir=tmp_path / "runs",
        on_progress=texts.append,
    )
    assert outcome.status == "ok", outcome.error
    assert any(re.fullmatch(rf"fake LLM calls: [1-5]/6 calls · {RATE} · ETA \d+ s", t) for t in texts), texts
    assert bars.ENV_FILE not in os.environ  # restored, and its file removed
    assert json.loads((outcome.output_dir / "results.json").read_text())["metrics"]["slow/steps"] == 6
