"""TECQA's analyses (§5.3–5.7, appendices D–E) as functions a notebook calls once per table or figure.

Everything here is LLM-free except :func:`hits_by_category`, which only scores a reader's answers.  Gold
that MultiTQ does not annotate (the main entity, the reference anchor) is derived from the KG and the
gold answers, and the definitions are stated in each docstring so the numbers can be audited.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.evaluate import answer_fact_mask, answer_recalled, gold_entity_ids, lenient_hit, strict_hit
from temporag.methods.tecqa import (
    Constraints,
    EvidenceChain,
    explicit_anchors,
    fact_days,
    subgraph,
    subgraph_parts,
)

KS = (5, 10, 20, 40, 60)  # Figure 4's K grid
NS = (1, 2, 5, 10)  # Figure 4's N grid


# -- parser accuracy (§4.2.1) -------------------------------------------------------------------------


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


def parser_accuracy(kg, questions: Sequence, constraints: Sequence[Constraints]) -> dict[str, float]:
    """Main-entity and relation accuracy against the data-derived gold, subgraph answer recall, empties."""
    main = np.array(
        [main_entity_supported(kg, c, q.answers, q.answer_type) for q, c in zip(questions, constraints)]
    )
    rel = np.array(
        [relation_supported(kg, c, q.answers, q.answer_type) for q, c in zip(questions, constraints)]
    )
    subs = [subgraph(kg, c) for c in constraints]
    recall = np.array([answer_recalled(kg, s, q.answers, q.answer_type) for s, q in zip(subs, questions)])
    return {
        "n": len(questions),
        "main_entity_acc": float(main.mean()) if len(main) else float("nan"),
        "relation_acc": float(rel.mean()) if len(rel) else float("nan"),
        "subgraph_answer_recall": float(recall.mean()) if len(recall) else float("nan"),
        "empty_subgraph_rate": float(np.mean([len(s) == 0 for s in subs])) if subs else float("nan"),
    }


# -- recall of retrieved contexts (Fig. 2, §1) ----------------------------------------------------------


def answer_recall(
    kg, questions: Sequence, fact_lists: Sequence[Sequence[int]], k: int | None = None
) -> np.ndarray:
    """Per-question 0/1: the (first k) retrieved facts contain a gold answer (appendix D)."""
    return np.array(
        [
            float(answer_recalled(kg, np.asarray(f)[:k] if k else np.asarray(f), q.answers, q.answer_type))
            for f, q in zip(fact_lists, questions)
        ]
    )


# -- evidence-chain integrity (Fig. 5, appendix D) --------------------------------------------------------


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
    ans = answer_recall(kg, questions, fact_lists)
    anchor = np.full(len(questions), np.nan)
    for i, (q, f, ref) in enumerate(zip(questions, fact_lists, references)):
        mask = reference_anchor_mask(kg, np.asarray(f), q.question, ref)
        if mask is not None:
            anchor[i] = float(mask.any())
    chain = np.where(np.isnan(anchor), np.nan, ans * np.nan_to_num(anchor))
    return {"answer": ans, "anchor": anchor, "chain": chain}


# -- sensitivity (Fig. 4) ------------------------------------------------------------------------------


def sensitivity(
    model,
    questions: Sequence,
    constraints: Sequence[Constraints],
    q_vecs: np.ndarray,
    ks: Sequence[int] = KS,
    ns: Sequence[int] = NS,
):
    """Answer recall and average context length of the evidence chain over the K × N grid."""
    import pandas as pd

    rows = []
    for n in ns:
        for k in ks:
            chains, _ = model.build(constraints, q_vecs, k, n, progress=False)
            recall = answer_recall(model.kg, questions, [c.facts for c in chains])
            rows.append(
                {
                    "K": k,
                    "N": n,
                    "answer_recall": float(recall.mean()),
                    "avg_context_facts": float(np.mean([len(c) for c in chains])),
                }
            )
    return pd.DataFrame(rows)


# -- reader scores (Tables 1-2) ------------------------------------------------------------------------


def hits_by_category(questions: Sequence, answers: Sequence[Sequence[str]]) -> dict[str, dict[str, float]]:
    """Hits@1 under both rules, overall and by Single / Multiple / entity / time (Table 1's columns)."""
    strict = np.array(
        [float(strict_hit(a, q.answers, k=1, answer_type=q.answer_type)) for a, q in zip(answers, questions)]
    )
    lenient = np.array([float(lenient_hit(list(a), q.answers)) for a, q in zip(answers, questions)])
    groups = {
        "Overall": np.ones(len(questions), dtype=bool),
        "Single": np.array([q.qlabel == "Single" for q in questions]),
        "Multiple": np.array([q.qlabel == "Multiple" for q in questions]),
        "Entity": np.array([q.answer_type == "entity" for q in questions]),
        "Time": np.array([q.answer_type == "time" for q in questions]),
    }
    out = {}
    for rule, vals in (("strict", strict), ("lenient", lenient)):
        out[rule] = {g: (float(vals[m].mean()) if m.any() else float("nan")) for g, m in groups.items()}
    out["n"] = {g: int(m.sum()) for g, m in groups.items()}
    return out


# -- failure analysis (§5.7, appendix E) -----------------------------------------------------------------


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


# -- worked example (Tables 5-6) ----------------------------------------------------------------------


def render_case(kg, question, chain: EvidenceChain, lines: int = 8) -> str:
    """A Table 5-style walk-through: extraction, subgraph size, anchors, the chain's first lines."""
    c = chain.constraints
    desc = c.describe(kg)
    answer_mask = answer_fact_mask(kg, chain.facts, question.answers, question.answer_type)
    anchor_set = set(chain.anchor_facts.tolist())
    span = ""
    if len(chain.subgraph):
        days = fact_days(kg, chain.subgraph)
        first, last = (str(np.datetime64(int(d), "D")) for d in (days.min(), days.max()))
        span = f"; context spans {first} to {last}"
    out = [
        f"Question: {question.question}   (gold: {', '.join(question.answers[:6])})",
        "Step 1  Structure-guided subgraph construction",
        f"  Extraction: entities {desc['entities']}; relation {desc['relation']}; "
        f"main entity {desc['main']!r}",
        f"  Retrieval: {len(chain.subgraph):,} facts retrieved{span}",
        "Step 2  Temporal evidence chain construction",
        f"  Explicit anchors: {[a.iso for a in chain.explicit] or 'none'}; "
        f"implicit anchors (top-N similar facts): {[a.iso for a in chain.implicit] or 'none'}",
        f"  K-nearest pruning & proximity serialisation: {len(chain.facts)} facts kept",
    ]
    for f, d, is_answer in list(zip(chain.facts.tolist(), chain.delta.tolist(), answer_mask.tolist()))[
        :lines
    ]:
        tags = [t for t, on in (("Anchor", f in anchor_set), ("Answer", is_answer)) if on]
        tag = f"[{', '.join(tags)}, δ={d}]" if tags else f"δ={d}"
        s, r, o, day = kg.as_quadruples([f])[0]
        out.append(f"    {tag:<22} {s} → {r} → {o} ({day})")
    if len(chain.facts) > lines:
        out.append("    ... (context ordered by proximity to the anchors) ...")
    return "\n".join(out)
