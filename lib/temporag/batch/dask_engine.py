"""The distributed engine: a batch's jobs as tasks on a Dask distributed cluster.

Why Dask distributed (not Ray): it is pure Python on PyPI (dask + distributed ≈ 25 MB installed, no
daemons beyond a scheduler and ``dask worker`` processes), a worker is an ordinary process that may start
subprocesses, and a local cluster starts in seconds — see runbooks/batch-reproduction.md for the figures.

Each task is one job run exactly as the local engine runs it in parallel: a child process
(:func:`temporag.batch.jobs.run_in_child`) executing one notebook with papermill.  The child isolates
each job's environment, so a worker with several threads may run several jobs; its per-cell events are
forwarded to this process through the scheduler (``Worker.log_event`` → ``Client.subscribe_topic``) and
printed as the local engine prints them.

Where results land: every job writes the folder it would write locally (the job carries absolute paths,
so workers need the checkout and the data at the same paths — a shared file system, or the same image).
A worker that does not share this machine's file system sends the published folder back with its
outcome, and it is put in place here (:func:`adopt`), so the layout is the same either way.

Caches: ``worker_cache="shared"`` (default) — every worker uses its own ``TEMPORAG_CACHE``, which should
be one folder on a shared file system (or one machine); ``"local"`` — each worker keeps a cache of its
own, and LLM responses travel (see :mod:`temporag.batch.cachesync`).
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import socket
import tarfile
import tempfile
import time
from pathlib import Path

from temporag.batch import cachesync, local
from temporag.batch.jobs import Job, run_in_child
from temporag.batch.local import log_file, report
from temporag.config import get_settings
from temporag.notebook import outputs
from temporag.run import owned
from temporag.run.progress import Printer
from temporag.run.runner import RunOutcome

log = logging.getLogger(__name__)
TOPIC = "temporag-progress"
SHIP_LIMIT = 200 * 2**20  # a published folder larger than this stays on its worker


def _worker_log(job: Job) -> Path:
    path = log_file(job)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    except OSError:  # the driver's runs folder is not on this worker: keep the log locally
        return Path(tempfile.gettempdir()) / "temporag-logs" / path.name


def pack(folder: Path) -> bytes | None:
    """A published run folder as a gzipped tar (None when it is larger than ``SHIP_LIMIT``)."""
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    if size > SHIP_LIMIT:
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def _fingerprint(folder: Path) -> str | None:
    try:
        return json.loads((folder / "_run.json").read_text()).get("fingerprint")
    except (OSError, ValueError):
        return None


def adopt(out_dir: Path, payload: bytes, fingerprint: str, figures_dir: Path | None = None) -> bool:
    """Put a run folder sent by a worker in place, unless ``out_dir`` already holds that run (a shared
    file system, or this machine).  Staged and published like a local run, under the folder's lock.
    True when it was put in place."""
    out_dir = Path(out_dir)
    if _fingerprint(out_dir) == fingerprint:
        return False
    outputs.check_replaceable(out_dir, figures_dir)  # the worker checked its own copy of the path
    with outputs.hold(out_dir, wait_s=60):
        outputs.recover(out_dir)
        staging = outputs.staging_dir(out_dir)
        staging.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        outputs.publish(staging, out_dir)
    return True


def execute(job_json: str, index: int, worker_cache: str) -> dict:
    """The task a worker runs: one job in a child process; returns its outcome, where it ran, the
    published folder (to adopt where it is not shared) and, with per-worker caches, the LLM responses
    the job added."""
    from distributed import get_worker

    worker = get_worker()
    job = Job.from_json(job_json)
    worker.log_event(TOPIC, {"index": index, "event": "started", "worker": worker.address})
    t0 = time.time()
    outcome = run_in_child(job, _worker_log(job), lambda e: worker.log_event(TOPIC, {"index": index, **e}))
    result = {"outcome": outcome.to_dict(), "worker": worker.address, "host": socket.gethostname()}
    if outcome.status in ("ok", "incomplete") and outcome.output_dir is not None:  # both are published
        result["fingerprint"] = _fingerprint(outcome.output_dir)
        result["files"] = pack(outcome.output_dir)
    if worker_cache == "local":
        result["llm_rows"] = cachesync.rows_since(get_settings().cache_dir, t0 - 1.0)
    return result


def _cache_keys() -> set[str]:
    path = get_settings().cache_dir / cachesync.LLM_FILE
    return cachesync.llm_cache(get_settings().cache_dir).keys() if path.exists() else set()


def _add_rows(rows: list) -> int:
    return cachesync.llm_cache(get_settings().cache_dir).add_rows(rows)


def seed_workers(client, cache_dir: Path) -> dict[str, int]:
    """Give every worker the LLM responses of ``cache_dir`` it lacks; returns rows added per worker."""
    added = {}
    for address, keys in client.run(_cache_keys).items():
        rows = cachesync.missing_rows(cache_dir, keys)
        added[address] = client.run(_add_rows, rows, workers=[address])[address] if rows else 0
    return added


class SchedulerUnreachable(RuntimeError):
    """The Dask scheduler at ``--address`` did not answer (and only that: any other OS error a batch
    meets is a job's, named by the runner)."""


def _client(address: str | None, n_workers: int):
    from distributed import Client, LocalCluster

    if address:
        try:
            return Client(address, timeout="60s"), None
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
    cluster = LocalCluster(
        n_workers=max(1, n_workers),
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.WARNING,
    )
    return Client(cluster), cluster


def run_dask(
    jobs: list[Job],
    *,
    address: str | None = None,
    n_workers: int = 2,
    worker_cache: str = "shared",
    printer: Printer | None = None,
) -> list[RunOutcome]:
    """Run every job as a task on the cluster at ``address`` (default: a local cluster of ``n_workers``
    single-threaded workers); outcomes in job order."""
    from distributed import as_completed

    printer = printer or Printer(len(jobs))
    client, cluster = _client(address, n_workers)
    cache_dir = get_settings().cache_dir
    try:

        def on_event(event) -> None:
            _, msg = event
            index = msg["index"]
            if msg["event"] == "started":
                printer.line(index, jobs[index].label, f"started on {msg['worker']}")
            else:
                local.on_event(printer, index, jobs[index], msg)

        client.subscribe_topic(TOPIC, on_event)
        if worker_cache == "local":
            for worker, n in seed_workers(client, cache_dir).items():
                log.info("gave %d cached LLM responses to %s", n, worker)
        outcomes: list[RunOutcome | None] = [None if job.force else job.current() for job in jobs]
        for i, outcome in enumerate(outcomes):
            if outcome is not None:  # current here already: no task for it
                report(printer, i, jobs[i], outcome)
        tag = f"{os.getpid()}-{time.time_ns()}"
        futures = {
            client.submit(execute, job.to_json(), i, worker_cache, key=f"temporag-{i}-{tag}", pure=False): i
            for i, job in enumerate(jobs)
            if outcomes[i] is None
        }
        for future in as_completed(futures):
            i = futures[future]
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker or a task error fails this job only
                outcomes[i] = RunOutcome(
                    jobs[i].notebook, "failed", 0.0, None, f"{type(exc).__name__}: {exc}"
                )
                report(printer, i, jobs[i], outcomes[i])
                continue
            outcome = RunOutcome.from_dict(result["outcome"])
            if result.get("llm_rows"):
                cachesync.llm_cache(cache_dir).add_rows(result["llm_rows"])
            if result.get("files") and outcome.output_dir is not None:
                try:
                    figures = Path(jobs[i].figures_dir)
                    adopt(outcome.output_dir, result["files"], result["fingerprint"], figures)
                except owned.NotKitFolder as exc:  # this machine's folder of that name is not the kit's
                    outcome = dataclasses.replace(outcome, status="failed", error=str(exc))
            outcomes[i] = outcome
            report(printer, i, jobs[i], outcome)
        return [o for o in outcomes if o is not None]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
