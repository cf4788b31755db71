"""The tour notebook's declarations (``notebooks/00_tour.ipynb``): its parameters (the kit's vocabulary
and the reader's context size) and what the book shows for it."""

from __future__ import annotations

from temporag.methods.book_entry import BookEntry, Headline, Number, template_hits
from temporag.methods.params import KIT, Parameter, at_least, with_kit

PARAMETERS = with_kit(
    KIT["ks"].but(default=[1, 5, 10, 20, 50]),
    Parameter("reader_k", "int", 20, "facts shown to the reader", at_least(1)),
)

BOOK = BookEntry(
    "Tour: MultiTQ and the semantic (Naive RAG) baseline",
    Headline(
        (
            Number("tour", "semantic/answer_recall@20", "answer recall@20 (LLM-free)"),
            template_hits("Semantic baseline"),
        ),
        Number("tour", "semantic/answer_recall@20", "semantic recall@20 (TECQA, Fig. 2)"),
        Number("tour", "semantic_reader/hits@1_strict", "reader Hits@1, strict"),
    ),
)
