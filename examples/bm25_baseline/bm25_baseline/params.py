"""The BM25 notebook's parameters: the kit's vocabulary and the reader's context size.  The kit finds them
through the registry (``temporag.notebook.params.declarations``): ``PARAMETERS`` in the package its entry
point names, here ``bm25_baseline.params``."""

from __future__ import annotations

from temporag.notebook.params import KIT, Parameter, Parameters, at_least

PARAMETERS = Parameters(
    KIT["profile"],
    KIT["split"],
    KIT["questions_file"],
    KIT["sample_size"],
    KIT["reader_sample"],
    KIT["seed"],
    KIT["ks"],
    Parameter("reader_k", "int", 20, "facts shown to the reader", at_least(1)),
    KIT["llm_model"],
    KIT["llm_base_url"],
    KIT["output_dir"],
)
