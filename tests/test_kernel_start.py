"""TEMPORAG_KERNEL_START_TIMEOUT: on a machine loaded far past its cores a niced kernel can take more than
papermill's 60 s to start, and every notebook of a batch then failed before its first cell."""

from __future__ import annotations

import pytest
from fakes import tiny_notebook

from temporag.run import runner


@pytest.fixture()
def book(tmp_path, monkeypatch):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(nbs / "tecqa.ipynb", 'profile = "smoke"\noutput_dir = None')
    monkeypatch.setattr(runner, "RUNS_DIR", tmp_path / "runs")
    return nbs, tmp_path / "figures"


def test_default_is_papermills_and_the_setting_overrides_it(monkeypatch):
    monkeypatch.delenv("TEMPORAG_KERNEL_START_TIMEOUT", raising=False)
    assert runner.kernel_start_timeout() == 60
    monkeypatch.setenv("TEMPORAG_KERNEL_START_TIMEOUT", "600")
    assert runner.kernel_start_timeout() == 600
    for bad in ("0", "-5", "soon"):
        monkeypatch.setenv("TEMPORAG_KERNEL_START_TIMEOUT", bad)
        with pytest.raises(ValueError, match=f"TEMPORAG_KERNEL_START_TIMEOUT='{bad}' must be"):
            runner.kernel_start_timeout()


def test_the_runner_hands_it_to_papermill_and_a_bad_value_fails_only_that_run(book, monkeypatch):
    import papermill

    seen = []

    def fake_execute(source, target, **kwargs):
        seen.append(kwargs["start_timeout"])
        raise RuntimeError("Kernel didn't respond in 600 seconds")

    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    nbs, figs = book
    monkeypatch.setenv("TEMPORAG_KERNEL_START_TIMEOUT", "600")
    [outcome] = runner.reproduce(["tecqa"], profile="smoke", notebook_dir=nbs, figures_dir=figs)
    assert seen == [600.0] and outcome.status == "failed" and "600 seconds" in outcome.error
    monkeypatch.setenv("TEMPORAG_KERNEL_START_TIMEOUT", "soon")
    [outcome] = runner.reproduce(["tecqa"], profile="smoke", notebook_dir=nbs, figures_dir=figs, force=True)
    assert outcome.status == "failed" and "TEMPORAG_KERNEL_START_TIMEOUT='soon'" in outcome.error
    assert seen == [600.0]  # the bad value never reached papermill


def test_a_kernel_that_dies_while_starting_is_started_once_more(book, monkeypatch):
    import papermill

    real = papermill.execute_notebook
    calls = []

    def crash_once(source, target, **kwargs):
        calls.append(target)
        if len(calls) == 1:
            raise RuntimeError(runner.KERNEL_START_CRASH)
        return real(source, target, **kwargs)

    monkeypatch.setattr(papermill, "execute_notebook", crash_once)
    nbs, figs = book
    [outcome] = runner.reproduce(["tecqa"], profile="smoke", notebook_dir=nbs, figures_dir=figs)
    assert len(calls) == 2 and outcome.status == "ok", outcome.error
    assert outcome.executed.exists()

    def always_crash(source, target, **kwargs):
        calls.append(target)
        raise RuntimeError(runner.KERNEL_START_CRASH)

    monkeypatch.setattr(papermill, "execute_notebook", always_crash)
    [outcome] = runner.reproduce(["tecqa"], profile="smoke", notebook_dir=nbs, figures_dir=figs, force=True)
    assert len(calls) == 4 and outcome.status == "failed" and runner.KERNEL_START_CRASH in outcome.error
