"""The semantic baseline in the kit's registry: the tour's notebook, one leaderboard row."""

from __future__ import annotations

from temporag.methods.registry import Contender, MethodEntry
from temporag.methods.semantic.params import BOOK

SEMANTIC_K = 20  # facts the semantic baseline shows (the tour's reader_k)


def semantic_baseline(workspace):
    """The workspace's own semantic retriever (its vectors are every other row's)."""
    return workspace.semantic, f"cosine over every fact + date bonus, top {SEMANTIC_K}"


ENTRY = MethodEntry(
    "semantic",
    "00_tour",
    order=0,
    paper=False,
    book=BOOK,
    leaderboard=(Contender("Semantic baseline", semantic_baseline, k=SEMANTIC_K, order=0),),
)
