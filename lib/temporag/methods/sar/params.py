"""SAR's notebook parameters: the paper's K and N, the agent's turn budget, and the LLM samples (the
reader sample is the agent's: half Single, half Multiple)."""

from __future__ import annotations

from temporag.notebook.params import KIT, Parameter, Parameters, at_least

PARAMETERS = Parameters(
    KIT["profile"],
    KIT["split"],
    KIT["questions_file"],
    KIT["sample_size"],
    KIT["reader_sample"].but(
        help="agent questions: Single, Multiple halves", profiles={"smoke": 2, "paper": 20}
    ),
    Parameter(
        "sweep_sample",
        "Optional[int]",
        None,
        "agent questions read at each K of Fig. 3",
        at_least(0, optional=True),
        {"smoke": 1, "paper": 4},
    ),
    Parameter(
        "n_max_llm",
        "Optional[int]",
        None,
        "verification budget of the LLM agent (Fig. 4)",
        at_least(0, optional=True),
        {"smoke": 2, "paper": 2},
    ),
    KIT["seed"],
    Parameter("K", "int", 15, "facts per SEARCH (paper: 15)", at_least(1)),
    Parameter("N", "int", 2, "verification iterations (paper: 2)", at_least(0)),
    Parameter("max_steps", "int", 6, "turns per reasoning attempt (the paper states none)", at_least(1)),
    KIT["llm_model"],
    KIT["llm_base_url"],
    KIT["output_dir"],
)
