"""The kit replaces a folder whole only when the kit made it: never ``.``, ``~/papers`` or a user's folder.

Publishing a run, ``temporag index --out`` and ``temporag book --out`` put a freshly built folder where the
old one was, deleting the old one.  A target given by a user (``-p output_dir=.``) once lost everything
in it that way.  So a target is replaced only when it is missing, empty, or carries the kit's mark:

* a run folder: the runner's stamp ``_run.json`` (:mod:`temporag.notebook.outputs` says which folders
  count, the committed figures/<paper>/ among them: git keeps no stamp there);
* an index or a book: the marker file :data:`MARKER` that :func:`put_in_place` writes into it (one built
  before the marker: its ``index.html`` naming the command that wrote it, :data:`SIGNATURES`).

Anything else is refused with one line naming the folder and the fix, before any work starts and again
just before the replacement.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

#: written into every index and book the kit builds: what says "the kit made this folder"
MARKER = ".temporag-made"
#: what the front page of an index or a book built before :data:`MARKER` existed says
SIGNATURES = ("by <code>temporag index</code>", "<h1>temporag: a reading-group book</h1>")


class NotKitFolder(ValueError):
    """A folder the kit would replace whole holds files the kit did not make (the message is one line
    with the fix; the runner reports it like a refused parameter, the command line exits 2)."""


def _empty(folder: Path) -> bool:
    return folder.is_dir() and not any(folder.iterdir())


def check_replaceable(folder: Path, kit_made: Callable[[Path], bool], mark: str, fix: str) -> None:
    """Raise :class:`NotKitFolder` unless ``folder`` is missing, an empty folder, or ``kit_made`` (its
    ``mark``, named in the message, with ``fix``: how to choose another)."""
    folder = Path(folder)
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_dir() and not folder.is_symlink() and (_empty(folder) or kit_made(folder)):
        return
    what = "a file" if not folder.is_dir() else f"a folder without {mark}"
    raise NotKitFolder(
        f"{folder} is {what}, so not one the kit made, and it would be replaced whole: it is left as it is "
        f"— {fix}, or empty or remove it yourself"
    )


def is_site(folder: Path) -> bool:
    """An index or a book the kit built: its :data:`MARKER`, or an older one's front page."""
    if (folder / MARKER).is_file():
        return True
    try:
        page = (folder / "index.html").read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return False
    return any(s in page for s in SIGNATURES)


def check_site(out: Path, option: str = "--out") -> None:
    """Where an index or a book goes: refused (one line) when it holds anything the kit did not make."""
    check_replaceable(out, is_site, f"the kit's marker {MARKER}", f"choose a new or empty folder ({option})")


def stage(out: Path) -> Path:
    """A fresh staging folder beside ``out`` for an index or a book, after checking ``out`` may be
    replaced (:func:`check_site`), so nothing is built for a target that would be refused."""
    out = Path(out)
    check_site(out)
    staging = out.with_name(f".{out.name}.building")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    return staging


def put_in_place(staging: Path, out: Path, made_by: str) -> None:
    """Mark a built site as the kit's and move it over ``out`` (checked again: it may have changed while
    the site was built)."""
    out = Path(out)
    mark = f"made by {made_by}; replaced whole by the next one\n"
    (Path(staging) / MARKER).write_text(mark, encoding="utf-8")
    check_site(out)
    if out.exists():
        shutil.rmtree(out)
    Path(staging).rename(out)
