"""The runner reports only finished runs as current, never writes where it should not, one run per folder,
and a run whose LLM calls all failed is a failed run.

Real papermill runs of tiny notebooks; a run is killed with SIGKILL (runner and kernel) mid-cell.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fakes import SLOW, tiny_notebook

from temporag.methods import registry
from temporag.methods.params import ParameterError
from temporag.notebook import outputs
from temporag.run.runner import reproduce, resolve_output_dir

# A notebook whose every LLM call fails (a closed port), recording through the kit's Results.
LLM_DOWN = """
from temporag.config import get_settings
from temporag.llm import LLM
from temporag.notebook.results import Results
res = Results("llm_down", {"profile": profile, "output_dir": output_dir}, out_dir=output_dir)
settings = get_settings(llm_base_url=url, llm_max_retries=0, llm_breaker=2).replace(llm_model="m")
replies = LLM(settings).chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(4)], progress=False)
res.metric("hits@1", 0.0, failed=sum(r.error is not None for r in replies))
"""


@pytest.fixture()
def dirs(tmp_path):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(nbs / "slow.ipynb", 'profile = "smoke"\nvalue = 1\noutput_dir = None', SLOW)
    tiny_notebook(nbs / "llm_down.ipynb", 'profile = "smoke"\nurl = None\noutput_dir = None', LLM_DOWN)
    return {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


# -- a result is current only if its run finished -------------------------------------------------------


def _start_killable_run(dirs, tmp_path, value: int, force: bool) -> tuple[subprocess.Popen, Path]:
    pid_file = tmp_path / f"kernel-{value}-{force}.pid"
    script = (
        "import sys, pathlib\n"
        "from temporag.run.runner import reproduce\n"
        f"reproduce(['slow'], extra={{'value': {value}}}, force={force}, "
        f"notebook_dir=pathlib.Path({str(dirs['notebook_dir'])!r}), "
        f"figures_dir=pathlib.Path({str(dirs['figures_dir'])!r}), "
        f"runs_dir=pathlib.Path({str(dirs['runs_dir'])!r}))\n"
    )
    env = {**os.environ, "TEST_SLEEP": "120", "TEST_PID_FILE": str(pid_file)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text()):  # the kernel is inside the sleeping cell
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the kernel never reached the cell"
        time.sleep(0.2)
    return proc, pid_file


def _kill(proc: subprocess.Popen, pid_file: Path) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # kill -9 the runner ...
    proc.wait(timeout=30)
    try:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)  # ... and its kernel
    except ProcessLookupError:
        pass


@pytest.mark.slow
def test_killed_first_run_publishes_nothing_and_is_rerun(dirs, tmp_path):
    final = dirs["runs_dir"] / "smoke" / "slow"
    proc, pid_file = _start_killable_run(dirs, tmp_path, value=7, force=False)
    staged = list(final.parent.glob(".slow.staging-*"))
    assert len(staged) == 1 and json.loads((staged[0] / "results.json").read_text())["complete"] is False
    _kill(proc, pid_file)
    assert not final.exists()  # nothing half-done where results are read from
    [again] = reproduce(["slow"], extra={"value": 7}, **dirs)
    assert again.status == "ok"  # not "skipped": no complete run existed
    assert json.loads((final / "results.json").read_text()) == {"value": 7, "complete": True}
    assert json.loads((final / "_run.json").read_text())["finished"]
    # the killed run's staging folder and lock file are gone; nothing but the folder is left (no lock, no
    # kernel log: temporag.run.kernel_log)
    assert sorted(p.name for p in final.parent.iterdir()) == ["slow"]


@pytest.mark.slow
def test_killed_forced_rerun_and_failed_run_keep_the_last_complete_run(dirs, tmp_path):
    final = dirs["runs_dir"] / "smoke" / "slow"
    [first] = reproduce(["slow"], extra={"value": 7}, **dirs)
    assert first.status == "ok"
    complete = {p.name: p.read_bytes() for p in final.iterdir()}
    proc, pid_file = _start_killable_run(dirs, tmp_path, value=7, force=True)
    _kill(proc, pid_file)
    assert {p.name: p.read_bytes() for p in final.iterdir()} == complete  # untouched by the killed run
    [skipped] = reproduce(["slow"], extra={"value": 7}, **dirs)
    assert skipped.status == "skipped"  # right: the folder holds a complete, current run
    assert (final / "tables.md").read_text() == "## table of run 7\n"
    # a run that fails keeps the last complete run too, and is not reported as current afterwards
    [failed] = reproduce(["slow"], extra={"value": 13}, **dirs)
    assert failed.status == "failed" and "unlucky value" in failed.error
    assert failed.kept == final.parent / ".slow.failed" and (failed.kept / "slow.ipynb").exists()
    assert {p.name: p.read_bytes() for p in final.iterdir()} == complete
    [again] = reproduce(["slow"], extra={"value": 13}, **dirs)
    assert again.status == "failed"  # tried again, not "skipped"


@pytest.mark.slow
def test_a_second_concurrent_run_of_a_notebook_fails_clearly(dirs, tmp_path):
    proc, pid_file = _start_killable_run(dirs, tmp_path, value=7, force=False)
    try:
        [second] = reproduce(["slow"], extra={"value": 7}, **dirs)
    finally:
        _kill(proc, pid_file)
    assert second.status == "failed" and second.seconds == 0.0
    assert f"is being written by another run (pid {proc.pid}" in second.error and "--wait" in second.error


# -- outputs never overwrite what they should not -------------------------------------------------------


def test_output_folders_by_profile_and_question_set(dirs, tmp_path):
    kw = {"figures_dir": dirs["figures_dir"], "runs_dir": dirs["runs_dir"]}
    declared = {"profile": "smoke", "split": "test_sample_shared", "questions_file": None}
    questions = tmp_path / "held_out.json"
    questions.write_text("[]")
    digest = hashlib.sha256(b"[]").hexdigest()[:8]
    assert resolve_output_dir("00_tour", {"profile": "paper"}, declared, **kw) == dirs["figures_dir"] / "tour"
    assert (
        resolve_output_dir("00_tour", {"profile": "smoke"}, declared, **kw) == dirs["runs_dir"] / "smoke/tour"
    )
    assert resolve_output_dir(
        "00_tour", {"profile": "paper", "questions_file": str(questions)}, declared, **kw
    ) == (dirs["runs_dir"] / f"paper-held_out-{digest}" / "tour")
    assert resolve_output_dir("tecqa", {"profile": "paper", "split": "dev"}, declared, **kw) == (
        dirs["runs_dir"] / "paper-split-dev" / "tecqa"
    )
    assert resolve_output_dir(
        "tecqa", {"profile": "paper", "split": "test_sample_shared"}, declared, **kw
    ) == (dirs["figures_dir"] / "tecqa")
    mine = tmp_path / "mine"
    assert resolve_output_dir("tecqa", {"profile": "smoke", "output_dir": str(mine)}, declared, **kw) == mine
    with pytest.raises(ParameterError, match="a smoke run cannot write there"):
        resolve_output_dir(
            "tecqa", {"profile": "smoke", "output_dir": str(dirs["figures_dir"] / "x")}, declared, **kw
        )


def test_smoke_run_into_figures_is_refused_before_any_kernel_starts(dirs):
    [outcome] = reproduce(["slow"], extra={"output_dir": str(dirs["figures_dir"] / "slow")}, **dirs)
    assert outcome.status == "failed" and outcome.seconds == 0.0
    assert "holds only the committed paper-profile runs" in outcome.error
    assert not dirs["figures_dir"].exists()


@pytest.mark.slow
def test_smoke_paper_and_output_dir_runs_land_apart(dirs, tmp_path):
    [smoke] = reproduce(["slow"], extra={"value": 2}, **dirs)
    [paper] = reproduce(["slow"], profile="paper", extra={"value": 3}, **dirs)
    [mine] = reproduce(["slow"], extra={"value": 4, "output_dir": str(tmp_path / "mine")}, **dirs)
    assert (smoke.status, paper.status, mine.status) == ("ok", "ok", "ok")
    assert json.loads((dirs["runs_dir"] / "smoke" / "slow" / "results.json").read_text())["value"] == 2
    assert json.loads((dirs["figures_dir"] / "slow" / "results.json").read_text())["value"] == 3
    assert json.loads((tmp_path / "mine" / "results.json").read_text())["value"] == 4


def test_folder_lock_is_exclusive_between_processes_and_waits(tmp_path):
    folder = tmp_path / "runs" / "smoke" / "tour"
    ctx = multiprocessing.get_context("fork")
    held, done = ctx.Event(), ctx.Event()

    def holder():
        with outputs.hold(folder):
            held.set()
            done.wait(30)

    child = ctx.Process(target=holder)
    child.start()
    try:
        assert held.wait(30)
        with pytest.raises(outputs.OutputLocked, match=f"pid {child.pid} since"):
            outputs.acquire(folder)
        threading.Timer(0.5, done.set).start()
        t0 = time.monotonic()
        with outputs.hold(folder, wait_s=20):  # --wait: gets the folder once the holder is done
            assert time.monotonic() - t0 >= 0.4
    finally:
        done.set()
        child.join(10)


# -- failed reader calls are not wrong answers ----------------------------------------------------------


@pytest.mark.slow
def test_run_whose_llm_calls_all_failed_is_reported_failed(dirs, tmp_path, tmp_cache):
    [outcome] = reproduce(["llm_down"], extra={"url": _closed_port_url()}, **dirs)
    assert outcome.status == "failed"
    assert "all 4 LLM calls failed" in outcome.error and "Connection" in outcome.error
    assert not (dirs["runs_dir"] / "smoke" / "llm_down").exists()  # not published as a current result
    data = json.loads((outcome.kept / "results.json").read_text())
    assert data["llm_calls"]["calls"] == 4 and data["llm_calls"]["failed"] == 4
    assert data["metrics"]["hits@1"] == {"value": 0.0, "failed": 4}
    assert data["parameters"]["output_dir"] == data["output_dir"]  # the folder it was meant for, not staging
    assert data["output_dir"].endswith("runs/smoke/llm_down")


def test_partial_llm_failures_are_incomplete_and_total_failure_failed(tmp_path):
    from temporag.run.runner import _llm_verdict

    path = tmp_path / "results.json"
    path.write_text(json.dumps({"llm_calls": {"calls": 6, "failed": 2, "last_error": "boom\nmore"}}))
    assert _llm_verdict(path)[0] == "incomplete"  # tests/test_incomplete_runs.py: what that means
    path.write_text(json.dumps({"llm_calls": {"calls": 6, "failed": 6, "last_error": "down"}}))
    assert _llm_verdict(path)[0] == "failed"
    path.write_text(json.dumps({"llm_calls": {"calls": 0, "failed": 0}}))
    assert _llm_verdict(path) == ("", "")


def test_results_record_llm_calls_of_their_run(tmp_path, tmp_cache):
    from fakes import fake_llm

    from temporag.notebook.results import Results

    llm = fake_llm("['x']", fail_when=lambda text: "bad" in text)
    llm.chat([{"role": "user", "content": "before the run"}])  # not this run's
    res = Results("demo", {}, out_dir=tmp_path / "demo")
    llm.chat_many([[{"role": "user", "content": t}] for t in ("good", "bad", "fine")], progress=False)
    res.metric("x", 1.0)
    data = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert data["llm_calls"]["calls"] == 3 and data["llm_calls"]["failed"] == 1
    assert "refuses this prompt" in data["llm_calls"]["last_error"]
    row = res.compare("hits@1", 0.5, n=3, failed=1)
    assert (
        row["failed"] == 1
        and json.loads((tmp_path / "demo" / "results.json").read_text())["metrics"]["hits@1"]["failed"] == 1
    )


# -- parameters validated where they enter --------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"valeu": 3},
            "unknown parameter 'valeu' for notebook slow; its parameters are: profile, value, output_dir",
        ),
        ({"seed": 1}, "unknown parameter 'seed'"),
        ({"value": 1, "questions_file": "nope.json"}, "unknown parameter 'questions_file'"),
    ],
)
def test_runner_rejects_unknown_names_without_starting_a_kernel(dirs, extra, message):
    [outcome] = reproduce(["slow"], extra=extra, **dirs)
    assert outcome.status == "failed" and outcome.seconds == 0.0 and message in outcome.error


def test_runner_rejects_bad_values_in_one_line(tmp_path):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    shutil.copy(registry.NOTEBOOK_DIR / "tecqa.ipynb", nbs / "tecqa.ipynb")  # checked, never started
    kw = {"notebook_dir": nbs, "figures_dir": tmp_path / "f", "runs_dir": tmp_path / "r"}
    for extra, message in [
        ({"K": 0}, "parameter K = 0 is not allowed: K must be a whole number ≥ 1"),
        ({"K": "abc"}, "parameter K = 'abc' is not allowed"),
        (
            {"sample_size": -5},
            "parameter sample_size = -5 is not allowed: sample_size must be a whole number ≥ 1",
        ),
    ]:
        [outcome] = reproduce(["tecqa"], extra=extra, **kw)
        assert outcome.status == "failed" and outcome.error.startswith(message) and "\n" not in outcome.error
