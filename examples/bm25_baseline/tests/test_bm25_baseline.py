"""BM25 on a three-fact KG: the words decide the ranking, the named month breaks the tie."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bm25_baseline import BM25Baseline, tokens  # noqa: E402

from temporag.data.tkg import TemporalKG  # noqa: E402
from temporag.timeutil import day_of  # noqa: E402


def tiny_kg() -> TemporalKG:
    entities, relations = ["Iraq", "Iran", "Kenya"], ["Make_a_visit", "Sign_formal_agreement"]
    facts = [(1, 0, 0, "2005-01-10"), (2, 0, 0, "2005-02-15"), (1, 1, 2, "2005-02-20")]
    s, r, o, day = zip(*facts)
    days = np.array([day_of(d) for d in day], dtype=np.int32)
    as_int = lambda values: np.array(values, dtype=np.int32)  # noqa: E731
    return TemporalKG(as_int(s), as_int(r), as_int(o), days, days.copy(), entities, relations)


def test_tokens_drop_question_words_and_temporal_cues():
    assert tokens("Who first visited Iraq in 2005-02?") == ["visited", "iraq", "2005", "02"]


def test_words_rank_the_facts_and_the_named_month_breaks_the_tie():
    method = BM25Baseline(tiny_kg())
    (ranking,) = method.retrieve(["Who made a visit to Iraq in February 2005?"], 2).ids
    assert ranking.tolist() == [1, 0]  # both visits match the words; only Kenya's is in February
    (agreement,) = method.retrieve(["Who signed a formal agreement with Kenya?"], 1).ids
    assert agreement.tolist() == [2]
    assert method.retrieve(["Who made a visit to Iraq?"]).sizes().tolist() == [3]  # default k: 20, 3 facts
