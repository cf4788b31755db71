"""What the kit keeps of an executed notebook: its long text outputs cut, and no folder of the machine
it ran on, so a committed run's notebook reads the same on any machine and stays a sensible size for git."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from temporag.config import REPO_ROOT, Settings, get_settings

log = logging.getLogger(__name__)


#: a text output of a committed run's executed notebook longer than this is cut (logs, progress bars,
#: long printed tables: the numbers are in results.json and tables.md); figures stay
MAX_TEXT_OUTPUT = 20_000
#: an executed notebook kept in git larger than this after cutting is reported (figures make most of it)
MAX_NOTEBOOK_BYTES = 8_000_000


def finish_notebook(path: Path, final_dir: Path, *, slim: bool = False) -> None:
    """A run's executed notebook as it is kept: its machine paths made portable
    (:func:`portable_notebook`, ``final_dir`` being the folder it is published in) and, for a committed
    run, its long text outputs cut (:func:`slim_notebook`)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    portable_notebook(nb, final_dir)
    drop_progress_bars(nb)
    nbformat.write(nb, path)
    if slim:
        slim_notebook(path)


def _is_progress_bar(out: dict) -> bool:
    """A progress bar's output: a tqdm widget, or text that is only carriage-return bar updates."""
    data = out.get("data") or {}
    if "application/vnd.jupyter.widget-view+json" in data:
        return True
    text = "".join(out.get("text", "")) if out.get("output_type") == "stream" else ""
    lines = [line for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return bool(lines) and all(re.search(r"\d+%\|.*\|", line) for line in lines)


def drop_progress_bars(nb) -> int:
    """Remove progress bars from an executed notebook (in place): kept, they show frozen at whatever state
    their widget last rendered (0 % in the book), which a reader cannot tell from a stuck run.  Returns
    how many were removed."""
    removed = 0
    for cell in nb.cells:
        kept = [out for out in cell.get("outputs", []) if not _is_progress_bar(out)]
        removed += len(cell.get("outputs", [])) - len(kept)
        if "outputs" in cell:
            cell["outputs"] = kept
    return removed


def slim_notebook(path: Path, max_text: int = MAX_TEXT_OUTPUT) -> int:
    """Cut an executed notebook's long text outputs and drop widget state, in place, so the executed copy
    of a committed run stays a sensible size for git; returns its size in bytes (a warning names a
    notebook still over :data:`MAX_NOTEBOOK_BYTES`)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = _cut("".join(out.get("text", "")), max_text)
            data = out.get("data") or {}
            data.pop("application/vnd.jupyter.widget-view+json", None)
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in data:
                    data[mime] = _cut("".join(data[mime]), max_text)
    nbformat.write(nb, path)
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_BYTES:
        log.warning("%s is %.1f MB after cutting long text outputs (figures?)", path, size / 1e6)
    return size


# -- an executed notebook without this machine's paths ---------------------------------------------

#: a path ending in a Python environment's package folder, whichever interpreter the kernel ran
_SITE_PACKAGES = r"(?:/[^\s/\"'`\\<>|:;,()\[\]{}]+)*?/(?:site|dist)-packages"
_PATH_START, _PATH_END = r"(?<![\w.~$-])", r"(?![\w-]|\.[\w-])"  # a whole path prefix, never a part of one


def portable_notebook(nb: dict, final_dir: Path, settings: Settings | None = None) -> dict:
    """Make an executed notebook readable on any machine, in place (returned too): papermill's
    ``input_path``, ``output_path`` and ``output_dir`` parameter (the runner's staging folder) become the
    repo-relative paths of the notebook and of the folder it is published in (``final_dir``; absolute
    only outside the repository), and in every text output, error and the injected parameters the
    repository root reads ``.``, the cache folder ``$TEMPORAG_CACHE``, the data folder ``$TEMPORAG_DATA``,
    a Python environment's package folder ``<site-packages>`` and the home folder ``~`` (the longest
    prefix first).  A committed run's notebook then shows no folder of the machine or checkout it ran in."""
    settings = settings or get_settings()
    papermill = nb.get("metadata", {}).get("papermill") or {}
    parameters = papermill.get("parameters") or {}
    ran_in = _checkout_of(papermill.get("input_path"))
    roots = [r for r in {REPO_ROOT, ran_in} if r is not None]
    final_dir = Path(final_dir)
    final = _repo_relative(final_dir, roots, settings)
    written_to = parameters.get("output_dir")  # the staging folder the kernel wrote into, absolute
    written_to = written_to if written_to and Path(written_to).is_absolute() else None  # (done already)
    final_text = _path_rewriter(roots, settings, {})(str(final_dir))  # ./figures/tecqa in a text
    rewrite = _path_rewriter(roots, settings, {written_to: final_text} if written_to else {})
    if papermill.get("input_path"):
        papermill["input_path"] = _repo_relative(Path(papermill["input_path"]), roots, settings)
    if papermill.get("output_path"):
        papermill["output_path"] = f"{final}/{Path(papermill['output_path']).name}"
    if written_to:
        parameters["output_dir"] = final
    for key, value in parameters.items():
        if key != "output_dir" and isinstance(value, str):
            parameters[key] = rewrite(value)
    for cell in nb.get("cells", []):
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            source = _text(cell.get("source", ""))
            cell["source"] = rewrite(source.replace(written_to, final) if written_to else source)
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = rewrite(_text(out["text"]))
            for mime, value in (out.get("data") or {}).items():
                if mime.startswith("text/"):
                    out["data"][mime] = rewrite(_text(value))
            if "evalue" in out:
                out["evalue"] = rewrite(str(out["evalue"]))
            if "traceback" in out:
                out["traceback"] = [rewrite(line) for line in out["traceback"]]
    return nb


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _checkout_of(notebook: str | None) -> Path | None:
    """The repository a notebook of its notebooks/ folder ran from (another checkout than this one, for a
    notebook executed elsewhere)."""
    path = Path(notebook) if notebook else None
    return path.parent.parent if path is not None and path.parent.name == "notebooks" else None


def _repo_relative(path: Path, roots: list[Path], settings: Settings) -> str:
    """``path`` relative to the repository it lies in (``figures/tecqa``), else its portable text."""
    for root in roots:
        if path.is_absolute() and path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return _path_rewriter(roots, settings, {})(str(path))


def _path_rewriter(roots: list[Path], settings: Settings, exact: dict[str, str]) -> Callable[[str], str]:
    """text → text with every machine folder named as it reads anywhere: an ``exact`` folder (a staging
    folder) as the text given for it, a Python environment's package folder as ``<site-packages>``, then
    each known folder by its longest prefix."""
    import re
    import site
    import sysconfig

    names: dict[str, str] = {}

    def name(folder, short: str) -> None:
        for form in (os.path.normpath(str(folder)), str(Path(folder).resolve())):
            if form != "/" and os.path.isabs(form) and form not in names:  # never a relative path
                names[form] = short

    for folder, short in exact.items():
        name(folder, short)
    name(settings.cache_dir, "$TEMPORAG_CACHE")
    name(settings.data_dir, "$TEMPORAG_DATA")
    paths = sysconfig.get_paths()
    for folder in (paths["purelib"], paths["platlib"], *site.getsitepackages()):
        name(folder, "<site-packages>")
    for root in roots:
        name(root, ".")
    name(Path.home(), "~")
    literal = "|".join(re.escape(p) for p in sorted(names, key=len, reverse=True))
    # an environment's package folder before any folder holding it (a virtualenv inside the checkout)
    pattern = re.compile(f"{_PATH_START}(?:(?P<site>{_SITE_PACKAGES})|{literal}){_PATH_END}")
    return lambda text: pattern.sub(
        lambda m: "<site-packages>" if m.group("site") else names[m.group(0)], text
    )


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (
        text[: limit // 2]
        + f"\n… [{len(text) - limit:,} characters cut to keep this notebook small] …\n"
        + (text[-(limit // 2) :])
    )
