"""TECQA's parser error census: each wrong main entity and relation, classed, on real MultiTQ names."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from temporag.linking import EntityLinker
from temporag.methods.tecqa.census import CLASSES, census_counts, error_census, main_error_class
from temporag.question.parsing import Constraints


@pytest.fixture(scope="module")
def linker(kg):
    return EntityLinker(kg)


def _parse(kg, mention: str, method: str, label: str, relation: str = "Make a visit") -> Constraints:
    e = kg.label_to_entity[label]
    return Constraints(
        question=f"Who did {mention} visit?",
        entities=(e,),
        relations=(kg.relation_labels.index(relation),),
        main=e,
        entity_mentions=(mention,),
        main_mention=mention,
        raw={"mention_methods": [method]},
    )


def test_wrong_main_entities_are_classed(kg, linker):
    assert main_error_class(linker, _parse(kg, "Sept", "embedding", "Japan")) == "date word"
    assert main_error_class(linker, _parse(kg, "Theresa May", "exact", "Theresa May")) == "ambiguous name"
    role = _parse(kg, "the Prime Minister of India", "embedding", "Governor (India)")
    assert main_error_class(linker, role) == "role phrase"
    partial = _parse(kg, "Médecins Sans Frontières", "embedding", "Medecins Du Monde")
    assert main_error_class(linker, partial) == "partial name"


def test_census_lists_only_wrong_parses_and_counts_every_class(kg, linker):
    # Tony Blair made visits to Iraq: right main and relation; "Medecins Du Monde" never met him
    right = _parse(kg, "Blair", "exact", "Tony Blair")
    wrong = _parse(kg, "Médecins Sans Frontières", "embedding", "Medecins Du Monde")
    neighbour = _parse(kg, "Blair", "exact", "Tony Blair", relation="Use conventional military force")
    q = SimpleNamespace(question="Who did Blair visit?", answers=["Iraq"], answer_type="entity", quid=7)
    census = error_census(kg, linker, [q, q, q], [right, wrong, neighbour])
    assert census["question_index"].tolist() == [1, 2]
    assert census["class"].tolist() == ["partial name", "relation neighbour"]
    counts = census_counts(census, 3)
    assert counts["class"].tolist() == list(CLASSES)
    assert counts.set_index("class")["questions"].to_dict() == {
        "date word": 0,
        "role phrase": 0,
        "ambiguous name": 0,
        "partial name": 1,
        "relation neighbour": 1,
    }
