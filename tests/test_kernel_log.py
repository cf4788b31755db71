"""A kernel process's own stdout and stderr (its housekeeping: a TCP warning on every start, ZMQ
tracebacks while it shuts down) go to a log in the run's staging folder, never to the console; a run whose
kernel died keeps that log with its outputs, names it and quotes its last lines; a run that worked leaves
no log, in or beside its folder.

Real papermill runs of tiny notebooks; fd-level capture sees what a kernel writes to the fds it
inherited."""

from __future__ import annotations

import pytest
from fakes import tiny_notebook

from temporag.notebook.outputs import failed_dir
from temporag.run.kernel_log import log_path
from temporag.run.runner import reproduce

# After its shutdown request a kernel writes to its process's stderr, as ipykernel's zmq tracebacks
# do when a socket is closed under a stream that is still polled.
LAST_WORDS = "zmq.error.ZMQError: Socket operation on non-socket (said while shutting down)"
NOISY = f"""
import atexit, json, os, pathlib
atexit.register(os.write, 2, b"{LAST_WORDS}\\n")
out = pathlib.Path(output_dir); out.mkdir(parents=True, exist_ok=True)
(out / "results.json").write_text(json.dumps({{"value": 1}}))
"""
DIES = """
import os, signal
os.write(2, b"about to be killed\\n")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _notebook(path, body: str) -> None:
    """A tiny notebook (:func:`fakes.tiny_notebook`) with this file's parameters."""
    tiny_notebook(path, 'profile = "smoke"\noutput_dir = None', body)


@pytest.fixture()
def dirs(tmp_path):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "noisy.ipynb", NOISY)
    _notebook(nbs / "dies.ipynb", DIES)
    return {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}


@pytest.mark.slow
def test_a_kernels_own_output_goes_to_its_log_not_the_console(dirs, capfd):
    [outcome] = reproduce(["noisy"], **dirs)
    assert outcome.status == "ok"
    console = capfd.readouterr()
    assert LAST_WORDS not in console.err + console.out
    assert "[IPKernelApp]" not in console.err  # ipykernel's start-up warnings too
    # the log was the staging folder's, dropped before publishing: nothing beside the folder, nothing added
    assert sorted(p.name for p in outcome.output_dir.parent.iterdir()) == ["noisy"]
    assert not log_path(outcome.output_dir).exists()


@pytest.mark.slow
def test_a_dead_kernel_names_its_log_and_what_it_said_last(dirs):
    [outcome] = reproduce(["dies"], **dirs)
    assert outcome.status == "failed" and "DeadKernelError" in outcome.error
    log = log_path(failed_dir(dirs["runs_dir"] / "smoke" / "dies"))  # kept with the failed run's outputs
    assert f"the kernel's own output ({log}), last lines:" in outcome.error
    assert outcome.error.endswith("\nabout to be killed")  # what it wrote last, from the log
    assert "about to be killed" in log.read_text()
    assert sorted(p.name for p in log.parent.parent.iterdir()) == [".dies.failed"]  # no lock, no log beside
