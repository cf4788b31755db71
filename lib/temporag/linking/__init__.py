"""Offline entity and relation linking against a temporal KG's own names — no LLM needed.

TKGQA methods start by finding the question's entities and relation in the KG schema (TECQA §4.2.1
does it with three LLM prompts).  A laptop reader such as SmolLM2-135M cannot follow those prompts, so
this module does the same job deterministically, in three steps any method can reuse:

1. **Exact, longest-match linking** over every entity name in the forms MultiTQ writes them: the KG's
   underscored name, its spaced label, for the many ``Role (Place)`` names ("Citizen (Norway)") the forms
   questions use — "Role of Place", "Place's Role", "Place Role" — and a person's surname.  Matching is
   on normalised tokens (case, accents, dots, plural -s and "the" ignored).  The timestamp vocabulary
   (numbers, month and weekday names) never makes a name on its own.
2. **Grounding for the rest** (TECQA Eq. 2): name-like spans left over — capitalised runs and role
   phrases built from the KG's own role vocabulary — go to the candidate with the best score, cosine +
   w × the entity's normalised log degree in the KG; a span naming a place is grounded only among the
   entities whose names hold that place.  ``w`` is the linker's one number, chosen by 5-fold
   cross-validation (:mod:`.crossval`).
3. **Relation grounding**: what is left of the question once entities, dates and question scaffolding
   are removed ("paid a visit") is grounded to the relation label with the highest cosine ("Make a visit").

The main-entity rule of TECQA's third prompt (subject if it is a specific entity, else the focus
object) is :func:`main_entity_index`; it only needs the mentions' positions.

Modules: :mod:`.tokens` (tokeniser and normalisation shared by both sides of a match), :mod:`.places` (the
``Role (Place)`` naming scheme), :mod:`.entities` (steps 1 and 2), :mod:`.mentions` (what a mention is, the
main-entity rule and the relation phrase), :mod:`.relations` (step 3), :mod:`.phrase_vectors` (each
phrase embedded once), :mod:`.crossval` (seeded k-fold tables).
"""

from __future__ import annotations

from temporag.linking.entities import CONNECTORS, EntityLinker
from temporag.linking.mentions import (
    AUXILIARIES,
    CONSTRAINT_WORDS,
    SCAFFOLD_WORDS,
    WH_WORDS,
    Mention,
    main_entity_index,
    predicate_text,
)
from temporag.linking.places import MIN_PLACE_ROLES, alias_forms, place_adjectives
from temporag.linking.relations import (
    RELATION_CUES,
    RelationGrounder,
    cue_families,
    relation_paraphrases,
    top_relations,
)
from temporag.linking.tokens import (
    CALENDAR_WORDS,
    FUNCTION_WORDS,
    Token,
    date_word_mask,
    name_key,
    normalise_token,
    tokenize,
)

__all__ = [
    "AUXILIARIES",
    "CALENDAR_WORDS",
    "CONNECTORS",
    "CONSTRAINT_WORDS",
    "FUNCTION_WORDS",
    "MIN_PLACE_ROLES",
    "RELATION_CUES",
    "SCAFFOLD_WORDS",
    "WH_WORDS",
    "EntityLinker",
    "Mention",
    "RelationGrounder",
    "Token",
    "alias_forms",
    "cue_families",
    "date_word_mask",
    "main_entity_index",
    "name_key",
    "normalise_token",
    "place_adjectives",
    "predicate_text",
    "relation_paraphrases",
    "tokenize",
    "top_relations",
]
