"""SAR in the kit's registry: its notebook, and one leaderboard row (the offline scripted policy)."""

from __future__ import annotations

from temporag.methods import sar
from temporag.methods.book_entry import BookEntry, Headline, Number, PaperNumber
from temporag.methods.registry import Contender, MethodEntry
from temporag.reported import PaperRef


def offline_policy(workspace):
    """SAR's agent with the scripted policy and rule verifier on the shared workspace."""
    method = sar.SAR(workspace.kg, workspace=workspace)
    return method, f"scripted policy, K = {method.k} per SEARCH, rule verifier N = {method.n_verify}"


ENTRY = MethodEntry(
    "sar",
    "sar",
    order=50,
    leaderboard=(Contender("SAR (offline policy)", offline_policy, order=40),),
    book=BookEntry(
        "SAR: search, verify and answer",
        Headline(
            (
                Number("sar", "table1/SAR/offline/Overall", "template-reader Hits@1, offline policy"),
                Number("sar", "offline/evidence_answer_recall", "evidence answer recall (LLM-free)"),
            ),
            PaperNumber(
                PaperRef("sar", "Table 1", "SAR (GPT-4.1)", "Overall"),
                "table1/SAR/llm/Overall",
                "Hits@1, Table 1 Overall (GPT-4.1)",
                "SAR (offline policy)",
                "strict Hits@1",
            ),
            Number("sar", "table1/SAR/llm/Overall", "reader Hits@1, LLM policy"),
        ),
    ),
)
