"""TECQA beyond the paper, without an LLM: one test per failure class of the unseen-question audit, on
hand-written questions (none copied from the shared set) and slices of the real MultiTQ KG."""

from __future__ import annotations

import numpy as np
import pytest
from slices import iraq_visits, kg_slice

from temporag.linking import (
    EntityLinker,
    date_word_mask,
    place_adjectives,
    relation_paraphrases,
    tokenize,
    top_relations,
)
from temporag.methods import tecqa
from temporag.methods.tecqa import Constraints, question_focus
from temporag.methods.tecqa.beyond import with_relation_union
from temporag.question.parsing import IMPROVED_PARSER

# -- class 1: tokens of a date linked as entities -------------------------------------------------------


def test_date_word_mask_marks_the_whole_timestamp_vocabulary():
    tokens = tokenize("Whom did Jan Fischer criticise in Jan, and who on 3 Dec or Monday, as they may?")
    marked = [t.text for t, d in zip(tokens, date_word_mask(tokens)) if d]
    assert marked == ["Jan", "Jan", "3", "Dec", "Monday"]  # "may" (lower case) is a verb


def test_month_word_never_becomes_the_main_entity(kg, tmp_cache):
    jan = kg.label_to_entity["Jan Kavan"]
    japan = kg.label_to_entity["Japan"]
    facts = np.concatenate([kg.by_entity[jan], kg.by_entity[japan][:400]])
    sub = kg_slice(kg, facts)
    parser = tecqa.make_offline_parser(sub)
    after = parser.parse("Which country did Japan criticise during Jan, the year 2009?")
    assert after.describe(sub)["entities"] == ["Japan"] and after.describe(sub)["main"] == "Japan"
    named = parser.parse("Whom did Jan Kavan criticise in Jan 2009?")  # a KG name holding a month word
    assert named.describe(sub)["entities"] == ["Jan Kavan"]


# -- class 2: role phrases and place adjectives ----------------------------------------------------------


def test_place_adjectives_follow_regular_suffixes_only():
    assert "Croatian" in place_adjectives("Croatia")
    assert "Japanese" in place_adjectives("Japan")
    assert "Iraqi" in place_adjectives("Iraq")
    assert "Swedish" in place_adjectives("Sweden")
    assert "South Korean" in place_adjectives("South Korea")
    assert "French" not in place_adjectives("France")  # irregular: not made up


def test_role_phrase_resolves_among_the_named_places_roles(kg, tmp_cache):
    from temporag.retrieval.embed import Encoder, kg_name_vectors

    places = ("Turkmenistan", "Croatia", "Serbia", "Slovenia", "Uzbekistan", "Thailand")
    ids = [e for e, label in enumerate(kg.entity_labels) if label.endswith(tuple(f"({p})" for p in places))]
    facts = kg.by_entity.many(np.asarray([*ids, kg.label_to_entity["Thailand"]]))
    sub = kg_slice(kg, facts[:: max(1, len(facts) // 3000)])
    enc = Encoder()
    vecs, _ = kg_name_vectors(sub, enc)
    linker = EntityLinker(sub, enc, vecs)
    pool = linker.place_pools[("croatian",)]  # the adjective made from "Croatia" keys Croatia's entities
    assert len(pool) >= 3 and all("Croatia" in sub.entity_labels[e] for e in pool)
    question = "When did the Slovenian police arrest Thailand's citizens?"
    linked = [sub.entity_labels[m.entity] for m in linker.link(question)]
    assert linked[0].endswith("(Slovenia)") and linked[1:] == ["Citizen (Thailand)"]
    # cosine alone, over every entity, lands on a neighbour country's role: the audit's class
    cosine = vecs @ enc.encode(["Slovenian police"], progress=False)[0]
    assert sub.entity_labels[int(cosine.argmax())] == "Police (Croatia)"
    serbian = linker.link("Who criticised the Serbian ministry of justice?")[0].entity
    assert "Serbia" in sub.entity_labels[serbian]


# -- class 3: relation paraphrases ----------------------------------------------------------------------


def test_top_relations_keeps_close_candidates_only():
    row = np.array([0.50, 0.45, 0.20, -np.inf], dtype=np.float32)
    assert top_relations(row) == [0]
    assert top_relations(row, 3, 0.1) == [0, 1]
    assert top_relations(row, 4, np.inf) == [0, 1, 2]  # a ruled-out relation never joins


def test_relation_paraphrases_are_made_from_the_name():
    assert relation_paraphrases("Make optimistic comment") == [
        "Make optimistic comment",
        "made optimistic comment",
        "optimistic comment",
    ]
    assert relation_paraphrases("Host a visit")[1] == "hosted a visit"
    assert relation_paraphrases("Deny responsibility")[1] == "denied responsibility"
    assert relation_paraphrases("Investigate") == ["Investigate"]


def test_relation_union_widens_the_subgraph_and_keeps_the_best_first(kg, tmp_cache):
    sub = iraq_visits(kg)
    question = "Who wished to travel to Iraq in March 2008?"
    paper = tecqa.make_offline_parser(sub).parse(question)
    wide = tecqa.make_offline_parser(sub, **IMPROVED_PARSER).parse(question)
    assert len(paper.relations) == 1
    assert wide.relations[0] == paper.relations[0] or paper.relations[0] in wide.relations
    labels = {sub.relation_labels[r] for r in wide.relations}
    assert labels == {"Make a visit", "Host a visit"}  # the slice's two relations, both close
    assert len(tecqa.subgraph(sub, wide)) > len(tecqa.subgraph(sub, paper))
    again = with_relation_union(sub, wide, 1, 0.0, False)
    assert again.relations == paper.relations


# -- class 4: first / last questions whose answer is pruned ------------------------------------------------


def test_question_focus_reads_ordinal_direction_and_answer_kind():
    f = question_focus("Which month did Norway first sign a deal with Chile?")
    assert (f.ordinal, f.direction, f.asks_time, f.granularity) == ("first", None, True, "month")
    f = question_focus("Before the Greek navy, who last praised Italy?")
    assert (f.ordinal, f.direction, f.asks_time) == ("last", "before", False)
    f = question_focus("Who hosted Peru's president in the same year as Bolivia did?")
    assert (f.ordinal, f.direction, f.same_period) == (None, None, "year")


def _model(sub):
    from temporag.retrieval.embed import Encoder

    return tecqa.TECQA(sub, Encoder(), np.zeros((sub.n_triples, 384), dtype=np.float32))


def test_guided_chain_puts_the_first_visitor_after_the_reference_first(kg, tmp_cache):
    sub = iraq_visits(kg)
    iraq, dane = sub.label_to_entity["Iraq"], sub.label_to_entity["Defense / Security Ministry (Denmark)"]
    c = Constraints(
        "After the Danish defence ministry came, who was the first to travel to Iraq?",
        (iraq, dane),
        (sub.relation_labels.index("Make a visit"),),
        iraq,
        raw={"constraint_entities": [dane]},
    )
    model = _model(sub)
    chain = model.chain(c, np.zeros(384, dtype=np.float32), chain="guided")
    partners = [int(sub.s[f]) if sub.o[f] == iraq else int(sub.o[f]) for f in chain.facts]
    assert sub.entity_labels[partners[0]] == "Jack Straw"  # 2006-01-06, the day after the Danish visit
    assert len(chain.facts) <= 20 and len(set(partners)) == len(partners)  # one fact per candidate
    paper = model.chain(c, np.zeros(384, dtype=np.float32))
    assert len(paper.facts) > 20 and paper.variant == "tecqa"  # the paper's chain is unchanged: K=40


def test_guided_chain_answers_a_bare_last_question_with_the_pairs_latest_fact(kg, tmp_cache):
    sub = iraq_visits(kg)
    iraq, straw = sub.label_to_entity["Iraq"], sub.label_to_entity["Jack Straw"]
    c = Constraints(
        "When did Jack Straw come to Iraq for the last time?",
        (straw, iraq),
        (sub.relation_labels.index("Make a visit"),),
        straw,
    )
    chain = _model(sub).chain(c, np.zeros(384, dtype=np.float32), chain="guided")
    pair = np.flatnonzero((sub.s == straw) & (sub.o == iraq) & (sub.r == c.relations[0]))
    assert int(sub.t_start[chain.facts[0]]) == int(sub.t_start[pair].max())
    assert chain.explicit == [] and chain.implicit[0].first_day == int(sub.t_start[pair].max())
    with pytest.raises(ValueError, match="chain must be one of"):
        _model(sub).chain(c, np.zeros(384, dtype=np.float32), chain="llm")


# -- subgraph ≥ 99%: other readings of an uncertain main mention ------------------------------------------


def _india_slice(kg):
    roles = [e for e, label in enumerate(kg.entity_labels) if label.endswith("(India)")]
    keep = [kg.label_to_entity[x] for x in ("Governor (India)", "Head of Government (India)")]
    facts = kg.by_entity.many(np.asarray(roles))
    facts = np.union1d(facts[:: max(1, len(facts) // 2500)], kg.by_entity.many(np.asarray(keep)))
    return kg_slice(kg, facts)


def test_uncertain_main_mention_keeps_its_places_close_readings(kg, tmp_cache):
    sub = _india_slice(kg)
    question = "When did the Prime Minister of India first make a visit to Pakistan?"
    options = {"linker_options": {"degree_weight": 0.0}}  # the cosine alone
    paper = tecqa.make_offline_parser(sub, **options).parse(question)
    wide = tecqa.make_offline_parser(sub, main_alternatives=2, main_margin=0.05, **options).parse(question)
    governor = sub.label_to_entity["Governor (India)"]
    head = sub.label_to_entity["Head of Government (India)"]
    assert paper.main == wide.main == governor and paper.alternatives == ()  # cosine 0.729 vs 0.719
    assert head in wide.alternatives and wide.mains[0] == governor
    labels = [sub.entity_labels[e] for e in wide.mains]
    assert all(label.endswith("(India)") or label == "India" for label in labels)
    assert all(0 <= g <= 0.05 for g in wide.raw["main_alternative_gaps"])
    assert head not in wide.others  # an alternative is a reading of the pivot, not another entity
    before, after = tecqa.subgraph(sub, paper), tecqa.subgraph(sub, wide)
    assert set(before) <= set(after) or paper.relations != wide.relations
    assert np.isin(head, np.concatenate([sub.s[after], sub.o[after]]))  # the head of government's facts join
    assert not np.isin(head, np.concatenate([sub.s[before], sub.o[before]]))
    # the grounding score adds the entity's KG degree: the head of government (far busier) wins
    scored = tecqa.make_offline_parser(sub).parse(question)
    assert scored.main == head


def test_exact_main_names_get_no_alternatives(kg, tmp_cache):
    sub = iraq_visits(kg)
    parser = tecqa.make_offline_parser(sub, main_alternatives=3, main_margin=0.3)
    c = parser.parse("When did Jack Straw first travel to Iraq?")
    assert sub.entity_labels[c.main] == "Jack Straw" and c.alternatives == ()
    with pytest.raises(ValueError, match="main_alternatives"):
        tecqa.make_offline_parser(sub, main_alternatives=-1)


def test_f_main_unites_the_alternatives_facts_and_answer_keys_follow_them(kg):
    sub = iraq_visits(kg)
    iraq, straw = sub.label_to_entity["Iraq"], sub.label_to_entity["Jack Straw"]
    visit = sub.relation_labels.index("Make a visit")
    alone = Constraints("q", (straw,), (visit,), straw)
    both = Constraints("q", (straw,), (visit,), straw, alternatives=(iraq,))
    f_straw, f_both = tecqa.subgraph(sub, alone), tecqa.subgraph(sub, both)
    f_iraq = sub.by_entity[iraq][sub.r[sub.by_entity[iraq]] == visit]
    assert both.mains == (straw, iraq) and alone.mains == (straw,)
    assert np.array_equal(f_both, np.union1d(f_straw, f_iraq))
    from temporag.methods.tecqa.guided import answer_keys

    focus = question_focus("Who visited Iraq?")
    keys = answer_keys(sub, f_both, np.zeros(len(f_both)), both.mains, focus)
    assert not np.isin(keys, [straw, iraq]).any()  # the partner of either reading, never the reading itself


def test_held_out_choice_picks_the_smallest_setting_reaching_99_percent():
    from types import SimpleNamespace

    from temporag.methods.tecqa.beyond import _held_out_choice

    questions = [SimpleNamespace(qtype="a" if i % 2 else "b") for i in range(200)]
    recall = {
        (0,): (np.arange(200) % 20 >= 2).astype(float),  # misses 10% everywhere
        (1,): np.r_[np.zeros(1), np.ones(199)],  # misses one question
        (2,): np.ones(200),
    }
    size = {(0,): np.full(200, 10.0), (1,): np.full(200, 12.0), (2,): np.full(200, 50.0)}
    rows = _held_out_choice(questions, list(recall), recall, size, folds=2, seed=0)
    assert [r[0] for r in rows] == ["fold 1 of 2", "fold 2 of 2", "held-out type a", "held-out type b"]
    assert {r[2] for r in rows} == {(1,)}  # (0,) misses 10%, (2,) costs 4x the size
    assert sum(r[1] for r in rows[:2]) == 200 and all(r[4] == 12.0 for r in rows)
