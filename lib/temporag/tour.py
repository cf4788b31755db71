"""The tour notebook's parameters (``notebooks/00_tour.ipynb``): the kit's vocabulary and the reader's
context size."""

from __future__ import annotations

from temporag.params import KIT, Parameter, Parameters, at_least

PARAMETERS = Parameters(
    KIT["profile"],
    KIT["split"],
    KIT["questions_file"],
    KIT["sample_size"],
    KIT["reader_sample"],
    KIT["seed"],
    KIT["ks"].but(default=[1, 5, 10, 20, 50]),
    Parameter("reader_k", "int", 20, "facts shown to the reader", at_least(1)),
    KIT["llm_model"],
    KIT["llm_base_url"],
    KIT["output_dir"],
)
