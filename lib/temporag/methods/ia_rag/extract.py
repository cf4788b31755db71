"""§3.2 Interval Event Unit extraction: e_i = ⟨s_i, c_i, [t_start, t_end], f_i, src_i⟩ (Eq. 1).

Two interchangeable extractors return the same :class:`IEU` records:

* :class:`OfflineExtractor` — sentence splitting, temporal normalisation with the paper's conversion
  tables (:func:`temporag.timeutil.extract_time_expressions`: exact day / month / year, explicit
  intervals, early / mid / late / around, "until X", relative dates against the reference-time stack),
  the FuzzyFlag as the tables set it, the mandatory-subject rule (a pronoun becomes the page's entity
  where that is the only reading, :func:`.sentences.resolve_subject`), one IEU per distinct time
  expression (clauses split only at clause breaks), and every undated sentence kept: with its
  paragraph's last date (fuzzy, rule "inherited") or with an explicit unknown interval (rule "undated").
* :class:`LLMExtractor` — Fig. 7's task and JSON output in the kit's own prompt, one call per chunk.

Choices the paper leaves open (offline): a pronoun resolves to the page title (Wikipedia pages are about
their title) only where no other person could be meant, and is left as written otherwise (the paper's
LLM drops such sentences; dropping them lost 10 % of TimeQA's answers); an undated sentence inherits the
last explicit date of its paragraph, marked fuzzy, or has an unknown interval.  A unit is embedded with
its page title and a short context (:meth:`IEU.embed_text`), since a sentence alone often does not name
whom it is about.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from temporag.llm import LLMError, parse_json_reply
from temporag.methods.ia_rag.corpus import Chunk, Doc
from temporag.methods.ia_rag.sentences import (
    SUBJECT_PRONOUNS,
    lead_subject,
    resolve_subject,
    split_by_times,
    split_sentences,
)
from temporag.progress import tqdm
from temporag.timeutil import TimeExpression, day_of, extract_time_expressions, iso_day, year_is_fuzzy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IEU:
    """An interval event unit; ``t_start`` / ``t_end`` are days since 1970-01-01 (None = unknown).

    ``key`` identifies the unit within its extraction ("chunk:n"); ``anchor``/``offset`` record that
    the time was computed from another unit's time (rule G), so tightening can propagate along it."""

    sentence: str
    context: str
    t_start: int | None
    t_end: int | None
    fuzzy: bool
    source: int
    chunk: int = -1
    key: str = ""
    subject: str = ""
    time_text: str = ""
    rule: str = ""
    anchor: str | None = None
    offset: tuple[int, int, int] | None = None
    sign: int = 0
    title: str = ""

    @property
    def known(self) -> bool:
        return self.t_start is not None and self.t_end is not None

    def span(self) -> str:
        a = "unknown" if self.t_start is None else iso_day(self.t_start)
        b = "unknown" if self.t_end is None else iso_day(self.t_end)
        return a if a == b else f"{a} – {b}"

    def line(self) -> str:
        """How a reader sees the unit: '[start – end ~] (page) sentence', the page title only when the
        sentence does not name it ('~' = fuzzy)."""
        named = self.title and self.title.split()[-1] in self.sentence
        page = f"({self.title}) " if self.title and not named else ""
        return f"[{self.span()}{' ~' if self.fuzzy else ''}] {page}{self.sentence}"

    def embed_text(self, context_words: int = 20) -> str:
        """What the encoder reads: page title, sentence and the start of its context."""
        context = " ".join(self.context.split()[:context_words])
        head = f"{self.title}: " if self.title else ""
        return f"{head}{self.sentence}" + (f" ({context})" if context else "")

    def to_dict(self) -> dict:
        return {
            "sentence": self.sentence,
            "context": self.context,
            "t_start": self.span().split(" – ")[0],
            "t_end": self.span().split(" – ")[-1],
            "FuzzyFlag": self.fuzzy,
            "source": self.source,
        }


# ----------------------------------------------------------------------------------------------------
# the offline extractor


class OfflineExtractor:
    """IEUs without an LLM (see the module docstring for the rules)."""

    name = "offline"

    def __init__(self, inherit: bool = True, context_words: int = 60) -> None:
        self.inherit = inherit
        self.context_words = context_words

    def extract(self, docs: Sequence[Doc], chunks: Sequence[Chunk], progress: bool = False) -> list[IEU]:
        by_doc: dict[int, list[Chunk]] = {}
        for c in chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        out: list[IEU] = []
        for doc in tqdm(docs, desc="IEU extraction (offline)", disable=not progress):
            out.extend(self.extract_document(doc, by_doc.get(doc.doc_id, [])))
        return out

    def extract_document(self, doc: Doc, chunks: Sequence[Chunk]) -> list[IEU]:
        units: list[IEU] = []
        reference: TimeExpression | None = None
        ref_key: str | None = None
        paragraph_anchor: tuple[TimeExpression, str] | None = None
        prev_sentence = ""
        starts = [c.start for c in chunks]
        for s, e in split_sentences(doc.text):
            raw = " ".join(doc.text[s:e].split())
            if doc.text[max(0, s - 1) : s] == "\n" or s == 0:
                paragraph_anchor = None
            chunk = chunks[_last_le(starts, s)].chunk_id if chunks else -1
            n = len(units)
            times = extract_time_expressions(raw, reference)
            resolved, _ = resolve_subject(raw, doc.title)
            lead = lead_subject(resolved)
            subject = doc.title if not lead or doc.title.startswith(lead) else lead
            context = " ".join(prev_sentence.split()[: self.context_words])
            common = dict(source=doc.doc_id, chunk=chunk, subject=subject, title=doc.title)
            if times:
                for k, (clause, t) in enumerate(split_by_times(resolved, times)):
                    fuzzy = t.fuzzy or (t.rule == "C" and year_is_fuzzy(clause))
                    anchor = ref_key if t.rule == "G" and t.kind == "relative" else None
                    sign = 0
                    if anchor is not None and reference is not None and t.first_day is not None:
                        sign = 1 if t.first_day >= (reference.first_day or t.first_day) else -1
                    units.append(
                        IEU(
                            clause,
                            context,
                            t.first_day,
                            t.last_day,
                            fuzzy,
                            key=f"{doc.doc_id}:{n + k}",
                            time_text=t.text,
                            rule=t.rule,
                            anchor=anchor,
                            offset=t.offset if anchor else None,
                            sign=sign,
                            **common,
                        )
                    )
            elif self.inherit and paragraph_anchor is not None:
                t, key = paragraph_anchor
                units.append(
                    IEU(
                        resolved,
                        context,
                        t.first_day,
                        t.last_day,
                        True,
                        key=f"{doc.doc_id}:{n}",
                        rule="inherited",
                        anchor=key,
                        offset=(0, 0, 0),
                        **common,
                    )
                )
            elif len(resolved.split()) >= 2:
                units.append(
                    IEU(
                        resolved, context, None, None, True, key=f"{doc.doc_id}:{n}", rule="undated", **common
                    )
                )
            explicit = [
                t for t in times if t.first_day is not None and t.last_day is not None and t.rule != "G"
            ]
            if explicit and len(units) > n:
                reference, ref_key = explicit[-1], units[-1].key
                paragraph_anchor = (explicit[-1], units[-1].key)
            prev_sentence = resolved
        return units


def _last_le(values: Sequence[int], x: int) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return max(0, lo - 1)


# ----------------------------------------------------------------------------------------------------
# the LLM extractor (Fig. 7)

EXTRACT_PROMPT = """You extract Interval Event Units (IEUs) from a text, for a temporal knowledge graph.
An IEU is one complete factual statement that (1) happens at a specific time point or over an interval,
(2) carries real information, and (3) names its subject explicitly: no pronouns (he, she, it, they).

Time rules: keep a stack of the explicit dates you have read; resolve relative or vague times against
its top. Write every time as a closed interval t_start..t_end in YYYY-MM-DD:
- a day: start = end = that day, FuzzyFlag false; a month: first to last day, false;
- a year: Jan 1 to Dec 31, FuzzyFlag true for a point event (joined, appointed, born), false for a state;
- an explicit interval (1995-1998, from X to Y): its full extent, false;
- "until X": t_start "unknown", t_end = X, true; a relative date ("two years later"): computed, false;
- early / mid / late YYYY = Jan-Apr / May-Aug / Sep-Dec, around YYYY = the whole year, always true.
Keep a sentence only if its time can be resolved (else inherit the paragraph's date, else drop it).
Split a sentence that mentions several distinct times into one IEU per time. Replace pronouns by the
full name found in the text or the title; if a subject cannot be resolved, leave that event out.
The optional context holds at most 80 tokens from the same text.

Reply with JSON only:
{{"events": [{{"event_id": "E1", "sentence": "...", "context": "...", "t_start": "YYYY-MM-DD or unknown",
"t_end": "YYYY-MM-DD or unknown", "FuzzyFlag": true}}]}}
Reply {{"events": []}} when nothing qualifies.

Title: {title}
Text: {text}"""


def _day_or_none(value) -> int | None:
    if value in (None, "", "unknown", "UNKNOWN"):
        return None
    try:
        return day_of(str(value).strip()[:10])
    except ValueError:
        return None


def parse_events(obj, doc_id: int, chunk_id: int) -> list[IEU]:
    """IEUs from Fig. 7's JSON; events with a remaining subject pronoun or no time are dropped."""
    events = obj.get("events", []) if isinstance(obj, dict) else obj if isinstance(obj, list) else []
    flat = [x for e in events for x in (e if isinstance(e, list) else [e])]
    out = []
    for n, e in enumerate(flat):
        if not isinstance(e, dict) or not str(e.get("sentence", "")).strip():
            continue
        sentence = " ".join(str(e["sentence"]).split())
        first = sentence.split()[0].lower().strip(",")
        a, b = _day_or_none(e.get("t_start")), _day_or_none(e.get("t_end"))
        if first in SUBJECT_PRONOUNS or (a is None and b is None):
            continue
        if a is not None and b is not None and b < a:
            a, b = b, a
        out.append(
            IEU(
                sentence,
                str(e.get("context", "") or ""),
                a,
                b,
                bool(e.get("FuzzyFlag", True)),
                doc_id,
                chunk_id,
                f"{doc_id}:{chunk_id}:{n}",
                lead_subject(sentence) or "",
                "",
                "llm",
            )
        )
    return out


class LLMExtractor:
    """Fig. 7: one JSON-mode call per chunk through the kit's LLM client (cached)."""

    name = "llm"

    def __init__(self, llm, max_tokens: int = 1500) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.responses: list = []

    def extract(self, docs: Sequence[Doc], chunks: Sequence[Chunk], progress: bool = False) -> list[IEU]:
        titles = {d.doc_id: d.title for d in docs}
        prompts = [
            [{"role": "user", "content": EXTRACT_PROMPT.format(title=titles.get(c.doc_id, ""), text=c.text)}]
            for c in chunks
        ]
        self.responses = self.llm.chat_many(
            prompts,
            max_tokens=self.max_tokens,
            json_mode=True,
            progress=progress,
            desc="IEU extraction (LLM)",
        )

        out: list[IEU] = []
        for c, r in zip(chunks, self.responses):
            if r.error is not None:
                continue
            try:
                out.extend(parse_events(parse_json_reply(r.text), c.doc_id, c.chunk_id))
            except LLMError as exc:
                log.warning("chunk %d: %s", c.chunk_id, exc)
        return out


def make_extractor(kind: str = "offline", llm=None):
    """``"offline"`` or ``"llm"`` (needs ``llm``): both return :class:`IEU` lists."""
    if kind == "offline":
        return OfflineExtractor()
    if kind == "llm":
        if llm is None:
            raise ValueError("extractor='llm' needs an LLM client (run.llm())")
        return LLMExtractor(llm)
    raise ValueError(f"extractor must be 'offline' or 'llm', got {kind!r}")
