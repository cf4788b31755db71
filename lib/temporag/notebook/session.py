"""What every notebook does right after its ``parameters`` cell: collect and resolve its declared
parameters (:mod:`temporag.methods.params`), the settings, the question set, the seeded generator and the
results folder — in one call, so the notebook itself reads like the paper."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from temporag.config import Settings, get_settings
from temporag.llm import LLM, LLMError, find_embedded_gguf
from temporag.methods.params import KIT, Parameters
from temporag.methods.registry import declarations
from temporag.notebook import outputs
from temporag.notebook.results import Results
from temporag.retrieval.embed import run_backend
from temporag.sampling import stratified_sample

#: libraries whose INFO lines (FAISS's loader, sentence-transformers' "Loading SentenceTransformer model")
#: say nothing a reader of the notebook needs; their warnings still show
CHATTY_LIBRARIES = ("faiss", "sentence_transformers", "transformers", "huggingface_hub", "httpx", "filelock")


def quiet_logs(headless: bool) -> None:
    """Log lines a notebook shows: the kit's INFO lines when a person runs it, only warnings when the
    runner does (an executed notebook in the book then shows no library chatter that reads like an error,
    and no progress bar of theirs frozen at 0 %; the kit's own bars are dropped from the executed copy).
    What matters outside a cell (cache repairs, failed calls, changed artifacts) is recorded in
    results.json and reaches the console summary."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for name in CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("temporag").setLevel(logging.WARNING if headless else logging.NOTSET)  # NOTSET: root
    if headless:
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # transformers' "Loading weights" bars, too


@dataclass
class Run:
    name: str
    profile: str
    params: dict
    settings: Settings
    results: Results
    rng: np.random.Generator
    questions: list = field(default_factory=list)
    reader_questions: list = field(default_factory=list)
    data_files: list = field(default_factory=list)

    @property
    def reader_model(self) -> str:
        return LLM(self.settings).model_name

    def llm(self):
        return LLM(self.settings)


def parameters_of(
    name: str, namespace: Mapping[str, Any], declared: Parameters | None = None
) -> tuple[Parameters, dict[str, Any]]:
    """(the notebook's declared parameters, their values in ``namespace``).  A notebook the kit does not
    declare (a test's own) passes its parameters as a dict; the kit's vocabulary among them is checked."""
    declared = declared or declarations(name)
    if declared is None:
        declared = Parameters(*(p for p in KIT if p.name in namespace))
        return declared, dict(namespace)
    return declared, {n: namespace[n] for n in declared.names if n in namespace}


def start(
    name: str,
    namespace: Mapping[str, Any],
    *,
    questions: list | None = None,
    data_files: list | None = None,
    declared: Parameters | None = None,
) -> Run:
    """Resolve a notebook run from its parameters cell: ``namespace`` is the notebook's ``globals()``
    (or a dict of parameters); the declared parameters (:func:`temporag.methods.registry.declarations`, or
    ``declared``) are read from it, checked, and where None given the notebook's profile default.

    Every default is resolved here and recorded in ``results.json`` (never ``null`` for a value the run
    used): the profile's sample sizes (``None`` = every question is recorded as the count), the
    notebook's own, ``seed``, ``llm_model`` (the embedded reader's name when offline) and ``output_dir``."""
    quiet_logs(headless=bool(os.environ.get(outputs.ENV_STAGING)))
    declared, given = parameters_of(name, namespace, declared)
    declared.check(**given)  # one-line errors naming the parameter and the allowed values
    profile = given.get("profile", "smoke")
    settings = get_settings(
        llm_model=given.get("llm_model"), llm_base_url=given.get("llm_base_url"), seed=given.get("seed")
    )
    settings = run_backend(settings, profile)  # auto: onnx-int8 for smoke on a CPU, else torch
    resolved = declared.resolve(given, settings)
    rng = np.random.default_rng(settings.seed)
    selected = []
    if questions is not None:
        selected = stratified_sample(questions, resolved.get("sample_size"), rng)
        if resolved.get("sample_size") is None:
            resolved["sample_size"] = len(selected)  # every question
    reader = stratified_sample(
        selected, resolved.get("reader_sample"), np.random.default_rng(settings.seed + 1)
    )
    if questions is not None and resolved.get("reader_sample") is None:
        resolved["reader_sample"] = len(reader)
    resolved["seed"] = settings.seed
    if settings.llm_model is not None or settings.offline_llm:
        resolved["llm_model"] = settings.llm_model or _embedded_model_name()
    out_dir = given.get("output_dir")
    results = Results(
        name,
        {**resolved, "output_dir": out_dir},  # recorded as the folder the run ends up in
        out_dir=Path(out_dir) if out_dir else None,
        settings=settings,
        data_files=data_files or [],
    )
    resolved["output_dir"] = str(results.final_dir)
    return Run(name, profile, resolved, settings, results, rng, selected, reader, list(data_files or []))


def _embedded_model_name() -> str:
    """The offline reader's model name (its GGUF file's stem), without loading it."""
    try:
        return find_embedded_gguf().stem
    except LLMError:  # no embedded weights installed: the reader says so, with the fix, when first used
        return "embedded (not installed)"
