"""§3.3 Sub-graph time tightening, τ* = L(τ | C_k) (Eq. 5), for every fuzzy IEU of a component.

Two operators with one contract — an interval may only narrow, never widen, and the fuzzy flag is
cleared only when the evidence pins both ends exactly:

* :func:`tighten_offline` — constraint propagation to a fixpoint.  Constraints come from the component:
  (1) *same-fact evidence*: an exact neighbour in C_k about the same subject that names the same other
  entity and whose interval intersects (its Allen relation is one of the overlapping ones) bounds the
  fuzzy unit to the intersection ("until 1827" + "from 1811 to 1827" → 1811–1827, exact);
  (2) *derivations* recorded at extraction: a relative date ("two months later") is its anchor's
  interval shifted by the offset, an inherited date lies within its anchor's — when the anchor
  narrows, so does the unit.  Each bound remembers whether it came from exact evidence.
* :func:`tighten_llm` — Fig. 9's auditor prompt per component; an update that would widen an interval
  is rejected (counted), so both operators keep the "never widen" guarantee.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace

from temporag.llm import LLMError, parse_json_reply
from temporag.methods.ia_rag.extract import IEU, _day_or_none
from temporag.methods.ia_rag.graph import EventGraph
from temporag.timeutil import Allen, shift_interval

log = logging.getLogger(__name__)

_INF = 10**9
_INTERSECTING = {
    Allen.OVERLAPS,
    Allen.OVERLAPPED_BY,
    Allen.STARTS,
    Allen.STARTED_BY,
    Allen.DURING,
    Allen.CONTAINS,
    Allen.FINISHES,
    Allen.FINISHED_BY,
    Allen.EQUALS,
}
_NAME = re.compile(r"\b[A-Z][\w'\-]+(?:\s+(?:of|the|de|von|van|and)?\s*[A-Z][\w'\-]+)*")


def names(text: str, drop: str = "") -> set[str]:
    """Capitalised names of a sentence, without the words of ``drop`` (its subject) and without years."""
    skip = {w.casefold() for w in drop.split()}
    out = set()
    for m in _NAME.finditer(text):
        words = [w for w in m.group(0).split() if w.casefold() not in skip]
        if words and not m.group(0).isdigit():
            out.add(" ".join(words).casefold())
    return {n for n in out if len(n) > 2}


def _bounds(u: IEU) -> tuple[int, int]:
    return (u.t_start if u.t_start is not None else -_INF, u.t_end if u.t_end is not None else _INF)


def _own_exact(u: IEU) -> tuple[bool, bool]:
    """Which of a unit's own bounds are exact: both for a non-fuzzy unit; the stated end of "until X"
    (and the stated start of "since X") for rule E; none otherwise."""
    if not u.fuzzy:
        return True, True
    if u.rule == "E":
        return u.t_start is not None, u.t_end is not None
    return False, False


def same_fact(a: IEU, b: IEU, relation: Allen | None) -> bool:
    """``b`` is exact evidence for ``a``: same subject, a shared named entity and intersecting times."""
    if b.fuzzy or not b.known or a.subject.casefold() != b.subject.casefold():
        return False
    if relation is None:
        lo, hi = _bounds(a)
        if not (lo <= b.t_end and b.t_start <= hi):
            return False
    elif relation not in _INTERSECTING:
        return False
    return bool(names(a.sentence, a.subject) & names(b.sentence, b.subject))


def tighten_offline(graph: EventGraph, max_rounds: int = 10) -> tuple[list[IEU], list[dict]]:
    """Narrow every fuzzy unit from its component (see the module docstring); returns (units, changes).

    ``changes`` lists each unit whose interval narrowed: old and new bounds, whether its flag was
    cleared, and which units constrained it."""
    units = list(graph.units)
    key_to_id = {u.key: i for i, u in enumerate(units) if u.key}
    exact = [_own_exact(u) for u in units]
    lo = [_bounds(u)[0] for u in units]
    hi = [_bounds(u)[1] for u in units]
    why: dict[int, set[int]] = {}
    fuzzy_ids = [i for i, u in enumerate(units) if u.fuzzy]
    evidence = {
        i: [(j, rel) for j, rel in graph.neighbours(i) if same_fact(units[i], units[j], rel)]
        for i in fuzzy_ids
    }
    for _ in range(max_rounds):
        changed = False
        for i in fuzzy_ids:
            u = units[i]
            cands: list[tuple[int, int, bool, bool, int]] = [
                (units[j].t_start, units[j].t_end, True, True, j) for j, _ in evidence[i]
            ]
            a = key_to_id.get(u.anchor) if u.anchor else None
            if a is not None and a != i and lo[a] > -_INF and hi[a] < _INF:
                if u.offset and any(u.offset) and u.sign:
                    s, e = shift_interval(lo[a], hi[a], u.offset, u.sign)
                    cands.append((s, e, exact[a][0], exact[a][1], a))
                elif u.rule == "inherited":
                    cands.append((lo[a], _INF, False, False, a))
            for s, e, xs, xe, j in cands:
                new_lo, new_hi = max(lo[i], s), min(hi[i], e)
                if new_lo > new_hi:
                    continue  # inconsistent evidence: keep what we have
                if new_lo > lo[i] or (new_lo == lo[i] and xs and not exact[i][0] and new_lo == s):
                    exact[i] = (xs if new_lo == s else exact[i][0], exact[i][1])
                if new_hi < hi[i] or (new_hi == hi[i] and xe and not exact[i][1] and new_hi == e):
                    exact[i] = (exact[i][0], xe if new_hi == e else exact[i][1])
                if (new_lo, new_hi) != (lo[i], hi[i]):
                    changed = True
                    why.setdefault(i, set()).add(j)
                lo[i], hi[i] = new_lo, new_hi
        if not changed:
            break
    out, changes = [], []
    for i, u in enumerate(units):
        if not u.fuzzy:
            out.append(u)
            continue
        s = None if lo[i] == -_INF else lo[i]
        e = None if hi[i] == _INF else hi[i]
        narrowed = (s, e) != (u.t_start, u.t_end)
        cleared = narrowed and all(exact[i]) and s is not None and e is not None
        new = replace(u, t_start=s, t_end=e, fuzzy=not cleared)
        if narrowed:
            changes.append(
                {
                    "unit": i,
                    "old": [u.t_start, u.t_end],
                    "new": [s, e],
                    "cleared": cleared,
                    "evidence": sorted(why.get(i, set())),
                }
            )
        out.append(new)
    return out, changes


TIGHTEN_PROMPT = """You are a high-precision temporal auditor. Below is a connected component of Interval
Event Units (IEUs). For every IEU with "FuzzyFlag": true, narrow its interval using only the other IEUs
of the component (their dates and their sequential or causal logic) - no outside knowledge, no merging,
no rewriting. A refinement may only narrow an interval, never widen it. Set FuzzyFlag false only when
the evidence fixes the interval exactly; otherwise keep it true. Dates are YYYY-MM-DD (day = same start
and end; month = first to last day; early/mid/late year = Jan-Apr/May-Aug/Sep-Dec).

IEUs:
{events}

Reply with JSON only: {{"if_update": false}} or {{"if_update": true, "updates_ieus": [{{"event_global_id":
"EVT12", "updated_t_start": "YYYY-MM-DD", "updated_t_end": "YYYY-MM-DD", "updated_FuzzyFlag": false,
"reasoning": "..."}}]}}"""


def _event_lines(members: list[int], units: list[IEU]) -> str:
    return "\n".join(json.dumps({"event_global_id": f"EVT{i}", **units[i].to_dict()}) for i in members)


def tighten_llm(
    graph: EventGraph, llm, *, max_members: int = 30, max_calls: int | None = None
) -> tuple[list[IEU], list[dict]]:
    """Fig. 9 per component holding a fuzzy unit; widening updates are rejected (and reported)."""
    units = list(graph.units)
    comps: dict[int, list[int]] = {}
    for i, c in enumerate(graph.components):
        comps.setdefault(int(c), []).append(i)
    todo = [m for m in comps.values() if len(m) > 1 and any(units[i].fuzzy for i in m)]
    changes = []
    todo = [members[:max_members] for members in todo[:max_calls]]
    prompts = [
        [{"role": "user", "content": TIGHTEN_PROMPT.format(events=_event_lines(members, units))}]
        for members in todo
    ]
    # components are disjoint, so their calls are independent: in flight together, applied in order
    replies = llm.chat_many(prompts, json_mode=True, max_tokens=600, progress=False)
    for members, r in zip(todo, replies):
        try:
            obj = parse_json_reply(r.text)
        except LLMError:
            continue
        for upd in (obj.get("updates_ieus") or []) if isinstance(obj, dict) and obj.get("if_update") else []:
            ids = re.findall(r"\d+", str(upd.get("event_global_id", "")))
            i = int(ids[0]) if ids else -1
            if i not in members or not units[i].fuzzy:
                continue
            s, e = _day_or_none(upd.get("updated_t_start")), _day_or_none(upd.get("updated_t_end"))
            lo, hi = _bounds(units[i])
            s2, e2 = (s if s is not None else lo), (e if e is not None else hi)
            ok = lo <= s2 <= e2 <= hi
            changes.append(
                {
                    "unit": i,
                    "old": [units[i].t_start, units[i].t_end],
                    "new": [s, e],
                    "cleared": ok and not upd.get("updated_FuzzyFlag", True),
                    "rejected_widening": not ok,
                }
            )
            if ok:
                units[i] = replace(
                    units[i],
                    t_start=None if s2 == -_INF else s2,
                    t_end=None if e2 == _INF else e2,
                    fuzzy=bool(upd.get("updated_FuzzyFlag", True)),
                )
    return units, changes


def tighten(graph: EventGraph, operator: str = "offline", llm=None) -> tuple[list[IEU], list[dict]]:
    """Eq. 5 with the chosen operator; the graph is updated in place (relations recomputed)."""
    if operator == "offline":
        units, changes = tighten_offline(graph)
    elif operator == "llm":
        if llm is None:
            raise ValueError("tightening='llm' needs an LLM client")
        units, changes = tighten_llm(graph, llm)
    elif operator == "none":
        return list(graph.units), []
    else:
        raise ValueError(f"tightening must be 'offline', 'llm' or 'none', got {operator!r}")
    graph.units = units
    graph.refresh()
    return units, changes
