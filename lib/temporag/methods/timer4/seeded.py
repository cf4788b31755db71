"""Reproducible training: the same seed gives the same weights, and the weights are named by their sha256.

On the CPU a training is deterministic once its data order, dropout and initialisation follow one seed,
torch uses its deterministic algorithms and the thread count is fixed: a float sum split over another
number of threads rounds differently (measured at TimeR4's smoke size: 1 and 2 threads give weights that
differ in their last bits, and the same losses to 5 decimals).  So every training runs on
``TRAIN_THREADS`` threads whatever ``TEMPORAG_THREADS`` says, and two trainings from an empty cache give
byte-identical weights on the same kind of machine.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from temporag.cache import MANIFEST, file_sha256
from temporag.methods import artifacts

TRAIN_THREADS = 2  # CPU threads of every training, whatever the machine has: the same bits everywhere


@contextlib.contextmanager
def deterministic(seed: int, threads: int = TRAIN_THREADS) -> Iterator[None]:
    """Seeded, deterministic torch on ``threads`` CPU threads for the block; the process's own thread
    count and algorithm setting come back afterwards (a notebook goes on embedding after training)."""
    import torch

    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # what CUDA's deterministic GEMMs need
    torch.manual_seed(seed)  # dropout masks and any freshly initialised weights (CUDA too)
    torch.set_num_threads(max(1, int(threads)))
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1])


def weights_sha256(folder: str | Path) -> str:
    """The sha256 of a saved model's weights (``model.safetensors``; of every weight file's digest when
    there are several), from the folder's manifest when it has one."""
    folder = Path(folder)
    try:
        recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = None
    names = sorted(p.name for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))
    if not isinstance(recorded, dict) or any(name not in recorded for name in names):
        recorded = {name: file_sha256(folder / name) for name in names}
    digests = {name: recorded[name] for name in names}
    return next(iter(digests.values())) if len(digests) == 1 else artifacts.digest(digests)
