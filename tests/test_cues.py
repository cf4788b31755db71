"""One cue lexicon: the template reader's classifier and TECQA's question-guided chain read a question's
ordinal, direction and same-period clause from the same words."""

from __future__ import annotations

import pytest

from temporag.answer.template_reader import classify
from temporag.linking import tokenize
from temporag.methods.tecqa import question_focus
from temporag.question import cues


def test_cue_positions_find_words_and_phrases_in_normalised_tokens():
    norms = [t.norm for t in tokenize("Who most recently visited Iraq prior to Japan?")]
    assert cues.cue_positions(norms, cues.LAST) == [1, 2]  # "most recently", and "recently" on its own
    assert cues.cue_positions(norms, cues.BEFORE) == [5]  # "prior to" and "prior" start at one token
    assert cues.cue_positions([t.norm for t in tokenize("the most recent visit")], cues.LAST) == [1]


@pytest.mark.parametrize(
    ("question", "order", "constraint"),
    [
        ("Who did Japan initially visit in 2010?", "first", "in"),
        ("Whom did Iraq criticise most recently?", "last", None),
        ("Who praised Italy prior to the Greek navy?", None, "before"),
        ("Who visited Chile since Bolivia did?", None, "after"),
        ("Who hosted Peru's president in the same month as Bolivia did?", None, "same"),
    ],
)
def test_both_readers_take_the_same_cues(question, order, constraint):
    template = classify(question)
    focus = question_focus(question)
    assert template["order"] == focus.ordinal == order
    assert template["constraint"] == constraint
    if constraint in ("before", "after"):
        assert focus.direction == constraint
    if constraint == "same":
        assert focus.same_period == "month" and template["granularity"] == "month"
