"""The one retrieval contract, checked for every registered leaderboard row on a small real slice.

Each row is built by its package's own declaration (``temporag.methods.registry``) from a workspace over the
Iraq-visit slice of MultiTQ, exactly as the leaderboard builds it, and must: give one ranking per question,
respect ``k`` as the method reads it (``within_k``; ``k=None`` is the documented ``default_k``), hold
evidence of the declared kind that exists in the KG, use the shared question vectors as it would its own,
and refuse a shared input the kit does not define.
"""

from __future__ import annotations

import pytest
from slices import iraq_visits

from temporag.methods import registry
from temporag.methods.base import SHARED_INPUTS

#: shared MultiTQ questions about visits to or by Iraq (the slice answers them): TECQA's Table 5 case,
#: a month-constrained one and Ismet Yilmaz's three visits
QUIDS = (3000000, 3000029, 3000030)
ROWS = {c.name: (e, c) for e, c in registry.contenders()}


@pytest.fixture(scope="module")
def workspace(kg, questions, tmp_path_factory):
    """The leaderboard's workspace over the Iraq-visit slice, embedded into a temporary cache."""
    from temporag.methods.workspace import KGWorkspace
    from temporag.retrieval.embed import Encoder

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEMPORAG_CACHE", str(tmp_path_factory.mktemp("cache")))
        sub = iraq_visits(kg)
        picked = [q for q in questions if q.quid in QUIDS]
        yield KGWorkspace(sub, Encoder(), questions=picked, profile="smoke", seed=0)


def test_every_leaderboard_row_is_checked_and_declares_its_method():
    assert len(ROWS) == len(registry.contenders()) >= 7
    assert {e.name for e, _ in ROWS.values()} >= {"semantic", "star_rag", "timer4", "tecqa", "sar"}
    assert set(SHARED_INPUTS) == {"q_vecs"}


def check_row(entry, contender, workspace) -> None:
    """The contract for one leaderboard row, built by its package's declaration on ``workspace``."""
    method, note = contender.build(workspace)
    questions, kg = workspace.questions, workspace.kg
    q_vecs = workspace.semantic.embed_questions([q.question for q in questions])
    assert note and method.evidence == entry.evidence

    default = method.retrieve(questions, None, progress=False, q_vecs=q_vecs)
    assert len(default) == len(questions) and default.evidence == entry.evidence
    assert all(((0 <= ids) & (ids < len(kg))).all() for ids in default.ids)
    assert sum(default.sizes()) > 0, "no evidence for any question"
    if method.default_k is not None:
        assert all(method.within_k(ids, method.default_k) for ids in default.ids)

    native = method.retrieve(questions, contender.k, progress=False, q_vecs=q_vecs)
    assert [ids.tolist() for ids in native.ids] == [
        ids.tolist() for ids in method.retrieve(questions, contender.k, progress=False).ids
    ], "the shared question vectors change the ranking"
    one = method.retrieve(questions, 1, progress=False, q_vecs=q_vecs)
    assert len(one) == len(questions) and all(method.within_k(ids, 1) for ids in one.ids)
    assert one.sizes().sum() <= default.sizes().sum()

    with pytest.raises(TypeError, match="unknown shared input"):
        method.retrieve(questions, 1, progress=False, question_vectors=q_vecs)


@pytest.mark.parametrize("row", list(ROWS))
def test_retrieve_keeps_the_contract(row, workspace):
    check_row(*ROWS[row], workspace)


def test_tecqa_rows_are_the_chains_of_their_own_parse(workspace):
    """The two TECQA rows differ only by parse and chain: each is TECQA's chain on its parse, cut to the
    first 20 facts (the paper's "about 20"), through the one interface."""
    from temporag.methods import tecqa

    kg, questions, encoder = workspace.kg, workspace.questions, workspace.encoder
    texts = [q.question for q in questions]
    q_vecs = workspace.semantic.embed_questions(texts)
    improved = tecqa.make_offline_parser(kg, encoder, **tecqa.IMPROVED_PARSER)
    rows = {}
    for row, parser, chain in (
        ("TECQA (paper-faithful)", workspace.parser, "paper"),
        ("TECQA (kit, improved)", improved, "guided"),
    ):
        method, _ = ROWS[row][1].build(workspace)
        chains, latency = method.chains(parser.parse_many(texts), q_vecs, chain=chain, progress=False)
        expected = [ids.tolist() for ids in tecqa.as_retrieval(kg, chains, latency, 20).ids]
        got = method.retrieve(questions, 20, progress=False, q_vecs=q_vecs)
        rows[row] = [ids.tolist() for ids in got.ids]
        assert rows[row] == expected, row
    assert rows["TECQA (paper-faithful)"] != rows["TECQA (kit, improved)"]
