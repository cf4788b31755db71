"""TECQA's own analysis metrics (§5.3–5.7, appendices D–E), which the generic ones in
:mod:`temporag.answer.evaluate` cannot express: parser accuracy against data-derived gold, the reference
anchor that evidence-chain integrity needs, the K × N sensitivity grid, the appendix-E failure modes and the
Table 5-style case rendering.

Gold that MultiTQ does not annotate (the main entity, the reference anchor) is derived from the KG and
the gold answers; each docstring states the definition so the numbers can be audited.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.answer.evaluate import answer_fact_mask, answer_recalled, gold_entity_ids
from temporag.linking.crossval import choose_on, cross_validate
from temporag.methods.tecqa.chain import EvidenceChain, explicit_anchors, fact_days
from temporag.question.parsing import Constraints, subgraph, subgraph_parts

KS = (5, 10, 20, 40, 60)  # Figure 4's K grid
NS = (1, 2, 5, 10)  # Figure 4's N grid


def _partner_is_gold(kg, facts: np.ndarray, main: int, answers: Sequence[str]) -> bool:
    gold = gold_entity_ids(kg, answers)
    other = np.where(kg.s[facts] == main, kg.o[facts], kg.s[facts])
    return bool(np.isin(other, gold).any())


def main_entity_supported(kg, constraints: Constraints, answers: Sequence[str], answer_type: str) -> bool:
    """Data-derived check of e_main: some KG fact joins it to a gold answer (an entity answer as the other
    argument, a time answer as the fact's date)."""
    if constraints.main is None:
        return False
    facts = kg.by_entity[constraints.main]
    if answer_type == "entity":
        return _partner_is_gold(kg, facts, constraints.main, answers)
    return bool(answer_fact_mask(kg, facts, answers, answer_type).any())


def relation_supported(kg, constraints: Constraints, answers: Sequence[str], answer_type: str) -> bool:
    """Data-derived check of (e_main, R_q): some F_main fact carries a gold answer in that way."""
    f_main, _ = subgraph_parts(kg, constraints)
    if not len(f_main):
        return False
    if answer_type == "entity":
        return _partner_is_gold(kg, f_main, constraints.main, answers)
    return bool(answer_fact_mask(kg, f_main, answers, answer_type).any())


def _mean(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(values.mean()) if len(values) else float("nan")


def parser_accuracy(kg, questions: Sequence, constraints: Sequence[Constraints]) -> dict[str, float]:
    """Main-entity and relation accuracy against the data-derived gold, subgraph answer recall, empties."""
    pairs = list(zip(questions, constraints))
    subgraphs = [subgraph(kg, c) for c in constraints]
    return {
        "n": len(questions),
        "main_entity_acc": _mean([main_entity_supported(kg, c, q.answers, q.answer_type) for q, c in pairs]),
        "relation_acc": _mean([relation_supported(kg, c, q.answers, q.answer_type) for q, c in pairs]),
        "subgraph_answer_recall": _mean(evaluate.answer_recall(kg, subgraphs, questions)),
        "empty_subgraph_rate": _mean([len(s) == 0 for s in subgraphs]),
    }


def reference_anchor_mask(kg, facts: np.ndarray, question: str, reference: Constraints) -> np.ndarray | None:
    """Which facts hold the question's reference anchor, or None when the question names none.

    The anchor is the reference point the temporal constraint points at: with a date in the question, a
    fact of the main entity inside that period; with "after / before / same month as X", a fact joining X
    and the main entity.  ``reference`` is one parse shared by every method compared (the offline parse),
    so the definition does not depend on the retriever under test.
    """
    facts = np.asarray(facts, dtype=np.int64)
    if reference.main is None:
        return None
    main = reference.main
    with_main = (kg.s[facts] == main) | (kg.o[facts] == main)
    times = explicit_anchors(question)
    if times:
        days = fact_days(kg, facts)
        in_period = np.zeros(len(facts), dtype=bool)
        for t in times:
            in_period |= (days >= t.first_day) & (days <= t.last_day)
        return with_main & in_period
    anchor_ents = [e for e in reference.raw.get("constraint_entities", []) if e != main]
    if not anchor_ents:
        return None
    with_anchor = np.isin(kg.s[facts], anchor_ents) | np.isin(kg.o[facts], anchor_ents)
    return with_main & with_anchor


def integrity(
    kg, questions: Sequence, fact_lists: Sequence[Sequence[int]], references: Sequence[Constraints]
) -> dict[str, np.ndarray]:
    """Answer, anchor and evidence-chain recall per question (NaN where a question has no anchor)."""
    answer = evaluate.answer_recall(kg, fact_lists, questions)
    masks = [
        reference_anchor_mask(kg, np.asarray(f), q.question, ref)
        for q, f, ref in zip(questions, fact_lists, references)
    ]
    anchor = evaluate.anchor_recall(masks)
    return {"answer": answer, "anchor": anchor, "chain": evaluate.chain_recall(answer, anchor)}


def sensitivity(
    model,
    questions: Sequence,
    constraints: Sequence[Constraints],
    q_vecs: np.ndarray,
    ks: Sequence[int] = KS,
    ns: Sequence[int] = NS,
    shown: dict | None = None,
    facts_shown: int | None = None,
):
    """Answer recall and average context length of the evidence chain over the K × N grid; fills
    ``shown[(K, N)]`` with the per-question answer recall of the first ``facts_shown`` chain facts (what
    the reader is shown) when given (the claims' outcomes)."""
    rows = []
    for n in ns:
        for k in ks:
            chains, _ = model.chains(constraints, q_vecs, k, n, progress=False)
            recall = evaluate.answer_recall(model.kg, [c.facts for c in chains], questions)
            if shown is not None:
                facts = [c.facts for c in chains]
                shown[(k, n)] = evaluate.answer_recall(model.kg, facts, questions, k=facts_shown)
            rows.append(
                {
                    "K": k,
                    "N": n,
                    "answer_recall": float(recall.mean()),
                    "avg_context_facts": float(np.mean([len(c) for c in chains])),
                }
            )
    return pd.DataFrame(rows)


def failure_modes(kg, questions: Sequence, chains: Sequence[EvidenceChain]) -> dict:
    """Appendix E's two failure modes.

    * mode 1 — retrieval collapse: the subgraph is empty; "from a wrong main entity" when the grounded
      main entity has no fact joining it to a gold answer;
    * mode 2 — temporal truncation on first/last questions: the subgraph holds a gold answer but the
      pruned chain does not.
    Returns counts, rates and the indices of the questions in each mode.
    """
    empty = [i for i, c in enumerate(chains) if len(c.subgraph) == 0]
    wrong_main = [
        i
        for i in empty
        if not main_entity_supported(
            kg, chains[i].constraints, questions[i].answers, questions[i].answer_type
        )
    ]
    first_last = [i for i, q in enumerate(questions) if q.qtype == "first_last"]
    truncated = [
        i
        for i in first_last
        if answer_recalled(kg, chains[i].subgraph, questions[i].answers, questions[i].answer_type)
        and not answer_recalled(kg, chains[i].facts, questions[i].answers, questions[i].answer_type)
    ]
    n = len(questions)
    return {
        "questions": n,
        "empty_subgraph": len(empty),
        "empty_subgraph_rate": len(empty) / n if n else float("nan"),
        "empty_from_wrong_main_entity": len(wrong_main),
        "first_last_questions": len(first_last),
        "first_last_truncated": len(truncated),
        "first_last_truncated_rate": len(truncated) / len(first_last) if first_last else float("nan"),
        "empty_idx": empty,
        "wrong_main_idx": wrong_main,
        "truncated_idx": truncated,
    }


#: Degree weights of the linker's grounding score (:meth:`temporag.linking.EntityLinker.score`) the
#: cross-validation chooses among on each fold's training part.
DEGREE_WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


def parser_crossval(kg, questions: Sequence, parser, k: int = 5, seed: int = 0, weights=DEGREE_WEIGHTS):
    """k-fold cross-validation of the offline parser against the data-derived gold: on each fold the
    linker's degree weight is chosen on the other k − 1 folds (highest main-entity + relation accuracy)
    and scored on the held-out fold.  Returns the per-fold table (``mean`` / ``std`` / ``min`` rows
    last; :func:`temporag.linking.crossval.cross_validate`).  The parser's weight is restored."""
    texts = [q.question for q in questions]
    kept = parser.linker.degree_weight
    main, rel = {}, {}
    try:
        for w in weights:
            parser.linker.degree_weight = w
            parses = parser.parse_many(texts)
            main[w] = np.array(
                [main_entity_supported(kg, c, q.answers, q.answer_type) for q, c in zip(questions, parses)]
            )
            rel[w] = np.array(
                [relation_supported(kg, c, q.answers, q.answer_type) for q, c in zip(questions, parses)]
            )
    finally:
        parser.linker.degree_weight = kept
    both = {w: main[w].astype(float) + rel[w] for w in weights}

    def score(train, test):
        w = choose_on(train, weights, both)
        return {"degree_weight": w, "main_entity_acc": main[w][test], "relation_acc": rel[w][test]}

    return cross_validate(len(questions), score, k, seed)
