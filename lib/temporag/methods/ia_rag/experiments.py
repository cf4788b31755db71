"""The notebook's steps under one name, so each notebook cell stays a few lines: the per-data-set builds
(:mod:`.setups`), the tables of what they built (:mod:`.build_tables`), LLM-free retrieval recall
(:mod:`.retrieval_tables`), the ablations (:mod:`.ablations`) and the reader (:mod:`.reader_tables`).
They compute; :mod:`.record` writes what they return into the run's results."""

from __future__ import annotations

from temporag.methods.ia_rag.ablations import (  # noqa: F401 (re-exported: one module for the notebook)
    ABLATION_BUDGET,
    ablations,
    depth_and_meus,
)
from temporag.methods.ia_rag.build_tables import (  # noqa: F401 (re-exported: one module for the notebook)
    build_times,
    extraction_table,
    forest_table,
    graph_table,
    tightening_example,
    tightening_table,
    tree_index,
    unit_coverage,
    unit_examples,
)
from temporag.methods.ia_rag.reader_tables import (  # noqa: F401 (re-exported: one module for the notebook)
    accuracy_tokens,
    reader_means,
    reader_predictions,
    reader_reads,
)
from temporag.methods.ia_rag.retrieval_tables import (  # noqa: F401 (re-exported: one module for the notebook)
    curve_grid,
    operating_points,
    reasoning_groups,
    reasoning_types,
    retrieval_predictions,
    token_curves,
    type_counts,
)
from temporag.methods.ia_rag.setups import (  # noqa: F401 (re-exported: one module for the notebook)
    calibrated,
    data_table,
    load_datasets,
    prepare,
)
