"""Nothing is left beside an output folder: its lock file goes when the lock is given back, and what a
killed run left (staging folders, lock files, an older kit's kernel logs) is swept by the next run of any
notebook, not only by the next run of the same folder; a zombie counts as dead, a live run is left alone.

The run itself is stubbed (``_run_locked``): what is checked is what happens around it, without a kernel.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import slow_dirs

from temporag.notebook import outputs
from temporag.run import runner


@pytest.fixture()
def dirs(tmp_path):
    return slow_dirs(tmp_path)


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture()
def zombie():
    """A child that has exited and is not waited for yet: ``kill(pid, 0)`` still reaches it."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    stat = Path(f"/proc/{proc.pid}/stat")
    deadline = time.monotonic() + 30
    while stat.read_text().rsplit(")", 1)[-1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.05)
    yield proc.pid
    proc.wait()


def test_a_lock_file_goes_with_its_lock(tmp_path):
    folder = tmp_path / "runs" / "smoke" / "tour"
    with outputs.hold(folder):
        assert json.loads(outputs.lock_path(folder).read_text())["pid"] > 0  # who holds it, while held
    assert list(folder.parent.iterdir()) == []


def test_a_zombie_is_dead(zombie):
    assert not outputs.pid_alive(zombie)


def test_any_run_sweeps_what_dead_runs_left_beside_any_folder(dirs, zombie, monkeypatch):
    smoke, paper, figures = dirs["runs_dir"] / "smoke", dirs["runs_dir"] / "paper", dirs["figures_dir"]
    dead = _gone_pid()
    left = [
        smoke / f".other.staging-{dead}",  # a killed smoke run of another notebook
        smoke / f".third.staging-{zombie}",  # ... whose process is a zombie
        paper / f".tour.staging-{dead}",  # a killed paper run elsewhere under runs/
        smoke / ".other.lock",  # the killed run's lock file, its pid dead and its flock free
        figures / ".tour.lock",
        smoke / ".old.kernel.log",  # an older kit's kernel log beside its folder
    ]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        if ".staging-" in path.name:
            path.mkdir()
            (path / "results.json").write_text("{}")
        else:
            path.write_text(json.dumps({"pid": dead, "since": "then", "command": "temporag reproduce"}))
    live = smoke / f".busy.staging-{os.getppid()}"  # the test runner's parent lives on
    live.mkdir()
    ctx = multiprocessing.get_context("fork")
    held, done = ctx.Event(), ctx.Event()

    def holder():  # a run in progress on runs/smoke/busy: its lock and staging stay
        with outputs.hold(smoke / "busy"):
            held.set()
            done.wait(30)

    child = ctx.Process(target=holder)
    child.start()
    ran = []
    monkeypatch.setattr(runner, "_run_locked", lambda name, *a, **kw: ran.append(name) or _ok(name))
    try:
        assert held.wait(30)
        [outcome] = runner.reproduce(["slow"], **dirs)  # another notebook, another folder
        assert ran == ["slow"] and outcome.status == "ok"
        assert [p.name for p in left if p.exists()] == []
        assert live.exists() and outputs.lock_path(smoke / "busy").exists()
    finally:
        done.set()
        child.join(10)
    assert sorted(p.name for p in smoke.iterdir()) == [live.name]  # the holder gave its lock back


def _ok(name: str) -> runner.RunOutcome:
    return runner.RunOutcome(name, "ok", 0.1, None)
