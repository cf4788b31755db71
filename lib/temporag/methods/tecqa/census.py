"""The parser's error census: every wrong main entity and relation of a run's questions, classed.

Held-back question sets are compared on this table: a class that grows on unseen questions points at a
linking rule that does not generalise.  The gold is :mod:`.analysis`'s data-derived one (a main entity is
right when some KG fact joins it to a gold answer; a relation when F_main holds a gold answer).

Classes of a wrong main entity, first that applies:

* **date word** — a mention of the parse holds a word of the timestamp vocabulary (a month, a weekday,
  a number) that is not inside an exact KG name;
* **role phrase** — the main mention names a place or a KG role word and was grounded by cosine
  ("the Prime Minister of India");
* **ambiguous name** — the main mention is an exact KG name (a label, a derived form or a surname) but
  the question meant another reading, or another mention was the pivot;
* **partial name** — any other main mention grounded by cosine: a name the KG writes otherwise or not
  at all.

A right main entity with a wrong relation is a **relation neighbour**.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.linking import EntityLinker, date_word_mask, tokenize
from temporag.methods.tecqa.analysis import main_entity_supported, relation_supported
from temporag.question.parsing import Constraints

CLASSES = ("date word", "role phrase", "ambiguous name", "partial name", "relation neighbour")


def date_word_linked(linker: EntityLinker, constraints: Constraints) -> bool:
    """A mention of the parse holds a date word and is not an exact KG name ("Theresa May" is one)."""
    for text, method in zip(constraints.entity_mentions, constraints.raw.get("mention_methods", ())):
        tokens = tokenize(text)
        if method != "exact" and any(date_word_mask(tokens)):
            return True
    return False


def main_error_class(linker: EntityLinker, constraints: Constraints) -> str:
    """The class of a wrong main entity (see the module doc)."""
    if date_word_linked(linker, constraints):
        return "date word"
    mentions, methods = constraints.entity_mentions, constraints.raw.get("mention_methods", ())
    where = mentions.index(constraints.main_mention) if constraints.main_mention in mentions else None
    exact = where is not None and where < len(methods) and methods[where] == "exact"
    if exact:
        return "ambiguous name"
    text = constraints.main_mention or ""
    words = {t.norm for t in tokenize(text)}
    if linker.pool_of(text) is not None or words & linker.role_words:
        return "role phrase"
    return "partial name"


def error_census(kg, linker: EntityLinker, questions: Sequence, constraints: Sequence[Constraints]):
    """One row per wrong main entity or relation: the question, its class, what was linked."""
    rows = []
    for i, (q, c) in enumerate(zip(questions, constraints)):
        main_ok = main_entity_supported(kg, c, q.answers, q.answer_type)
        if main_ok and relation_supported(kg, c, q.answers, q.answer_type):
            continue
        desc = c.describe(kg)
        rows.append(
            {
                "question_index": i,
                "quid": getattr(q, "quid", None),
                "class": main_error_class(linker, c) if not main_ok else "relation neighbour",
                "question": q.question,
                "main_mention": c.main_mention,
                "main": desc["main"],
                "relation_phrase": c.relation_mention,
                "relation": "; ".join(desc["relation"]),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "question_index",
            "quid",
            "class",
            "question",
            "main_mention",
            "main",
            "relation_phrase",
            "relation",
        ],
    )


def census_counts(census: pd.DataFrame, n: int) -> pd.DataFrame:
    """Questions per class (every class listed, zeros included) and their share of the ``n`` questions."""
    counts = census["class"].value_counts().reindex(list(CLASSES), fill_value=0)
    frame = counts.rename("questions").rename_axis("class").reset_index()
    frame["share"] = frame["questions"] / n if n else np.nan
    return frame
