"""The notebook harness: ``start()`` right after the parameters cell, parameter declarations, the Results
recorder, plots and output-folder rules.

``start`` is re-exported lazily: method packages import :mod:`temporag.notebook.params` for their
declarations, and that must not pull in the embedder and the LLM client that ``start`` needs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["start"]


def __getattr__(name: str) -> Any:
    if name == "start":
        from temporag.notebook.session import start  # lazy: keeps parameter declarations light

        globals()["start"] = start  # found once; the module is ``session``, so nothing rebinds the name
        return start
    raise AttributeError(f"module 'temporag.notebook' has no attribute {name!r}")
