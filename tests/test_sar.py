"""SAR: action parsing, the agent's recorded outcomes, FILTER granularity, Eq. 1 against a brute-force loop,
decomposition and verdict parsing, and the pipelines on real questions with the fake LLM."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fakes import fake_llm

from temporag.data.tkg import TemporalKG
from temporag.llm.stub import agent_reply
from temporag.methods.base import QuestionRecord
from temporag.methods.sar import SAR, NaiveRAG, ReActRAG, paper_sample
from temporag.methods.sar.actions import FINISH, MALFORMED, SEARCH, parse_step
from temporag.methods.sar.agent import Agent, PolicyReply
from temporag.methods.sar.decompose import make_decomposer, parse_triple_reply, split_triple
from temporag.methods.sar.search import SearchResult, TimeIndex, eq1_scores, name_scores
from temporag.methods.sar.verify import parse_verdict
from temporag.methods.workspace import KGWorkspace
from temporag.timeutil import day_of, parse_time

# -- actions ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,kind,sub_query,type_,time",
    [
        (
            'Thought: x\nAction: SEARCH("China visit Abdullah Gül", ANYTIME, none)',
            SEARCH,
            "China visit Abdullah Gül",
            "ANYTIME",
            None,
        ),
        (
            "Action: SEARCH[Ministry of Finance, Economy, Trade and Industry visit China, AFTER, 2005-03-02]",
            SEARCH,
            "Ministry of Finance, Economy, Trade and Industry visit China",
            "AFTER",
            "2005-03-02",
        ),
        (
            "Action: SEARCH(sub_query='Citizen (Norway) criticise', type=before, time=2010)",
            SEARCH,
            "Citizen (Norway) criticise",
            "BEFORE",
            "2010",
        ),
        ("SEARCH('Côte d'Ivoire visit', IN, May 2010)", SEARCH, "Côte d'Ivoire visit", "IN", "May 2010"),
        ("Action: SEARCH(who visited Iraq, 2010)", SEARCH, "who visited Iraq", "IN", "2010"),
        ("Action: SEARCH(visit Iraq, BEFORE, none)", SEARCH, "visit Iraq", "ANYTIME", None),
        ('Action: SEARCH("visit Japan", AFTER', SEARCH, "visit Japan", "ANYTIME", None),  # cut off
    ],
)
def test_search_actions_in_the_forms_models_write(text, kind, sub_query, type_, time):
    _, action = parse_step(text)
    assert (action.kind, action.sub_query, action.type, action.time) == (kind, sub_query, type_, time)


def test_finish_and_malformed_actions():
    thought, action = parse_step("Thought: France visited first.\nAction: FINISH(France)")
    assert thought == "France visited first." and action.kind == FINISH and action.answer == "France"
    assert parse_step("Action: FINISH(['France', 'Kenya'])")[1].answer == "['France', 'Kenya']"
    for text, why in [
        ("I am not sure what to search for.", "no SEARCH"),
        ("The answer is: - no answer was given because the attempt ended with an error", "no SEARCH"),
        ("Action: SEARCH(, ANYTIME, none)", "without a sub-query"),
        ("Action: FINISH()", "without an answer"),
        ("", "no SEARCH"),
        (None, "no SEARCH"),
    ]:
        action = parse_step(text)[1]
        assert action.kind == MALFORMED and why in action.error
    # an answer stated in prose is read as FINISH, and says so
    loose = parse_step("I think the answer is France. It visited first.")[1]
    assert loose.kind == FINISH and loose.answer == "France" and "without FINISH" in loose.error
    assert parse_step('SEARCH("a", IN, 2010)')[1].key() == parse_step('SEARCH("A ", in, 2010)')[1].key()


# -- the agent's outcomes ---------------------------------------------------------------------------


class Scripted:
    """A policy replaying fixed turns."""

    name = "scripted"

    def __init__(self, turns):
        self.turns = list(turns)

    def begin(self, question, feedback):
        return {"feedback": feedback}

    def step(self, state, memory):
        turn = self.turns[min(len(memory), len(self.turns) - 1)]
        return PolicyReply("", error="boom") if turn is None else PolicyReply(turn)


def fixed_search(sub_query, kind="ANYTIME", time=None):
    return SearchResult(np.array([3, 1]), np.array([2.0, 1.5]), 0.001, note="")


@pytest.mark.parametrize(
    "turns,outcome,answers,steps",
    [
        (
            ['Action: SEARCH("x", ANYTIME, none)', "Action: FINISH(['Kenya', 'Iran'])"],
            "finish",
            ["Kenya", "Iran"],
            2,
        ),
        (["no action here", "still none"], "malformed_action", [], 2),
        (["no action", 'Action: SEARCH("x", ANYTIME, none)', "Action: FINISH(Iran)"], "finish", ["Iran"], 3),
        (
            ['Action: SEARCH("x", ANYTIME, none)', 'Action: SEARCH("X", anytime, none)'],
            "repeated_search",
            [],
            2,
        ),
        ([f'Action: SEARCH("q{i}", ANYTIME, none)' for i in range(10)], "step_budget", [], 4),
        ([None], "llm_error", [], 0),
        (["Action: FINISH(unknown)"], "finish", [], 1),
    ],
)
def test_every_way_an_attempt_ends_is_a_recorded_outcome(turns, outcome, answers, steps):
    result = Agent(Scripted(turns), fixed_search, max_steps=4).run("q")
    assert result.outcome == outcome and result.answers == answers
    assert len(result.attempts[0].steps) == steps
    assert result.to_trace()["outcome"] == outcome


class Critic:
    def __init__(self, verdicts):
        from temporag.methods.sar.agent import Verdict

        self.verdicts = [Verdict(v, "" if v else f"wrong {i}", "rules") for i, v in enumerate(verdicts)]
        self.calls = 0

    def verify(self, question, attempt):
        self.calls += 1
        return self.verdicts[self.calls - 1], []


def test_verification_retries_with_feedback_at_most_n_times():
    class Counting(Scripted):
        def begin(self, question, feedback):
            return {"n": len(feedback)}

        def step(self, state, memory):
            return PolicyReply(f"Action: FINISH(answer{state['n']})")

    critic = Critic([False, False, True])
    result = Agent(Counting([]), fixed_search, critic, n_verify=2).run("q")
    # N = 2: three attempts; the last verdict is not requested (it could not change the answer)
    assert [a.answers for a in result.attempts] == [["answer0"], ["answer1"], ["answer2"]]
    assert critic.calls == 2 and result.attempts[2].feedback == ["wrong 0", "wrong 1"]
    assert [result.answers_at(n) for n in range(4)] == [["answer0"], ["answer1"], ["answer2"], ["answer2"]]
    accepted = Agent(Counting([]), fixed_search, Critic([True]), n_verify=2).run("q")
    assert len(accepted.attempts) == 1 and accepted.answers_at(0) == accepted.answers_at(2) == ["answer0"]


# -- FILTER, Eq. 1, TOP-K ------------------------------------------------------------------------------


def _dated_kg(days: list[str]) -> TemporalKG:
    t = np.asarray([day_of(d) for d in days], dtype=np.int32)
    z = np.zeros(len(days), dtype=np.int32)
    return TemporalKG(z, z, z + 1, t, t.copy(), ["A", "B"], ["r"])


def test_filter_is_granularity_aware():
    days = ["2009-12-31", "2010-01-01", "2010-05-01", "2010-05-31", "2010-06-01", "2010-12-31", "2011-01-01"]
    kg = _dated_kg(days)
    index = TimeIndex(kg)

    def kept(kind, when):
        lo, hi, mask = index.filter(kind, parse_time(when))
        assert mask is None  # point facts: one slice
        return sorted(kg.date(int(f)) for f in index.order[lo:hi])

    assert kept("BEFORE", "2010") == ["2009-12-31"]
    assert kept("AFTER", "2010") == ["2011-01-01"]
    assert kept("IN", "2010-05") == ["2010-05-01", "2010-05-31"]
    assert kept("IN", "2010") == days[1:6]
    assert kept("BEFORE", "2010-05-31") == days[:3]
    assert kept("AFTER", "2010-05") == days[4:]
    assert index.filter("ANYTIME", None)[:2] == (0, len(days))


@pytest.fixture(scope="module")
def workspace(kg):
    return KGWorkspace(kg)


@pytest.fixture(scope="module")
def index(kg):
    return TimeIndex(kg)


def test_eq1_matches_a_brute_force_loop_on_a_kg_slice(kg, workspace, index):
    ents, rels = workspace.entity_vectors, workspace.relation_vectors
    head, rel = ents[kg.label_to_entity["China"]], rels[kg.relation_labels.index("Make a visit")]
    tail = workspace.embed("the government of Japan")
    lo, hi, _ = index.filter("IN", parse_time("2010-05"))
    assert 2000 < hi - lo < 10_000
    tables = name_scores(ents, rels, head, rel, tail)
    fast = eq1_scores(index, lo, hi, *tables)
    slow = np.array(
        [
            float(head @ ents[kg.s[f]]) + float(rel @ rels[kg.r[f]]) + float(tail @ ents[kg.o[f]])
            for f in index.order[lo:hi]
        ]
    )
    np.testing.assert_allclose(fast, slow, atol=1e-5)
    sym = eq1_scores(index, lo, hi, *tables, symmetric=True)
    swapped = [
        float(rel @ rels[kg.r[f]])
        + max(
            float(head @ ents[kg.s[f]]) + float(tail @ ents[kg.o[f]]),
            float(head @ ents[kg.o[f]]) + float(tail @ ents[kg.s[f]]),
        )
        for f in index.order[lo:hi]
    ]
    np.testing.assert_allclose(sym, swapped, atol=1e-5)


def test_structured_search_finds_the_named_event_and_reorders(kg, workspace, index):
    from temporag.methods.sar.tools import StructuredSearch

    tool = StructuredSearch(workspace, index, make_decomposer("offline", workspace.parser.linker), k=15)
    found = tool("China; Make a visit; ?", "IN", "2010-05")
    assert len(found.facts) == 15 and found.reordered is False
    quads = kg.as_quadruples(found.facts)
    assert all(s == "China" and d.startswith("2010-05") for s, _, _, d in quads)
    # the five visits China made that month score S(h)+S(r) = 2 and come first, then its nearest relation
    assert [r for _, r, _, _ in quads[:5]] == ["Make a visit"] * 5 and quads[5][1] != "Make a visit"
    np.testing.assert_allclose(found.scores[:5], 2.0, atol=1e-5)
    ordered = tool("last: China; Make a visit; ?", "ANYTIME", None)
    days = kg.t_start[ordered.facts]
    assert ordered.reordered and (np.diff(days) >= 0).all()
    visits = kg.by_subject[kg.label_to_entity["China"]]
    visits = visits[kg.r[visits] == kg.relation_labels.index("Make a visit")]
    assert len(visits) > 15 and days.max() == kg.t_start[visits].max()  # tied scores: the latest kept
    bad = tool("China; Make a visit; ?", "BEFORE", "sometime")
    assert "not a date" in bad.note and len(bad.facts) == 15


# -- decomposition and verdicts ------------------------------------------------------------------------


def test_triples_as_written_and_from_replies():
    assert split_triple("last: ?; Make a visit; Citizen (Norway)").parts() == (
        None,
        "Make a visit",
        "Citizen (Norway)",
    )
    assert split_triple("last: ?; Make a visit; Iraq").hint == "last"
    assert split_triple("China visit Abdullah Gül") is None
    assert parse_triple_reply("Triple: (China; visit; Abdullah Gül)") == ("China", "visit", "Abdullah Gül")
    assert parse_triple_reply("(?; criticise; Citizen (Norway))") == (None, "criticise", "Citizen (Norway)")
    assert parse_triple_reply("I cannot tell.") is None


def test_offline_decomposer_links_the_sub_query(kg, workspace):
    decompose = make_decomposer("offline", workspace.parser.linker)
    triple, responses = decompose("China visit Abdullah Gül")
    assert (triple.head, triple.tail, triple.source) == ("China", "Abdullah Gül", "offline") and not responses
    triple, _ = decompose("who visited Iraq")
    assert triple.head is None and triple.tail == "Iraq" and "visited" in triple.relation


def test_llm_decomposer_falls_back_to_the_linker(kg, workspace):
    good = make_decomposer("llm", workspace.parser.linker, fake_llm("(China; visit; Abdullah Gül)"))
    triple, responses = good("China paid a visit to Abdullah Gül")
    assert (
        triple.parts() == ("China", "visit", "Abdullah Gül")
        and triple.source == "llm"
        and len(responses) == 1
    )
    bad = make_decomposer("llm", workspace.parser.linker, fake_llm("I am not sure what you mean."))
    triple, _ = bad("China visit Abdullah Gül")
    assert triple.source == "llm→offline" and triple.head == "China"


def test_verdict_parsing():
    assert parse_verdict("VALID").valid and parse_verdict("VALID").source == "llm"
    invalid = parse_verdict("INVALID: the answer is a country but a date is asked")
    assert not invalid.valid and invalid.feedback.startswith("the answer is a country")
    assert not parse_verdict("The answer is not valid").valid
    assert parse_verdict("Looks fine to me.").source == "unparsed"


# -- pipelines on real questions -------------------------------------------------------------------


def _fake_agent_llm():
    """The kit's client over a scripted SAR agent (:func:`temporag.llm.stub.agent_reply`)."""
    return fake_llm(agent_reply)


def test_sar_pipeline_with_the_fake_llm_on_real_questions(kg, questions, workspace):
    qs = questions[:3]
    llm = _fake_agent_llm()
    records = SAR(kg, workspace=workspace).pipeline(qs, llm, progress=False)
    assert all(isinstance(r, QuestionRecord) for r in records)
    for q, r in zip(qs, records):
        assert r.quid == q.quid and r.trace["outcome"] == "finish" and r.error is None
        # SEARCH, P_decomp, FINISH, P_verify: four calls of 100 + 10 tokens each
        assert (r.llm_calls, r.prompt_tokens, r.completion_tokens) == (4, 400, 40)
        assert len(r.evidence_ids) == 15
        assert all(kg.entity_labels[kg.s[f]] == "China" for f in r.evidence_ids)
        assert r.answers == ["China"]
        step = r.trace["attempts"][0]["steps"][0]
        assert (
            step["search"]["triple"] == ["China", "Make a visit", None]
            and step["search"]["decomposer"] == "llm"
        )


def test_offline_and_llm_policies_return_the_same_record_type(kg, questions, workspace):
    qs = questions[:2]
    offline = SAR(kg, workspace=workspace).pipeline(qs, progress=False)
    llm = SAR(kg, workspace=workspace).pipeline(qs, _fake_agent_llm(), progress=False)
    for a, b in zip(offline, llm):
        assert type(a) is type(b) is QuestionRecord
        assert a.to_dict().keys() == b.to_dict().keys() and a.trace.keys() == b.trace.keys()
        assert a.llm_calls == 0 and b.llm_calls > 0
        assert a.trace["attempts"][0]["steps"][-1]["action"].startswith("FINISH(")


def test_offline_policy_answers_after_first_questions_from_its_searches(kg, questions, workspace):
    qs = [q for q in questions if q.qtype == "after_first"][:12]
    records = SAR(kg, workspace=workspace).pipeline(qs, progress=False)
    from temporag.answer.evaluate import strict_hit

    for r in records:  # one SEARCH for the reference event, then one AFTER its date
        steps = r.trace["attempts"][0]["steps"]
        assert steps[0]["action"].endswith("ANYTIME, none)")
        assert ", AFTER, " in steps[1]["action"] or "not found" in steps[1]["thought"]
    hits = [strict_hit(r.answers, q.answers, 1, q.answer_type) for q, r in zip(qs, records)]
    assert np.mean(hits) >= 0.5


def test_baselines_through_the_interface(kg, questions, workspace):
    qs = questions[:2]
    naive = NaiveRAG(kg, workspace=workspace).pipeline(qs, fake_llm("['Iran']"), k=15, progress=False)
    assert [r.answers for r in naive] == [["Iran"], ["Iran"]] and all(
        len(r.evidence_ids) == 15 for r in naive
    )
    react = ReActRAG(kg, workspace=workspace).pipeline(qs, _fake_agent_llm(), progress=False)
    for r in react:  # no verifier: SEARCH and FINISH only; plain search does not decompose
        assert r.llm_calls == 2 and r.trace["attempts"][0]["steps"][0]["search"]["decomposer"] == "none"
        assert len(r.trace["attempts"]) == 1


def test_paper_sample_draws_equal_single_and_multiple(questions):
    sample, info = paper_sample(questions, 560, seed=3)
    labels = [q.qlabel for q in sample]
    assert labels.count("Single") == labels.count("Multiple") == info["per_label"] == 262
    assert info["drawn"] == 524 and info["asked"] == 560
    again, _ = paper_sample(questions, 560, seed=3)
    assert [q.quid for q in again] == [q.quid for q in sample]
    small, info = paper_sample(questions, 40, seed=3)
    assert len(small) == 40 and info["per_label"] == 20


def test_rule_verifier_checks_type_support_and_the_reference_event(kg, questions, workspace):
    from temporag.methods.sar.agent import Attempt
    from temporag.methods.sar.verify import RuleVerifier

    question = next(q for q in questions if q.qtype == "after_first")
    record = SAR(kg, workspace=workspace, verifier=None).pipeline([question], progress=False)[0]
    evidence, answer = record.evidence_ids, record.answers[0]
    verifier = RuleVerifier(workspace)
    ok, _ = verifier.verify(question.question, Attempt([], "finish", [answer]))
    assert not ok.valid and "reference event" in ok.feedback  # no evidence at all: nothing supports it
    from temporag.methods.sar.actions import Action
    from temporag.methods.sar.agent import Step

    seen = [Step("", Action(SEARCH, sub_query="x"), observation=evidence)]
    assert verifier.verify(question.question, Attempt(seen, "finish", [answer]))[0].valid
    wrong_type, _ = verifier.verify(question.question, Attempt(seen, "finish", ["2010-05-01"]))
    assert not wrong_type.valid and "expected an entity" in wrong_type.feedback
    other = next(e for e in kg.entity_labels if e != answer)
    unsupported, _ = verifier.verify(question.question, Attempt(seen, "finish", [other]))
    assert not unsupported.valid and "not supported" in unsupported.feedback


def test_report_rows_n_curve_and_cost_from_records(questions):
    from temporag.methods.sar import experiments

    qs = [q for q in questions if q.answer_type == "entity"][:2]
    gold = qs[0].answers[0]

    def record(q, attempts, calls=0, error=None):
        trace = {
            "outcome": "finish",
            "searches": 1,
            "attempts": [{"answers": a, "verdict": None if v is None else {"valid": v}} for a, v in attempts],
        }
        return QuestionRecord(
            q.quid, [1, 2], 0.01, attempts[-1][0], error, calls, 100 * calls, 5 * calls, 2.0, trace
        )

    # question 0 is answered right only on the second attempt; question 1 never
    records = [
        record(qs[0], [(["wrong"], False), ([gold], None)], calls=3),
        record(qs[1], [(["x"], True)], 1),
    ]
    assert experiments.hits_over_n(qs, records, (0, 1, 2))["hits@1"].tolist() == [0.0, 0.5, 0.5]
    row = experiments.record_row("SAR", "LLM policy", qs, records, n=0)
    assert row["Overall"] == 0.0 and row["n"] == 2 and row["failed"] == 0
    failed = experiments.record_row(
        "SAR", "LLM policy", qs, [records[0], record(qs[1], [([], None)], 1, "boom")]
    )
    assert failed["Overall"] == 1.0 and failed["failed"] == 1  # a failed call is left out, not counted wrong
    cost = experiments.cost_table({"SAR": records}).iloc[0]
    assert cost["LLM calls / q"] == 2.0 and cost["prompt tokens / q"] == 200.0 and cost["searches / q"] == 1.0
    paper = experiments.paper_row("Table 1", "SAR (GPT-4.1)", "paper")
    assert paper["Overall"] == 0.782 and paper["n"] == 560


def test_a_failed_llm_call_is_never_a_wrong_answer(kg, questions, workspace):
    """An endpoint failing mid-run leaves the failed questions out of every SAR mean (`hits`,
    `hits_over_n`, `k_sweep`, Fig. 3 and 4) and counts them beside it, never as Hits@1 0.0."""
    from temporag.methods.sar import experiments, report

    qs = [q for q in questions if q.answer_type == "entity" and "China" in q.answers][:3]
    assert len(qs) == 3
    broken, once = qs[1].question, qs[2].question
    seen = {"once": 0}

    def fails(user: str) -> bool:  # question 1: every call fails; question 2: its first attempt only
        if broken in user:
            return True
        if user.startswith("Question:") and once in user and not seen["once"]:
            seen["once"] += 1
            return True
        return False

    base = _fake_agent_llm()
    llm = fake_llm(base.backend.reply, fail_when=fails)
    records = SAR(kg, workspace=workspace).pipeline(qs, llm, progress=False, n_verify=2)
    assert [r.error is not None for r in records] == [False, True, False]
    assert records[2].trace["attempts"][0]["outcome"] == "llm_error"

    score = experiments.reader_hits(qs, records, 2)  # every answered question is right ("China")
    assert score == {"value": 1.0, "n": 3, "answered": 2, "failed": 1}
    curve = experiments.hits_over_n(qs, records, (0, 1, 2)).set_index("N")
    assert curve["hits@1"].tolist() == [1.0, 1.0, 1.0]  # not 1/3 and 2/3: failed calls are not wrong
    assert curve["failed"].tolist() == [2, 1, 1] and curve["answered"].tolist() == [1, 2, 2]
    row = experiments.record_row("SAR", "LLM policy", qs, records, n=0)
    assert (row["Overall"], row["n"], row["failed"]) == (1.0, 3, 2)

    everything_fails = fake_llm(fail_when=lambda user: True)
    method = SAR(kg, workspace=workspace)
    offline = method.pipeline(qs, policy="offline", progress=False)
    sweep = experiments.k_sweep(method, qs, qs[:2], everything_fails, (15,), reuse={15: offline})
    assert np.isnan(sweep["reader_hits"].iloc[0]) and sweep["reader_failed"].iloc[0] == 2
    assert sweep["reader_n"].iloc[0] == 2

    frame = pd.DataFrame({"N": [0, 1, 2], "LLM": curve["hits@1"], "LLM failed": curve["failed"]})
    fig = report.fig_n(frame)
    labels = [line.get_label() for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert labels == ["LLM; failed calls left out: N=0 2, N=1 1, N=2 1"]
    shown = [line.get_label() for line in report.fig_k(sweep, {}).axes[0].get_lines()]
    assert not any("LLM reader" in label for label in shown)  # no answer at all: no point, never a 0
    sweep.loc[0, ["reader_hits", "reader_failed"]] = (0.5, 1)
    shown = [line.get_label() for line in report.fig_k(sweep, {}).axes[0].get_lines()]
    assert "Hits@1, LLM reader on SEARCH evidence (sample) n=2, 1 failed calls left out" in shown


def test_headline_carries_the_failed_count_beside_an_llm_number(tmp_path):
    """"SAR Hits@1 — LLM 0.0, n 6" read as six wrong answers; 5 of its 6 calls had failed."""
    from temporag.methods.sar import report
    from temporag.notebook.results import Results

    results = Results("sar", {"seed": 0}, out_dir=tmp_path / "out")
    results.metric("table1/SAR/llm/Overall", 0.0, paper=0.782, n=6, failed=5, reader="LLM policy")
    results.metric("table1/SAR/offline/Overall", 0.8, paper=0.782, n=6, failed=0, reader="offline")
    results.metric("latency/search_p50_ms", 12.0)
    table = report.headline(results, model="stub")
    assert list(table.columns) == ["number", "kit", "paper", "n", "failed", "reader / policy"]
    rows = {r["number"]: (r["kit"], r["n"], r["failed"]) for r in table.to_dict("records")}
    assert rows["SAR Hits@1 — LLM policy, stub"] == (0.0, 6, 5)
    assert rows["SAR Hits@1 — offline policy + template reader (no LLM)"] == (0.8, 6, 0)
    assert rows["one SEARCH p50 (ms, target 20)"][1:] == ("", "")  # no count recorded: blank
    results.table("headline", table, "Headline numbers.")
    csv = (tmp_path / "out" / "headline.csv").read_text()
    assert '"SAR Hits@1 — LLM policy, stub",0.0,0.782,6,5,LLM policy' in csv
    assert '"one SEARCH p50 (ms, target 20)",12.0,,,,' in csv
