"""Where a run's outputs go, and the rules that keep a results folder honest.

* ``figures/<paper>/`` holds the committed paper-profile run on the notebook's own (shared) question set,
  and nothing else: a smoke run, or a run on another question file or split, goes to
  ``runs/<profile>[-<question set>]/<paper>/`` (ignored by git), and may not be pointed into
  ``figures/`` either.  ``output_dir`` (``-p output_dir=...``) chooses any other folder.
* Those folders are published by the runner (``temporag reproduce``) only.  A notebook run outside it
  (JupyterLab, plain ``papermill``) writes to ``runs/interactive/<paper>/`` unless given an
  ``output_dir``, and may not write into ``figures/`` or a folder holding a run stamp (``_run.json``), so
  changing a parameter and re-running a cell never mixes its numbers into a published run.
* A folder is written by one run at a time: :func:`hold` takes an exclusive ``flock`` on a lock file
  beside it (the kernel releases it when its holder dies, so a killed run never blocks the next one).
* The runner writes into a staging folder beside the target and moves it into place only when the run
  finished (:func:`publish`), so a folder holds the last complete run or nothing new.
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import logging
import os
import re
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from temporag.cache import content_hash, file_sha256, lock_fd, unlock_fd
from temporag.config import REPO_ROOT
from temporag.methods.registry import output_name
from temporag.notebook.params import ParameterError
from temporag.redact import redact_text
from temporag.run import owned

log = logging.getLogger(__name__)
FIGURES_DIR = REPO_ROOT / "figures"
RUNS_DIR = REPO_ROOT / "runs"
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
ENV_STAGING = "TEMPORAG_OUTPUT_STAGING"  # set by the runner: the folder a notebook really writes to
ENV_FINAL = "TEMPORAG_OUTPUT_FINAL"  # ... and the folder it will be published as
INTERACTIVE = "interactive"  # runs/interactive/<paper>/: notebook runs outside the runner
STAMP = "_run.json"  # the runner's stamp in a folder it published


class OutputLocked(RuntimeError):
    """Another run is writing the same output folder."""


def notebook_path(name: str, notebook_dir: Path | None = None) -> Path | None:
    """The notebook whose outputs are called ``name`` ('tour' → notebooks/00_tour.ipynb), if any."""
    folder = notebook_dir or NOTEBOOK_DIR
    for path in sorted(folder.glob("*.ipynb")):
        if path.stem == name or output_name(path.stem) == name:
            return path
    return None


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """Names and default values of a notebook's ``parameters`` cell (a value that is not a literal is
    reported as its source text)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        return {}
    out: dict[str, Any] = {}
    for node in ast.parse(cells[0].source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name, value in _named_values(target, node.value):
                    try:
                        out[name] = ast.literal_eval(value)
                    except ValueError:
                        out[name] = ast.unparse(value)
    return out


def _named_values(target: ast.expr, value: ast.expr | None) -> list[tuple[str, ast.expr]]:
    """``a = 1`` and paired knobs on one line, ``a, b = 1, 2``, as (name, value node) pairs."""
    if value is None:
        return []
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [pair for t, v in zip(target.elts, value.elts) for pair in _named_values(t, v)]
    return []


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "x"


def question_set_tag(params: dict[str, Any], defaults: dict[str, Any] | None = None) -> str | None:
    """None when a run uses the notebook's own question set; else a folder-safe name for the set used
    (a question file: its name and the first 8 hex of its sha256; another split: ``split-<name>``)."""
    questions_file = params.get("questions_file")
    if questions_file:
        path = Path(questions_file).expanduser()
        digest = file_sha256(path)[:8] if path.is_file() else content_hash(str(path))[:8]
        return f"{_slug(path.name.split('.')[0])}-{digest}"
    split = params.get("split")
    if split is not None and split != (defaults or {}).get("split", split):
        return f"split-{_slug(str(split))}"
    return None


def is_committed_run(params: dict[str, Any], defaults: dict[str, Any] | None = None) -> bool:
    """The paper profile on the notebook's own question set: the only run that belongs in figures/."""
    return params.get("profile", "smoke") == "paper" and question_set_tag(params, defaults) is None


def default_output_dir(
    name: str,
    params: dict[str, Any],
    defaults: dict[str, Any] | None = None,
    figures_dir: Path | None = None,
    runs_dir: Path | None = None,
) -> Path:
    """figures/<paper>/ for the committed run, runs/<profile>[-<question set>]/<paper>/ otherwise."""
    figures_dir, runs_dir = figures_dir or FIGURES_DIR, runs_dir or RUNS_DIR
    folder = output_name(name)
    if is_committed_run(params, defaults):
        return figures_dir / folder
    tag = question_set_tag(params, defaults)
    profile = _slug(str(params.get("profile", "smoke")))
    return runs_dir / (profile if tag is None else f"{profile}-{tag}") / folder


def interactive_output_dir(name: str, runs_dir: Path | None = None) -> Path:
    """runs/interactive/<paper>/: where a notebook run outside the runner writes by default, beside (never
    over) the runs ``temporag reproduce`` publishes."""
    return (runs_dir or RUNS_DIR) / INTERACTIVE / output_name(name)


def check_unpublished(out_dir: Path, figures_dir: Path | None = None) -> None:
    """Outside the runner, refuse a folder the runner publishes into: anything under figures/, or a folder
    holding a run stamp.  Writing there would leave the stamp describing numbers the folder no longer
    holds (the runner notices and re-runs, but the folder is wrong until then)."""
    out_dir = Path(out_dir)
    try:
        in_figures = out_dir.resolve().is_relative_to(Path(figures_dir or FIGURES_DIR).resolve())
    except OSError:
        in_figures = False
    if in_figures or (out_dir / STAMP).exists():
        what = "is inside figures/, which" if in_figures else f"holds a run stamp ({STAMP}): it"
        raise ParameterError(
            f"output_dir {out_dir} {what} is published by `temporag reproduce` only; a notebook run outside "
            "it (JupyterLab, plain papermill) writes to runs/interactive/<paper>/ when output_dir is unset "
            "— leave output_dir unset or choose another folder, or re-run with `temporag reproduce`"
        )


def check_output_dir(
    out_dir: Path,
    params: dict[str, Any],
    defaults: dict[str, Any] | None = None,
    figures_dir: Path = FIGURES_DIR,
) -> None:
    """Refuse to let anything but the committed run write under figures/ (one line, with the fix)."""
    try:
        inside = Path(out_dir).resolve().is_relative_to(Path(figures_dir).resolve())
    except OSError:
        inside = False
    if inside and not is_committed_run(params, defaults):
        what = (
            f"a {params.get('profile', 'smoke')} run"
            if question_set_tag(params, defaults) is None
            else "a run on another question set"
        )
        raise ParameterError(
            f"output_dir {out_dir} is inside {figures_dir}, which holds only the committed paper-profile "
            f"runs; {what} cannot write there — choose another output_dir, or leave it unset "
            "(runs/<profile>/... by default)"
        )


def check_replaceable(out_dir: Path, figures_dir: Path | None = None) -> None:
    """Refuse (one line, :class:`temporag.run.owned.NotKitFolder`) an output folder that publishing would
    replace although the kit did not make it: one that exists, is not empty, and holds no run stamp —
    ``-p output_dir=.`` or ``~/papers``.  A committed run's folder, directly under figures/, is the kit's
    even without its stamp (git does not keep it)."""
    figures = Path(figures_dir or FIGURES_DIR).resolve()
    owned.check_replaceable(
        out_dir,
        lambda folder: (folder / STAMP).is_file() or folder.resolve().parent == figures,
        f"a run stamp ({STAMP})",
        "choose a new or empty output_dir (-p output_dir=...), or leave it unset (runs/<profile>/...)",
    )


# -- one writer per folder ---------------------------------------------------------------------------

_HELD: dict[str, tuple[Path, int]] = {}  # folder -> (lock file, fd) of the lock this process holds on it


def lock_path(out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    return out_dir.parent / f".{out_dir.name}.lock"


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text())
        return f"pid {info['pid']} since {info['since']}: {info['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def acquire(out_dir: Path, wait_s: float = 0.0) -> None:
    """Take the folder's lock for this process (re-entrant); raise :class:`OutputLocked` naming the
    holder if it is still held after ``wait_s`` seconds."""
    out_dir = Path(out_dir)
    key = str(out_dir.resolve())
    if key in _HELD:
        return
    path = lock_path(out_dir)
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        fd = lock_fd(path, block=False)  # the file is removed on release: see release()
        if fd is not None:
            break
        if time.monotonic() >= deadline:
            holder = _holder(path)
            raise OutputLocked(
                f"{out_dir} is being written by another run ({holder}); wait for it to finish "
                "(`temporag reproduce --wait SECONDS` waits), or choose another output_dir "
                "(a Jupyter kernel that ran this notebook holds its folder until it is shut down)"
            ) from None
        time.sleep(0.2)
    info = {
        "pid": os.getpid(),
        "since": _dt.datetime.now().isoformat(timespec="seconds"),
        "command": redact_text(" ".join(sys.argv))[:300] or sys.executable,  # no key a -p or URL held
    }
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps(info).encode())
    _HELD[key] = (path, fd)


def release(out_dir: Path) -> None:
    """Give the folder's lock back and remove its file (nothing is left beside the folder)."""
    held = _HELD.pop(str(Path(out_dir).resolve()), None)
    if held is not None:
        unlock_fd(*held)


@contextmanager
def hold(out_dir: Path, wait_s: float = 0.0) -> Iterator[None]:
    """The folder's lock for the duration of a ``with`` block."""
    already = str(Path(out_dir).resolve()) in _HELD
    acquire(out_dir, wait_s)
    try:
        yield
    finally:
        if not already:
            release(out_dir)


# -- staging and publishing -------------------------------------------------------------------------


def staging_dir(out_dir: Path) -> Path:
    return out_dir.parent / f".{out_dir.name}.staging-{os.getpid()}"


def failed_dir(out_dir: Path) -> Path:
    return out_dir.parent / f".{out_dir.name}.failed"


def recover(out_dir: Path) -> None:
    """Tidy what a killed run left beside ``out_dir`` (call it holding the lock): staging folders whose
    process is gone are removed, and a publish cut between its two renames is completed backwards (the
    old run is put back), so the folder again holds the last complete run."""
    out_dir = Path(out_dir)
    if not out_dir.parent.exists():
        return
    for stale in out_dir.parent.glob(f".{out_dir.name}.staging-*"):
        pid = _pid_of(stale)
        if pid is None or pid == os.getpid() or not pid_alive(pid):  # a live one: another machine's?
            shutil.rmtree(stale, ignore_errors=True)
    olds = sorted(out_dir.parent.glob(f".{out_dir.name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not out_dir.exists():
        os.replace(olds.pop(), out_dir)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def _pid_of(staging: Path) -> int | None:
    try:
        return int(staging.name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process that ended but was not waited for (state Z or X in /proc/<pid>/stat): signal 0 still
    reaches it, yet it runs nothing any more, so what it left is as dead as a killed run's."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["Z"], ["X"])


def sweep_stale(out_dir: Path) -> list[Path]:
    """Remove the staging folders beside ``out_dir`` whose process is gone (``kill -9``, a full disk),
    and only while no run holds the folder: a batch that finds the run current takes no lock, so
    :func:`recover` alone never saw them.  Returns the folders removed."""
    out_dir = Path(out_dir)
    stale = [
        p
        for p in out_dir.parent.glob(f".{out_dir.name}.staging-*")
        if (pid := _pid_of(p)) is not None and pid != os.getpid() and not pid_alive(pid)
    ]
    if not stale:
        return []
    try:
        with hold(out_dir):  # at once or not at all: a run holding the folder tidies it itself
            for folder in stale:
                shutil.rmtree(folder, ignore_errors=True)
    except (OutputLocked, OSError):
        return []
    log.info("removed %d staging folder(s) left by processes that are gone: %s", len(stale), stale)
    return stale


#: what a run leaves beside its folder while it runs (and a killed one after): staging folders, its lock
#: file, and an older kit's kernel log
_LEFT = re.compile(r"\.(?P<name>.+?)\.(?:staging-\d+|lock|kernel\.log)")


def sweep_dead(folders: Iterable[Path]) -> list[Path]:
    """Remove, in each of ``folders``, what runs that are gone left beside their output folders: staging
    folders of dead processes (zombies count as dead), lock files no process holds and an older kit's
    ``.<name>.kernel.log``.  A live run's are never touched (its lock is held).  Returns what was removed."""
    removed: list[Path] = []
    for parent in dict.fromkeys(Path(f) for f in folders):
        try:
            names = sorted({m["name"] for p in parent.glob(".*") if (m := _LEFT.fullmatch(p.name))})
        except OSError:
            continue
        for name in names:
            out_dir = parent / name
            if str(out_dir.resolve()) in _HELD:  # this process's own run tidies its folder itself
                continue
            loose = [p for p in (lock_path(out_dir), parent / f".{name}.kernel.log") if p.exists()]
            removed += sweep_stale(out_dir)
            if not loose:
                continue
            try:
                with hold(out_dir):  # free: its holder is gone; releasing removes the lock file
                    (parent / f".{name}.kernel.log").unlink(missing_ok=True)
            except (OutputLocked, OSError):
                continue
            removed += loose
    if removed:
        log.info("removed what runs that are gone left: %s", ", ".join(map(str, removed)))
    return removed


def sweep_runs(out_dir: Path, figures_dir: Path, runs_dir: Path) -> list[Path]:
    """:func:`sweep_dead` where runs publish: beside ``out_dir``, in figures/ and in every folder of
    runs/ — called by every run, so a killed run's leftovers do not wait for the next run of its folder."""
    runs_dir = Path(runs_dir)
    try:
        profiles = [p for p in runs_dir.iterdir() if p.is_dir()] if runs_dir.is_dir() else []
    except OSError:
        profiles = []
    return sweep_dead([Path(out_dir).parent, Path(figures_dir), runs_dir, *profiles])


def publish(staging: Path, out_dir: Path) -> None:
    """Move a finished run's staging folder into place, replacing the previous run."""
    out_dir = Path(out_dir)
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    if out_dir.exists():
        os.replace(out_dir, old)
    os.replace(staging, out_dir)
    shutil.rmtree(old, ignore_errors=True)


def keep_failed(staging: Path, out_dir: Path) -> Path:
    """Keep a failed run's outputs for inspection beside (never in) ``out_dir``."""
    target = failed_dir(out_dir)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    return target


def final_dir_for(out_dir: Path) -> Path:
    """The folder a run's outputs will be published as: the runner's target when ``out_dir`` is its
    staging folder, else ``out_dir`` itself."""
    staging, final = os.environ.get(ENV_STAGING), os.environ.get(ENV_FINAL)
    if staging and final and Path(out_dir).resolve() == Path(staging).resolve():
        return Path(final)
    return Path(out_dir)
