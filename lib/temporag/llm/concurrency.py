"""Requests in flight at once for a served endpoint, with results in input order.

A batching server (vLLM, llama.cpp's server with parallel slots) answers dozens of requests in the time
of one; a client that sends one at a time leaves it idle.  :func:`ordered_map` keeps up to ``workers``
items in flight and returns their results in input order, so a concurrent run records exactly what a
sequential one does.  :class:`SingleFlight` makes two threads asking the same thing share one request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

from temporag.progress import tqdm

T = TypeVar("T")
R = TypeVar("R")

_local = threading.local()


def in_worker() -> bool:
    """True inside an :func:`ordered_map` worker: nested batches run in that worker, one item at a time
    (the outer map already keeps the server busy; nesting would multiply the requests in flight)."""
    return bool(getattr(_local, "worker", False))


def ordered_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    workers: int,
    progress: bool = True,
    desc: str = "",
    unit: str = "call",
    on_done: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``[fn(x) for x in items]`` with up to ``workers`` calls at once, in input order.

    The progress bar advances as items finish (tqdm shows the rate in ``unit``/s and the ETA).  An
    exception from ``fn`` stops items not yet started and is raised once the running ones finish (the
    first in input order), as a plain loop would raise it.  ``on_done(i, result)`` runs in the caller's
    thread as each item finishes."""
    items = list(items)
    workers = max(1, min(int(workers), len(items) or 1))
    bar = tqdm(total=len(items), desc=desc, disable=not progress, unit=unit, dynamic_ncols=True)
    try:
        if workers == 1 or in_worker():
            out = []
            for i, item in enumerate(items):
                result = fn(item)
                out.append(result)
                if on_done is not None:
                    on_done(i, result)
                bar.update()
            return out

        def run(item: T) -> R:
            _local.worker = True
            try:
                return fn(item)
            finally:
                _local.worker = False

        results: list[Any] = [None] * len(items)
        errors: dict[int, BaseException] = {}
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="temporag-llm") as pool:
            futures = {pool.submit(run, item): i for i, item in enumerate(items)}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    results[i] = future.result()
                except BaseException as exc:  # noqa: BLE001 - re-raised below, in input order
                    errors[i] = exc
                    for other in futures:
                        other.cancel()
                    continue
                if on_done is not None:
                    on_done(i, results[i])
                bar.update()
        if errors:
            raise errors[min(errors)]
        return results
    finally:
        bar.close()


class SingleFlight:
    """One request per key in flight in this process: a second thread asking for a key being computed
    waits for the first one's result instead of sending the request again (the cross-process half is
    the flock in :meth:`ResponseCache.claim`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, Future] = {}

    def do(self, key: str, fn: Callable[[], R]) -> tuple[R, bool]:
        """``(fn(), False)`` for the first caller of ``key``; ``(its result, True)`` for callers that
        arrived while it ran.  A failure is raised to every caller that waited for it."""
        with self._lock:
            future = self._calls.get(key)
            leader = future is None
            if leader:
                future = Future()
                self._calls[key] = future
        if not leader:
            return future.result(), True
        try:
            result = fn()
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result(result)
            return result, False
        finally:
            with self._lock:
                self._calls.pop(key, None)


FLIGHTS = SingleFlight()  # one per process: every client, every thread, model discovery and requests
