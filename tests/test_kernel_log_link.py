"""The kernel log is never opened through a link someone planted where it goes: the run fails in one line
and the file the link points at is left as it was.  (The log lives in the run's own staging folder, so the
test puts the planted link where log_path says the log goes.)"""

from __future__ import annotations

from fakes import tiny_notebook

from temporag.run import kernel_log
from temporag.run.runner import reproduce


def test_a_link_planted_where_the_kernel_log_goes_is_not_followed(tmp_path, monkeypatch):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(nbs / "tour.ipynb", 'profile = "smoke"\noutput_dir = None', "pass")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    log = tmp_path / "planted" / ".kernel.log"
    log.parent.mkdir()
    log.symlink_to(victim)
    monkeypatch.setattr(kernel_log, "log_path", lambda folder: log)
    [outcome] = reproduce(
        ["tour"], notebook_dir=nbs, figures_dir=tmp_path / "figures", runs_dir=tmp_path / "runs"
    )
    assert victim.read_text() == "keep me"
    assert outcome.status == "failed" and "\n" not in outcome.error and str(log) in outcome.error
