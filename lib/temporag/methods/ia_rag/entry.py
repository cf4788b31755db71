"""IA-RAG in the kit's registry: its notebook.  It retrieves document units, so it has no MultiTQ row;
the leaderboard's documents section (:mod:`temporag.leaderboard.documents`) runs it beside Vanilla RAG."""

from __future__ import annotations

from temporag.registry import MethodEntry

ENTRY = MethodEntry("ia_rag", "ia_rag", order=40, evidence="document_unit")
