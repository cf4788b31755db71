"""TECQA §4.2.1: structural constraint parsing — the question's entities, one relation and the main entity,
grounded to the KG schema (Eq. 2).

Two interchangeable parsers return the same :class:`~temporag.question.parsing.Constraints` record: the kit's
:class:`~temporag.question.parsing.OfflineParser` (no LLM) and :class:`LLMParser` (the paper's three prompts,
appendix F.1's structure in the kit's own words).  :func:`make_parser` picks one by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.answer.readers import parse_ranked_answers
from temporag.question.parsing import Constraints, OfflineParser, make_offline_parser

PARSERS = ("offline", "llm")


# The three parsing prompts (appendix F.1's structure and output formats; the kit's own wording and
# examples, none of them taken from the MultiTQ test questions).
ENTITY_PROMPT = """List the named participants of the question — people, organisations, countries, groups — \
as a Python list of strings, copied as they are written in the question. Leave out dates, question words and \
generic words such as "country" or "person". Reply with the list only, or [] if there is none.

Question: When did the Prime Minister of Japan last criticise the South Korean navy?
Entities: ['Prime Minister of Japan', 'South Korean navy']

Question: Who was the last to host Angela Merkel before Brazil did?
Entities: ['Angela Merkel', 'Brazil']

Question: In March 2009, which country threatened Georgia?
Entities: ['Georgia']

Question: {question}
Entities:"""

RELATION_PROMPT = """Choose the ONE relation from the relation list that names the action the question asks \
about; the entities are given for context. Reply with the relation name exactly as it is listed, nothing else.

Hints: want / wish / plan / intend → "Express intent to ..."; ask / urge / call on / request → \
"Appeal for ..." or "Make an appeal or request"; talks / negotiate → "Engage in negotiation" or "Express \
intent to meet or negotiate"; visit / travel to → "Make a visit", and the visited side "Host a visit"; \
attack / fight / use force → "Use ... force"; criticise / condemn / blame → "Criticize or denounce" or \
"Accuse".

Question: When did the Prime Minister of Japan last criticise the South Korean navy?
Entities: ['Prime Minister of Japan', 'South Korean navy']
Relation: Criticize or denounce

Question: Who was the last to host Angela Merkel before Brazil did?
Entities: ['Angela Merkel', 'Brazil']
Relation: Host a visit

Relation list: {relations}

Question: {question}
Entities: {entities}
Relation:"""

MAIN_PROMPT = """Name the ONE main entity of the question from the list. If the grammatical subject \
is a specific entity, the main entity is the subject. If the subject is a question word (who, which country, \
what), the main entity is the object the action is directed at. Reply with the name only.

Question: When did the Prime Minister of Japan last criticise the South Korean navy?
List: ['Prime Minister of Japan', 'South Korean navy']
Main entity: Prime Minister of Japan

Question: Who was the last to host Angela Merkel before Brazil did?
List: ['Angela Merkel', 'Brazil']
Main entity: Angela Merkel

Question: {question}
List: {entities}
Main entity:"""


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        line = line.strip().strip("'\"`*").strip()
        if line:
            for prefix in ("Relation:", "Main entity:", "Answer:", "A:"):
                if line.lower().startswith(prefix.lower()):
                    line = line[len(prefix) :].strip().strip("'\"`*").strip()
            return line
    return ""


class LLMParser:
    """The paper's parse (Eq. 1): three LLM calls per question, then Eq. 2 grounding of every mention.

    Grounding reuses the offline parser's name tables: an exact KG name wins, otherwise the label with
    the best cosine.  Every raw reply is kept in ``Constraints.raw`` for audits.
    """

    def __init__(self, kg, llm, offline: OfflineParser) -> None:
        self.kg = kg
        self.llm = llm
        self.linker = offline.linker
        self.grounder = offline.grounder

    def _chat(self, prompts: Sequence[str], max_tokens: int, desc: str, progress: bool):
        return self.llm.chat_many(
            [[{"role": "user", "content": p}] for p in prompts],
            max_tokens=max_tokens,
            desc=desc,
            progress=progress,
        )

    def parse_many(self, questions: Sequence[str], progress: bool = True) -> list[Constraints]:
        questions = list(questions)
        if not questions:
            return []
        replies = self._chat(
            [ENTITY_PROMPT.format(question=q) for q in questions], 64, "parse: entities", progress
        )
        raw_entities = [parse_ranked_answers(r.text, top_k=8) for r in replies]
        relations = "; ".join(self.kg.relation_labels)
        rel_replies = self._chat(
            [
                RELATION_PROMPT.format(relations=relations, question=q, entities=repr(ents))
                for q, ents in zip(questions, raw_entities)
            ],
            24,
            "parse: relation",
            progress,
        )
        main_replies = self._chat(
            [MAIN_PROMPT.format(question=q, entities=repr(ents)) for q, ents in zip(questions, raw_entities)],
            24,
            "parse: main entity",
            progress,
        )
        rel_texts = [_first_line(r.text) for r in rel_replies]
        main_texts = [_first_line(r.text) for r in main_replies]
        flat = [m for ents in raw_entities for m in ents]
        ent_ids, _ = self.linker.ground(flat) if flat else (np.empty(0, dtype=np.int64), None)
        main_ids, _ = self.linker.ground(main_texts)
        rel_ids, _ = self.grounder.ground(rel_texts)
        out, pos = [], 0
        for i, q in enumerate(questions):
            ents = [int(e) for e in ent_ids[pos : pos + len(raw_entities[i])] if e >= 0]
            pos += len(raw_entities[i])
            main = int(main_ids[i]) if main_texts[i] and main_ids[i] >= 0 else (ents[0] if ents else None)
            if main is not None and main not in ents:
                ents = [main, *ents]
            out.append(
                Constraints(
                    question=q,
                    entities=tuple(dict.fromkeys(ents)),
                    relations=(int(rel_ids[i]),) if rel_texts[i] else (),
                    main=main,
                    entity_mentions=tuple(raw_entities[i]),
                    relation_mention=rel_texts[i],
                    main_mention=main_texts[i] or None,
                    parser="llm",
                    raw={
                        "entity_reply": replies[i].text,
                        "relation_reply": rel_replies[i].text,
                        "main_reply": main_replies[i].text,
                        "errors": [r.error for r in (replies[i], rel_replies[i], main_replies[i]) if r.error],
                    },
                )
            )
        return out

    def parse(self, question: str) -> Constraints:
        return self.parse_many([question], progress=False)[0]


def make_parser(kg, parser: str = "offline", *, llm=None, offline: OfflineParser | None = None, encoder=None):
    """The parser a run asked for by name: "offline" (no LLM) or "llm" (the three prompts; needs ``llm``).

    ``offline`` reuses an offline parser's name tables (the LLM parser grounds its mentions with them)."""
    if parser not in PARSERS:
        raise ValueError(f"parser must be one of {PARSERS}, got {parser!r}")
    offline = offline or make_offline_parser(kg, encoder)
    if parser == "offline":
        return offline
    if llm is None:
        raise ValueError("parser='llm' needs an llm (run.llm() or temporag.llm.LLM())")
    return LLMParser(kg, llm, offline)
