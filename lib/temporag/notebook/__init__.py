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
        from temporag.notebook.start import start  # lazy: keeps parameter declarations light

        # importing the submodule bound the package's ``start`` to the module: bind the function, so
        # ``from temporag.notebook import start`` gives the function (IMPORT_FROM reads the attribute)
        globals()["start"] = start
        return start
    raise AttributeError(f"module 'temporag.notebook' has no attribute {name!r}")
