"""One BLAS thread around a single query's matrix-vector products.

A product of one query vector with 10K–170K rows is too small to share between threads, and on a busy
machine OpenBLAS threads waiting for each other cost ~30 ms per call, more than the product itself.
"""

from __future__ import annotations

from typing import Any

_CONTROLLER: Any = None


def one_blas_thread() -> Any:
    """A context keeping BLAS on one thread (the library scan is done once per process)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
