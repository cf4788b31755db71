"""IA-RAG in the kit's registry: its notebook.  It retrieves document units, so it has no MultiTQ row;
the leaderboard's documents section (:mod:`temporag.leaderboard.documents`) runs it beside Vanilla RAG."""

from __future__ import annotations

from temporag.methods.book_entry import BookEntry, Headline, Number
from temporag.methods.registry import MethodEntry

ENTRY = MethodEntry(
    "ia_rag",
    "ia_rag",
    order=40,
    evidence="document_unit",
    book=BookEntry(
        "IA-RAG: interval-aware retrieval over temporal event graphs",
        Headline(
            (Number("ia_rag", "retrieval_recall/TimeQA/IA-RAG", "TimeQA evidence answer recall (LLM-free)"),),
            Number(
                "ia_rag",
                "table2/TimeQA/IA-RAG/accuracy",
                "TimeQA token accuracy, Table 2 (Qwen2.5-72B reader)",
            ),
            Number("ia_rag", "table2/TimeQA/IA-RAG/accuracy", "reader token accuracy"),
        ),
    ),
)
