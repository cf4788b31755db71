"""The numbers behind STAR-RAG's tables and figures, under one name for the notebook: the reader on its
sample and its scores, Tables 2–4 and Fig. 3's numbers, the Fig. 5 Hit@1 grid, the other data sets'
runs (:mod:`.paper_tables`) and the released code taken apart (:mod:`.code_tables`).

They compute; :mod:`.report` makes the frames and figures and :mod:`.record` writes the numbers into
the run's results.
"""

from __future__ import annotations

from temporag.methods.star_rag.code_tables import (  # noqa: F401 (re-exported: one module for the notebook)
    decomposition,
    decomposition_methods,
    decomposition_retrievals,
    shown_recall,
)
from temporag.methods.star_rag.paper_tables import (  # noqa: F401 (re-exported: one module for the notebook)
    fig3_numbers,
    hit_rate,
    hit_rates,
    hits_grid,
    positions_in,
    predictions,
    read_sample,
    reader_scores,
    reader_usage,
    seconds_per_question,
    table2_other_datasets,
    table3_scores,
    table4_numbers,
)
