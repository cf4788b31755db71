"""STAR-RAG's notebook parameters: the paper's K1, K2, Apriori support and labels, the reader samples of
Fig. 5 and the released-code decomposition, and the reader's prompt."""

from __future__ import annotations

from temporag.methods.params import Parameter, Served, at_least, choice, share, with_kit

PARAMETERS = with_kit(
    Parameter("K1", "int", 10, "anchors and returned events (paper default)", at_least(1)),
    Parameter("K2", "int", 20, "rule nodes kept after PPR (paper default)", at_least(1)),
    Parameter("min_support", "float", 0.05, "Apriori support: share of entities holding the subset",
              share()),
    Parameter("K_type", "int", 2, "labels kept per entity (Fig. 2 gives Oman two)", at_least(1)),
    Parameter("heatmap_reader_sample", "Optional[int]", None, "reader questions per Fig. 5 cell",
              at_least(0, optional=True), {"smoke": 0, "paper": 30}),
    Parameter("decomposition_reader_sample", "Optional[int]", None,
              "questions read per §11 row", at_least(0, optional=True),
              {"smoke": 0, "paper": 30}),
    # Appendix E's one-shot prompt with Thought needs a model that follows it; the embedded one reads plain
    Parameter("reader_style", "Optional[str]", None, '"plain" | "appendix-e"',
              choice(None, "plain", "appendix-e"),
              {p: Served(offline="plain", served="appendix-e") for p in ("smoke", "paper")}),
)
