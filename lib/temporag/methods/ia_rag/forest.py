"""§3.3 Macro Event Units and the Thematic Forest (Eqs. 6–8, Table 6).

Level 0 is the event graph itself (G⁽⁰⁾ ≡ G, C̃⁽⁰⁾ ≡ C).  Each component with at least
MIN_CLUSTER_SIZE units becomes one MEU, g(C): its interval unifies the members' bounds (earliest known
start, latest known end) and its text summarises them — by the LLM when one is given, otherwise
extractively (the members' sentences nearest the component's centroid).  MEU vectors are the
normalised mean of their members' vectors (offline) or the summary's embedding (LLM).  The next level
links the current roots (new MEUs and units not yet aggregated) by cosine among K = 50 neighbours
above that level's threshold — τ_sem = 0.8 for U⁽⁰⁾ → U⁽¹⁾ (Appendix B.1), then Table 6's schedule
0.85 · 0.95^l, never below 0.6 — and repeats up to MAX_LEVELS.  Containment h(u, e) (Eq. 8) is
``MEU.children``; the roots of the resulting trees are the most abstract themes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from temporag.methods.ia_rag.graph import TAU_SEM, EventGraph, components_of, knn_pairs
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import Allen, Interval, allen_relation, iso_day

MAX_LEVELS = 4
MAX_THRESHOLD = 0.85
DECAY = 0.95
MIN_THRESHOLD = 0.6
MIN_CLUSTER_SIZE = 2
K_NEIGHBOURS = 50


def level_threshold(level: int, tau0: float = TAU_SEM) -> float:
    """Similarity threshold for aggregating level ``level`` into ``level + 1``: τ_sem, then Table 6's
    schedule scaled by τ_sem / 0.8 (identical to the paper at τ_sem = 0.8; a calibrated τ_sem moves the
    whole schedule with it, so higher levels do not demand more than level 0 from a weaker embedder)."""
    if level == 0:
        return tau0
    scale = tau0 / TAU_SEM
    return max(MIN_THRESHOLD * scale, MAX_THRESHOLD * DECAY**level * scale)


@dataclass
class MEU:
    """A macro event unit: ``children`` are node ids (IEU i → i, MEU m → n_ieus + m) one level down."""

    meu_id: int
    level: int
    children: list[int]
    members: list[int]  # every IEU below it
    t_start: int | None
    t_end: int | None
    summary: str

    def span(self) -> str:
        a = "unknown" if self.t_start is None else iso_day(self.t_start)
        b = "unknown" if self.t_end is None else iso_day(self.t_end)
        return a if a == b else f"{a} – {b}"

    def line(self) -> str:
        return f"[theme {self.span()}] {self.summary}"


@dataclass
class Forest:
    """All MEUs of all levels, their vectors, and the level graphs' edges as neighbour lists."""

    n_ieus: int
    meus: list[MEU] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    neighbours: dict[int, list[tuple[int, Allen | None]]] = field(default_factory=dict)
    levels: int = 0
    level_stats: list[dict] = field(default_factory=list)

    def node(self, meu_id: int) -> int:
        return self.n_ieus + meu_id

    def roots(self) -> list[int]:
        """MEUs that no higher MEU contains (the tops of the thematic trees)."""
        child = {c for m in self.meus for c in m.children}
        return [m.meu_id for m in self.meus if self.node(m.meu_id) not in child]


def _interval(t_start, t_end) -> Interval | None:
    return Interval.days(t_start, t_end) if t_start is not None and t_end is not None else None


def _relation(a, b) -> Allen | None:
    ia, ib = _interval(*a), _interval(*b)
    return allen_relation(ia, ib) if ia is not None and ib is not None else None


def extractive_summary(sentences: list[str], vectors: np.ndarray, n: int = 2) -> str:
    """The ``n`` member sentences closest to the members' centroid, joined (offline MEU summary)."""
    centroid = vectors.mean(axis=0)
    order = top_k_stable(vectors @ centroid, n)
    text = " | ".join(sentences[i] for i in sorted(order))
    return text + (f" (+{len(sentences) - n} related events)" if len(sentences) > n else "")


SUMMARY_PROMPT = """Summarise these related, dated events as one theme in at most two sentences.
Keep names, roles and the overall period; add nothing that is not stated.

Events:
{events}

Theme:"""


def _llm_summaries(llm, graph: EventGraph, clusters: list[list[int]], members: dict) -> list[str]:
    """The LLM summary of each cluster (its IEUs' lines, at most 30), "" where the call failed."""
    prompts = []
    for children in clusters:
        ieus = sorted({m for c in children for m in members[c]})
        lines = "\n".join(f"- {graph.units[i].line()}" for i in ieus[:30])
        prompts.append([{"role": "user", "content": SUMMARY_PROMPT.format(events=lines)}])
    return [r.text.strip() for r in llm.chat_many(prompts, max_tokens=120, progress=False)]


def build_forest(
    graph: EventGraph,
    *,
    max_levels: int = MAX_LEVELS,
    k: int = K_NEIGHBOURS,
    min_cluster: int = MIN_CLUSTER_SIZE,
    llm=None,
    encoder=None,
) -> Forest:
    """Recursive aggregation (Eqs. 6–8) from the event graph, up to ``max_levels`` levels of MEUs."""
    n = len(graph.units)
    forest = Forest(n)
    if max_levels <= 0 or n == 0:
        return forest
    nodes = list(range(n))
    spans = {i: (u.t_start, u.t_end) for i, u in enumerate(graph.units)}
    vec = {i: graph.vectors[i] for i in range(n)}
    members = {i: [i] for i in range(n)}
    texts = {i: u.sentence for i, u in enumerate(graph.units)}
    meu_vecs: list[np.ndarray] = []
    pairs, labels = graph.pairs, graph.components
    for level in range(max_levels):
        if level > 0:
            pairs, _ = knn_pairs(np.stack([vec[x] for x in nodes]), k, level_threshold(level, graph.tau))
            labels = components_of(len(nodes), pairs)
        for a, b in pairs:  # the level graph's edges become traversal neighbours of its MEU nodes
            na, nb = nodes[a], nodes[b]
            if na >= n or nb >= n:
                rel = _relation(spans[na], spans[nb])
                forest.neighbours.setdefault(na, []).append((nb, rel))
                forest.neighbours.setdefault(nb, []).append((na, rel.inverse if rel is not None else None))
        groups: dict[int, list[int]] = {}
        for pos, lab in enumerate(labels):
            groups.setdefault(int(lab), []).append(pos)
        new_nodes, made = [], 0
        # the level's summaries are independent calls: asked together (in flight at once), used in order
        clusters = [[nodes[p] for p in pos] for pos in groups.values() if len(pos) >= min_cluster]
        summaries = iter(_llm_summaries(llm, graph, clusters, members) if llm is not None else [])
        for pos_list in groups.values():
            if len(pos_list) < min_cluster:
                new_nodes.extend(nodes[p] for p in pos_list)
                continue
            children = [nodes[p] for p in pos_list]
            ieus = sorted({m for c in children for m in members[c]})
            starts = [spans[c][0] for c in children if spans[c][0] is not None]
            ends = [spans[c][1] for c in children if spans[c][1] is not None]
            if starts and ends and min(starts) > max(ends):
                # children known only by a start and others only by an end: the MEU spans every bound
                # (min start / max end would be an empty interval and stop the build)
                starts = ends = starts + ends
            sents = [graph.units[i].sentence for i in ieus]
            vecs = graph.vectors[ieus]
            if llm is not None:
                summary = next(summaries) or extractive_summary(sents, vecs)
            else:
                summary = extractive_summary(sents, vecs)
            meu = MEU(
                len(forest.meus),
                level + 1,
                children,
                ieus,
                min(starts) if starts else None,
                max(ends) if ends else None,
                summary,
            )
            v = vecs.mean(axis=0)
            if llm is not None and encoder is not None:
                v = encoder.encode([summary])[0]
            v = v / max(np.linalg.norm(v), 1e-12)
            node = forest.node(meu.meu_id)
            forest.meus.append(meu)
            meu_vecs.append(v.astype(np.float32))
            spans[node], vec[node], members[node], texts[node] = (meu.t_start, meu.t_end), v, ieus, summary
            new_nodes.append(node)
            made += 1
        forest.level_stats.append(
            {
                "level": level + 1,
                "threshold": level_threshold(level, graph.tau),
                "nodes_in": len(nodes),
                "edges": int(len(pairs)),
                "meus": made,
                "roots_out": len(new_nodes),
            }
        )
        if made == 0:
            break
        forest.levels = level + 1
        nodes = new_nodes
    forest.vectors = (
        np.stack(meu_vecs) if meu_vecs else np.zeros((0, graph.vectors.shape[1]), dtype=np.float32)
    )
    return forest
