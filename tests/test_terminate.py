"""SIGTERM to ``temporag reproduce`` (``kill PID``) stops it like Ctrl-C: it says what it stopped, prints the
summary of what finished, removes its staging folder and lock, and exits 143.  Before, it died at once:
nothing printed, the staging folder left behind.

The fast test stubs the run (``Job.run_here``); the slow one replays it: a real ``temporag reproduce`` in a
subprocess, killed with SIGTERM while its kernel sleeps in a cell.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from fakes import SLOW, tiny_notebook

from temporag import cli
from temporag.run import runner


@pytest.fixture()
def nbs(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("slow", "other"):
        tiny_notebook(folder / f"{name}.ipynb", 'profile = "smoke"\nvalue = 1\noutput_dir = None', SLOW)
    return folder


def test_sigterm_prints_what_finished_and_what_it_stopped(nbs, tmp_path, monkeypatch, capsys):
    from temporag.batch.jobs import Job

    first = runner.RunOutcome("slow", "ok", 1.5, None, output_dir=tmp_path / "runs" / "smoke" / "slow")
    cleaned = []

    def run_here(job, on_cell=None, on_progress=None):  # the first finishes, then `kill PID` arrives
        if job.notebook == "slow":
            return first
        t0 = time.monotonic()
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # the signal interrupts this, as it would a running cell
        finally:
            cleaned.append((job.notebook, time.monotonic() - t0 < 10))  # the runner's clean-up runs
        return None

    monkeypatch.setattr(Job, "run_here", run_here)
    argv = ["reproduce", "-n", "slow", "-n", "other", "--notebook-dir", str(nbs)]
    assert cli.main([*argv, "--runs-dir", str(tmp_path / "runs")]) == 143
    assert cleaned == [("other", True)]
    out, err = capsys.readouterr()
    table = "notebook      status    seconds  output\nslow          ok            1.5  "
    assert f"{table}{first.output_dir}" in out
    assert err.startswith("terminated (SIGTERM): stopped other smoke before finishing;")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back as it was


@pytest.mark.slow
def test_sigterm_to_a_real_reproduce_cleans_up_and_exits_143(nbs, tmp_path):
    pid_file = tmp_path / "kernel.pid"
    runs = tmp_path / "runs"
    env = {**os.environ, "TEST_SLEEP": "120", "TEST_PID_FILE": str(pid_file)}
    argv = ["-m", "temporag.cli", "reproduce", "-n", "slow", "--notebook-dir", str(nbs)]
    argv += ["--runs-dir", str(runs)]
    proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while not (pid_file.exists() and pid_file.read_text()):  # the kernel is inside the sleeping cell
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the kernel never reached the cell"
        time.sleep(0.2)
    smoke = runs / "smoke"
    assert [p.name for p in smoke.iterdir() if ".staging-" in p.name] == [f".slow.staging-{proc.pid}"]
    proc.send_signal(signal.SIGTERM)  # the runner only, as `kill PID` does
    out, err = proc.communicate(timeout=60)
    try:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)  # in case the kernel outlived it
    except ProcessLookupError:
        pass
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM): stopped slow smoke before finishing" in err.decode()
    assert "Traceback" not in err.decode()
    assert list(smoke.iterdir()) == []  # no staging folder, no lock, nothing published
