"""The kit's notebooks as git keeps them: running one in JupyterLab leaves ``git status`` clean.

The notebooks in notebooks/ are kept in git without outputs (a run's executed copy lives beside its
results).  Run in JupyterLab and saved (autosave does it every two minutes), a notebook gains — measured
with JupyterLab 4.6 — outputs, execution counts, the kernelspec's display name "Python 3 (ipykernel)" and
the kernel's full ``language_info`` (version, lexer, mimetype ...); a cell collapsed or scrolled adds view
state, and JupyterLab writes a copy into ``.ipynb_checkpoints/`` (ignored by git).  ``make lab`` saves the
notebooks of notebooks/ through :func:`lab_pre_save`, which removes exactly those, so the file on disk is
the one in git unless its source was edited; the open notebook keeps showing its outputs until it is
reloaded.  Any other notebook (an executed copy under runs/, a notebook saved elsewhere) keeps its outputs.
This module needs only the standard library.
"""

from __future__ import annotations

import json
from typing import Any

NOTEBOOK_METADATA = ("kernelspec", "language_info")  # everything else at the top is a tool's state
VIEW_STATE = ("collapsed", "scrolled", "execution", "ExecuteTime", "jupyter")  # a cell's, in a session
PYTHON3 = {"display_name": "Python 3", "language": "python", "name": "python3"}


def strip(nb: dict[str, Any]) -> dict[str, Any]:
    """The notebook as the kit keeps it in git (a new dict; ``nb`` is not changed)."""
    nb = json.loads(json.dumps(nb))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        metadata = cell.get("metadata", {})
        for key in VIEW_STATE:
            metadata.pop(key, None)
    metadata = {k: v for k, v in nb.get("metadata", {}).items() if k in NOTEBOOK_METADATA}
    if "language_info" in metadata:
        metadata["language_info"] = {"name": metadata["language_info"].get("name", "python")}
    if metadata.get("kernelspec", {}).get("name") == "python3":
        metadata["kernelspec"] = dict(PYTHON3)
    nb["metadata"] = metadata
    return nb


def lab_pre_save(model: dict[str, Any], path: str, **_: Any) -> None:
    """JupyterLab's pre-save hook (``--ContentsManager.pre_save_hook``, set by ``make lab``): a notebook of
    notebooks/ is written as git keeps it; anything else is saved as it is."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    folder, _, name = path.strip("/").rpartition("/")
    if folder == "notebooks" and name.endswith(".ipynb"):
        model["content"] = strip(model["content"])


def clean(text: str) -> str:
    """A notebook file's text as git stores it: stripped, written as nbformat writes it."""
    try:
        nb = json.loads(text)
    except ValueError:
        return text
    if not isinstance(nb, dict) or "cells" not in nb:
        return text
    return json.dumps(strip(nb), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
