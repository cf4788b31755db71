"""IA-RAG in the kit's registry: its notebook and its document rows.  It retrieves document units, so it
has no MultiTQ row; it declares the leaderboard's documents section instead (Vanilla RAG and IA-RAG,
:mod:`.document_rows`), which :mod:`temporag.leaderboard.documents` runs."""

from __future__ import annotations

from temporag.methods.book_entry import BookEntry, Headline, Number, PaperNumber
from temporag.methods.ia_rag import document_rows
from temporag.methods.ia_rag.reader_tables import read_scores, reader_mean
from temporag.methods.ia_rag.retrieval import score_retrieval
from temporag.methods.registry import DocumentRows, MethodEntry
from temporag.reported import PaperRef


def _table2(dataset: str) -> PaperNumber:
    """Table 2's IA-RAG accuracy on one data set, beside the leaderboard's documents row."""
    return PaperNumber(
        PaperRef("ia_rag", "Table 2", "IA-RAG", "Acc.", dataset),
        f"table2/{dataset}/IA-RAG/accuracy",
        f"{dataset} token accuracy, Table 2 (Qwen2.5-72B reader)",
        f"{dataset}/IA-RAG",
        "DyG-RAG token-level accuracy",
    )


ENTRY = MethodEntry(
    "ia_rag",
    "ia_rag",
    order=40,
    evidence="document_unit",
    documents=DocumentRows(
        document_rows.prepare, document_rows.rows, score_retrieval, read_scores, reader_mean
    ),
    book=BookEntry(
        "IA-RAG: interval-aware retrieval over temporal event graphs",
        Headline(
            (Number("ia_rag", "retrieval_recall/TimeQA/IA-RAG", "TimeQA evidence answer recall (LLM-free)"),),
            _table2("TimeQA"),
            Number("ia_rag", "table2/TimeQA/IA-RAG/accuracy", "reader token accuracy"),
            more=(_table2("TempReason"), _table2("ComplexTR")),
        ),
    ),
)
