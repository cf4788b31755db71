"""SAR's notebook parameters: the paper's K and N, the agent's turn budget, and the LLM samples (the
reader sample is the agent's: half Single, half Multiple)."""

from __future__ import annotations

from temporag.methods.params import KIT, Parameter, at_least, with_kit

PARAMETERS = with_kit(
    Parameter("K", "int", 15, "facts per SEARCH (paper: 15)", at_least(1)),
    Parameter("N", "int", 2, "verification iterations (paper: 2)", at_least(0)),
    Parameter("max_steps", "int", 6, "turns per reasoning attempt (the paper states none)", at_least(1)),
    reader_sample=(
        KIT["reader_sample"].but(
            help="agent questions: Single, Multiple halves", profiles={"smoke": 2, "paper": 20}
        ),
        Parameter("sweep_sample", "Optional[int]", None, "agent questions read at each K of Fig. 3",
                  at_least(0, optional=True), {"smoke": 1, "paper": 4}),
        Parameter("n_max_llm", "Optional[int]", None, "verification budget of the LLM agent (Fig. 4)",
                  at_least(0, optional=True), {"smoke": 2, "paper": 2}),
    ),
)
