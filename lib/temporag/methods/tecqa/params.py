"""TECQA's notebook parameters: the paper's K and N, the parser, and the reader's samples."""

from __future__ import annotations

from temporag.methods.params import KIT, Parameter, Served, at_least, choice, with_kit

PARAMETERS = with_kit(
    Parameter("K", "int", 40, "temporal neighbours per anchor (paper: 40)", at_least(1)),
    Parameter("N", "int", 2, "implicit anchors (paper: 2 for MultiTQ)",
              at_least(0, meaning=" (0: explicit anchors only)")),
    Parameter("parser", "str", "offline", '"offline" (no LLM) | "llm" (the paper\'s three prompts)',
              choice("offline", "llm")),
    reader_sample=KIT["reader_sample"].but(profiles={"smoke": 4, "paper": Served(offline=40, served=None)}),
    output_dir=(
        KIT["output_dir"],
        Parameter("parse_sample", "Optional[int]", None,
                  "questions the LLM parser is compared on",
                  at_least(0, optional=True), {"smoke": 2, "paper": 10}),
        Parameter("reader_facts", "Optional[int]", 20, "chain facts shown to the reader (None: the chain)",
                  at_least(1, optional=True, none="the whole chain")),
    ),
)
