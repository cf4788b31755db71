"""Small real KGs cut from MultiTQ, so method tests embed hundreds of names and triples, not the full KG."""

from __future__ import annotations

import numpy as np

from temporag.data.tkg import TemporalKG


def kg_slice(kg, facts: np.ndarray) -> TemporalKG:
    """The given facts (kept in file order) as a KG of their own entities; relations keep their ids."""
    facts = np.sort(np.asarray(facts))
    used = np.unique(np.concatenate([kg.s[facts], kg.o[facts]]))
    remap = np.full(kg.n_entities, -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    return TemporalKG(
        remap[kg.s[facts]],
        kg.r[facts].copy(),
        remap[kg.o[facts]],
        kg.t_start[facts].copy(),
        kg.t_end[facts].copy(),
        [kg.entities[i] for i in used],
        list(kg.relations),
    )


def iraq_visits(kg) -> TemporalKG:
    """Every 'Make a visit' / 'Host a visit' fact with Iraq on either side (about 2,000 facts): enough for
    TECQA's Table 5 case, whose subgraph is the paper's 1,065 facts."""
    iraq = kg.entity_id["Iraq"]
    visits = [kg.relation_labels.index(name) for name in ("Make a visit", "Host a visit")]
    return kg_slice(kg, np.flatnonzero(((kg.s == iraq) | (kg.o == iraq)) & np.isin(kg.r, visits)))
