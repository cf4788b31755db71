"""TimeR4: Eq. 8 and the softmax loss against hand computations, the three negative kinds on the real KG,
Eqs. 9–10 values, the offline rewrite on real MultiTQ questions, the composed knowledge store against brute
force, the pipeline with a fake LLM, a tiny training run, the Venn sets and the re-score of released
outputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from fakes import fake_llm

from temporag.data.tkg import TemporalKG
from temporag.methods import timer4
from temporag.methods.timer4 import experiments, negatives, released, report, rerank, rewrite, store, train
from temporag.methods.timer4.rerank import TimeConstraint, phi_t, question_constraint, window_score
from temporag.timeutil import TimeValue, day_of, parse_time

# -- Eq. 8 and the code's loss --------------------------------------------------------------------------


def test_eq8_loss_matches_a_hand_computation():
    torch = pytest.importorskip("torch")
    cos = torch.tensor([0.8, 0.2, -0.1])
    y = torch.tensor([1.0, 0.0, 0.0])
    # distance reading: φ = 1 − cos → positives cost w_p·exp(1 − cos), negatives w_n·exp(cos)
    expected = 2.0 * math.exp(0.2) + 0.5 * math.exp(0.2) + 0.5 * math.exp(-0.1)
    assert float(train.eq8_loss(cos, y, w_p=2.0, w_n=0.5)) == pytest.approx(expected, rel=1e-6)
    # as printed (φ = cos): w_p·exp(cos) + w_n·exp(1 − cos)
    literal = 2.0 * math.exp(0.8) + 0.5 * math.exp(0.8) + 0.5 * math.exp(1.1)
    assert float(train.eq8_loss(cos, y, 2.0, 0.5, reading="literal")) == pytest.approx(literal, rel=1e-6)


def test_eq8_distance_reading_pulls_positives_and_pushes_negatives_and_the_literal_one_does_not():
    torch = pytest.importorskip("torch")
    cos = torch.tensor([0.3, 0.3], requires_grad=True)
    y = torch.tensor([1.0, 0.0])
    train.eq8_loss(cos, y).backward()
    assert cos.grad[0] < 0 < cos.grad[1]  # descent raises the positive's cosine, lowers the negative's
    cos.grad = None
    train.eq8_loss(cos, y, reading="literal").backward()
    assert cos.grad[0] > 0 > cos.grad[1]  # the printed form trains backwards


def test_eq8_pairs_add_the_other_questions_positives_as_negatives():
    torch = pytest.importorskip("torch")
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    # question 0: positive (1, 0), negatives (0, 1), (-1, 0), (0.6, 0.8); question 1: positive (0, 1), ...
    f = torch.tensor(
        [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [0.8, 0.6]]
    )
    cos, y, negatives = train.eq8_pairs(q, f, per=4)
    assert cos.tolist() == pytest.approx([1.0, 0.0, -1.0, 0.6, 1.0, 0.0, -1.0, 0.6]) and negatives == 3
    assert y.tolist() == [1, 0, 0, 0, 1, 0, 0, 0]
    cos, y, negatives = train.eq8_pairs(q, f, per=4, same=[[True, False], [False, True]])
    assert cos.tolist()[8:] == pytest.approx([0.0, 0.0]) and y.tolist()[8:] == [0, 0] and negatives == 4
    # two questions with the same positive are not each other's negatives
    assert len(train.eq8_pairs(q, f, per=4, same=[[True, True], [True, True]])[0]) == 8


def test_softmax_loss_matches_a_hand_computation_and_masks_shared_positives():
    torch = pytest.importorskip("torch")
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    # question 0: positive (1, 0), hard negatives (0.6, 0.8), (0, 1); question 1: positive (0, 1), ...
    f = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [0.0, 1.0], [0.8, 0.6], [1.0, 0.0]])
    tau = 0.5
    row0 = [1.0, 0.6, 0.0, 0.0]  # own positive, two hard negatives, question 1's positive
    row1 = [1.0, 0.6, 0.0, 0.0]
    nll = lambda row: -math.log(math.exp(row[0] / tau) / sum(math.exp(c / tau) for c in row))  # noqa: E731
    got = train.softmax_loss(q, f, per=3, same=[[True, False], [False, True]], temperature=tau)
    assert float(got) == pytest.approx((nll(row0) + nll(row1)) / 2, rel=1e-6)
    # two questions with the same positive are not each other's negatives
    same = train.softmax_loss(q, f, per=3, same=[[True, True], [True, True]], temperature=tau)
    assert float(same) == pytest.approx(nll(row0[:3]), rel=1e-6)


def test_softmax_pushes_hardest_on_the_negative_that_nearly_outranks_the_positive():
    """A positive at cos 0.60, its time-incorrect twin at 0.55 and a far negative at 0.1.
    The pairwise reading weighs the twin 1 : 29 against the positive and hardly above the far one; the
    softmax gives the twin almost all of the negatives' weight."""
    torch = pytest.importorskip("torch")
    values = [0.60, 0.55, 0.10, 0.10]
    # one question vector [1] and four one-dimensional fact vectors: each fact's cosine is its value
    facts = torch.tensor([[v] for v in values], requires_grad=True)
    loss = train.softmax_loss(torch.tensor([[1.0]]), facts, per=4)
    loss.backward()
    soft = facts.grad[:, 0].clone()
    # d(-log softmax_0(cos / tau)) / d cos_i = (softmax_i - [i = 0]) / tau, computed apart from torch
    tau = train.TEMPERATURE
    weights = [math.exp(v / tau) for v in values]
    share = [w / sum(weights) for w in weights]
    assert float(loss) == pytest.approx(-math.log(share[0]), rel=1e-5)
    expected = [(p - (i == 0)) / tau for i, p in enumerate(share)]
    assert soft.tolist() == pytest.approx(expected, rel=1e-4, abs=1e-6)
    assert soft[0] < 0 < soft[2] < soft[1]
    assert float(soft[1]) > 0.9 * float(-soft[0])  # the twin carries nearly all of the push
    cos = torch.tensor(values, requires_grad=True)
    train.eq8_loss(cos, torch.tensor([1.0, 0.0, 0.0, 0.0]), w_n=1 / 34).backward()
    pair = cos.grad
    assert float(-pair[0]) / float(pair[1]) == pytest.approx(math.exp(0.40) / (math.exp(0.55) / 34), rel=1e-4)
    assert float(pair[1]) / float(pair[2]) < 1.6  # twin and far negative weigh almost alike


def test_eq8_is_the_pairwise_loss_name():
    assert train.TrainConfig(loss="eq8").loss == "pairwise"
    assert train.TrainConfig().loss == "softmax"
    with pytest.raises(ValueError):
        train.TrainConfig(loss="triplet")


def test_code_loss_is_an_in_batch_softmax_that_ignores_labels():
    torch = pytest.importorskip("torch")
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    f = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
    # q @ f.T = [[0.6, 1.0], [0.8, 0.0]]: the 1.0 off the diagonal is another pair's positive, a negative
    row = [-math.log(math.exp(0.6) / (math.exp(0.6) + math.exp(1.0))), -math.log(1 / (math.exp(0.8) + 1))]
    col = [-math.log(math.exp(0.6) / (math.exp(0.6) + math.exp(0.8))), -math.log(1 / (math.exp(1.0) + 1))]
    expected = (sum(row) / 2 + sum(col) / 2) / 2
    assert float(train.code_loss(q, f)) == pytest.approx(expected, rel=1e-6)


# -- negatives from the train period ------------------------------------------------------------------


@pytest.fixture(scope="module")
def examples(kg):
    return negatives.build_examples(kg, 60, seed=3)


def test_examples_cover_the_six_types_and_use_train_period_facts_only(kg, examples):
    assert len(examples) == 60
    assert {e.qtype for e in examples} == set(negatives.QTYPES)
    train_end = int(kg.t_start[negatives.TRAIN_END - 1])
    triples = {
        (int(a), int(b), int(c), int(d))
        for a, b, c, d in zip(
            kg.s[: negatives.TRAIN_END],
            kg.r[: negatives.TRAIN_END],
            kg.o[: negatives.TRAIN_END],
            kg.t_start[: negatives.TRAIN_END],
        )
    }
    for e in examples:
        p = e.positive
        assert (p.s, p.r, p.o, p.day) in triples  # the positive is a real train-period fact
        assert e.window[0] <= p.day <= e.window[1]
        assert all(f.day <= train_end for f, _ in e.facts())
        slot = {"subject": p.s, "object": p.o}.get(e.answer_slot)
        if slot is not None:
            assert kg.entity_labels[slot] in e.answers
        else:
            assert parse_time(e.answers[0]).contains_day(p.day)


def test_negatives_are_wrong_in_the_way_their_name_says(kg, examples):
    for e in examples:
        p, t, c, b = e.positive, e.negatives["time"], e.negatives["content"], e.negatives["both"]
        lo, hi = e.window
        # time incorrect: same content, a date that breaks the question's time constraint
        assert (t.s, t.r, t.o) == (p.s, p.r, p.o) and not lo <= t.day <= hi
        # content incorrect: the right date, another relation or another given entity, no gold answer
        given = (lambda f: f.o) if e.answer_slot == "subject" else (lambda f: f.s)  # noqa: E731
        assert c.day == p.day and (c.r != p.r or given(c) != given(p))
        if e.answer_slot in ("subject", "object"):
            slot = c.s if e.answer_slot == "subject" else c.o
            assert kg.entity_labels[slot] not in e.answers
        # both incorrect: the content negative's triple at the time negative's date
        assert (b.s, b.r, b.o, b.day) == (c.s, c.r, c.o, t.day)


def test_first_and_last_questions_name_the_earliest_and_latest_event(kg, examples):
    who = [e for e in examples if e.qtype == "first_last" and e.answer_slot == "subject"]
    forms = {"first" if " first " in e.question else "last" for e in who}
    assert forms == {"first", "last"}
    for e in who:
        p = e.positive
        same = np.flatnonzero((kg.r[: negatives.TRAIN_END] == p.r) & (kg.o[: negatives.TRAIN_END] == p.o))
        days = kg.t_start[same]  # brute force over the train period
        assert p.day == int(days.min() if " first " in e.question else days.max())
        assert not e.window[0] <= e.negatives["time"].day <= e.window[1]


def test_negatives_change_both_sides_and_both_kinds_of_content(kg):
    many = negatives.build_examples(kg, 300, seed=5)
    time_sides = {np.sign(e.negatives["time"].day - e.positive.day) for e in many}
    assert time_sides == {-1, 1}  # earlier and later dates, not always later
    earlier = np.mean([e.negatives["time"].day < e.positive.day for e in many])
    assert 0.3 < earlier < 0.7
    relation_changed = np.mean([e.negatives["content"].r != e.positive.r for e in many])
    assert 0.3 < relation_changed < 0.7  # the rest keep the relation and change the given entity


# -- Eqs. 9 and 10 -----------------------------------------------------------------------------------------


def test_question_constraint_reads_direction_and_granularity():
    c = question_constraint("Who was the first to visit Iraq after 2008-03-01?")
    assert (c.direction, c.time.iso) == ("after", "2008-03-01")
    c = question_constraint("Before May 2007, who visited Iraq last?")
    assert (c.direction, c.time.iso, c.time.granularity) == ("before", "2007-05", "month")
    assert question_constraint("Who visited Iraq in 2009?").direction == "in"
    assert question_constraint("Who visited Iraq?") == TimeConstraint("none")



def test_question_constraint_reads_the_kits_direction_cues():
    """The direction words come from question.cues: TimeR4's own list read "later than 1899" (a
    TimeQuestions wording) as "in 1899"."""
    c = question_constraint("what organization founded later than 1899 was the owner in 2011 of chrysler")
    assert (c.direction, c.time.iso) == ("after", "1899")
    assert question_constraint("Who did Iraq host earlier than 2010?").direction == "before"
    assert question_constraint("Who visited Iraq by 2010?").direction == "before"  # TimeR4's deadline


def test_phi_t_eq9_values():
    c = TimeConstraint("before", TimeValue(100, 100, "day"))
    days = np.array([90, 95, 99, 100, 120])  # t_q − t = 10, 5, 1, 0, −20; max over valid = 10
    assert phi_t(days, c).tolist() == pytest.approx([0.0, 0.5, 0.9, -100, -100])
    after = TimeConstraint("after", TimeValue(100, 100, "day"))
    assert phi_t(np.array([101, 104, 99]), after).tolist() == pytest.approx([0.75, 0.0, -100])
    month = TimeConstraint("in", TimeValue(31, 58, "month"))  # February 1970
    assert phi_t(np.array([30, 31, 58, 59]), month).tolist() == [-100, 1.0, 1.0, -100]
    assert phi_t(days, TimeConstraint("none")).tolist() == [0.0] * 5


def test_eq10_rerank_orders_by_the_blend_and_rerank_off_by_similarity():
    c = TimeConstraint("before", TimeValue(100, 100, "day"))
    facts = np.array([10, 11, 12, 13, 14])
    sims = np.array([0.5, 0.4, 0.35, 0.9, 0.8])
    days = np.array([90, 95, 99, 100, 120])
    top, score = rerank.rerank_facts(facts, sims, days, c, 5, mu=0.8)
    # 0.8·sim + 0.2·φ_t: 0.40, 0.42, 0.46, 0.72 − 20, 0.64 − 20
    assert top.tolist() == [12, 11, 10, 13, 14]
    assert score.tolist() == pytest.approx([0.46, 0.42, 0.40, -19.28, -19.36])
    assert rerank.rerank_facts(facts, sims, days, c, 3, mode="off")[0].tolist() == [13, 14, 10]
    with pytest.raises(ValueError, match="rerank mode"):
        rerank.rerank_facts(facts, sims, days, c, 3, mode="eq11")


def test_window_score_is_the_released_codes():
    c = TimeConstraint("before", TimeValue(100, 100, "day"))
    got = window_score(np.array([90, 95, 99, 100, 120, 60]), c, window_days=30)
    assert got.tolist() == pytest.approx([1 - 10 / 30, 1 - 5 / 30, 1 - 1 / 30, -1, -100, -1])


# -- rewrite on real questions -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exact_parser(kg):
    """The kit's offline parser with exact-name linking (relation names embedded: 251 short texts)."""
    from temporag.question.parsing import OfflineParser
    from temporag.retrieval.embed import Encoder

    enc = Encoder()
    return OfflineParser(kg, enc, None, enc.encode(kg.relation_labels, progress=False))


def _question(questions, quid):
    return next(q for q in questions if q.quid == quid).question


def test_offline_rewrite_replaces_the_reference_by_the_best_background_date(kg, questions, exact_parser):
    q = _question(questions, 3046049)  # "Before Kuwait, who visited Cambodia last?"
    kuwait, cambodia = kg.entity_id["Kuwait"], kg.entity_id["Cambodia"]
    visit = kg.relation_labels.index("Make a visit")
    pair = np.flatnonzero(((kg.s == kuwait) & (kg.o == cambodia)) | ((kg.s == cambodia) & (kg.o == kuwait)))
    noise = np.flatnonzero(kg.s == kuwait)[:5]  # Kuwait facts without Cambodia rank first
    background = np.concatenate([noise, pair])
    (rw,) = rewrite.offline_rewrite(kg, exact_parser, [q], [background])
    visits = pair[kg.r[pair] == visit]
    expected = visits[0] if len(visits) else pair[0]  # pivot + relation first, then the background rank
    assert rw.source_fact == int(expected) and rw.reference == "Kuwait"
    assert rw.rewritten == f"Before {kg.date(int(expected))}, who visited Cambodia last?"
    assert question_constraint(rw.rewritten).direction == "before"


def test_offline_rewrite_same_period_and_unsure_cases(kg, questions, exact_parser):
    q = _question(questions, 3040397)  # "Who visited Iraq on the same day as Jaber Mubarak Al-Sabah?"
    jaber, iraq = kg.entity_id["Jaber_Mubarak_Al-Sabah"], kg.entity_id["Iraq"]
    pair = np.flatnonzero((kg.s == jaber) & (kg.o == iraq))
    (rw,) = rewrite.offline_rewrite(kg, exact_parser, [q], [pair])
    visits = pair[kg.r[pair] == kg.relation_labels.index("Make a visit")]  # the parsed relation wins
    assert rw.rewritten == f"Who visited Iraq on {kg.date(int(visits[0]))}?"
    # no background fact names the reference entity: the question stays as it is
    (same,) = rewrite.offline_rewrite(kg, exact_parser, [q], [np.flatnonzero(kg.s == iraq)[:5]])
    assert not same.changed and same.rewritten == q
    # a question without an implicit reference is never touched
    plain = "Who visited Iraq in 2009?"
    assert rewrite.offline_rewrite(kg, exact_parser, [plain], [pair])[0].rewritten == plain


def test_llm_rewrite_reply_parsing_falls_back_to_the_question(kg):
    llm = fake_llm(lambda user: "Rewritten question: Who visited Iraq after 2008-03-01?")
    (rw,) = rewrite.llm_rewrite(llm, kg, ["Who visited Iraq after Kuwait did?"], [[0, 1]], progress=False)
    assert rw.rewritten == "Who visited Iraq after 2008-03-01?" and rw.method == "llm"
    prompt = llm.backend.seen[0][0][-1]["content"]
    assert kg.as_quadruples([0])[0][0] in prompt and "Who visited Iraq after Kuwait did?" in prompt
    silent = fake_llm("")
    assert rewrite.llm_rewrite(silent, kg, ["Who visited Iraq?"], [[0]], progress=False)[0].rewritten == (
        "Who visited Iraq?"
    )


# -- the composed store and the pipeline on a real slice --------------------------------------------------


def _slice(kg, first="2008-03-01", last="2008-03-31"):
    """Real facts of Iraq and Kuwait in one month: small enough to embed in a test."""
    iraq, kuwait = kg.entity_id["Iraq"], kg.entity_id["Kuwait"]
    lo, hi = day_of(first), day_of(last)
    pick = np.flatnonzero(
        (np.isin(kg.s, [iraq, kuwait]) | np.isin(kg.o, [iraq, kuwait]))
        & (kg.t_start >= lo)
        & (kg.t_start <= hi)
    )
    return TemporalKG(
        kg.s[pick], kg.r[pick], kg.o[pick], kg.t_start[pick], kg.t_end[pick], kg.entities, kg.relations
    )


@pytest.fixture()
def small(kg, tmp_cache):
    from temporag.retrieval.embed import Encoder

    sub = _slice(kg)
    return sub, timer4.fact_store(sub, Encoder())


def test_composed_store_matches_brute_force_and_exact_search(small):
    sub, fks = small
    q = fks.encoder.encode(["Who visited Iraq in March 2008?"])[0]
    tri, days = sub.triple_of_fact, sub.t_start - fks.first_day
    brute = store.compose(fks.triple_vectors[tri], fks.date_vectors[days], fks.date_weight) @ q
    assert np.allclose(fks.scores(q), brute, atol=1e-5)
    ids, sims = fks.search(q, 10)
    exact_ids, _ = fks.search(q, 10, exact=True)
    assert ids.tolist() == exact_ids.tolist()  # a small store probes every cell
    assert sims.tolist() == pytest.approx(np.sort(brute)[::-1][:10].tolist(), abs=1e-5)
    pool = fks.restrict(np.unique(tri[ids]))
    assert pool.search(q, 5)[0].tolist() == ids[:5].tolist()


def test_an_exact_search_store_ignores_the_ivf_cut(small):
    import dataclasses

    sub, fks = small
    q = fks.encoder.encode(["Who visited Iraq in March 2008?"])[0]
    exact_ids = fks.search(q, 10, exact=True)[0].tolist()
    cut = dataclasses.replace(fks, top_triples=1)  # the IVF search keeps one triple's facts
    assert cut.search(q, 10)[0].tolist() != exact_ids
    exact = dataclasses.replace(cut, exact_search=True)
    assert exact.search(q, 10)[0].tolist() == exact_ids
    assert exact.key != cut.key
    assert cut.agreement(q[None], 10) < 1.0 and exact.agreement(q[None], 10) == cut.agreement(q[None], 10)


def test_retrieval_over_exact_stores_never_builds_the_ivf_index(small, exact_parser):
    """An exhaustive store needs no FAISS index (a GPU box without FAISS runs runbooks/gpu_check.py)."""
    sub, fks = small
    exact = fks.exhaustive()
    method = timer4.TimeR4(sub, exact, exact, parser=exact_parser, n=5, pool=50)
    ids = method.retrieve(["Who visited Iraq in March 2008?"], progress=False).ids
    assert len(ids[0]) == 5
    assert "index" not in vars(exact) and "index" not in vars(fks)  # the cached_property never ran
    indexed = timer4.TimeR4(sub, fks, fks, parser=exact_parser, n=5, pool=50)
    indexed.retrieve(["Who visited Iraq in March 2008?"], progress=False)
    assert "index" in vars(fks)


def test_pipeline_with_a_fake_llm(kg, small, exact_parser):
    sub, fks = small

    def reply(user: str) -> str:
        if "Rewritten question" in user:
            return "Who was the last to visit Iraq before 2008-03-20?"
        return "['Kuwait', 'Iran']"

    llm = fake_llm(reply)
    method = timer4.TimeR4(sub, fks, fks, parser=exact_parser, llm=llm, rewrite="llm", n=5, pool=50)

    class Q:
        quid, question, answer_type = 1, "Who was the last to visit Iraq before Kuwait did?", "entity"

    records = method.pipeline([Q()], llm, k=5, top_k=3, progress=False)
    (rec,) = records
    assert rec.answers == ["Kuwait", "Iran"] and rec.llm_calls == 1 and rec.prompt_tokens == 100
    assert rec.trace["rewrite"]["rewritten"] == "Who was the last to visit Iraq before 2008-03-20?"
    assert rec.trace["constraint"] == {"direction": "before", "t_q": "2008-03-20"}
    days = sub.t_start[rec.evidence_ids]
    assert len(rec.evidence_ids) == 5 and (days < day_of("2008-03-20")).all()  # Eq. 9 filter
    assert llm.backend.calls == 2  # one rewrite, one reader call
    reader_prompt = llm.backend.seen[1][0][-1]["content"]
    assert store.fact_text(sub, rec.evidence_ids[0]) in reader_prompt
    # ablations are arguments of one object and share its stages
    off = method.variant(rerank="off").retrieve([Q()], progress=False)
    assert llm.backend.calls == 2  # the rewrite was memoised
    stages = method.stages([Q.question])
    assert off.ids[0].tolist() == stages.pool_ids[0][:5].tolist()  # w/o rerank: the retriever's own order


def test_tiny_training_run_changes_the_top_layers_only(kg, tmp_path):
    torch = pytest.importorskip("torch")
    from sentence_transformers import SentenceTransformer

    from temporag.config import embedder_path, get_settings

    ex = negatives.build_examples(kg, 6, seed=1)
    config = train.TrainConfig(batch_size=3, train_layers=1, lr=1e-3)
    trained = train.train_retriever(kg, ex, config, cache_dir=tmp_path, progress=False)
    assert not trained.cached and trained.pairs == 24 and len(trained.losses) == 2
    base = SentenceTransformer(embedder_path(get_settings().embedder), device="cpu")[0].auto_model
    tuned = SentenceTransformer(str(trained.path), device="cpu")[0].auto_model
    top = lambda m: m.encoder.layer[-1].output.dense.weight  # noqa: E731
    low = lambda m: m.encoder.layer[0].output.dense.weight  # noqa: E731
    assert not torch.allclose(top(base), top(tuned))
    assert torch.equal(low(base), low(tuned))
    again = train.train_retriever(kg, ex, config, cache_dir=tmp_path, progress=False)
    assert again.cached and again.path == trained.path


# -- report ----------------------------------------------------------------------------------------------


def test_coverage_sets_and_venn_counts_on_a_hand_made_kg():
    ents = ["Iraq", "Iran", "Kuwait", "Japan"]
    arr = lambda x: np.asarray(x, dtype=np.int32)  # noqa: E731
    kg = TemporalKG(
        arr([1, 2, 3]),
        arr([0, 0, 0]),
        arr([0, 0, 0]),
        arr([10, 20, 30]),
        arr([10, 20, 30]),
        ents,
        ["Make_a_visit"],
    )

    class Q:
        def __init__(self, quid, answers, qtype="equal", answer_type="entity"):
            self.quid, self.answers, self.qtype, self.answer_type = quid, answers, qtype, answer_type

    qs = [Q(1, ("Iran", "Kuwait")), Q(2, ("Japan",)), Q(3, ("1970-01-21",), "first_last", "time")]
    sets = experiments.coverage_sets(kg, qs, [[0], [0], [0]], [[0, 1], [2], [1]], k=2)
    a, b, c = sets["equal"]
    assert a == {(1, "Iran")} and b == {(1, "Iran"), (1, "Kuwait"), (2, "Japan")} and len(c) == 3
    assert report.venn_counts(a, b, c) == {
        "100": 0,
        "010": 0,
        "110": 0,
        "001": 0,
        "101": 0,
        "011": 2,
        "111": 1,
    }
    ta, tb, _ = sets["first_last"]
    assert ta == set() and tb == {(3, "1970-01-21")}  # fact 1 is on day 20 = 1970-01-21
    fig = report.venn_grid(sets, k=2)
    assert len(fig.axes) == 6 and "C: every gold answer" in fig.texts[-1].get_text()


def test_rescore_released_outputs(tmp_path):
    path = tmp_path / "predictions.jsonl"
    rows = [
        {"prediction": "['Iran', 'Iraq']", "ground_truth": "['Iraq']"},  # whole hit, not the first answer
        {"prediction": ["['2012-05-03']"], "ground_truth": "['2012-05']"},  # time cut to the gold month
        {"prediction": "['Japan']", "ground_truth": "['China']"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n", encoding="utf-8")
    got = released.rescore(path)
    assert got["n"] == 3 and got["bad_lines"] == 1
    assert got["whole"] == pytest.approx(2 / 3) and got["lenient"] == pytest.approx(1 / 3)
    assert got["strict"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="TimeR4 output"):
        (tmp_path / "empty.jsonl").write_text("{}\n")
        released.rescore(tmp_path / "empty.jsonl")


def test_method_arguments_fail_with_a_clear_message(small):
    sub, fks = small
    with pytest.raises(ValueError, match="needs an llm"):
        timer4.TimeR4(sub, fks, fks, rewrite="llm")
    with pytest.raises(ValueError, match="offline parser"):
        timer4.TimeR4(sub, fks, fks)
    with pytest.raises(ValueError, match="time-aware store"):
        timer4.TimeR4(sub, fks, None, rewrite="none")


def test_reader_sft_export_writes_prompt_and_gold(kg, small, exact_parser, tmp_path):
    sub, fks = small
    method = timer4.TimeR4(sub, fks, fks, parser=exact_parser, rewrite="none", n=4)

    class Q:
        quid, question, answer_type, answers = (
            1,
            "Who visited Iraq in March 2008?",
            "entity",
            ("Kuwait", "Iran"),
        )

    assert experiments.export_reader_sft(method, [Q()], tmp_path / "sft.jsonl") == 1
    (record,) = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    messages = record["messages"]
    assert messages[-1] == {"role": "assistant", "content": "['Kuwait', 'Iran']"}
    facts = method.evidence_lines(method.retrieve([Q()]).ids[0])
    assert len(facts) == 4 and all(f in messages[-2]["content"] for f in facts)


def test_paper_vs_code_table_cites_both_commits_and_carries_measured_effects():
    table = released.paper_vs_code({"rerank_off": "0.700 → 0.650 (-0.050)"})
    assert {"aspect", "paper", "released code", "kit", "effect on recall@15 (kit)"} <= set(table.columns)
    rerank = table[table.aspect == "Rerank"].iloc[0]
    assert (
        rerank["effect on recall@15 (kit)"] == "0.700 → 0.650 (-0.050)"
        and "re_rank=False" in rerank["released code"]
    )
    code = " ".join(table["released code"])
    assert "508cc02" in code and "be4d382" in code and "fine_tuned_retriever.py:54" in code
