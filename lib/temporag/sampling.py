"""The kit's one seeded question sampler, shared by the notebook harness, the paper packages and the
leaderboard (a method package never imports the notebook harness to draw a sample)."""

from __future__ import annotations

import numpy as np


def stratified_sample(questions: list, n: int | None, rng: np.random.Generator, key: str = "qtype") -> list:
    """A seeded sample of exactly ``n`` questions that keeps each category's share (largest remainder)."""
    if n is None or n >= len(questions):
        return list(questions)
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(getattr(q, key, "all"), []).append(i)
    names = sorted(groups)
    exact = np.array([n * len(groups[g]) / len(questions) for g in names])
    quota = np.floor(exact).astype(int)
    for j in np.argsort(-(exact - quota), kind="stable")[: n - int(quota.sum())]:
        quota[j] += 1
    chosen = []
    for g, size in zip(names, quota):
        chosen.extend(rng.choice(np.asarray(groups[g]), size=int(size), replace=False).tolist())
    return [questions[i] for i in sorted(chosen)]
