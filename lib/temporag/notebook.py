"""What every notebook does right after its ``parameters`` cell: resolve profile defaults,
settings, the question set, the seeded generator and the results folder — in one call, so the
notebook itself reads like the paper."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from temporag.config import Settings, get_settings
from temporag.embed import run_backend
from temporag.params import validate as validate_params
from temporag.results import Results
from temporag.sampling import stratified_sample

PROFILES: dict[str, dict[str, Any]] = {
    # smoke: CI-sized, minutes on a laptop (the reader proves the plumbing: its prompts are most of a cold
    # start's notebook time, so it reads 4 questions); paper: the paper's protocol on every shared question
    "smoke": {"sample_size": 40, "reader_sample": 4},
    "paper": {"sample_size": None, "reader_sample": 200},
}


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
        from temporag.llm import LLM

        return LLM(self.settings).model_name

    def llm(self):
        from temporag.llm import LLM

        return LLM(self.settings)


#: a notebook default: one value per profile, or a function of (profile, settings)
Default = Mapping[str, Any] | Callable[[str, Settings], Any]


def resolve_defaults(params: dict, defaults: Mapping[str, Default], profile: str, settings: Settings) -> dict:
    """``params`` with every ``None`` that has a notebook default replaced by its resolved value."""
    resolved = dict(params)
    for key, default in defaults.items():
        if resolved.get(key) is None:
            resolved[key] = default(profile, settings) if callable(default) else default[profile]
    return resolved


def start(
    name: str,
    params: dict,
    *,
    questions: list | None = None,
    data_files: list | None = None,
    defaults: Mapping[str, Default] | None = None,
) -> Run:
    """Resolve a notebook run.  ``params`` is the parameters cell as a dict (``None`` = default).

    Every default is resolved here and recorded in ``results.json`` (never ``null`` for a value the run
    used): the profile's sample sizes (``None`` = every question is recorded as the count), the
    notebook's own ``defaults`` (e.g. TECQA's ``parse_sample``), ``seed``, ``llm_model`` (the embedded
    reader's name when offline) and ``output_dir``."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    validate_params(params)  # one-line errors naming the parameter and the allowed values
    profile = params.get("profile", "smoke")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    resolved = dict(params)
    for key, default in PROFILES[profile].items():
        if resolved.get(key) is None:
            resolved[key] = default
    settings = get_settings(
        llm_model=params.get("llm_model"), llm_base_url=params.get("llm_base_url"), seed=params.get("seed")
    )
    settings = run_backend(settings, profile)  # auto: onnx-int8 for smoke on a CPU, else torch
    if settings.llm_base_url is not None and params.get("reader_sample") is None and profile == "paper":
        resolved["reader_sample"] = None  # a served model reads every question
    resolved = resolve_defaults(resolved, defaults or {}, profile, settings)
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
    out_dir = params.get("output_dir")
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
    from temporag.llm import LLMError, find_embedded_gguf

    try:
        return find_embedded_gguf().stem
    except LLMError:  # no embedded weights installed: the reader says so, with the fix, when first used
        return "embedded (not installed)"
