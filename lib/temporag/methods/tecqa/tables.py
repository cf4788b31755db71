"""Where TECQA prints the numbers the kit's tables sit beside: Table 1's columns, Table 2's variants, the
worked examples' questions (Tables 5–6) and the paper's quoted values (:class:`~temporag.reported.PaperRef`,
``.value()`` None where it prints none).

Declarations only: :mod:`.experiments` computes the numbers, :mod:`.report` draws and formats them beside
these references and :mod:`.record` records them.
"""

from __future__ import annotations

from temporag.reported import PaperRef

TABLE1_COLUMNS = ("Overall", "Single", "Multiple", "Entity", "Time")
VARIANTS = ("TECQA", "w/o SG", "w/o KNTN", "w/o PS")  # Table 2's rows
CASES = {  # the paper's worked examples: table → (row in reported, question)
    "Table 5": (
        "Case 1 (implicit constraint)",
        "After the Danish Ministry of Defence and Security, who was the first to visit Iraq?",
    ),
    "Table 6": ("Case 2 (explicit constraint)", "Who signed an agreement with China in April 2005?"),
}


def paper(source: str, row: str, column: str) -> PaperRef:
    """Where TECQA prints a MultiTQ number (``.value()`` is None where it prints none)."""
    return PaperRef("tecqa", source, row, column)


SUBGRAPH_RECALL = paper("§1 text", "Structure-guided subgraph", "Answer Recall")
CHAIN_RECALL = paper("§1 text", "TECQA (after k-NN temporal pruning)", "Answer Recall")
CHAIN_LENGTH = paper("§1 text", "TECQA (after k-NN temporal pruning)", "Avg. facts in context")
SEMANTIC_AT_20 = paper("Figure 2", "Semantic retriever (bge-base-en-v1.5)", "Answer Recall@20")
TECQA_AT_20 = paper("Figure 2", "TECQA", "Answer Recall@20")
EMPTY_SHARE = paper("§5.7 text", "Empty subgraph", "Share")
