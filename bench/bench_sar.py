"""SAR's SEARCH latency on the full MultiTQ KG: one SEARCH = FILTER + Eq. 1 over the filtered facts + TOP-K +
RE-ORDER.

The SEARCH actions are the ones SAR's offline scripted policy issues for the first questions of the shared
split (ANYTIME searches for reference events and first/last questions, BEFORE / AFTER / IN searches for the
rest).  Two numbers: the search itself with the query parts already embedded (what the target is about), and
the whole tool call including the offline decomposition of the sub-query and the look-up of its parts'
vectors (sub-query embedding of free text is excluded: the offline policy writes KG names).
"""

from __future__ import annotations

import time

import numpy as np

from temporag.answer.evaluate import latency_summary
from temporag.data import multitq
from temporag.methods.sar import SAR

N_QUESTIONS = 200
TARGET_P50_MS = 20.0


def main() -> None:
    kg = multitq.load_kg()
    method = SAR(kg, verifier=None)
    questions = multitq.load_questions()[:N_QUESTIONS]
    records = method.pipeline(questions, policy="offline", progress=False)
    actions = [
        step["action"] for r in records for step in r.trace["attempts"][0]["steps"] if "search" in step
    ]
    from temporag.methods.sar.actions import parse_step

    parsed = [parse_step(f"Action: {a}")[1] for a in actions]
    tool = method.search_tool("offline")
    for a in parsed[:10]:  # warm-up
        tool(a.sub_query, a.type, a.time)
    core, call = [], []
    for a in parsed:
        t0 = time.perf_counter()
        found = tool(a.sub_query, a.type, a.time)
        call.append(time.perf_counter() - t0)
        core.append(found.latency_s)
    core_s, call_s = latency_summary(core), latency_summary(call)
    kinds = {k: sum(a.type == k for a in parsed) for k in ("ANYTIME", "BEFORE", "AFTER", "IN")}
    ok = "ok" if core_s["p50_ms"] <= TARGET_P50_MS else "MISSED"
    print(
        f"SAR SEARCH on {len(kg):,} facts, {len(parsed)} searches from {len(questions)} questions {kinds}: "
        f"p50 {core_s['p50_ms']:.1f} ms, p95 {core_s['p95_ms']:.1f} ms "
        f"[target p50 ≤ {TARGET_P50_MS:.0f} ms: {ok}]"
    )
    print(
        f"  whole tool call (decomposition + part vectors + search): p50 {call_s['p50_ms']:.1f} ms, "
        f"p95 {call_s['p95_ms']:.1f} ms; evidence per question "
        f"{np.mean([len(r.evidence_ids) for r in records]):.1f} facts"
    )


if __name__ == "__main__":
    main()
