"""Parameter grids: a small TOML file expanded into batch jobs, one output folder per parameter set.

```toml
name = "readers"                    # optional: runs/grid/<name>/ (default: the file's name)

[[run]]
notebooks = ["00_tour", "tecqa"]
profile = ["smoke", "paper"]        # every other key is a notebook parameter;
llm_model = ["qwen2.5-7b", "llama3.1-8b", "mistral-7b"]   # a list is a set of alternatives

[[run]]
notebooks = ["tecqa"]
K = [10, 20, 40]
ks = [[1, 5, 10]]                   # a parameter whose value is a list: a list of one list
```

Each ``[[run]]`` block is the product of its lists, for each of its notebooks.  A run's folder is named by
its parameters — ``runs/grid/readers/tecqa/paper-llm_model=qwen2.5-7b/`` — so the same parameter set always
lands in the same folder, and the runner skips it while its fingerprint is unchanged.  Grid runs never write
to ``figures/`` (that folder holds the committed paper-profile runs).  The whole file is checked before
any job starts: a TOML error, an unknown notebook, a parameter a notebook does not declare or a value
outside its range is one error naming the file, the block's line and the fix.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path
from typing import Any

from temporag.batch.jobs import Job, label_for
from temporag.cache import content_hash
from temporag.notebook import outputs
from temporag.notebook.params import ParameterError, check_given
from temporag.redact import is_secret_name

RESERVED = {"notebooks", "output_dir"}
#: parameters a grid may not set: where the prompts (and the key) go is the user's own setting
ENDPOINT_KEYS = {"llm_base_url"}
MAX_FOLDER = 100
MAX_VALUE = 32


class GridError(ValueError):
    """A grid file that cannot be expanded; the message names the file, the place and the fix."""


def _block_lines(text: str) -> list[int]:
    """Line numbers (1-based) of the ``[[run]]`` headers, to point errors at a block."""
    return [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*run\s*\]\]", line)]


def _alternatives(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _slug(value: Any) -> str:
    """A value as folder-name text; a long one (a URL, a path) is cut and ends in a hash of the whole."""
    text = value if isinstance(value, str) else repr(value)
    slug = re.sub(r"[^A-Za-z0-9_.=+-]+", "-", str(text)).strip("-.") or "x"
    return slug if len(slug) <= MAX_VALUE else slug[: MAX_VALUE - 9] + "~" + content_hash(text)[:8]


def folder_name(parameters: dict[str, Any]) -> str:
    """``<profile>[-<key>=<value>...]`` for a run's parameters; too long a name ends in a hash instead."""
    rest = [f"{k}={_slug(v)}" for k, v in parameters.items() if k != "profile"]
    name = "-".join([_slug(parameters.get("profile", "smoke")), *rest])
    if len(name) > MAX_FOLDER:
        name = name[: MAX_FOLDER - 17].rstrip("-") + "-" + content_hash(parameters)
    return name


def load(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GridError(f"grid file {path}: cannot read it ({exc.strerror})") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"grid file {path} is not valid TOML: {exc}") from exc
    data["_lines"] = _block_lines(text)
    return data


def expand(
    path: str | Path,
    *,
    notebook_dir: Path,
    figures_dir: Path,
    runs_dir: Path,
    force: bool = False,
    kernel: str | None = None,
    wait_s: float = 0.0,
) -> list[Job]:
    """Every job of the grid file at ``path``, checked, in file order (duplicates once)."""
    path = Path(path)
    data = load(path)
    lines = data.pop("_lines")
    unknown_top = sorted(set(data) - {"name", "run"})
    if unknown_top:
        raise GridError(
            f"grid file {path}: unknown top-level key(s) {unknown_top}; parameters go in [[run]] blocks "
            "(a top level holds only `name`)"
        )
    blocks = data.get("run")
    if not isinstance(blocks, list) or not blocks:
        raise GridError(
            f"grid file {path}: no [[run]] block; add one with `notebooks = [...]` and parameters"
        )
    name = _slug(data.get("name") or path.stem)
    root = Path(runs_dir) / "grid" / name
    available = {p.stem for p in Path(notebook_dir).glob("*.ipynb")}
    jobs: dict[str, Job] = {}
    for number, block in enumerate(blocks, 1):
        where = f"grid file {path}, [[run]] block {number}" + (
            f" (line {lines[number - 1]})" if number <= len(lines) else ""
        )
        for job in _block_jobs(block, where, root, available, notebook_dir, figures_dir, runs_dir):
            jobs.setdefault(str(job.parameters["output_dir"]), job)  # a run listed twice runs once
    return [Job(**{**j.__dict__, "force": force, "kernel": kernel, "wait_s": wait_s}) for j in jobs.values()]


def _block_jobs(block, where, root, available, notebook_dir, figures_dir, runs_dir) -> list[Job]:
    notebooks = block.get("notebooks")
    if isinstance(notebooks, str):
        notebooks = [notebooks]
    if not notebooks or not all(isinstance(n, str) for n in notebooks):
        raise GridError(f'{where}: `notebooks` must list notebook names, e.g. notebooks = ["tecqa"]')
    missing = [n for n in notebooks if n not in available]
    if missing:
        raise GridError(f"{where}: no such notebook(s) {missing}; available: {sorted(available)}")
    if "output_dir" in block:
        raise GridError(
            f"{where}: `output_dir` cannot be set in a grid (each run's folder is named by its "
            "parameters under runs/grid/<name>/); remove it"
        )
    refused = [k for k in block if k in ENDPOINT_KEYS or is_secret_name(k)]
    if refused:
        raise GridError(
            f"{where}: `{refused[0]}` cannot be set in a grid (a shared grid must not choose where your "
            "prompts and key go); remove it and set TEMPORAG_LLM_BASE_URL / TEMPORAG_LLM_API_KEY yourself"
        )
    keys = [k for k in block if k not in RESERVED]
    keys = ["profile"] + [k for k in keys if k != "profile"]
    choices = [_alternatives(block.get("profile", "smoke"))] + [_alternatives(block[k]) for k in keys[1:]]
    if any(not c for c in choices):
        raise GridError(f"{where}: an empty list of alternatives; give at least one value")
    varying = [k for k, c in zip(keys, choices) if len(c) > 1]
    jobs = []
    for notebook in notebooks:
        declared = outputs.declared_parameters(Path(notebook_dir) / f"{notebook}.ipynb")
        for combo in itertools.product(*choices):
            parameters = dict(zip(keys, combo))
            try:
                check_given(notebook, parameters, declared)
            except ParameterError as exc:
                raise GridError(f"{where}: {exc}") from None
            out = root / outputs.output_name(notebook) / folder_name(parameters)
            jobs.append(
                Job(
                    notebook=notebook,
                    parameters={**parameters, "output_dir": str(out)},
                    label=label_for(notebook, parameters, varying),
                    notebook_dir=str(notebook_dir),
                    figures_dir=str(figures_dir),
                    runs_dir=str(runs_dir),
                )
            )
    return jobs
