"""The one BLAS-thread guard (TimeR4's store and SAR's name search share it)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from temporag.retrieval.blas import one_blas_thread


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_one_blas_thread_inside_and_the_outer_limit_back_after():
    np.ones((4, 4)) @ np.ones(4)  # BLAS loaded
    if not _blas_threads():
        pytest.skip("numpy has no BLAS threadpoolctl can see")
    with threadpool_limits(limits=2, user_api="blas"):
        outer = _blas_threads()
        with one_blas_thread():
            assert _blas_threads() == {1}
        assert _blas_threads() == outer
        with one_blas_thread():  # the second use reuses the scanned controller
            assert _blas_threads() == {1}
