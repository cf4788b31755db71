"""What a linked entity mention is, and what a question's mentions say about it.

TECQA's third prompt picks the question's main entity and its relation phrase from the mentions; these
rules need only the mentions' positions and the words around them, so they live apart from the linker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from temporag.linking.tokens import FUNCTION_WORDS, Token, tokenize
from temporag.timeutil import extract_time_mentions

#: Auxiliaries: an entity right after one is the grammatical subject ("When did Kitti ... ?").
AUXILIARIES = frozenset("did does do has have had was were is are will would could can".split())
#: Words that introduce a temporal constraint: the entity after them is an anchor, not the pivot.
CONSTRAINT_WORDS = frozenset("after before as than since until".split())
#: Wh-words; an entity right after one is the subject of an embedded clause ("... when X visited Y").
WH_WORDS = frozenset("who whom whose which what when where".split())
#: Question scaffolding dropped before relation grounding (it says how to ask, not what happened).
SCAFFOLD_WORDS = FUNCTION_WORDS | frozenset(
    """country countries person people someone somebody one ones whom which entity organisation organization
    could tell exact kind type same earliest latest final initial""".split()
)


@dataclass(frozen=True)
class Mention:
    """One entity mention: where it is, what it was grounded to and how."""

    text: str
    start: int
    end: int
    entity: int
    score: float  # 1.0 for an exact name match, the cosine otherwise
    method: str  # "exact" | "embedding"
    constraint: bool = False  # introduced by after / before / as / than: an anchor entity


def follows_constraint(tokens: Sequence[Token], start: int) -> bool:
    """True when the span follows 'after', 'before', 'as', 'than' ... (allowing 'the' in between),
    or 'same month of' — the entity names the reference event, not the pivot."""
    i = start - 1
    if i >= 0 and tokens[i].norm == "the":
        i -= 1
    if i < 0:
        return False
    word = tokens[i].norm
    if word in CONSTRAINT_WORDS:
        return True
    return word == "of" and i >= 2 and tokens[i - 2].norm == "same"


def first_mention_per_entity(mentions: list[Mention]) -> list[Mention]:
    """Keep the first mention of each entity (a name can be repeated in one question)."""
    seen, out = set(), []
    for m in mentions:
        if m.entity in seen:
            continue
        seen.add(m.entity)
        out.append(m)
    return out


def main_entity_index(question: str, mentions: Sequence[Mention]) -> int | None:
    """TECQA's main-entity rule: the subject if it is a specific entity, else the focus object.

    The subject is a specific entity when a mention follows an auxiliary ("When did Kitti Wasinondh
    ...", "Who did Greece appeal to") or a wh-word opening a clause ("... month when the citizens of
    Tanzania supported ..."); otherwise the subject is the interrogative and the pivot is the first
    mention that does not name the reference event of an after/before/as constraint.
    """
    if not mentions:
        return None
    tokens = tokenize(question)
    starts = {t.start: i for i, t in enumerate(tokens)}
    for idx, m in enumerate(mentions):
        i = starts.get(m.start)
        if i is None or m.constraint:
            continue
        j = i - 1
        if j >= 0 and tokens[j].norm == "the":
            j -= 1
        if j >= 0 and (tokens[j].norm in AUXILIARIES or tokens[j].norm in WH_WORDS):
            return idx
    for idx, m in enumerate(mentions):
        if not m.constraint:
            return idx
    return 0


def predicate_text(question: str, mentions: Sequence[Mention]) -> str:
    """The question without its entity mentions, dates and question scaffolding: the relation phrase."""
    cut = [(m.start, m.end) for m in mentions] + [(t.start, t.end) for t in extract_time_mentions(question)]
    words = [
        t.text
        for t in tokenize(question)
        if not any(s < t.end and t.start < e for s, e in cut)
        and t.norm not in SCAFFOLD_WORDS
        and t.norm != "'s"
    ]
    return " ".join(words)
