"""Who writes the agent's next turn: the LLM (the paper, P_reasoning) or an offline scripted policy.

Both return "Thought: … / Action: …" text that the agent parses the same way, so their traces and records
are alike and SAR's retrieval can be measured without a strong model.

The **offline scripted policy** issues the SEARCH actions a competent agent would for the question's
template (read by :mod:`temporag.answer.template_reader` from the kit's offline parse): for "after X, who
first …" one SEARCH for X's event, then ``SEARCH(…, AFTER, that day)``; for a named date ``SEARCH(…, IN,
date)``; for "first / last" one SEARCH asking for that order.  Sub-queries are written as triples in the main
entity's role ("?; Make a visit; Iraq"), so decomposition needs no model.  It FINISHes with the template
reader's answer over everything it observed.  Given verifier feedback it repeats its searches and adds
broader ones — also without the relation after the first rejection, also with head and tail swapped after
the second — so a retry only ever sees more evidence than the attempt before it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.methods.sar.agent import PolicyReply, Step

# -- the LLM policy ------------------------------------------------------------------------------------

# P_reasoning: the paper's structure (thought, then SEARCH with a typed temporal constraint or FINISH) in the
# kit's own words.  The worked example (not a MultiTQ question) is given as real dialogue turns: small local
# models imitate a turn they have seen far more reliably than a format they are told about.
REASONING_PROMPT = """You answer a question about dated political events with a knowledge graph of facts \
"subject relation object on date". Work in turns. Each turn is exactly two lines:
Thought: what you know so far and what you still need
Action: SEARCH("sub-query", TYPE, TIME) or FINISH(answer)

SEARCH looks up facts. The sub-query names who acts, the action and whom it is done to, e.g. "China visit \
Abdullah Gül". TYPE is ANYTIME, BEFORE, AFTER or IN; TIME is a date written YYYY, YYYY-MM or YYYY-MM-DD, or \
none with ANYTIME. Facts come back oldest first when you ask for an order (first, last, before, after).
FINISH gives the final answer only: a name copied from the facts, or a date as precise as the question \
asks."""

EXAMPLE_TURNS: tuple[tuple[str, str], ...] = (
    ("user", "Question: Who visited Japan first after Germany did?"),
    (
        "assistant",
        'Thought: I need the date when Germany visited Japan.\nAction: SEARCH("Germany visit Japan", '
        "ANYTIME, none)",
    ),
    ("user", "Observation:\n1. Germany Make a visit Japan on 2011-04-02"),
    (
        "assistant",
        "Thought: Germany visited Japan on 2011-04-02. Now I need the visits to Japan after that "
        'day.\nAction: SEARCH("who visit Japan first", AFTER, 2011-04-02)',
    ),
    (
        "user",
        "Observation:\n1. France Make a visit Japan on 2011-05-10\n2. Kenya Make a visit Japan on 2011-06-01",
    ),
    ("assistant", "Thought: The first visit after 2011-04-02 is France's.\nAction: FINISH(France)"),
)

REMINDER = (
    'That turn had no valid action. Reply with two lines, Thought: ... and Action: SEARCH("sub-query", '
    "TYPE, TIME) or Action: FINISH(answer)."
)


def observation_text(kg, facts: Sequence[int], note: str = "") -> str:
    """What the agent sees after a SEARCH: numbered facts in the kit's line format."""
    lines = [f"{i}. {kg.verbalise(int(f))}" for i, f in enumerate(facts, 1)]
    body = "\n".join(lines) if lines else "no fact matched"
    return "Observation:\n" + body + (f"\n({note})" if note else "")


class LLMPolicy:
    """The paper's agent: the LLM continues the thought / action / observation dialogue."""

    name = "llm"

    def __init__(self, llm, kg, *, max_tokens: int = 96) -> None:
        self.llm = llm
        self.kg = kg
        self.max_tokens = max_tokens

    def prepare(self, questions: Sequence[str]) -> None:
        """Nothing to precompute (the offline policy parses here)."""

    def begin(self, question: str, feedback: list[str]) -> dict:
        return {"question": question, "feedback": feedback}

    def messages(self, state: dict, memory: list[Step]) -> list[dict[str, str]]:
        user = f"Question: {state['question']}"
        if state["feedback"]:
            notes = "\n".join(f"- {f}" for f in state["feedback"])
            user += f"\nA checker rejected your earlier answer:\n{notes}\nSearch again and answer better."
        messages = [{"role": "system", "content": REASONING_PROMPT}]
        messages += [{"role": role, "content": text} for role, text in EXAMPLE_TURNS]
        messages.append({"role": "user", "content": user})
        for step in memory:
            messages.append(
                {
                    "role": "assistant",
                    "content": f"Thought: {step.thought}\nAction: {step.action.text()}"
                    if step.action.kind != "MALFORMED"
                    else step.raw.strip() or "(empty)",
                }
            )
            if step.action.kind == "SEARCH":
                messages.append(
                    {"role": "user", "content": observation_text(self.kg, step.observation, step.note)}
                )
            else:
                messages.append({"role": "user", "content": REMINDER})
        return messages

    def step(self, state: dict, memory: list[Step]) -> PolicyReply:
        try:
            response = self.llm.chat(
                self.messages(state, memory), max_tokens=self.max_tokens, stop=["Observation:", "\nQuestion:"]
            )
        except Exception as exc:  # noqa: BLE001 - recorded as the attempt's outcome, the batch goes on
            response = self.llm.error_response(exc)
            return PolicyReply("", [response], error=response.error)
        return PolicyReply(response.text, [response])


# -- the offline scripted policy -------------------------------------------------------------------------


def _triple(head: str, relation: str, tail: str, hint: str = "") -> str:
    text = f"{head}; {relation}; {tail}"
    return f"{hint}: {text}" if hint else text


class OfflinePolicy:
    """The SEARCH plan a competent agent follows for the question's template, no model involved."""

    name = "offline"

    def __init__(self, workspace) -> None:
        self.workspace = workspace

    def prepare(self, questions: Sequence[str]) -> None:
        """Parse and read the templates of many questions at once (entity spans embed in one batch)."""
        self.workspace.templates(list(questions))

    def template(self, question: str):
        return self.workspace.templates([question])[0]

    def begin(self, question: str, feedback: list[str]) -> dict:
        return {"tq": self.template(question), "level": len(feedback)}

    def _labels(self, tq) -> tuple[str, str, str, str]:
        kg = self.workspace.kg
        pivot = kg.entity_labels[tq.pivot] if tq.pivot is not None else "?"
        relation = kg.relation_labels[tq.relations[0]] if tq.relations else "?"
        other = kg.entity_labels[tq.others[0]] if tq.others else "?"
        anchor = kg.entity_labels[tq.anchor_entity] if tq.anchor_entity is not None else "?"
        return pivot, relation, other, anchor

    @staticmethod
    def _variants(tq, level: int) -> list[tuple[bool, bool]]:
        """(keep the relation, main entity as subject) for each search of one kind, broadest last: the
        first attempt searches once; after one rejection also without the relation; after two also with
        head and tail swapped."""
        subject = tq.pivot_role != "object"
        out = (
            [(True, subject)]
            + ([(False, subject)] if level >= 1 else [])
            + ([(True, not subject)] if level >= 2 else [])
        )
        return out

    @staticmethod
    def _sub_query(
        pivot: str, relation: str, other: str, keep_relation: bool, subject: bool, hint: str = ""
    ) -> str:
        relation = relation if keep_relation else "?"
        return _triple(pivot, relation, other, hint) if subject else _triple(other, relation, pivot, hint)

    def step(self, state: dict, memory: list[Step]) -> PolicyReply:
        tq, level = state["tq"], state["level"]
        pivot, relation, other, anchor = self._labels(tq)
        evidence = np.asarray([f for s in memory for f in s.observation], dtype=np.int64)
        done = sum(1 for s in memory if s.action.kind == "SEARCH")
        if tq.pivot is None:
            return PolicyReply(
                "Thought: The question names no entity I can find in the graph.\nAction: FINISH(unknown)"
            )
        needs_anchor = (
            tq.constraint in ("before", "after", "same") and tq.time is None and tq.anchor_entity is not None
        )
        # at most two searches for the reference event, three for the answer, then FINISH: six turns
        anchor_variants = self._variants(tq, min(level, 1))
        anchor_searches = (
            [self._sub_query(pivot, relation, anchor, *v) for v in anchor_variants] if needs_anchor else []
        )
        anchor_searches = list(dict.fromkeys(anchor_searches))
        if done < len(anchor_searches):
            return PolicyReply(
                f"Thought: The question is relative to when {anchor} did this with {pivot}; "
                "I need that date first.\n"
                f'Action: SEARCH("{anchor_searches[done]}", ANYTIME, none)'
            )
        kind, when, why = self._constraint(tq, evidence)
        hint = tq.order or ("last" if kind == "BEFORE" else "")
        main_searches = list(
            dict.fromkeys(
                self._sub_query(pivot, relation, other, *v, hint=hint) for v in self._variants(tq, level)
            )
        )
        i = done - len(anchor_searches)
        if i < len(main_searches):
            wanted = "the date" if tq.answer_type == "time" else "who"
            order = f" {tq.order}" if tq.order else ""
            thought = f"Thought: I need {wanted}{order} for {relation} with {pivot}" + (
                f"; {why}." if why else "."
            )
            return PolicyReply(f'{thought}\nAction: SEARCH("{main_searches[i]}", {kind}, {when})')
        reading = self.workspace.reader.read(tq, evidence)
        answers = reading.answers[:3]
        if not answers:
            return PolicyReply("Thought: No retrieved fact answers the question.\nAction: FINISH(unknown)")
        note = f" ({reading.note})" if reading.note else ""
        return PolicyReply(
            f"Thought: Reading the {tq.template.replace('_', '/')} question off the facts{note}, "
            f"the answer is {answers[0]}.\nAction: FINISH({answers!r})"
        )

    def _constraint(self, tq, evidence: np.ndarray) -> tuple[str, str, str]:
        """(type, time, why) of the main SEARCH: the named date, or the reference event's date found."""
        if tq.time is not None:
            kind = {"before": "BEFORE", "after": "AFTER"}.get(tq.constraint or "", "IN")
            return kind, tq.time.iso, f"the question names {tq.time.iso}"
        if tq.constraint in ("before", "after", "same") and tq.anchor_entity is not None:
            period, _ = self.workspace.reader.anchor_period(tq, evidence)
            if period is None:
                return (
                    "ANYTIME",
                    "none",
                    "the reference event was not found, so I search without a time limit",
                )
            kind = {"before": "BEFORE", "after": "AFTER"}.get(tq.constraint, "IN")
            return kind, period.iso, f"the reference event happened on {period.iso}"
        return "ANYTIME", "none", ""
