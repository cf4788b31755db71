"""TimeR4 in the kit's registry: its notebook, and one leaderboard row.

TimeR4's time-aware retriever must be fine-tuned.  The leaderboard never trains: it uses the fine-tuned
model of TimeR4's paper profile when the cache holds it (:func:`cached_time_retriever`), and otherwise
the retriever the package exposes without training — the off-the-shelf fact store, with the rewrite and
the Eq. 9 rerank (Table 5's "w/o temporal retrieval").  The row's note says which ran.
"""

from __future__ import annotations

from pathlib import Path

from temporag.methods import timer4
from temporag.methods.book_entry import BookEntry, Headline, Number, PaperNumber, template_hits
from temporag.methods.registry import Contender, MethodEntry
from temporag.methods.timer4.params import PARAMETERS as TIMER4_PARAMETERS
from temporag.reported import PaperRef
from temporag.retrieval.embed import Encoder

#: TimeR4's training set per profile, as its notebook declares it
TIMER4_EXAMPLES = dict(TIMER4_PARAMETERS["train_examples"].profiles)


def cached_time_retriever(kg, examples: int, seed: int = 0) -> Path | None:
    """The folder of TimeR4's fine-tuned retriever for ``examples`` training questions (the TimeR4
    notebook's default training config) if the cache holds it, else None — never trains."""
    from temporag.methods.timer4 import negatives, train  # lazy: the registry imports every entry

    built = negatives.build_examples(kg, examples, seed=seed)
    folder = train.model_folder(built, train.TrainConfig(seed=seed))
    return folder if (folder / train.TRAINING_META).exists() else None


def cached_share(kg, model: str | Path) -> float:
    """Share of the KG's distinct-triple embedding chunks the cache holds for the fine-tuned ``model``, as
    :func:`~temporag.methods.timer4.time_store` would embed them (its encoder's own cache key, whichever
    backend runs: 1.0 means a full store loads without embedding anything)."""
    return Encoder(model=str(model)).cached_share(kg.triple_texts())


def leaderboard_timer4(workspace):
    """The fine-tuned time-aware store when its cached model exists (full store when every triple chunk
    is cached, else a 30-triple-per-question candidate pool), else the untrained package."""
    kg, profile, seed = workspace.kg, workspace.profile, workspace.seed
    fks = timer4.fact_store(kg, workspace.encoder)
    base = timer4.TimeR4(kg, fks, parser=workspace.parser, temporal=False)
    model = cached_time_retriever(kg, TIMER4_EXAMPLES[profile], seed) if profile == "paper" else None
    if model is None:
        why = "smoke profile" if profile != "paper" else "no cached fine-tuned model"
        return base, (
            f"{why}: no time-aware retriever (never trained here) — fact store (MiniLM) + offline "
            "rewrite + Eq. 9 rerank, i.e. Table 5's w/o temporal retrieval"
        )
    if cached_share(kg, model) == 1.0:
        tks, index = timer4.time_store(kg, model), "full store"
    else:
        texts = [q.question for q in workspace.questions]
        rewritten = [r.rewritten for r in base.rewrite_questions(texts, progress=False)[1]]
        pool = timer4.candidate_triples(fks, base.question_vectors(fks, rewritten), 30)
        tks, index = timer4.time_store(kg, model, triple_ids=pool), "30-triple candidate pool per question"
    method = base.variant(tks=tks, temporal=True)
    return method, (
        f"fine-tuned time-aware retriever from the cache ({TIMER4_EXAMPLES[profile]:,} training "
        f"questions, softmax loss; {index}) + offline rewrite + Eq. 9 rerank"
    )


def released_code() -> list[dict[str, str]]:
    """The released code (both commits) as the kit reads it, one row per aspect."""
    from temporag.methods.timer4.released import released_code_rows  # lazy: the registry imports every entry

    return released_code_rows()


ENTRY = MethodEntry(
    "timer4",
    "timer4",
    order=30,
    leaderboard=(Contender("TimeR4", leaderboard_timer4, order=20),),
    book=BookEntry(
        "TimeR4: time-aware retrieve, rewrite, retrieve and rerank",
        Headline(
            (
                Number("timer4", "table5/TimeR4/recall@15", "answer recall@15 (LLM-free)"),
                template_hits("TimeR4"),
            ),
            PaperNumber(
                PaperRef("timer4", "Table 3", "TimeR4", "Overall"),
                "table3/whole/Overall",
                "Hits@1, Table 3 Overall (fine-tuned LLaMA2-7B reader)",
                "TimeR4",
                "TimeR4's whole-output substring rule",
            ),
            Number("timer4", "table3/whole/Overall", "reader Hits@1, whole-output rule"),
        ),
    ),
    released_code=released_code,
)
