"""The experiment's data: each data set's documents and seeded questions (with their table), built the
paper's way (:func:`prepare`) and with a calibrated τ_sem (:func:`calibrated`), as :class:`.setups.Setup`
objects the step modules compute the tables from (:mod:`.build_tables`, :mod:`.retrieval_tables`,
:mod:`.ablations`, :mod:`.reader_tables`).  :mod:`.report` draws and formats what they return and
:mod:`.record` writes it into the run's results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.methods.ia_rag import build_index
from temporag.methods.ia_rag.corpus import QA, Doc, load
from temporag.methods.ia_rag.setups import K1_DEFAULT, Setup, documents_for
from temporag.sampling import stratified_sample


def load_datasets(
    datasets: Sequence[str],
    questions_file: str | None,
    sample_size: int | None,
    rng: np.random.Generator,
    smoke_extra: int | None = None,
) -> tuple[dict[str, tuple[list[Doc], list[QA], int]], list]:
    """Each data set's documents, its seeded question sample and its number of questions, and the files
    read (for their checksums).  ``questions_file`` replaces ComplexTR's questions only; ``smoke_extra``
    (smoke runs) keeps just the documents the sample needs plus that many distractors."""
    loaded, files = {}, []
    for dataset in datasets:
        own_questions = questions_file if dataset == "ComplexTR" else None
        docs, questions, paths = load(dataset, questions_file=own_questions)
        selected = stratified_sample(questions, sample_size, rng)
        if smoke_extra is not None:
            docs = documents_for(selected, docs, smoke_extra, rng)
        loaded[dataset] = (docs, selected, len(questions))
        files += paths
    return loaded, files


def data_table(loaded: Mapping[str, tuple[list[Doc], list[QA], int]]) -> pd.DataFrame:
    """What the run reads per data set: documents, selected questions and all questions."""
    return pd.DataFrame(
        [
            {
                "dataset": dataset,
                "documents": len(docs),
                "questions (selected)": len(questions),
                "questions (all)": total,
            }
            for dataset, (docs, questions, total) in loaded.items()
        ]
    )


def prepare(dataset: str, docs, questions, encoder, *, k1: int | None = None, **build_kw) -> Setup:
    """The paper reading of one data set: ``build_kw`` go to :func:`.build_index`, K1 defaults to the
    paper's for the data set."""
    build = build_index(docs, encoder, **build_kw)
    return Setup(dataset, list(docs), list(questions), build, k1 or K1_DEFAULT[dataset], encoder)


def calibrated(setup: Setup, build_kw: Mapping) -> Setup:
    """The same documents and questions on a build whose τ_sem is calibrated for the encoder."""
    build = build_index(setup.docs, setup.encoder, **{**build_kw, "tau": None})
    return Setup(setup.dataset, setup.docs, setup.questions, build, setup.k1, setup.encoder, setup.chunk_vecs)
