"""TimeR4's notebook parameters.  The smoke profile trains on 96 questions and lets the time-aware store
re-score a candidate pool (each question's 100 best triples by the base model); the paper profile trains
on 4,800 questions (19,200 pairs) and re-embeds all 166,760 triples with the fine-tuned model.  The
code-loss model is always trained too (the paper-vs-code table needs it) and compared on a candidate
pool (30 triples a question in the paper profile).
Reader calls: TimeR4 reads the reader sample (Table 3), the four ablations and Fig. 3's other n a
stratified part of it."""

from __future__ import annotations

from temporag.methods.params import KIT, Parameter, Rule, Served, at_least, choice, unit, with_kit

_RELEASED = Rule(
    lambda v: v is None or (isinstance(v, dict) and all(isinstance(x, str) for x in (*v, *v.values()))),
    'None or {"Table 4|TimeR4|TimeQuestions": "path to a released TimeR4 .jsonl", ...}',
)

PARAMETERS = with_kit(
    Parameter("n_facts", "int", 15, "n: facts per question (paper: 15, Fig. 3's peak)", at_least(1)),
    Parameter("mu", "float", 0.8, "μ of Eq. 10 (the released code's alpha)", unit()),
    Parameter("rewrite", "str", "offline", '"offline" (rule over the offline parse) | "llm"',
              choice("offline", "llm")),
    Parameter("rewrite_sample", "Optional[int]", None, "questions the LLM rewrite is shown on",
              at_least(0, optional=True), {"smoke": 2, "paper": 5}),
    Parameter("train_examples", "Optional[int]", None, "training questions, 4 pairs each",
              at_least(1, optional=True), {"smoke": 96, "paper": 4800}),
    Parameter("tks_index", "Optional[str]", None, '"full" (every triple) | "pool"',
              choice(None, "full", "pool"), {"smoke": "pool", "paper": "full"}),
    Parameter("pool_triples", "Optional[int]", None, "triples per question of a pool index",
              at_least(1, optional=True), {"smoke": 100, "paper": 30}),
    Parameter("ablation_reader_sample", "Optional[int]", None, "reader questions per Table 5 row",
              at_least(0, optional=True), {"smoke": 3, "paper": 20}),
    Parameter("fig3_reader_sample", "Optional[int]", None, "reader questions per Fig. 3 n",
              at_least(0, optional=True), {"smoke": 2, "paper": 10}),
    Parameter("released_outputs", "Optional[dict[str, str]]", None,
              "Table key → a released TimeR4 .jsonl to rescore", _RELEASED),
    reader_sample=KIT["reader_sample"].but(profiles={"smoke": 4, "paper": Served(offline=50, served=None)}),
)
