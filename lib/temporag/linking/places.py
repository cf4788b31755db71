"""The KG's ``Role (Place)`` naming scheme ("Citizen (Norway)", "Head of Government (India)").

MultiTQ names thousands of entities as a role of a place; questions say them differently ("the citizens
of Norway", "India's Prime Minister"), and a place's roles are the only sensible readings of a span that
names the place.  This module holds what the linker derives from the scheme: surface forms, place
adjectives, and which places the scheme really uses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from temporag.linking.tokens import name_key

ROLE_PLACE = re.compile(r"^(?P<role>.+?) \((?P<place>[^()]+)\)$")

#: A parenthesis is a place of the role-naming scheme when at least this many roles use it.
MIN_PLACE_ROLES = 3


def alias_forms(label: str) -> list[str]:
    """The surface forms questions use for a KG label (the label first)."""
    forms = [label]
    m = ROLE_PLACE.match(label)
    if m:
        role, place = m.group("role"), m.group("place")
        forms += [
            f"{role} of {place}",
            f"{place}'s {role}",
            f"{place} {role}",
            f"{role} in {place}",
            f"{role} from {place}",
        ]
    return forms


def place_adjectives(place: str) -> list[str]:
    """Adjectives English derives from a place name by the regular suffixes ("Croatia" → "Croatian",
    "Japan" → "Japanese", "Iraq" → "Iraqi", "Sweden" → "Swedish"); irregular ones are simply not made."""
    head, _, last = place.rpartition(" ")
    low = last.lower()
    if len(low) < 4 or not low.isalpha():
        return []
    stems = {low + "n", low + "ian", low + "ese", low + "i", low + "an"}
    if low.endswith(("a", "e", "o", "y")):
        stems |= {low[:-1] + "an", low[:-1] + "ian", low[:-1] + "ese", low[:-1] + "ish"}
    if low.endswith("en"):
        stems.add(low[:-2] + "ish")
    return [f"{head} {last[:1]}{s[1:]}".strip() for s in sorted(stems)]


def place_roles(
    entity_labels: Sequence[str], label_to_entity: Mapping[str, int]
) -> dict[tuple[str, ...], tuple[int | None, list[int]]]:
    """Place key (its name, or an adjective derived from it) → (the place entity, its role entities)."""
    roles: dict[str, list[int]] = {}
    for eid, label in enumerate(entity_labels):
        m = ROLE_PLACE.match(label)
        if m:
            roles.setdefault(m.group("place"), []).append(eid)
    out: dict[tuple[str, ...], tuple[int | None, list[int]]] = {}
    for place, ids in roles.items():
        if not place[:1].isupper() or len(ids) < MIN_PLACE_ROLES:
            continue  # "(ethnic)", one-off qualifiers: not a place of the naming scheme
        entry = (label_to_entity.get(place), ids)
        for form in [place, *place_adjectives(place)]:
            key = name_key(form)
            if key and (key not in out or len(out[key][1]) < len(ids)):
                out[key] = entry
    return out
