"""IA-RAG's notebook parameters: the data sets, the offline or LLM steps (extraction, tightening, the
T1–T5 classifier), the paper's K1, K2, forest depth and tau, and the samples per data set."""

from __future__ import annotations

from temporag.methods.params import KIT, Parameter, at_least, choice, unit, with_kit

PARAMETERS = with_kit(
    Parameter("extractor", "str", "offline", '"offline" (tables + pronoun rule) | "llm" (Fig. 7)',
              choice("offline", "llm")),
    Parameter("tightening", "str", "offline", '"offline" (propagation) | "llm" (Fig. 9) | "none"',
              choice("offline", "llm", "none")),
    Parameter("K1", "Optional[int]", None, "retrieved MEUs (None: 10, TempReason 20)",
              at_least(1, optional=True, none="the paper's per-data-set value")),
    Parameter("K2", "int", 20, "retrieved IEUs (paper: 20)", at_least(1)),
    Parameter("max_levels", "int", 4, "thematic forest depth (paper: 4)", at_least(1)),
    Parameter("tau", "float", 0.8, "tau_sem (paper: 0.8)", unit()),
    Parameter("vanilla_chunks", "int", 2, "chunks the Vanilla RAG baseline retrieves", at_least(1)),
    Parameter("reader_units", "Optional[int]", None, "IA-RAG units the reader sees (Eq. 18)",
              at_least(1, optional=True), {"smoke": 15, "paper": 40}),
    Parameter("classifier", "str", "rule", 'T1-T5 classifier: "rule" (offline) | "llm" (Fig. 6)',
              choice("rule", "llm")),
    split=KIT["datasets"],
    questions_file=KIT["questions_file"].but(
        help="a ComplexTR-format file replacing ComplexTR's shared half"
    ),
    sample_size=KIT["sample_size"].but(help="LLM-free questions per data set",
                                       profiles={"smoke": 8, "paper": None}),
    reader_sample=(
        KIT["reader_sample"].but(help="questions per data set the reader reads",
                                 profiles={"smoke": 2, "paper": 20}),
        Parameter("smoke_extra_documents", "int", 3, "smoke: distractor documents added", at_least(0)),
    ),
)
