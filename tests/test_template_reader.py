"""The LLM-free template reader: each MultiTQ template on a hand-made timeline, the classifier and the
voice rule on real question wordings, and its ceiling on real questions with the whole KG as context."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import tiny_kg

from temporag.answer.template_reader import TemplateReader, analyse, classify, pivot_role
from temporag.data.tkg import TemporalKG
from temporag.question.parsing import Constraints

ENTITIES = ["Iraq", "Iran", "Kenya", "France", "Japan", "Denmark"]
RELATIONS = ["Make_a_visit", "Criticize_or_denounce"]
FACTS = [  # subject, relation, object, day
    ("Iran", "Make_a_visit", "Iraq", "2005-01-10"),  # 0
    ("Denmark", "Make_a_visit", "Iraq", "2005-02-01"),  # 1
    ("Kenya", "Make_a_visit", "Iraq", "2005-02-15"),  # 2
    ("France", "Make_a_visit", "Iraq", "2005-03-20"),  # 3
    ("Japan", "Make_a_visit", "Iraq", "2006-07-01"),  # 4
    ("Iran", "Criticize_or_denounce", "Iraq", "2005-02-20"),  # 5: another relation
    ("Iraq", "Make_a_visit", "Japan", "2005-02-10"),  # 6: Iraq as the visitor
    ("Kenya", "Make_a_visit", "Iraq", "2006-07-01"),  # 7: same day as Japan's visit
]


@pytest.fixture(scope="module")
def tiny() -> TemporalKG:
    return tiny_kg(ENTITIES, RELATIONS, FACTS)


def _parse(kg, question, main, others=(), anchor=None, rel="Make a visit", mention=None):
    """A hand-made offline parse: entity ids, the relation, the main entity and its mention."""
    ids = [kg.label_to_entity[main]] + [kg.label_to_entity[e] for e in others]
    anchors = [kg.label_to_entity[anchor]] if anchor else []
    return Constraints(
        question,
        tuple(ids + anchors),
        (kg.relation_labels.index(rel),),
        ids[0],
        main_mention=mention or main,
        raw={"constraint_entities": anchors},
    )


def _read(kg, question, context=None, **parse):
    tq = analyse(question, _parse(kg, question, **parse))
    return tq, TemplateReader(kg).read(tq, np.arange(len(kg)) if context is None else context)


CASES = [
    # (question, parse, template, expected top answer)
    (
        "After Denmark, who was the first to visit Iraq?",
        dict(main="Iraq", anchor="Denmark"),
        "after_first",
        "Kenya",
    ),
    ("Before France, who last visited Iraq?", dict(main="Iraq", anchor="France"), "before_last", "Kenya"),
    ("Who visited Iraq after 1 March 2005?", dict(main="Iraq"), "before_after", "France"),
    # Kenya visited twice: "before Kenya" points at its latest visit (2006-07-01), nearest first
    ("Who visited Iraq before Kenya?", dict(main="Iraq", anchor="Kenya"), "before_after", "France"),
    ("Who visited Iraq in July 2006?", dict(main="Iraq"), "equal", "Japan"),
    ("When did Denmark visit Iraq?", dict(main="Denmark", others=("Iraq",)), "equal", "2005-02-01"),
    (
        "In which month did Iraq first visit Japan?",
        dict(main="Iraq", others=("Japan",)),
        "first_last",
        "2005-02",
    ),
    ("Who first visited Iraq?", dict(main="Iraq"), "first_last", "Iran"),
    ("Who visited Iraq on the same day as Japan?", dict(main="Iraq", anchor="Japan"), "equal_multi", "Kenya"),
    ("Who visited Iraq first in 2006?", dict(main="Iraq"), "equal_multi", "Japan"),
]


@pytest.mark.parametrize("question,parse,template,expected", CASES, ids=[c[2] + ":" + c[0] for c in CASES])
def test_each_template_on_a_hand_made_timeline(tiny, question, parse, template, expected):
    tq, reading = _read(tiny, question, **parse)
    assert tq.template == template
    assert reading.answers[0] == expected
    assert reading.relaxed == "none"
    # the facts behind the answer are real facts of the timeline that carry it
    support = reading.support[0]
    assert support and all(expected in " ".join(tiny.as_quadruples([f])[0]) for f in support)


def test_before_after_lists_every_answer_nearest_first(tiny):
    _, reading = _read(tiny, "Who visited Iraq after Iran?", main="Iraq", anchor="Iran")
    # Iran's visit was on 2005-01-10: Denmark, Kenya, France, then the 2006 visits; never Iran itself
    assert reading.answers == ["Denmark", "Kenya", "France", "Japan"]
    assert reading.anchor == "2005-01-10" and reading.anchor_facts == [0]


def test_the_main_entitys_role_keeps_the_visits_it_made_apart(tiny):
    _, made = _read(tiny, "Who did Iraq visit?", main="Iraq")
    _, received = _read(tiny, "Who visited Iraq?", main="Iraq")
    assert made.answers == ["Japan"] and made.support == [[6]]
    assert 6 not in sum(received.support, [])
    assert received.answers[0] == "Kenya"  # no constraint: the most frequent visitor first


def test_context_without_the_relation_is_relaxed_and_labelled(tiny):
    only_criticism = np.array([5])
    _, reading = _read(tiny, "Who visited Iraq?", context=only_criticism, main="Iraq")
    assert reading.answers == ["Iran"] and reading.relaxed == "relation"


def test_missing_anchor_event_ignores_the_constraint_and_says_so(tiny):
    context = np.array([0, 2, 3])  # Denmark's visit is not in the context
    _, reading = _read(
        tiny,
        "After Denmark, who was the first to visit Iraq?",
        context=context,
        main="Iraq",
        anchor="Denmark",
    )
    assert reading.anchor is None and "reference event not in the context" in reading.note
    assert reading.answers[0] == "Iran"  # the earliest visit in what was retrieved
    _, empty = _read(tiny, "Who first visited Iraq?", context=np.array([6])[:0], main="Iraq")
    assert empty.answers == [] and "no fact of the main entity" in empty.note


@pytest.mark.parametrize(
    "question,answer_type,granularity,template",
    [
        ("Could you tell me the exact month when Mike Rann visited China?", "time", "month", "equal"),
        (
            "In what year did international governmental organisations first criticise Thailand?",
            "time",
            "year",
            "first_last",
        ),
        ("When did Iraq first investigate the US Department of Defense?", "time", "day", "first_last"),
        (
            "Who visited China on the same day as the Nigerian Bar Association?",
            "entity",
            "day",
            "equal_multi",
        ),
        ("In 2007, which country was China's first request?", "entity", "day", "equal_multi"),
        ("Which country was rejected by Ethiopia after 18 May 2006?", "entity", "day", "before_after"),
        ("Before China, who made the last appeal to Julie Bishop?", "entity", "day", "before_last"),
        ("Who first would wish to visit Malaysia after Mswati III did?", "entity", "day", "after_first"),
    ],
)
def test_classifier_on_real_wordings(question, answer_type, granularity, template):
    shape = classify(question)
    assert (shape["answer_type"], shape["granularity"], shape["template"]) == (
        answer_type,
        granularity,
        template,
    )


def test_voice_decides_the_main_entitys_role():
    assert pivot_role("When did China last visit Henry M Paulson?", "China") == "subject"
    assert pivot_role("Which country was praised first by China after the mayor?", "China") == "subject"
    relative = "Before Xi Jinping, who was the last country Cambodia made comments about?"
    assert pivot_role(relative, "Cambodia") == "subject"
    assert pivot_role("Who visited Swaziland after 9 September 2008?", "Swaziland") == "object"
    assert pivot_role("Who visited Swaziland?", "Lesotho") is None


def test_ceiling_on_real_questions_with_the_main_entitys_facts(kg, questions):
    """With every fact of the main entity as context, the reader answers most shared questions (the
    ceiling any retrieval can give it); the real parse and real wording go through unchanged."""
    from temporag.answer.evaluate import strict_hit
    from temporag.answer.template_reader import analyse_many, template_accuracy
    from temporag.question.parsing import OfflineParser
    from temporag.retrieval.embed import Encoder, kg_name_vectors

    sample = questions[::12]  # 80 questions, every template
    enc = Encoder()
    parser = OfflineParser(kg, enc, *kg_name_vectors(kg, enc))
    templates = analyse_many([q.question for q in sample], parser.parse_many([q.question for q in sample]))
    assert template_accuracy(templates, sample) >= 0.95
    reader = TemplateReader(kg)
    hits = [
        strict_hit(reader.read(t, kg.by_entity[t.pivot]).answers, q.answers, 1, q.answer_type)
        for t, q in zip(templates, sample)
        if t.pivot is not None
    ]
    assert 0.75 <= np.mean(hits) <= 1.0
