"""TECQA in the kit's registry: its notebook, and two leaderboard rows (paper-faithful, and the kit's
improved parse with the question-guided chain), both showing the first chain facts a reader sees."""

from __future__ import annotations

from temporag.methods import tecqa
from temporag.methods.book_entry import BookEntry, Headline, Number, PaperNumber, template_hits
from temporag.methods.registry import Contender, MethodEntry
from temporag.reported import PaperRef

TECQA_FACTS = 20  # chain facts TECQA shows (the paper's "about 20"; the TECQA notebook's reader_facts)


def paper_faithful(workspace):
    """§4 with the workspace's offline parse (the same parse as SAR's policy and the template reader)."""
    model = tecqa.TECQA(workspace.kg, workspace.encoder, workspace.semantic.triple_vectors)
    model.offline_parser = workspace.parser
    return model, f"offline parse, K = {model.k}, N = {model.n}, first {TECQA_FACTS} chain facts"


def kit_improved(workspace):
    """The improved offline parser (:data:`~temporag.methods.tecqa.IMPROVED_PARSER`) and guided chain."""
    kg = workspace.kg
    model = tecqa.TECQA(kg, workspace.encoder, workspace.semantic.triple_vectors, chain="guided")
    model.offline_parser = tecqa.make_offline_parser(kg, workspace.encoder, **tecqa.IMPROVED_PARSER)
    return model, "improved offline parser + question-guided chain (≤ 20 facts)"


ENTRY = MethodEntry(
    "tecqa",
    "tecqa",
    order=10,
    leaderboard=(
        Contender("TECQA (paper-faithful)", paper_faithful, k=TECQA_FACTS, order=30),
        Contender("TECQA (kit, improved)", kit_improved, k=TECQA_FACTS, order=31),
    ),
    book=BookEntry(
        "TECQA: structure-guided temporal evidence chains",
        Headline(
            (
                Number("tecqa", "chain/answer_recall", "evidence-chain answer recall (K=40, N=2)"),
                template_hits("TECQA (paper-faithful)"),
            ),
            PaperNumber(
                PaperRef("tecqa", "Table 1", "TECQA", "Overall"),
                "table1/strict/Overall",
                "Hits@1, Table 1 Overall (Qwen3-8B reader)",
                "TECQA (paper-faithful)",
                "strict Hits@1",
            ),
            Number("tecqa", "table1/strict/Overall", "reader Hits@1, strict"),
        ),
    ),
)
