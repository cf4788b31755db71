"""Execute every notebook in its smoke profile (papermill) and check its stages by counts and ranges.

Like graphrag's notebook tests: any error output fails; LLM text is never compared, only the
numbers each stage must produce.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _metric(data: dict, key: str):
    value = data["metrics"][key]
    return value["value"] if isinstance(value, dict) and "value" in value else value


def _check_tour(data: dict) -> None:
    assert _metric(data, "kg/facts") == 461_329
    assert _metric(data, "kg/entities") == 10_488
    for k in (1, 5, 10, 20, 50):
        assert 0.0 < _metric(data, f"semantic/answer_recall@{k}") <= 1.0
    assert _metric(data, "semantic/answer_recall@1") <= _metric(data, "semantic/answer_recall@50")
    assert 0.0 <= _metric(data, "semantic_reader/hits@1_strict") <= 1.0
    assert len(data["predictions"]["semantic"]) == data["parameters"]["sample_size"]
    assert {"semantic_recall_at_k", "question_types"} <= set(data["figures"])


def _check_tecqa(data: dict) -> None:
    # smoke sample of 40: the structure-guided subgraph must keep most answers, pruning most of it
    assert 0.8 <= _metric(data, "subgraph/answer_recall") <= 1.0
    assert 0.7 <= _metric(data, "chain/answer_recall") <= _metric(data, "subgraph/answer_recall")
    assert 0 < _metric(data, "chain/avg_facts") < _metric(data, "subgraph/size_mean")
    assert _metric(data, "fig2/tecqa_recall@20") > _metric(data, "fig2/semantic_recall@20")
    assert _metric(data, "parser/offline/main_entity_acc") >= 0.9
    assert {"fig2_recall_at_20", "fig4_sensitivity", "fig5_integrity", "subgraph_sizes"} <= set(
        data["figures"]
    )


def _check_star_rag(data: dict) -> None:
    # the rule graph is built on the full KG in every profile, so its sizes are exact
    assert _metric(data, "labels/frequent_subsets") == 1001
    assert _metric(data, "rule_graph/rule_nodes") == 47_631
    sel, cand = (
        _metric(data, "rule_graph/selected_edges"),
        _metric(data, "rule_graph/candidate_edges_with_spans"),
    )
    assert 10_000 < sel < cand < _metric(data, "rule_graph/hamming1_pairs")
    assert 0 < _metric(data, "rule_graph/L_after_bits") < _metric(data, "rule_graph/L_before_bits")
    recall = {
        m: _metric(data, f"answer_recall@10/{m}")
        for m in ("STAR-RAG", "STAR-RAG-no-rule", "STAR-RAG-uniform")
    }
    assert all(0.3 <= r <= 1.0 for r in recall.values()), recall
    assert 0.0 <= _metric(data, "retrieval/share_identical_to_no_rule") <= 1.0
    grid = _metric(data, "fig5/answer_recall_grid")
    assert len(grid) == 4 and all(len(row) == 4 for row in grid)
    assert grid[-1][-1] >= grid[0][0]  # K1 = K2 = 40 returns more events than K1 = K2 = 5
    for name in ("STAR-RAG", "STAR-RAG-no-rule"):
        assert (
            0.0
            <= _metric(data, f"table2/MultiTQ/{name}/hits@1")
            <= _metric(data, f"table2/MultiTQ/{name}/hits@10")
        )
        assert _metric(data, f"fig3/{name}/tokens_per_question") > 100
    variants = [k for k in data["metrics"] if k.startswith("code_variants/")]
    assert len(variants) == 3, variants
    assert {"paper_vs_released_code", "mdl_null_window", "table2_multitq", "table4_ablations"} <= set(
        data["tables"]
    )
    assert {"rule_graph_anatomy", "rule_graph_neighbourhood", "fig5_k1_k2_recall", "mdl_trace"} <= set(
        data["figures"]
    )


def _check_ia_rag(data: dict) -> None:
    datasets = data["parameters"]["datasets"]
    assert set(datasets) == {"TimeQA", "TempReason", "ComplexTR"}
    for ds in datasets:
        assert _metric(data, f"graph/{ds}/ieus") > 50
        assert _metric(data, f"tightening/{ds}/narrowed") >= 0
        assert data["metrics"][f"tightening/{ds}/narrowed"]["widened"] == 0  # Eq. 5 never widens
        for method in ("IA-RAG", "Vanilla RAG (chunks, top-2)"):
            assert 0.0 <= _metric(data, f"retrieval_recall/{ds}/{method}") <= 1.0
        for row in ("IA-RAG", "Vanilla RAG"):
            acc = _metric(data, f"table2/{ds}/{row}/accuracy")
            rec = _metric(data, f"table2/{ds}/{row}/recall")
            assert 0.0 <= acc <= rec <= 1.0
        # w/o IA keeps only the seeds: the traversal can only add evidence
        seeds = _metric(data, f"ablation/{ds}/w/o IA (tokens)")
        assert seeds <= _metric(data, f"ablation/{ds}/IA-RAG (tokens)")
    relations = [k for k in data["metrics"] if k.startswith("fig4/")]
    assert len(relations) == 8 * len(datasets)
    assert sum(_metric(data, k) for k in relations if "unbounded" not in k) > 0
    assert {"table2", "table3_ablations", "table4_traversal", "table5_types", "table7_depth", "table8_meus",
            "table9_types", "table10_groups", "fig4_allen"} <= set(data["tables"])
    assert {"fig4_allen", "fig3_accuracy_tokens"} <= set(data["figures"])


CHECKS = {"00_tour": _check_tour, "tecqa": _check_tecqa, "star_rag": _check_star_rag, "ia_rag": _check_ia_rag}


def test_every_notebook_is_stripped_and_has_parameters():
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: exactly one cell must be tagged 'parameters'"
        assert "profile" in tagged[0].source and "output_dir" in tagged[0].source, path.name
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
            f"{path.name} has outputs"
        )


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_smoke(path, tmp_path, shared_data):
    import papermill as pm

    out_dir = tmp_path / "out"
    executed = tmp_path / path.name
    pm.execute_notebook(
        str(path),
        str(executed),
        parameters={"profile": "smoke", "output_dir": str(out_dir)},
        cwd=str(path.parent),
        progress_bar=False,
    )
    nb = nbformat.read(executed, as_version=4)
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors, errors
    data = json.loads((out_dir / "results.json").read_text())
    assert data["parameters"]["profile"] == "smoke"
    assert data["metrics"], "the notebook recorded no metrics"
    for key, value in data["metrics"].items():
        v = value["value"] if isinstance(value, dict) and "value" in value else value
        if isinstance(v, float):
            assert not math.isnan(v), key
    assert data["figures"], "the notebook saved no figure"
    for fig in data["figures"]:
        assert (out_dir / f"{fig}.png").stat().st_size > 5_000, fig
    if path.stem in CHECKS:
        CHECKS[path.stem](data)
