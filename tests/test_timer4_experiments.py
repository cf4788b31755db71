"""TimeR4's notebook steps in ``experiments``: the names and values they record, the loss ablation's
rankings with and without the rerank, and the claims table's verdicts following from the numbers."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from temporag.methods.timer4 import experiments, record
from temporag.notebook.results import Results


def _metrics(results: Results) -> dict:
    return json.loads((results.dir / "results.json").read_text())["metrics"]


def _recall_frame(columns: dict[str, list[float]]) -> pd.DataFrame:
    """A recall_by_qtype-shaped frame: the 'all' row and two question types."""
    return pd.DataFrame(
        {
            "group": ["all", "qtype", "qtype"],
            "category": ["all", "equal", "first_last"],
            **columns,
        }
    )


class _Ranker:
    """A method whose ranking says which variant ran: its name, plus '+eq9' when reranked."""

    def __init__(self, name: str, rerank: str = "off"):
        self.name, self.rerank = name, rerank

    def retrieve(self, questions):
        tag = self.name + ("+eq9" if self.rerank == "eq9" else "")
        return SimpleNamespace(ids=[tag] * len(questions))

    def variant(self, rerank: str):
        return _Ranker(self.name, rerank)


def test_loss_variants_rerank_every_fine_tuned_model_but_not_the_base():
    ranked = experiments.rank_loss_variants(
        {"base model": _Ranker("base"), "softmax loss": _Ranker("soft")}, questions=[1, 2]
    )
    assert ranked == {
        "base model": ["base", "base"],
        "softmax loss": ["soft", "soft"],
        "softmax loss + rerank": ["soft+eq9", "soft+eq9"],
    }


def test_loss_ablation_records_the_all_row_of_each_ranking(results):
    frame = _recall_frame({"base model": [0.6, 0.5, 0.9], "softmax loss": [0.7, 0.8, 0.85]})
    record.loss_ablation(results, frame, ["base model", "softmax loss"], n=3, triples=1234)
    metrics = _metrics(results)
    assert metrics["loss_ablation/base model"]["value"] == pytest.approx(0.6)
    assert metrics["loss_ablation/softmax loss"]["value"] == pytest.approx(0.7)
    assert metrics["loss_ablation/softmax loss"]["triples"] == 1234


def test_candidate_union_is_every_triple_of_either_phrasing():
    class Store:
        triple_vectors = np.eye(10, dtype=np.float32)
        triple_ids = np.arange(100, 110)  # a restricted store answers in the KG's triple ids

    class Method:
        def question_vectors(self, store, texts):
            return np.stack([store.triple_vectors[int(t)] for t in texts])

    pool = experiments.candidate_union(Method(), Store(), [["1", "2"], ["2", "7"]], per_question=1)
    assert pool.tolist() == [101, 102, 107]
