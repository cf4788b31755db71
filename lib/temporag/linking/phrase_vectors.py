"""Embeddings of linked phrases, each distinct phrase encoded once per linker or grounder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def encode_memo(encoder, texts: Sequence[str], memo: dict[str, np.ndarray]) -> np.ndarray:
    """Embed texts, each distinct text once per ``memo``: a held-out check re-grounds the same phrases
    under several settings, and the cued and uncued scores share one embedding."""
    todo = list(dict.fromkeys(t for t in texts if t not in memo))
    if todo:
        memo.update(zip(todo, encoder.encode(todo, progress=False)))
    if not len(texts):
        return np.zeros((0, encoder.dim), dtype=np.float32)
    return np.stack([memo[t] for t in texts])
