"""Structured query decomposition (Algorithm 1, line 30): a SEARCH sub-query → (head, relation, tail).

The paper asks an LLM (P_decomp).  The kit keeps that and adds the offline linker (``temporag.linking``,
the one TECQA's offline parser uses) as the fallback when the reply cannot be parsed, and as an explicit
option.  A sub-query already written as a triple — ``"Iraq; Make a visit; ?"``, optionally led by an order
word ``"last: ?; Make a visit; Iraq"`` — is split as written, by either decomposer, with no LLM call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from temporag.linking import predicate_text, tokenize

# The kit's own wording of P_decomp: the paper's structure (sub-query in, (h, r, t) out), its running
# example, and semicolons because KG names contain commas.
DECOMP_PROMPT = """Turn a search request about dated events into the three parts of a knowledge-graph fact: \
the head entity (who acts), the relation (what they do) and the tail entity (whom it is done to). Copy names \
as written. Write ? for a part the request does not name. Reply with one line: (head; relation; tail)

Request: China visit Abdullah Gül date
Triple: (China; visit; Abdullah Gül)

Request: who criticised Iran after 2010
Triple: (?; criticise; Iran)

Request: Japan sign agreement
Triple: (Japan; sign agreement; ?)

Request: {sub_query}
Triple:"""

_TRIPLE_REPLY = re.compile(r"\(([^;()]*(?:\([^()]*\)[^;()]*)*);([^;]*);(.*)\)")
_LEAD_WORDS = frozenset("the a an who whom which what when where".split())
_ORDER_PREFIX = re.compile(r"^\s*([A-Za-z ]{2,20}):\s*(?=[^;]*;[^;]*;)")


@dataclass(frozen=True)
class Triple:
    """A decomposed sub-query: names as written (None for an unnamed part) and who decomposed it."""

    head: str | None
    relation: str | None
    tail: str | None
    source: str  # "triple" (written as one) | "llm" | "offline" | "llm→offline" (reply unparsable)
    hint: str = ""  # an order word written before a triple ("last: ...")

    def parts(self) -> tuple[str | None, str | None, str | None]:
        return (self.head, self.relation, self.tail)


def _clean(part: str | None) -> str | None:
    if part is None:
        return None
    text = part.strip().strip("'\"`").strip()
    return None if text in ("", "?", "None", "none", "unknown") else text


def split_triple(sub_query: str) -> Triple | None:
    """A sub-query written as ``h; r; t`` (optionally ``word: h; r; t``), else None."""
    text = sub_query.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    hint = ""
    m = _ORDER_PREFIX.match(text)
    if m:
        hint, text = m.group(1).strip(), text[m.end() :]
    parts = text.split(";")
    if len(parts) != 3:
        return None
    h, r, t = (_clean(p) for p in parts)
    return Triple(h, r, t, "triple", hint)


def parse_triple_reply(text: str | None) -> tuple[str | None, str | None, str | None] | None:
    """``(head; relation; tail)`` from a P_decomp reply; None when the reply holds no triple."""
    if not text:
        return None
    for line in text.splitlines():
        line = line.strip()
        if line.lower().startswith("triple:"):
            line = line[7:].strip()
        m = _TRIPLE_REPLY.search(line)
        if m:
            h, r, t = (_clean(g) for g in m.groups())
            if h or r or t:
                return h, r, t
        parts = [p for p in line.strip("()").split(";")]
        if len(parts) == 3:
            h, r, t = (_clean(p) for p in parts)
            if h or r or t:
                return h, r, t
    return None


class OfflineDecomposer:
    """Sub-query → triple with the kit's linker: the first entity mentioned before any action word is
    the head, an entity after it the tail; what is left (entities, dates and question words removed) is
    the relation phrase."""

    name = "offline"

    def __init__(self, linker) -> None:
        self.linker = linker

    def __call__(self, sub_query: str) -> tuple[Triple, list]:
        given = split_triple(sub_query)
        if given is not None:
            return given, []
        mentions = self.linker.link(sub_query)
        relation = predicate_text(sub_query, mentions) or None
        labels = self.linker.kg.entity_labels
        names = [labels[m.entity] for m in mentions[:2]]
        head = tail = None
        if len(names) == 2:
            head, tail = names
        elif names:
            lead = [t for t in tokenize(sub_query[: mentions[0].start]) if t.norm not in _LEAD_WORDS]
            head, tail = (names[0], None) if not lead else (None, names[0])
        return Triple(head, relation, tail, "offline"), []


class LLMDecomposer:
    """P_decomp through the kit's LLM client; an unparsable reply or a failed call falls back to the
    offline decomposer (``Triple.source`` says so)."""

    name = "llm"

    def __init__(self, llm, fallback: OfflineDecomposer, max_tokens: int = 40) -> None:
        self.llm = llm
        self.fallback = fallback
        self.max_tokens = max_tokens

    def __call__(self, sub_query: str) -> tuple[Triple, list]:
        given = split_triple(sub_query)
        if given is not None:
            return given, []
        messages = [{"role": "user", "content": DECOMP_PROMPT.format(sub_query=sub_query.strip())}]
        try:
            response = self.llm.chat(messages, max_tokens=self.max_tokens, stop=["\n\n", "Request:"])
        except Exception as exc:  # noqa: BLE001 - a failed call is recorded and the offline parse used
            response = self.llm.error_response(exc)
        parts = parse_triple_reply(response.text) if response.error is None else None
        if parts is None:
            triple, _ = self.fallback(sub_query)
            return Triple(*triple.parts(), "llm→offline"), [response]
        return Triple(*parts, "llm"), [response]


def make_decomposer(kind: str, linker, llm=None):
    """ "offline" (the linker) or "llm" (P_decomp, the offline decomposer as its fallback)."""
    offline = OfflineDecomposer(linker)
    if kind == "offline":
        return offline
    if kind == "llm":
        if llm is None:
            raise ValueError("decompose='llm' needs an llm")
        return LLMDecomposer(llm, offline)
    raise ValueError(f"decompose must be 'llm' or 'offline', got {kind!r}")
