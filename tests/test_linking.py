"""Offline entity / relation linking: exact forms, role phrases, main-entity rule, relation grounding."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import BagOfWordsEncoder

from temporag.data.tkg import TemporalKG
from temporag.linking import (
    EntityLinker,
    Mention,
    RelationGrounder,
    alias_forms,
    cue_families,
    main_entity_index,
    name_key,
    predicate_text,
    tokenize,
)


def _tiny_kg() -> TemporalKG:
    entities = ["Iraq", "Citizen_(Norway)", "Kitti_Wasinondh", "Thailand", "Prime_Minister_(India)", "China"]
    relations = ["Make_a_visit", "Express_intent_to_meet_or_negotiate", "Engage_in_negotiation"]
    s = np.array([1, 2, 4, 5], dtype=np.int32)
    r = np.array([0, 1, 2, 0], dtype=np.int32)
    o = np.array([0, 3, 5, 0], dtype=np.int32)
    t = np.array([100, 200, 300, 400], dtype=np.int32)
    return TemporalKG(s, r, o, t, t.copy(), entities, relations)


def test_tokenize_splits_possessive_and_keeps_offsets():
    text = "When did China's envoy visit?"
    toks = tokenize(text)
    assert [t.text for t in toks] == ["When", "did", "China", "'s", "envoy", "visit"]
    assert all(text[t.start : t.end] == t.text for t in toks)
    assert toks[2].norm == "china" and toks[3].norm == "'s"


def test_name_key_ignores_case_accents_plural_and_the():
    assert name_key("the Citizens of Norway") == name_key("Citizen of Norway")
    assert name_key("Médecins") == name_key("medecins")
    assert name_key("Henry M. Paulson") == name_key("Henry M Paulson")


def test_alias_forms_cover_the_parenthesis_forms_multitq_uses():
    forms = alias_forms("Citizen (Norway)")
    assert forms[0] == "Citizen (Norway)"
    assert {"Citizen of Norway", "Norway's Citizen", "Norway Citizen"} <= set(forms)


def test_exact_longest_match_and_role_phrase():
    kg = _tiny_kg()
    linker = EntityLinker(kg)
    ms = linker.link("In which year did the citizens of Norway visit Iraq?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Citizen (Norway)", "Iraq"]
    assert all(m.method == "exact" and m.score == 1.0 for m in ms)
    ms = linker.link("Who did the Prime Minister of India negotiate with after China?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Prime Minister (India)", "China"]
    assert [m.constraint for m in ms] == [False, True]


def test_dates_are_not_entities():
    kg = _tiny_kg()
    ms = EntityLinker(kg).link("Who visited Iraq in April 2005?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Iraq"]


def _m(text, start, constraint=False, entity=0):
    return Mention(text, start, start + len(text), entity, 1.0, "exact", constraint)


def test_main_entity_rule_subject_or_focus_object():
    q = "After the Danish Ministry of Defence and Security, who was the first to visit Iraq?"
    ms = [
        _m("Danish Ministry of Defence and Security", q.index("Danish"), True, 1),
        _m("Iraq", q.index("Iraq")),
    ]
    assert main_entity_index(q, ms) == 1  # subject is "who" → the focus object
    q = "When did Kitti Wasinondh last negotiate with Thailand?"
    ms = [_m("Kitti Wasinondh", q.index("Kitti"), entity=2), _m("Thailand", q.index("Thailand"), entity=3)]
    assert main_entity_index(q, ms) == 0  # a specific subject
    q = "Could you tell me the exact month when the citizens of Tanzania supported Comoros?"
    ms = [
        _m("citizens of Tanzania", q.index("citizens"), entity=4),
        _m("Comoros", q.index("Comoros"), entity=5),
    ]
    assert main_entity_index(q, ms) == 0
    assert main_entity_index("Who visited?", []) is None


def test_predicate_text_drops_entities_dates_and_scaffolding():
    q = "Could you tell me the exact month when Iraq paid a visit to China in 2005?"
    ms = [_m("Iraq", q.index("Iraq")), _m("China", q.index("China"))]
    assert predicate_text(q, ms) == "paid visit"


def test_cue_families_follow_the_relation_prompt_rules():
    fired = cue_families("wanted to negotiate")
    assert (("express intent",), "start") in fired and (("negotiat",), "contains") in fired


def test_relation_grounding_cues_pick_intent_over_plain_negotiation():
    kg = _tiny_kg()
    enc = BagOfWordsEncoder(["visit", "negotiate", "negotiation", "meet", "intent", "engage", "want"])
    rel_vecs = enc.encode(kg.relation_labels)
    g = RelationGrounder(kg, enc, rel_vecs)
    ids, _ = g.ground(["wanted to negotiate", "paid a visit", "engage in negotiation"])
    assert [kg.relation_labels[i] for i in ids] == [
        "Express intent to meet or negotiate",
        "Make a visit",
        "Engage in negotiation",
    ]
    ids, _ = g.ground(["paid a visit"], allowed=[np.array([2])])
    assert kg.relation_labels[ids[0]] == "Engage in negotiation"


# -- real MultiTQ names ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def linker(kg):
    from temporag.retrieval.embed import Encoder, kg_name_vectors

    enc = Encoder()
    ent_vecs, _ = kg_name_vectors(kg, enc)
    return EntityLinker(kg, enc, ent_vecs)


@pytest.mark.slow
def test_real_question_finds_the_danish_ministry(kg, linker):
    q = "After the Danish Ministry of Defence and Security, who was the first to visit Iraq?"
    ms = linker.link(q)
    assert [m.text for m in ms] == ["Danish Ministry of Defence and Security", "Iraq"]
    assert kg.entity_labels[ms[0].entity] == "Defense / Security Ministry (Denmark)"
    assert ms[0].method == "embedding" and ms[0].constraint
    assert kg.entity_labels[ms[main_entity_index(q, ms)].entity] == "Iraq"


@pytest.mark.slow
def test_real_role_phrases_ground_to_role_entities(kg, linker):
    ms = linker.link(
        "Could you tell me the exact month when the Cambodian military first signed an agreement?"
    )
    assert [kg.entity_labels[m.entity] for m in ms] == ["Military (Cambodia)"]
    ms = linker.link("Who did Iraq appeal to after the German government?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Iraq", "Government (Germany)"]


@pytest.mark.slow
def test_real_relation_paraphrase(kg):
    from temporag.retrieval.embed import Encoder, kg_name_vectors

    enc = Encoder()
    _, rel_vecs = kg_name_vectors(kg, enc)
    ids, _ = RelationGrounder(kg, enc, rel_vecs).ground(["paid visit", "make optimistic remarks"])
    assert [kg.relation_labels[i] for i in ids] == ["Make a visit", "Make optimistic comment"]


# -- general rules from the KG's vocabulary, on the real MultiTQ KG (exact linking, no encoder) -------------


@pytest.fixture(scope="module")
def exact_linker(kg):
    return EntityLinker(kg)


@pytest.mark.parametrize("word", ["May", "March", "Jan", "Sept", "Monday", "Sunday", "2009", "12th"])
def test_a_month_weekday_or_year_is_never_an_entity(kg, exact_linker, word):
    ms = exact_linker.link(f"Which country did China criticise on {word}, before Japan did?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["China", "Japan"]


def test_a_kg_name_holding_a_month_word_still_links(kg, exact_linker):
    ms = exact_linker.link("Whom did Theresa May criticise in May 2016?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Theresa May"]
    ms = exact_linker.link("Whom did Jan Kavan praise in Jan 2002?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Jan Kavan"]


def test_a_surname_part_links_to_the_person(kg, exact_linker):
    ms = exact_linker.link("Which country did Blair visit after Obama?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Tony Blair", "Barack Obama"]
    assert exact_linker.surnames[kg.label_to_entity["Tony Blair"]] == "blair"
    # institution and role words are no surnames, and a full name beats its surname
    assert not {"university", "party", "court", "ministry"} & set(exact_linker.surnames.values())
    assert exact_linker.aliases[("tony", "blair")] == exact_linker.aliases[("blair",)]


def test_the_score_picks_the_more_specific_span(kg, exact_linker):
    ms = exact_linker.link("When did the Foreign Affairs of France criticise Iran?")
    assert [kg.entity_labels[m.entity] for m in ms] == ["Foreign Affairs (France)", "Iran"]


@pytest.mark.slow
def test_the_degree_score_resolves_a_vague_role_phrase(kg, linker):
    # cosine alone picks a one-off ministry; the score (cosine + weight × KG degree) the foreign ministry
    q = "When did the Ministry of Foreign Affairs of France first criticise Iran?"
    scored = linker.link(q)[0]
    assert kg.entity_labels[scored.entity] == "Foreign Affairs (France)" and scored.method == "embedding"
    kept = linker.degree_weight
    try:
        linker.degree_weight = 0.0
        assert kg.entity_labels[linker.link(q)[0].entity] == "Ministry of Tourism (France)"
    finally:
        linker.degree_weight = kept


@pytest.mark.slow
def test_a_bare_place_without_its_own_entity_grounds_among_its_roles(kg, linker):
    # MultiTQ has no entity "Canada", only Canadian roles: the span stays in Canada
    ms = linker.link("After Iraq, who was the first country with which Canada signed an agreement?")
    assert kg.entity_labels[ms[1].entity].endswith("(Canada)")
