"""No folder is deleted that the kit did not make: a run published into ``-p output_dir=<a user's folder>``,
``temporag index --out`` and ``temporag book --out`` replace their target only when it is missing, empty
or carries the kit's mark (a run stamp; the index / book marker); anything else is refused with one line
and left as it was.  No kernel starts: the refusal comes before any.
"""

from __future__ import annotations

import json

import pytest
from fakes import slow_dirs

from temporag import cli
from temporag.batch.index import build_index
from temporag.notebook import outputs, owned
from temporag.run.runner import reproduce


@pytest.fixture()
def dirs(tmp_path):
    return slow_dirs(tmp_path)


def _users_folder(path):
    (path / "thesis").mkdir(parents=True)
    (path / "thesis" / "chapter1.tex").write_text("my work")
    (path / "notes.txt").write_text("keep me")
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_a_run_into_a_users_folder_is_refused_before_any_kernel_starts(dirs, tmp_path):
    papers = tmp_path / "papers"
    before = _users_folder(papers)
    [outcome] = reproduce(["slow"], extra={"output_dir": str(papers)}, **dirs)
    assert outcome.status == "failed" and outcome.seconds == 0.0
    assert outcome.error == (
        f"{papers} is a folder without a run stamp (_run.json), so not one the kit made, and it would be "
        "replaced whole: it is left as it is — choose a new or empty output_dir (-p output_dir=...), or "
        "leave it unset (runs/<profile>/...), or empty or remove it yourself"
    )
    assert _files(papers) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "papers"]  # no staging, no lock


def test_the_command_line_refuses_output_dir_dot(dirs, tmp_path, monkeypatch, capsys):
    here = tmp_path / "project"
    before = _users_folder(here)
    monkeypatch.chdir(here)
    argv = ["reproduce", "-n", "slow", "--notebook-dir", str(dirs["notebook_dir"]), "-p", "output_dir=."]
    assert cli.main([*argv, "--runs-dir", str(dirs["runs_dir"])]) == 1
    out, err = capsys.readouterr()
    assert f"    {here} is a folder without a run stamp (_run.json)" in out  # the summary's error line
    assert _files(here) == before


def test_what_may_be_replaced(tmp_path):
    figures = tmp_path / "figures"
    missing, empty, stamped = tmp_path / "missing", tmp_path / "empty", tmp_path / "r"
    committed = figures / "tour"
    empty.mkdir()
    for folder in (stamped, committed):
        folder.mkdir(parents=True)
        (folder / "results.json").write_text("{}")
    (stamped / outputs.STAMP).write_text(json.dumps({"status": "ok"}))
    for folder in (missing, empty, stamped, committed):  # committed: figures/<paper>/, whose stamp git drops
        outputs.check_replaceable(folder, figures)
    file = tmp_path / "a-file"
    file.write_text("x")
    for refused in (file, figures, tmp_path / "r" / ".."):  # figures/ itself is not a run's folder
        with pytest.raises(owned.NotKitFolder, match="so not one the kit made"):
            outputs.check_replaceable(refused, figures)


def test_index_and_book_refuse_a_users_folder_and_replace_their_own(tmp_path, capsys):
    site = tmp_path / "site"
    before = _users_folder(site)
    runs = ["--runs-dir", str(tmp_path / "runs")]
    for command in ("index", "book"):
        assert cli.main([command, "--out", str(site), *runs]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"temporag: {site} is a folder without the kit's marker {owned.MARKER}, so not one the kit made, "
            "and it would be replaced whole: it is left as it is — choose a new or empty folder (--out), or "
            "empty or remove it yourself\n"
        )
        assert _files(site) == before
    assert not list(tmp_path.glob(".site.building"))  # refused before anything was built
    index = tmp_path / "index"
    kw = {"figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
    assert build_index(index, **kw) == index / "index.html"
    assert (index / owned.MARKER).is_file()
    (index / "stale.html").write_text("from the last build")
    build_index(index, **kw)  # the kit's own: replaced whole
    assert not (index / "stale.html").exists() and (index / "index.html").exists()
    (index / owned.MARKER).unlink()  # an index built before the marker: known by its front page
    build_index(index, **kw)
    assert (index / owned.MARKER).is_file()
