"""The BM25 notebook's parameters: the kit's vocabulary and the reader's context size.  The kit finds them
through the registry (``temporag.methods.registry.declarations``): ``PARAMETERS`` in the package its entry
point names, here ``bm25_baseline.params``."""

from __future__ import annotations

from temporag.methods.params import KIT, Parameter, at_least, with_kit

PARAMETERS = with_kit(
    KIT["ks"],
    Parameter("reader_k", "int", 20, "facts shown to the reader", at_least(1)),
)
