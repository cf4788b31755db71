"""The BM25 baseline's numbers: answer recall@k overall and per question type, with 95% intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate


def recall_table(questions: Sequence, recall: dict[int, np.ndarray], seed: int = 0) -> pd.DataFrame:
    """One row per (k, category): the mean recall and its bootstrap interval."""
    frames = []
    for k, values in recall.items():
        frame = evaluate.breakdown(questions, values, by=["qlabel", "qtype"], seed=seed)
        frame.insert(0, "k", k)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
