"""A full disk (or any OS error) is named as what it is, with its path, and the summary is still printed;
staging folders left by processes that are gone are removed by the next run, and only those.

Real papermill runs of the tiny ``slow`` notebook of test_runner_reliability; the full disk is a
monkeypatched write raising ``OSError(ENOSPC)`` (the runner writes in this process with ``-j 1``).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys

import pytest
from fakes import SLOW, tiny_notebook

from temporag import cli
from temporag.notebook import outputs
from temporag.run import oserrors, runner
from temporag.run.summary import summary


@pytest.fixture()
def nbs(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    tiny_notebook(folder / "slow.ipynb", 'profile = "smoke"\nvalue = 1\noutput_dir = None', SLOW)
    return folder


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a write on an open file raises it: no path


@pytest.mark.slow
def test_a_full_disk_is_named_with_its_folder_and_the_summary_printed(nbs, tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    monkeypatch.setattr(runner, "save_json", _disk_full)  # the run stamp's write hits a full disk
    rc = cli.main(["reproduce", "-n", "slow", "--notebook-dir", str(nbs), "--runs-dir", str(runs)])
    out, err = capsys.readouterr()
    folder = runs / "smoke" / "slow"
    named = f"disk full (ENOSPC) writing {folder}: free space on that file system (df -h)"
    assert rc == 1 and "Dask" not in out + err
    assert "notebook      status    seconds  output" in out  # the summary table, with the cause
    assert f"    {named}" in out and "1 notebook(s) failed: slow" in err
    assert not folder.exists() and not list(folder.parent.glob(".slow.staging-*"))  # nothing half-written


def test_os_errors_say_what_they_are_and_where(tmp_path):
    assert oserrors.describe(OSError(errno.ENOSPC, "No space left on device", "/r/x.json")) == (
        "disk full (ENOSPC) writing /r/x.json: free space on that file system (df -h) and run the same "
        "command again"
    )
    assert oserrors.describe(OSError(errno.EROFS, "Read-only file system"), tmp_path).startswith(
        f"read-only file system (EROFS) writing {tmp_path}: choose a writable folder"
    )
    assert oserrors.describe(OSError(errno.ENOTDIR, "Not a directory", "/a/b")) == (
        "Not a directory (ENOTDIR) writing /a/b"
    )


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.slow
def test_staging_left_by_dead_processes_is_removed_by_the_next_run_only_when_they_are_gone(
    nbs, tmp_path, capsys
):
    dirs = {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
    kill = tmp_path / "out" / "kill"
    [first] = runner.reproduce(["slow"], **dirs)
    [mine] = runner.reproduce(["slow"], extra={"output_dir": str(kill)}, **dirs)
    assert (first.status, mine.status) == ("ok", "ok")
    smoke = dirs["runs_dir"] / "smoke"
    dead, alive = _gone_pid(), os.getppid()  # the test runner's parent lives on
    left = [smoke / f".slow.staging-{dead}", kill.parent / f".kill.staging-{dead}"]
    live = [smoke / f".slow.staging-{alive}", kill.parent / f".kill.staging-{alive}"]
    for folder in left + live:
        folder.mkdir()
        (folder / "results.json").write_text("{}")
    [again] = runner.reproduce(["slow"], **dirs)  # current: skipped, no kernel started
    # the command line looks before it locks (batch.jobs.Job.current): a current run starts nothing
    argv = ["reproduce", "-n", "slow", "--notebook-dir", str(nbs), "--runs-dir", str(dirs["runs_dir"])]
    assert cli.main([*argv, "-p", f"output_dir={kill}"]) == 0
    assert again.status == "skipped"
    assert [p.exists() for p in left] == [False, False]
    assert [p.exists() for p in live] == [True, True]  # a live process's folder is never touched
    assert outputs.sweep_stale(kill) == []
    assert "skipped" in capsys.readouterr().out


def test_ctrl_c_prints_the_summary_of_what_finished(nbs, tmp_path, monkeypatch, capsys):
    from temporag.batch.jobs import Job

    tiny_notebook(nbs / "other.ipynb", 'profile = "smoke"\nvalue = 1\noutput_dir = None', SLOW)
    first = runner.RunOutcome("slow", "ok", 1.5, None, output_dir=tmp_path / "runs" / "smoke" / "slow")

    def run_here(job, on_cell=None, on_progress=None):  # no kernel: the first finishes, then Ctrl-C
        if job.notebook == "slow":
            return first
        raise KeyboardInterrupt

    monkeypatch.setattr(Job, "run_here", run_here)
    argv = ["reproduce", "-n", "slow", "-n", "other", "--notebook-dir", str(nbs)]
    assert cli.main([*argv, "--runs-dir", str(tmp_path / "runs")]) == 130
    out, err = capsys.readouterr()
    table = "notebook      status    seconds  output\nslow          ok            1.5  "
    assert f"{table}{first.output_dir}" in out
    assert "other  " not in out.split("notebook      status")[1]  # it did not finish: not in the table
    assert err.startswith("interrupted (Ctrl-C)")


# A cell meets a full disk: what the kernel's traceback quotes is named on the summary's error line.
FULL = """
import errno, os
raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.path.join(output_dir, "predictions.json"))
"""


@pytest.mark.slow
def test_a_full_disk_inside_a_cell_is_named_on_the_summary_line(nbs, tmp_path):
    tiny_notebook(nbs / "full.ipynb", 'profile = "smoke"\noutput_dir = None', FULL)
    [outcome] = runner.reproduce(
        ["full"], notebook_dir=nbs, figures_dir=tmp_path / "figures", runs_dir=tmp_path / "runs"
    )
    staging = tmp_path / "runs" / "smoke" / f".full.staging-{os.getpid()}"
    assert outcome.status == "failed"
    assert outcome.error.splitlines()[-1] == (
        f"disk full (ENOSPC) writing {staging}/predictions.json: free space on that file system (df -h) "
        "and run the same command again"
    )
    assert outcome.error.splitlines()[-1] in summary([outcome])


def test_os_errors_quoted_in_a_traceback_are_named():
    text = "Traceback ...\nOSError: [Errno 28] No space left on device: '/r/.t.staging-9/x.json'\n"
    assert oserrors.from_text(text) == (
        "disk full (ENOSPC) writing /r/.t.staging-9/x.json: free space on that file system (df -h) and run "
        "the same command again"
    )
    assert oserrors.from_text("OSError: [Errno 28] No space left on device", "/r/t").startswith(
        "disk full (ENOSPC) writing /r/t:"
    )
    assert oserrors.from_text("FileNotFoundError: [Errno 2] No such file or directory: 'x'") is None
    assert oserrors.from_text("ValueError: unlucky value") is None


def _not_json(*args, **kwargs):
    raise ValueError("Notebook does not appear to be JSON: '{\\n \"cells\": [...'")


@pytest.mark.slow
def test_a_file_cut_short_on_a_full_disk_names_the_full_disk(nbs, tmp_path, monkeypatch):
    """papermill's save of the executed notebook can leave it cut short with no error (seen on a full
    tmpfs): what fails later is reading it, and the cause to name is the disk."""
    dirs = {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
    monkeypatch.setattr(runner, "finish_notebook", _not_json)
    with pytest.raises(ValueError, match="does not appear to be JSON"):  # a bug stays a bug
        runner.reproduce(["slow"], **dirs)
    full = shutil._ntuple_diskusage(1 << 20, (1 << 20) - 4096, 4096)  # what a full disk reports
    monkeypatch.setattr(oserrors.shutil, "disk_usage", lambda path: full)
    [outcome] = runner.reproduce(["slow"], **dirs)
    assert outcome.status == "failed"
    assert outcome.error == (
        f"disk full (ENOSPC?): 4,096 bytes free on the file system of {dirs['runs_dir'] / 'smoke'} "
        "(ValueError: Notebook does not appear to be JSON: '{\\n \"cells\": [...'): free space on that "
        "file system (df -h) and run the same command again"
    )
    assert not list((dirs["runs_dir"] / "smoke").glob(".slow.staging-*"))


@pytest.fixture()
def tiny_disk(tmp_path):
    """A 200 KiB tmpfs filled to its last 8 KiB (only where this process may mount: root, Linux)."""
    where = tmp_path / "tiny"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(where)], capture_output=True
    )
    if os.geteuid() != 0 or mounted.returncode != 0:
        pytest.skip("a real full disk needs a tmpfs this process can mount")
    try:
        (where / "filler").write_bytes(b"\0" * (192 * 1024))
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.slow
def test_a_real_full_disk_is_named_and_the_summary_printed(nbs, tiny_disk, capsys):
    rc = cli.main(["reproduce", "-n", "slow", "--notebook-dir", str(nbs), "--runs-dir", str(tiny_disk)])
    out, err = capsys.readouterr()
    assert rc == 1 and "1 notebook(s) failed: slow" in err
    [line] = [x for x in out.splitlines() if x.startswith("    ")]  # the summary's error line
    assert line.lstrip().startswith("disk full (ENOSPC"), line
    assert "free space on that file system (df -h)" in line
    assert not list((tiny_disk / "smoke").glob(".slow.staging-*"))


def test_a_full_disk_in_the_caches_onnx_export_names_the_export(tmp_path, monkeypatch):
    """torch writes the ONNX graph through an open file, so its ENOSPC names no file; the error said the
    run's staging folder (gone by then) was full.  The cache's write names the entry it was making."""
    import traceback

    from temporag.retrieval import embed_onnx

    model, cache = tmp_path / "model", tmp_path / "cache"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights")

    def export(model_dir, out):  # half a graph written, then the disk is full
        with open(out, "wb") as f:
            f.write(b"half a graph")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    path = embed_onnx.export_path(model, "onnx", cache)
    monkeypatch.setattr(embed_onnx, "_export_fp32", export)
    with pytest.raises(OSError) as caught:
        embed_onnx.build_export(model, "onnx", cache)
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(path))
    text = "".join(traceback.format_exception(caught.value))  # what a cell's traceback quotes
    assert oserrors.from_text(text, tmp_path / "staging") == (
        f"disk full (ENOSPC) writing {path}: free space on that file system (df -h) and run the same "
        "command again"
    )
    assert not path.exists() and not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]


# A cell meets a full disk whose error names no file (a write on an open file).
FULL_UNNAMED = """
import errno, os
raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
"""


@pytest.mark.slow
def test_a_full_disk_naming_no_file_is_not_pinned_on_the_staging_folder(nbs, tmp_path, tmp_cache):
    tiny_notebook(nbs / "full.ipynb", 'profile = "smoke"\noutput_dir = None', FULL_UNNAMED)
    [outcome] = runner.reproduce(
        ["full"], notebook_dir=nbs, figures_dir=tmp_path / "figures", runs_dir=tmp_path / "runs"
    )
    folder = tmp_path / "runs" / "smoke" / "full"
    assert outcome.status == "failed"
    assert outcome.error.splitlines()[-1] == (
        f"disk full (ENOSPC) writing a file its error does not name (the run's folder: {folder}; the cache: "
        f"{tmp_cache}): free space on that file system (df -h) and run the same command again"
    )
    assert ".staging-" not in outcome.error.splitlines()[-1]
